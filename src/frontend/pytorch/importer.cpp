// The PyTorch importer: walks the TorchScript graph description node by node, converting each
// through the converter table, and builds the module's "main".
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "frontend/pytorch/converter.h"
#include "frontend/pytorch/from_pytorch.h"
#include "frontend/tensor_sizes.h"
#include "graph/type.h"
#include "ir/analyzer.h"

namespace anvil::frontend {

using graph::Expr;
using pytorch::PtValue;
using pytorch::PtValues;
using pytorch::TsBlock;
using pytorch::TsNode;

namespace {

// "file:line: text" → the loc of a node of kind `kind` whose first output is `name`.
SourceLoc node_loc(const TsNode& node, const std::string& origin) {
    SourceLoc loc{.file = origin};
    const std::string& s = node.source;
    // The file may itself contain ':' (never followed by digits and ':' in practice).
    size_t colon = s.find(": ");
    std::string where = colon == std::string::npos ? s : s.substr(0, colon);
    size_t line_colon = where.rfind(':');
    if (line_colon != std::string::npos && line_colon + 1 < where.size() &&
        std::all_of(where.begin() + line_colon + 1, where.end(), ::isdigit) &&
        where.size() - line_colon < 9) {
        loc.file = where.substr(0, line_colon);
        loc.line = std::stoi(where.substr(line_colon + 1));
    }
    loc.node_name = node.outputs.empty() ? "" : node.outputs[0].name;
    loc.op_type = node.kind;
    return loc;
}

// "aten::relu_" → "aten::relu"; "" when `kind` is not an in-place op.
std::string functional_kind(const std::string& kind) {
    if (kind.size() < 3 || kind.back() != '_' || kind[kind.size() - 2] == '_') return "";
    return kind.substr(0, kind.size() - 1);
}

bool is_supported(const std::string& kind) {
    if (kind == "prim::Constant") return true;
    if (pytorch::find_converter(kind)) return true;
    std::string f = functional_kind(kind);
    return !f.empty() && pytorch::find_converter(f);
}

void collect_unsupported(const TsBlock& block,
                         std::map<std::string, std::vector<std::string>>& where) {
    for (const auto& n : block.nodes) {
        if (!is_supported(n.kind)) where[n.kind].push_back(n.source);
        for (const auto& b : n.blocks) collect_unsupported(b, where);
    }
}

// Thrown through a converter when a block it converts uses an unsupported op.
struct UnknownResult {};

class Importer : public pytorch::BlockConverter {
public:
    Importer(const std::map<std::string, runtime::NDArray>& tensors, std::string origin)
        : tensors_(tensors), origin_(std::move(origin)) {}

    TorchImport run(const pytorch::TsGraph& g, const std::vector<TorchInput>& inputs) {
        SourceLoc loc{.file = origin_};
        const auto& graph_inputs = g.graph.inputs;
        if (graph_inputs.size() != inputs.size()) {
            user_error(loc) << "the module's forward takes " << graph_inputs.size()
                            << " input(s) but " << inputs.size()
                            << " were described (give one (name, shape) per input)";
        }
        scopes_.emplace_back();
        std::vector<Ref<graph::Var>> params;
        std::set<std::string> names;
        for (size_t i = 0; i < inputs.size(); ++i) {
            const TorchInput& in = inputs[i];
            const auto& declared = graph_inputs[i];
            std::string what = "input '" + in.name + "'";
            if (!names.insert(in.name).second) user_error(loc) << what << " is named twice";
            if (declared.type.kind != pytorch::TsType::Tensor) {
                user_error(loc) << "forward's input " << i << " ('" << declared.name
                                << "') is a " << pytorch::type_str(declared.type)
                                << "; only tensor inputs can be given shapes";
            }
            std::vector<PrimExpr> dims;
            for (size_t d = 0; d < in.shape.size(); ++d) {
                if (in.shape[d] >= 0) {
                    dims.push_back(make_int(DataType::int64(), in.shape[d]));
                    continue;
                }
                if (in.shape[d] != -1) user_error(loc) << what << ": dimension " << d << " is "
                                                       << in.shape[d];
                std::string n = d < in.dim_names.size() && !in.dim_names[d].empty()
                                    ? in.dim_names[d]
                                    : in.name + "_" + std::to_string(d);
                auto it = dim_vars_.find(n);
                if (it == dim_vars_.end()) {
                    it = dim_vars_.emplace(n, make_var(n, DataType::int64())).first;
                }
                dims.push_back(it->second);
            }
            graph::Type type = graph::make_tensor_type(dims, in.dtype);
            check_type_sizes(type, loc, what);
            auto var = graph::make_var(in.name, type, loc);
            params.push_back(var);
            bind(declared.id, PtValue::of_tensor(var));
        }
        PtValues results = convert_nodes(g.graph);
        report_unsupported();
        std::vector<Expr> outs;
        for (size_t k = 0; k < g.graph.outputs.size(); ++k) {
            outs.push_back(to_output(lookup(g.graph.outputs[k], loc), loc));
        }
        Expr body = outs.size() == 1 ? outs[0] : graph::make_tuple(outs, loc);
        for (const auto& p : weight_params_) params.push_back(p);
        TorchImport out;
        out.mod.functions["main"] = graph::make_function(params, body, false, loc);
        for (auto& [name, fn] : functions_) out.mod.functions[name] = fn;
        out.params = std::move(weights_);
        return out;
    }

