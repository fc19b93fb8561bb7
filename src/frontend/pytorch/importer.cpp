// The PyTorch importer: walks the TorchScript graph description node by node, converting each
// through the converter table, and builds the module's "main".
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "frontend/pytorch/converter.h"
#include "frontend/pytorch/from_pytorch.h"
#include "frontend/pytorch/quantized_values.h"
#include "frontend/pytorch/views.h"
#include "frontend/tensor_sizes.h"
#include "graph/type.h"
#include "ir/analyzer.h"
#include "ops/sequence.h"
#include "ops/shape_tensor.h"

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
    // A graph function being built (frames_[0] is main): its first scope, the outer values it
    // captured (and the parameters standing for them) and its model assertions.
    struct Check {
        Expr holds;  // a bool tensor of one element
        SourceLoc loc;
    };
    struct Frame {
        size_t first_scope = 0;
        std::vector<Ref<graph::Var>> params;
        std::vector<Expr> captured;
        std::unordered_map<const graph::ExprNode*, Expr> inner;  // captured value → parameter
        std::vector<Check> checks;
    };
    // Pushes a frame (and its scope) for a function being converted; pops both however the
    // conversion ends.
    struct FrameGuard {
        explicit FrameGuard(Importer& i) : importer(i) {
            importer.scopes_.emplace_back();
            importer.frames_.push_back({.first_scope = importer.scopes_.size() - 1});
        }
        ~FrameGuard() {
            importer.frames_.pop_back();
            importer.scopes_.pop_back();
        }
        Importer& importer;
    };