    PtValues convert_inline(const TsBlock& block, const PtValues& inputs) override {
        if (inputs.size() != block.inputs.size()) {
            user_error(SourceLoc{.file = origin_})
                << "a block takes " << block.inputs.size() << " values, given " << inputs.size();
        }
        for (size_t i = 0; i < inputs.size(); ++i) bind(block.inputs[i].id, inputs[i]);
        return convert_nodes(block);
    }

    Function convert_function(const TsBlock& block, const std::string& name_hint,
                              std::vector<Ref<graph::Var>> params, const PtValues& inputs,
                              const std::function<Expr(const PtValues&)>& make_body,
                              const SourceLoc& loc) override {
        // The block's free values: used inside, defined outside. Tensors among them become
        // parameters; numbers known at import time and lists are used as they are.
        std::set<int64_t> defined, used;
        collect_ids(block, defined, used);
        scopes_.emplace_back();
        Function f;
        for (int64_t id : used) {
            if (defined.count(id)) continue;
            const PtValue& outer = lookup(id, loc);
            if (outer.tensor.defined()) {
                auto var = graph::make_var("c" + std::to_string(f.captured.size()),
                                           outer.tensor->type, loc);
                f.captured.push_back(outer.tensor);
                params.push_back(var);
                PtValue inner = outer;
                inner.tensor = var;
                bind(id, inner);
            } else if (contains_tensor(outer)) {
                user_error(loc) << "a list or tuple of tensors defined outside a data-dependent "
                                   "branch or loop is used inside it; not supported yet";
            }
        }
        PtValues results = convert_inline(block, inputs);
        scopes_.pop_back();
        // The block used an unsupported op: the node is not converted (report_unsupported will
        // name the op).
        if (std::any_of(results.begin(), results.end(), is_unknown)) throw UnknownResult{};
        std::string name = unique_function_name(name_hint);
        f.name = name;
        f.function = graph::make_function(params, make_body(results), false, loc);
        functions_[name] = f.function;
        return f;
    }

private:
    // Raises the one error listing every unsupported op kind met (with where the model uses
    // it), if any.
    void report_unsupported() {
        if (unsupported_.empty()) return;
        auto err = user_error(SourceLoc{.file = origin_});
        err << "the model uses " << unsupported_.size()
            << " op kind(s) the PyTorch importer does not support:";
        for (const auto& [kind, sources] : unsupported_) {
            err << "\n  " << kind << " (" << sources.size() << " node"
                << (sources.size() == 1 ? "" : "s") << ")";
            size_t shown = 0;
            for (const auto& s : sources) {
                if (shown++ == 3) {
                    err << "\n      ...";
                    break;
                }
                err << "\n      at " << (s.empty() ? "(no source line recorded)" : s);
            }
        }
    }

    static void collect_ids(const TsBlock& b, std::set<int64_t>& defined,
                            std::set<int64_t>& used) {
        for (const auto& v : b.inputs) defined.insert(v.id);
        for (const auto& n : b.nodes) {
            for (int64_t i : n.inputs) used.insert(i);
            for (const auto& sub : n.blocks) collect_ids(sub, defined, used);
            for (const auto& o : n.outputs) defined.insert(o.id);
        }
        for (int64_t o : b.outputs) used.insert(o);
    }

    static bool is_unknown(const PtValue& v) {
        if (v.kind == PtValue::Unknown) return true;
        return std::any_of(v.items.begin(), v.items.end(), is_unknown);
    }

    static bool contains_tensor(const PtValue& v) {
        if (v.tensor.defined()) return true;
        return std::any_of(v.items.begin(), v.items.end(), contains_tensor);
    }

    std::string unique_function_name(const std::string& hint) {
        std::string base;
        for (char c : hint) base += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
        if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "f" + base;
        std::string name = base;
        for (int k = 1; functions_.count(name) || name == "main"; ++k) {
            name = base + "_" + std::to_string(k);
        }
        return name;
    }

    void bind(int64_t id, PtValue v) { scopes_.back()[id] = std::move(v); }

    const PtValue& lookup(int64_t id, const SourceLoc& loc) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto found = it->find(id);
            if (found != it->end()) return found->second;
        }
        user_error(loc) << "value " << id << " is used but was never converted";
        ANVIL_UNREACHABLE();
    }

    PtValues convert_nodes(const TsBlock& block) {
        for (const auto& node : block.nodes) convert_node(node);
        PtValues outs;
        SourceLoc loc{.file = origin_};
        for (int64_t id : block.outputs) outs.push_back(lookup(id, loc));
        return outs;
    }

    void convert_node(const TsNode& node) {
        SourceLoc loc = node_loc(node, origin_);
        if (node.kind == "prim::Constant") {
            if (node.outputs.size() != 1) user_error(loc) << "a constant must have one output";
            if (!node.value) user_error(loc) << "the constant has no value";
            bind(node.outputs[0].id, constant_value(*node.value, loc));
            return;
        }
        PtValues inputs;
        bool known = true;
        for (int64_t id : node.inputs) {
            inputs.push_back(lookup(id, loc));
            known = known && inputs.back().kind != PtValue::Unknown;
        }
        std::string functional = functional_kind(node.kind);
        pytorch::PtConvertFn fn = pytorch::find_converter(node.kind);
        bool in_place = false;
        if (!fn && !functional.empty()) {
            fn = pytorch::find_converter(functional);
            in_place = true;
        }
        if (!fn) unsupported_[node.kind].push_back(node.source);
        if (!fn || !known) {
            // Not converted: its outputs are unknown, and the blocks it would run are only
            // checked for support (which of them runs cannot be known).
            for (const auto& b : node.blocks) collect_unsupported(b, unsupported_);
            PtValue unknown;
            unknown.kind = PtValue::Unknown;
            for (const auto& out : node.outputs) bind(out.id, unknown);
            return;
        }
        pytorch::PtContext ctx(node, loc, std::move(inputs), this);
        PtValues outs;
        try {
            outs = fn(ctx);
        } catch (const UnknownResult&) {
            PtValue unknown;
            unknown.kind = PtValue::Unknown;
            for (const auto& out : node.outputs) bind(out.id, unknown);
            return;
        }
        if (outs.size() != node.outputs.size()) {
            ctx.error() << "converted to " << outs.size() << " value(s), but the node has "
                        << node.outputs.size() << " output(s)";
        }
        for (size_t k = 0; k < outs.size(); ++k) {
            if (outs[k].kind == PtValue::Tensor && outs[k].tensor.defined()) {
                check_type_sizes(outs[k].tensor->type, loc, "output " + std::to_string(k));
            }
            bind(node.outputs[k].id, outs[k]);
        }
        // An in-place op changes its first operand: later uses of it see the result.
        if (in_place && !node.inputs.empty() && !outs.empty()) bind(node.inputs[0], outs[0]);
    }