public:
    Importer(const std::map<std::string, runtime::NDArray>& tensors, std::string origin)
        : tensors_(tensors), origin_(std::move(origin)) {}

    TorchImport run(const pytorch::TsGraph& g, const std::vector<TorchInput>& inputs) {
        SourceLoc loc{.file = origin_};
        scopes_.emplace_back();
        frames_.push_back({.first_scope = 0});
        std::vector<Ref<graph::Var>> params;
        size_t cursor = 0;
        for (const auto& declared : g.graph.inputs) {
            // Optional inputs left undescribed at the end are None, as forward's defaults
            // usually are (ConvTranspose's output_size=None).
            if (cursor >= inputs.size() && declared.type.kind == pytorch::TsType::Optional) {
                bind(declared.id, PtValue::none());
                continue;
            }
            if (cursor >= inputs.size()) {
                user_error(loc) << "the module's forward takes " << g.graph.inputs.size()
                                << " input(s) but only " << inputs.size()
                                << " were described (give one (name, shape) per input)";
            }
            bind(declared.id, make_input(declared, inputs, cursor, params, loc));
        }
        if (cursor != inputs.size()) {
            user_error(loc) << "the module's forward takes " << g.graph.inputs.size()
                            << " input(s) but " << inputs.size()
                            << " were described (give one (name, shape) per input)";
        }
        PtValues results = convert_nodes(g.graph);
        report_unsupported();
        std::vector<Expr> outs;
        for (size_t k = 0; k < g.graph.outputs.size(); ++k) {
            outs.push_back(to_output(lookup(g.graph.outputs[k], loc), loc));
        }
        Expr body = outs.size() == 1 ? outs[0] : graph::make_tuple(outs, loc);
        body = attach_checks(body, frames_[0].checks, loc);
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
        // Outer values the block uses become parameters when first looked up (lookup), so the
        // frame collects them while the block converts.
        FrameGuard guard(*this);
        PtValues results = convert_inline(block, inputs);
        // The block used an unsupported op: the node is not converted (report_unsupported will
        // name the op).
        if (std::any_of(results.begin(), results.end(), is_unknown)) throw UnknownResult{};
        Expr body = attach_checks(make_body(results), frames_.back().checks, loc);
        Frame& frame = frames_.back();
        params.insert(params.end(), frame.params.begin(), frame.params.end());
        Function f;
        f.name = unique_function_name(name_hint);
        f.captured = frame.captured;
        f.function = graph::make_function(params, body, false, loc);
        functions_[f.name] = f.function;
        added_.push_back(f.name);
        return f;
    }

    size_t mark() const override { return added_.size(); }

    void roll_back(size_t mark) override {
        while (added_.size() > mark) {
            functions_.erase(added_.back());
            added_.pop_back();
        }
    }

    void add_check(Expr holds, const SourceLoc& loc) override {
        frames_.back().checks.push_back({std::move(holds), loc});
    }

    void bind_value(int64_t id, const PtValue& value) override { bind(id, value); }

    const PtValue& value_of(int64_t id, const SourceLoc& loc) override { return lookup(id, loc); }

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

    static bool is_unknown(const PtValue& v) {
        if (v.kind == PtValue::Unknown) return true;
        return std::any_of(v.items.begin(), v.items.end(), is_unknown);
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

    // The value of `id` as the block being converted sees it: one defined outside the graph
    // function being built (a branch or loop body) is captured, its tensors becoming parameters
    // of that function (and of each function between), and remembered in the function's scope.
    const PtValue& lookup(int64_t id, const SourceLoc& loc) {
        for (size_t s = scopes_.size(); s-- > 0;) {
            auto found = scopes_[s].find(id);
            if (found == scopes_[s].end()) continue;
            size_t owner = frames_.size() - 1;
            while (frames_[owner].first_scope > s) --owner;
            if (owner + 1 == frames_.size()) return found->second;
            PtValue inner = import_value(found->second, owner, loc);
            PtValue& slot = scopes_[frames_.back().first_scope][id];
            slot = std::move(inner);
            return slot;
        }
        user_error(loc) << "value " << id << " is used but was never converted";
        ANVIL_UNREACHABLE();
    }

    // `v` (a value of frame `owner`) as the innermost frame sees it.
    PtValue import_value(PtValue v, size_t owner, const SourceLoc& loc) {
        if (v.is_import_time() && (v.kind == PtValue::Int || v.kind == PtValue::Bool) &&
            !pytorch::known_int(v.scalar)) {
            // A number over symbolic sizes (n = x.size(0)): the function may not have the
            // sizes among its parameters' dimensions, so it gets the number's run-time value.
            NodeBuilder b(loc, "size");
            Expr t = ops::make_shape_tensor({cast(DataType::int64(), v.scalar)}, {},
                                            DataType::int64(), loc);
            if (v.kind == PtValue::Bool) t = cast_to(b, t, DataType::bool_());
            return PtValue::of_runtime_number(v.kind, import_expr(t, owner, loc));
        }
        if (v.tensor.defined()) v.tensor = import_expr(v.tensor, owner, loc);
        for (auto& item : v.items) item = import_value(item, owner, loc);
        return v;
    }

    Expr import_expr(Expr e, size_t owner, const SourceLoc& loc) {
        // A constant means the same in every function: no parameter needed.
        if (e->kind == graph::ExprKind::Constant) return e;
        for (size_t f = owner + 1; f < frames_.size(); ++f) {
            Frame& frame = frames_[f];
            auto known = frame.inner.find(e.get());
            if (known != frame.inner.end()) {
                e = known->second;
                continue;
            }
            auto var = graph::make_var("c" + std::to_string(frame.params.size()), e->type, loc);
            frame.params.push_back(var);
            frame.captured.push_back(e);
            frame.inner[e.get()] = var;
            e = var;
        }
        return e;
    }

    // The checks (model assertions) of a function, attached to its result: the result passes
    // through bind_values, which the VM runs before anything uses the result and which fails
    // with the check's location when the condition is false.
    Expr attach_checks(Expr body, const std::vector<Check>& checks, const SourceLoc& loc) {
        if (checks.empty()) return body;
        if (const auto* tuple = body.as<graph::Tuple>()) {
            if (tuple->fields.empty()) {
                user_error(loc) << "a model assertion inside a block that returns nothing is "
                                   "not supported";
            }
            std::vector<Expr> fields = tuple->fields;
            fields[0] = attach_checks(fields[0], checks, loc);
            return graph::make_tuple(fields, body->loc);
        }
        if (!body->type.is<graph::TensorType>()) {
            user_error(loc) << "a model assertion can only be attached to a tensor result, not "
                            << graph::type_str(body->type);
        }
        for (const auto& check : checks) {
            NodeBuilder b(check.loc, "check");
            Expr holds = reshape_to(b, cast_to(b, check.holds, DataType::int64()), {1});
            PrimExpr var = make_var("model_check", DataType::int64());
            body = b.bind_values(body, {holds}, {var}, {ne(var, make_int(DataType::int64(), 0))});
        }
        return body;
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
        // Loops unrolled and loop bodies converted again (with other types, or as a try before
        // unrolling) convert nodes more than once; nested deeply, that would never end.
        if (++converted_ > kMaxConvertedNodes) {
            user_error(loc) << "converting the model's loops and branches takes more than "
                            << kMaxConvertedNodes << " node conversions; control flow nested "
                            << "this deeply is not supported";
        }
        if (node.kind == "prim::Constant") {
            if (node.outputs.size() != 1) user_error(loc) << "a constant must have one output";
            if (!node.value) user_error(loc) << "the constant has no value";
            bind(node.outputs[0].id, constant_value(*node.value, loc));
            return;
        }
        PtValues inputs;
        bool known = true;
        for (int64_t id : node.inputs) {
            inputs.push_back(current_view(id, lookup(id, loc), loc));
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
        // An in-place op's converter sees its functional kind ("aten::add_" as "aten::add"),
        // as converters serving several kinds tell them apart by it.
        TsNode functional_node;
        if (in_place) {
            functional_node = node;
            functional_node.kind = functional;
        }
        // Quantized operands of an op that is not a quantized one (quantized_values.h): it
        // computes on their real numbers, or on their integers if it only moves elements.
        std::optional<PtValue> quantized;
        if (!pytorch::sees_quantized_operands(node.kind)) {
            if (const PtValue* q = pytorch::first_quantized(inputs)) quantized = *q;
        }
        PtValues operands = inputs;  // for views (views.h) and in-place ops
        NodeBuilder requantizer(loc, "quantized");
        const std::string& kind = functional.empty() ? node.kind : functional;
        if (quantized && !pytorch::moves_quantized_integers(kind, inputs)) {
            inputs = pytorch::dequantized(requantizer, inputs);
        }
        pytorch::PtContext ctx(in_place ? functional_node : node, loc, std::move(inputs), this);
        PtValues outs;
        try {
            outs = fn(ctx);
        } catch (const UnknownResult&) {
            PtValue unknown;
            unknown.kind = PtValue::Unknown;
            for (const auto& out : node.outputs) bind(out.id, unknown);
            return;
        }
        if (quantized) pytorch::quantize_results(requantizer, outs, *quantized, kind);
        if (outs.size() != node.outputs.size()) {
            ctx.error() << "converted to " << outs.size() << " value(s), but the node has "
                        << node.outputs.size() << " output(s)";
        }
        // Only view ops make views of a tensor: a converter passing its tensor operand through
        // (clone, dropout) returns a new tensor in PyTorch's terms. Values taken out of lists
        // and tuples (unpack, getitem) stay what they were.
        if (!in_place && !pytorch::is_view_kind(node.kind) && node.kind.rfind("aten::", 0) == 0 &&
            !operands.empty() && operands[0].kind == PtValue::Tensor) {
            for (auto& out : outs) out.view = nullptr;
        }
        if (!outs.empty() && outs[0].kind == PtValue::Tensor && !operands.empty() &&
            operands[0].kind == PtValue::Tensor) {
            if (in_place) {
                // An in-place op keeps its operand's element type (h16.mul_(t32) stays float16).
                DataType own =
                    graph::expect_tensor(operands[0].tensor->type, loc, "operand 0").dtype;
                NodeBuilder b(loc, "in_place");
                outs[0].tensor = cast_to(b, outs[0].tensor, own);
            }
            if (in_place && operands[0].view) {
                write_through_view(operands[0], outs[0], loc);
            } else if (in_place) {
                // The tensor itself changed: views of it made before read it again.
                ++base_versions_[node.inputs[0]];
            } else if (pytorch::is_view_kind(node.kind)) {
                auto view =
                    pytorch::derive_view(fn, node, loc, operands, outs[0], node.inputs[0], this);
                if (view) {
                    // Read from the base as it is now.
                    auto versioned = std::make_shared<pytorch::ViewOf>(*view);
                    versioned->version = base_versions_[view->base_id];
                    view = versioned;
                }
                outs[0].view = view;
            }
        }
        for (size_t k = 0; k < outs.size(); ++k) {
            if (outs[k].kind == PtValue::Tensor && outs[k].tensor.defined()) {
                check_type_sizes(outs[k].tensor->type, loc, "output " + std::to_string(k));
            }
            bind(node.outputs[k].id, outs[k]);
        }
        // An in-place op changes its first operand, as list.append(x) changes the list: later
        // uses of it see the result.
        bool mutates = in_place || node.kind == "aten::append";
        if (mutates && !node.inputs.empty() && !outs.empty()) bind(node.inputs[0], outs[0]);
    }

    // The value of forward's input `declared` from inputs[cursor...]: a tensor, a number given
    // as a 0-d tensor (known at run time), None, or a tuple/list of such (a group entry followed
    // by its items). Tensors become main's parameters.
    PtValue make_input(const pytorch::TsValue& declared, const std::vector<TorchInput>& inputs,
                       size_t& cursor, std::vector<Ref<graph::Var>>& params, const SourceLoc& loc) {
        return make_input_of(declared.type, declared.name, inputs, cursor, params, loc, 0);
    }

    PtValue make_input_of(const pytorch::TsType& type, const std::string& declared,
                          const std::vector<TorchInput>& inputs, size_t& cursor,
                          std::vector<Ref<graph::Var>>& params, const SourceLoc& loc, int depth) {
        using pytorch::TsType;
        if (cursor >= inputs.size()) {
            user_error(loc) << "forward's input '" << declared << "' (" << pytorch::type_str(type)
                            << ") is not fully described";
        }
        if (depth > 16) user_error(loc) << "inputs nest more than 16 deep";
        const TorchInput& in = inputs[cursor++];
        std::string what = "input '" + in.name + "'";
        TsType t = type;
        if (t.kind == TsType::Optional) {
            if (in.elements == TorchInput::kNone) return PtValue::none();
            t = t.elems[0];
        }
        if (in.elements == TorchInput::kNone) {
            user_error(loc) << what << " is given as None, but forward's '" << declared << "' is a "
                            << pytorch::type_str(type);
        }
        if (in.elements >= 0) {
            if (t.kind != TsType::Tuple && t.kind != TsType::List) {
                user_error(loc) << what << " is given as a group of " << in.elements
                                << " values, but forward's '" << declared << "' is a "
                                << pytorch::type_str(type);
            }
            if (t.kind == TsType::Tuple && t.elems.size() != static_cast<size_t>(in.elements)) {
                user_error(loc) << what << " is given " << in.elements << " values, but forward's '"
                                << declared << "' is a " << pytorch::type_str(type);
            }
            PtValues items;
            for (int64_t k = 0; k < in.elements; ++k) {
                const TsType& et =
                    t.kind == TsType::Tuple ? t.elems[static_cast<size_t>(k)] : t.elems[0];
                items.push_back(make_input_of(et, declared + "[" + std::to_string(k) + "]", inputs,
                                              cursor, params, loc, depth + 1));
            }
            return PtValue::of_list(std::move(items),
                                    t.kind == TsType::Tuple ? PtValue::Tuple : PtValue::List);
        }
        bool number = t.kind == TsType::Int || t.kind == TsType::Float || t.kind == TsType::Bool;
        if (t.kind != TsType::Tensor && !number) {
            user_error(loc) << "forward's input '" << declared << "' is a "
                            << pytorch::type_str(type)
                            << "; inputs must be tensors, numbers, None or tuples/lists of them";
        }
        if (!names_.insert(in.name).second) user_error(loc) << what << " is named twice";
        std::vector<PrimExpr> dims;
        for (size_t d = 0; d < in.shape.size(); ++d) {
            if (in.shape[d] >= 0) {
                dims.push_back(make_int(DataType::int64(), in.shape[d]));
                continue;
            }
            if (in.shape[d] != -1)
                user_error(loc) << what << ": dimension " << d << " is " << in.shape[d];
            std::string n = d < in.dim_names.size() && !in.dim_names[d].empty()
                                ? in.dim_names[d]
                                : in.name + "_" + std::to_string(d);
            auto it = dim_vars_.find(n);
            if (it == dim_vars_.end()) {
                it = dim_vars_.emplace(n, make_var(n, DataType::int64())).first;
            }
            dims.push_back(it->second);
        }
        if (number && !dims.empty()) {
            user_error(loc) << what << ": forward's '" << declared << "' is a "
                            << pytorch::type_str(type) << "; give it the shape () (a 0-d tensor)";
        }
        graph::Type gt = graph::make_tensor_type(dims, in.dtype);
        check_type_sizes(gt, loc, what);
        auto var = graph::make_var(in.name, gt, loc);
        params.push_back(var);
        if (!number) return PtValue::of_tensor(var);
        PtValue::Kind k = t.kind == TsType::Int     ? PtValue::Int
                          : t.kind == TsType::Float ? PtValue::Float
                                                    : PtValue::Bool;
        return PtValue::of_runtime_number(k, var);
    }

    // An in-place op on a view (`mask[0:7, 3:].fill_(1)`): the base tensor takes the view's new
    // contents, and `result` stays that view of it.
    void write_through_view(const PtValue& view, PtValue& result, const SourceLoc& loc) {
        const pytorch::ViewOf& v = *view.view;
        if (!v.index_map.defined()) {
            user_error(loc) << "the in-place op writes into a view (a slice, select, reshape or "
                               "permutation) of a tensor whose shape is not static, which is "
                               "not supported; compute the result out of place instead "
                               "(torch.where, index_put, cat)";
        }
        const PtValue& base = lookup(v.base_id, loc);
        if (base.kind != PtValue::Tensor) {
            user_error(loc) << "the in-place op writes through a view of a "
                            << pytorch::kind_name(base.kind);
        }
        NodeBuilder b(loc, "written");
        bind(v.base_id,
             PtValue::of_tensor(pytorch::write_through(b, base.tensor, v, result.tensor)));
        int64_t version = ++base_versions_[v.base_id];
        auto written = std::make_shared<pytorch::ViewOf>(v);
        written->version = version;
        result.view = written;
    }

    // `value` (of id `id`) as it is now: a view whose base was written since it was read is
    // read again (and rebound, so that the next use need not).
    PtValue current_view(int64_t id, const PtValue& value, const SourceLoc& loc) {
        if (!value.view || !value.view->index_map.defined()) return value;
        auto it = base_versions_.find(value.view->base_id);
        if (it == base_versions_.end() || it->second == value.view->version) return value;
        const PtValue& base = lookup(value.view->base_id, loc);
        if (base.kind != PtValue::Tensor) return value;
        NodeBuilder b(loc, "view");
        PtValue fresh = value;
        fresh.tensor = pytorch::read_through(b, base.tensor, *value.view);
        auto view = std::make_shared<pytorch::ViewOf>(*value.view);
        view->version = it->second;
        fresh.view = view;
        bind(id, fresh);
        return fresh;
    }

    PtValue constant_value(const pytorch::TsConst& c, const SourceLoc& loc) {
        using pytorch::TsConst;
        switch (c.kind) {
            case TsConst::Int:
                return PtValue::of_int(c.i);
            case TsConst::Float:
                return PtValue::of_float(c.f);
            case TsConst::Bool:
                return PtValue::of_bool(c.b);
            case TsConst::Str:
                return PtValue::of_str(c.s);
            case TsConst::None:
                return PtValue::none();
            case TsConst::Device: {
                PtValue v = PtValue::of_str(c.s);
                v.kind = PtValue::Device;
                return v;
            }
            case TsConst::List:
            case TsConst::Tuple: {
                PtValues items;
                for (const auto& item : c.items) items.push_back(constant_value(item, loc));
                return PtValue::of_list(std::move(items),
                                        c.kind == TsConst::List ? PtValue::List : PtValue::Tuple);
            }
            case TsConst::Tensor:
                if (c.quantized)
                    return pytorch::quantized_constant(tensor_constant(c, loc), c, loc);
                return PtValue::of_tensor(tensor_constant(c, loc));
        }
        ANVIL_UNREACHABLE();
    }

    Expr tensor_constant(const pytorch::TsConst& c, const SourceLoc& loc) {
        auto known = made_.find(c.s);
        // Made in main: a function using it gets it as a parameter.
        if (known != made_.end()) return import_expr(known->second, 0, loc);
        auto it = tensors_.find(c.s);
        if (it == tensors_.end()) {
            user_error(loc) << "the tensor '" << c.s << "' the graph uses was not given";
        }
        auto dtype = pytorch::dtype_from_name(c.dtype);
        if (!dtype)
            user_error(loc) << "tensor '" << c.s << "' has the unsupported element type "
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
            auto var = graph::make_var(
                c.s,
                graph::make_tensor_type(
                    std::vector<int64_t>(data.shape().begin(), data.shape().end()), stored),
                loc);
            weight_params_.push_back(var);
            weights_.emplace_back(c.s, data);
            e = var;
        } else {
            e = b.constant(data);
        }
        if (widened) e = cast_to(b, e, DataType::bfloat16());
        made_[c.s] = e;
        return import_expr(e, 0, loc);
    }

    Expr to_output(const PtValue& v, const SourceLoc& loc) {
        switch (v.kind) {
            case PtValue::Tensor:
                return v.tensor;
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
            case PtValue::None:
                // An absent result (GoogLeNet's aux outputs, scripted): an empty optional, which
                // the runtimes return as None. Its element type is never read.
                return ops::make_optional_none(graph::make_optional_type(graph::make_tensor_type(
                                                   std::vector<int64_t>{}, DataType::float32())),
                                               loc);
            default:
                user_error(loc) << "the module returns a " << pytorch::kind_name(v.kind)
                                << ", which a compiled model cannot return";
        }
        ANVIL_UNREACHABLE();
    }

    const std::map<std::string, runtime::NDArray>& tensors_;
    std::string origin_;
    std::vector<std::unordered_map<int64_t, PtValue>> scopes_;
    std::vector<Frame> frames_;
    std::vector<std::string> added_;  // functions_ in the order they were added
    std::map<std::string, Ref<anvil::Var>> dim_vars_;
    std::set<std::string> names_;               // of main's inputs
    std::map<int64_t, int64_t> base_versions_;  // writes through views, per base tensor
    std::map<std::string, Expr> made_;          // tensor constants by name
    std::vector<Ref<graph::Var>> weight_params_;
    std::vector<std::pair<std::string, runtime::NDArray>> weights_;
    std::map<std::string, Ref<graph::Function>> functions_;
    TsNode dummy_node_{.kind = "output"};
    std::map<std::string, std::vector<std::string>> unsupported_;  // kind → source lines
    static constexpr int64_t kMaxConvertedNodes = 1000000;
    int64_t converted_ = 0;
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