    PtValue constant_value(const pytorch::TsConst& c, const SourceLoc& loc) {
        using pytorch::TsConst;
        switch (c.kind) {
            case TsConst::Int: return PtValue::of_int(c.i);
            case TsConst::Float: return PtValue::of_float(c.f);
            case TsConst::Bool: return PtValue::of_bool(c.b);
            case TsConst::Str: return PtValue::of_str(c.s);
            case TsConst::None: return PtValue::none();
            case TsConst::Device: {
                PtValue v = PtValue::of_str(c.s);
                v.kind = PtValue::Device;
                return v;
            }
            case TsConst::List:
            case TsConst::Tuple: {
                PtValues items;
                for (const auto& item : c.items) items.push_back(constant_value(item, loc));
                return PtValue::of_list(std::move(items), c.kind == TsConst::List
                                                              ? PtValue::List
                                                              : PtValue::Tuple);
            }
            case TsConst::Tensor: return PtValue::of_tensor(tensor_constant(c, loc));
        }
        ANVIL_UNREACHABLE();
    }

    Expr tensor_constant(const pytorch::TsConst& c, const SourceLoc& loc) {
        auto known = made_.find(c.s);
        if (known != made_.end()) return known->second;
        auto it = tensors_.find(c.s);
        if (it == tensors_.end()) {
            user_error(loc) << "the tensor '" << c.s << "' the graph uses was not given";
        }
        auto dtype = pytorch::dtype_from_name(c.dtype);
        if (!dtype) user_error(loc) << "tensor '" << c.s << "' has the unsupported element type "
                                    << c.dtype;
        runtime::NDArray data = it->second;
        DataType stored = graph::dtype_of(data.dtype());
        // bfloat16 travels as float32 (NumPy has no bfloat16); anything else must match.
        bool widened = *dtype == DataType::bfloat16() && stored == DataType::float32();
        if (stored != *dtype && !widened) {
            user_error(loc) << "tensor '" << c.s << "' is described as " << c.dtype
                            << " but its data is " << stored.str();
        }
        check_shape(data.shape(), stored, loc, "tensor '" + c.s + "'");
        NodeBuilder b(loc, c.s);
        Expr e;
        if (c.param) {
            auto var = graph::make_var(c.s, graph::make_tensor_type(std::vector<int64_t>(data.shape().begin(), data.shape().end()), stored), loc);
            weight_params_.push_back(var);
            weights_.emplace_back(c.s, data);
            e = var;
        } else {
            e = b.constant(data);
        }
        if (widened) e = cast_to(b, e, DataType::bfloat16());
        made_[c.s] = e;
        return e;
    }

    Expr to_output(const PtValue& v, const SourceLoc& loc) {
        switch (v.kind) {
            case PtValue::Tensor: return v.tensor;
            case PtValue::Int:
            case PtValue::Float:
            case PtValue::Bool: {
                NodeBuilder b(loc, "output");
                pytorch::PtContext ctx(dummy_node_, loc, {v}, this);
                return ctx.tensor(0);
            }
            case PtValue::List:
            case PtValue::Tuple: {
                std::vector<Expr> fields;
                for (const auto& item : v.items) fields.push_back(to_output(item, loc));
                return graph::make_tuple(fields, loc);
            }
            default:
                user_error(loc) << "the module returns a " << pytorch::kind_name(v.kind)
                                << ", which a compiled model cannot return";
        }
        ANVIL_UNREACHABLE();
    }

    const std::map<std::string, runtime::NDArray>& tensors_;
    std::string origin_;
    std::vector<std::unordered_map<int64_t, PtValue>> scopes_;
    std::map<std::string, Ref<anvil::Var>> dim_vars_;
    std::map<std::string, Expr> made_;  // tensor constants by name
    std::vector<Ref<graph::Var>> weight_params_;
    std::vector<std::pair<std::string, runtime::NDArray>> weights_;
    std::map<std::string, Ref<graph::Function>> functions_;
    TsNode dummy_node_{.kind = "output"};
    std::map<std::string, std::vector<std::string>> unsupported_;  // kind → source lines
};

}  // namespace

TorchImport from_torchscript(std::string_view description,
                             const std::map<std::string, runtime::NDArray>& tensors,
                             const std::vector<TorchInput>& inputs, const std::string& origin) {
    pytorch::TsGraph g = pytorch::parse_torchscript_graph(description, origin);
    Importer importer(tensors, origin);
    return importer.run(g, inputs);
}

}  // namespace anvil::frontend
