// The importer: parses the model, makes parameters of its inputs and constants of its
// initializers, converts the nodes in order through the converter table, and returns "main".
#include <google/protobuf/io/coded_stream.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <unordered_map>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/from_onnx.h"
#include "frontend/onnx/shape_eval.h"

namespace anvil::frontend {

namespace {

using ::onnx::ModelProto;
using ::onnx::NodeProto;
using ::onnx::ValueInfoProto;

std::string opset_range(const Converter& c) {
    std::string out = std::to_string(c.min_opset);
    out += '-';
    out += std::to_string(c.max_opset);
    return out;
}

// The ops that take or give string tensors: they compute on them without a kernel (the
// executor's string instructions) or only pass them on.
bool handles_strings(const std::string& op_type) {
    static const std::set<std::string> kOps = {
        "StringNormalizer",
        "Cast",
        "CastLike",
        "Identity",
        "Constant",
        "Shape",
        "Size",
        "If",
        "Loop",
        "Optional",
        "OptionalHasElement",
        "OptionalGetElement",
        "SequenceConstruct",
        "SequenceEmpty",
        "SequenceInsert",
        "SequenceAt",
        "SequenceErase",
        "SequenceLength",
        "SplitToSequence",
    };
    return kOps.count(op_type) > 0;
}

class Importer : public SubgraphBuilder {
public:
    Importer(const ModelProto& model, const ImportOptions& options, const std::string& path)
        : model_(model), options_(options) {
        file_ = path.empty() ? "<memory>" : path;
        base_dir_ = path.empty() ? "" : std::filesystem::path(path).parent_path().string();
    }

    graph::IRModule run() {
        SourceLoc model_loc{.file = file_};
        if (!model_.has_graph()) user_error(model_loc) << "the model has no graph";
        opset_ = default_opset(model_loc);
        const auto& g = model_.graph();
        frames_.emplace_back();
        add_initializers(g);
        std::vector<Ref<graph::Var>> params = make_params(g);
        convert_nodes(g);
        std::vector<graph::Expr> outputs = graph_outputs(g, model_loc);
        std::set<std::string> output_names;
        for (const auto& o : g.output()) {
            if (!output_names.insert(o.name()).second) {
                user_error(model_loc) << "output '" << o.name() << "' is listed twice among the "
                                      << "graph's outputs";
            }
        }
        graph::Expr body = outputs.size() == 1 ? outputs[0] : graph::make_tuple(outputs, model_loc);
        module_.functions["main"] = graph::make_function(params, body, false, model_loc);
        return module_;
    }

    SubgraphFunction add_function(
        const ::onnx::GraphProto& g, const std::string& name_hint,
        std::vector<Ref<graph::Var>> params, std::vector<graph::Expr> inputs,
        const std::function<graph::Expr(std::vector<graph::Expr>)>& make_body) override {
        SourceLoc loc{.file = file_, .node_name = name_hint};
        if (static_cast<size_t>(g.input_size()) != inputs.size()) {
            user_error(loc) << "the subgraph '" << g.name() << "' has " << g.input_size()
                            << " input(s), the node gives it " << inputs.size();
        }
        // Each level of nesting costs the importer (and the passes after it) stack; a model
        // nesting deeper than any real one is refused before it can exhaust it.
        if (frames_.size() > static_cast<size_t>(kMaxSubgraphDepth)) {
            user_error(node_locs_.empty() ? loc : node_locs_.back())
                << "subgraphs nested more than " << kMaxSubgraphDepth
                << " deep (If, Loop and Scan bodies within each other) are not supported";
        }
        frames_.emplace_back();
        for (size_t i = 0; i < inputs.size(); ++i) {
            const std::string& name = g.input(i).name();
            if (!frames_.back().values.emplace(name, inputs[i]).second) {
                user_error(loc) << "the subgraph '" << g.name() << "' lists input '" << name
                                << "' twice";
            }
            frames_.back().origin[name] = "an input of the subgraph";
        }
        add_initializers(g);
        convert_nodes(g);
        graph::Expr body = make_body(graph_outputs(g, loc));
        Frame frame = std::move(frames_.back());
        frames_.pop_back();
        params.insert(params.end(), frame.capture_params.begin(), frame.capture_params.end());
        SubgraphFunction out = add_function(name_hint, std::move(params), body);
        out.captured = std::move(frame.captured);
        return out;
    }

    SubgraphFunction add_function(const std::string& name_hint, std::vector<Ref<graph::Var>> params,
                                  graph::Expr body) override {
        SubgraphFunction out;
        out.name = name_hint;
        for (int k = 1; module_.functions.count(out.name); ++k) {
            out.name = name_hint + "_" + std::to_string(k);
        }
        SourceLoc loc{.file = file_, .node_name = name_hint};
        out.function = graph::make_function(std::move(params), std::move(body), false, loc);
        module_.functions[out.name] = out.function;
        added_.push_back(out.name);
        return out;
    }

    graph::Expr value_named(const std::string& name, const SourceLoc& loc) override {
        return lookup(name, loc, "value");
    }

    size_t mark() const override { return added_.size(); }

    void roll_back(size_t mark) override {
        while (added_.size() > mark) {
            module_.functions.erase(added_.back());
            added_.pop_back();
        }
    }

private:
    // The opset of the default ("" / "ai.onnx") domain, which decides every default-domain op's
    // meaning: one that is not a version, or a version newer than the converters know, is
    // refused rather than guessed.
    int default_opset(const SourceLoc& loc) {
        std::optional<int64_t> found;
        for (const auto& o : model_.opset_import()) {
            if (!o.domain().empty() && o.domain() != "ai.onnx") continue;
            if (found && *found != o.version()) {
                user_error(loc) << "the default domain is imported twice (opsets " << *found
                                << " and " << o.version() << ")";
            }
            found = o.version();
        }
        if (!found) {
            // Models before IR version 3 have no opset_import and mean opset 1. Later ones
            // importing only other domains (ai.onnx.preview.training) may not use the default
            // domain's ops at all: convert_node refuses them there.
            has_default_opset_ = model_.ir_version() < 3 && model_.opset_import_size() == 0;
            return 1;
        }
        if (*found < 1) {
            user_error(loc) << "the model imports opset " << *found
                            << " of the default domain, which is not a valid opset version (they "
                               "start at 1)";
        }
        if (*found > kNewestOpset) {
            user_error(loc) << "the model imports opset " << *found
                            << " of the default domain, newer than the newest this importer "
                               "knows ("
                            << kNewestOpset << "); convert it to an older opset "
                            << "(onnx.version_converter)";
        }
        return static_cast<int>(*found);
    }

    graph::Type input_type(const ValueInfoProto& v, const SourceLoc& loc) {
        std::string what = "input '" + v.name() + "'";
        if (!v.type().has_tensor_type()) {
            // A sequence or an optional: dimensions without a name become fresh variables.
            int unnamed = 0;
            return type_from_onnx(
                v.type(), loc, what, [&](const ::onnx::TensorShapeProto::Dimension& d) {
                    if (d.has_dim_value()) {
                        if (d.dim_value() < 0) {
                            user_error(loc) << what << ": dimension " << d.dim_value()
                                            << "; dimensions must not be negative";
                        }
                        return PrimExpr(make_int(DataType::int64(), d.dim_value()));
                    }
                    if (d.has_dim_param() && !d.dim_param().empty())
                        return symbolic_dim(d.dim_param());
                    return PrimExpr(
                        make_var(v.name() + "_" + std::to_string(unnamed++), DataType::int64()));
                });
        }
        const auto& tt = v.type().tensor_type();
        std::optional<DataType> dtype = dtype_from_onnx(tt.elem_type());
        if (!dtype) {
            user_error(loc) << what << " has element type " << onnx_dtype_name(tt.elem_type())
                            << ", which Anvil does not support";
        }
        auto override_it = options_.input_shapes.find(v.name());
        if (override_it != options_.input_shapes.end()) {
            const auto& shape = override_it->second;
            if (tt.has_shape() && tt.shape().dim_size() != static_cast<int>(shape.size())) {
                user_error(loc) << what << " has rank " << tt.shape().dim_size()
                                << ", the given input shape has rank " << shape.size();
            }
            for (int64_t d : shape) {
                if (d < 0) user_error(loc) << what << ": the given shape has a negative dimension";
            }
            check_shape(shape, *dtype, loc, what + " (its given shape)");
            return graph::make_tensor_type(shape, *dtype);
        }
        if (!tt.has_shape()) {
            user_error(loc) << what << " has no declared shape; give its shape (--input-shapes "
                            << v.name() << ":[...])";
        }
        std::vector<PrimExpr> dims;
        for (int i = 0; i < tt.shape().dim_size(); ++i) {
            const auto& d = tt.shape().dim(i);
            if (d.has_dim_value()) {
                if (d.dim_value() < 0) {
                    user_error(loc) << what << ": dimension " << i << " is " << d.dim_value()
                                    << "; dimensions must not be negative";
                }
                dims.push_back(make_int(DataType::int64(), d.dim_value()));
            } else if (d.has_dim_param() && !d.dim_param().empty()) {
                dims.push_back(symbolic_dim(d.dim_param()));
            } else {
                user_error(loc) << what << " has an unknown dimension " << i
                                << "; give its shape (--input-shapes " << v.name() << ":[...])";
            }
        }
        graph::Type type = graph::make_tensor_type(std::move(dims), *dtype);
        check_type_sizes(type, loc, what);
        return type;
    }

    // Symbolic dimensions of the same name are the same variable.
    PrimExpr symbolic_dim(const std::string& name) {
        auto [it, fresh] = dim_vars_.try_emplace(name);
        if (fresh) it->second = make_var(name, DataType::int64());
        return it->second;
    }

    void add_initializers(const ::onnx::GraphProto& g) {
        for (const auto& t : g.initializer()) {
            SourceLoc loc{.file = file_};
            std::string what = "initializer '" + t.name() + "'";
            if (frames_.back().origin.count(t.name())) {
                user_error(loc) << what << " is defined twice, or is also "
                                << frames_.back().origin[t.name()];
            }
            frames_.back().values[t.name()] =
                graph::make_constant(tensor_from_proto(t, base_dir_, loc, what), loc);
            frames_.back().origin[t.name()] = "an initializer";
        }
        if (g.sparse_initializer_size()) {
            user_error(SourceLoc{.file = file_}) << "sparse initializers are not supported";
        }
    }

    std::vector<graph::Expr> graph_outputs(const ::onnx::GraphProto& g, const SourceLoc& loc) {
        std::vector<graph::Expr> outputs;
        for (const auto& o : g.output()) outputs.push_back(lookup(o.name(), loc, "output"));
        if (outputs.empty()) user_error(loc) << "the graph '" << g.name() << "' has no outputs";
        return outputs;
    }

    std::vector<Ref<graph::Var>> make_params(const ::onnx::GraphProto& g) {
        SourceLoc loc{.file = file_};
        std::set<std::string> names;
        std::vector<Ref<graph::Var>> params;
        for (const auto& v : g.input()) {
            if (!names.insert(v.name()).second) {
                user_error(loc) << "input '" << v.name() << "' is listed twice among the graph's "
                                << "inputs";
            }
            // Before IR version 4, initializers are listed as inputs too; they are constants.
            auto& values = frames_.back().values;
            if (values.count(v.name())) continue;
            auto var = graph::make_var(v.name(), input_type(v, loc), loc);
            values[v.name()] = var;
            frames_.back().origin[v.name()] = "a graph input";
            params.push_back(var);
        }
        for (const auto& [name, shape] : options_.input_shapes) {
            if (!names.count(name) || !frames_.back().values[name].is<graph::Var>()) {
                std::string list;
                for (const auto& p : params) list += (list.empty() ? "'" : ", '") + p->name + "'";
                user_error(loc) << "input shape given for '" << name
                                << "', which is not an input of the model (its inputs: " << list
                                << ")";
            }
        }
        return params;
    }

    // The value named `name` in the innermost frame that has one. A subgraph using a value of an
    // enclosing graph gets it as an extra parameter (through every frame in between), except
    // constants, which any function may hold.
    graph::Expr lookup(const std::string& name, const SourceLoc& loc, const std::string& what) {
        for (size_t j = frames_.size(); j-- > 0;) {
            auto it = frames_[j].values.find(name);
            if (it == frames_[j].values.end()) continue;
            graph::Expr value = it->second;
            if (value.is<graph::Constant>()) return value;
            for (size_t k = j + 1; k < frames_.size(); ++k) {
                auto var = graph::make_var(name, value->type, loc);
                frames_[k].capture_params.push_back(var);
                frames_[k].captured.push_back(value);
                frames_[k].values[name] = var;
                value = var;
            }
            return value;
        }
        for (size_t j = frames_.size(); j-- > 0;) {
            auto later = frames_[j].later.find(name);
            if (later == frames_[j].later.end()) continue;
            user_error(loc) << what << " '" << name << "' is the output of the later node '"
                            << later->second
                            << "'; nodes must be topologically sorted (is there a cycle?)";
        }
        auto dropped = dropped_.find(name);
        if (dropped != dropped_.end()) {
            user_error(loc) << what << " '" << name << "' is " << dropped->second
                            << ", which the importer does not support";
        }
        user_error(loc) << what << " '" << name
                        << "' is neither a graph input, an initializer nor the output of an "
                           "earlier node";
        ANVIL_UNREACHABLE();
    }

    const Converter* find_converter(const NodeProto& node, const SourceLoc& loc) const {
        const Converter* any = nullptr;
        for (const auto& c : converter_table()) {
            if (node.op_type() != c.op_type) continue;
            if (opset_ >= c.min_opset && opset_ <= c.max_opset) return &c;
            any = &c;
        }
        if (any) {
            std::string ranges;
            for (const auto& c : converter_table()) {
                if (node.op_type() == c.op_type)
                    ranges += (ranges.empty() ? "" : ", ") + opset_range(c);
            }
            user_error(loc) << "op " << node.op_type() << " is supported only for opsets "
                            << ranges;
        }
        user_error(loc) << "op " << node.op_type() << " is not supported";
        ANVIL_UNREACHABLE();
    }

    // An unnamed node is named by its position, as "#12".
    static std::string node_name(const NodeProto& node, int index) {
        return node.name().empty() ? "#" + std::to_string(index) : node.name();
    }

    // Converts the graph's nodes in order. Which node makes each value is noted first, so that
    // a use before the definition (a cycle, or nodes out of order) names the node.
    // (frames_.back() is looked up each time: converting a node with subgraphs adds frames,
    // which may move the vector's elements.)
    void convert_nodes(const ::onnx::GraphProto& g) {
        for (int i = 0; i < g.node_size(); ++i) {
            for (const auto& out : g.node(i).output()) {
                if (!out.empty()) frames_.back().later.emplace(out, node_name(g.node(i), i));
            }
        }
        for (int i = 0; i < g.node_size(); ++i) {
            for (const auto& out : g.node(i).output()) frames_.back().later.erase(out);
            convert_node(g.node(i), i);
        }
    }

    void convert_node(const NodeProto& node, int index) {
        std::string name = node_name(node, index);
        SourceLoc loc{.file = file_, .node_name = name, .op_type = node.op_type(), .opset = opset_};
        bool default_domain = node.domain().empty() || node.domain() == "ai.onnx";
        if (default_domain && !has_default_opset_) {
            user_error(SourceLoc{.file = file_})
                << "the model imports no opset of the default domain ('' or 'ai.onnx'), whose op "
                << node.op_type() << " node '" << name << "' uses";
        }
        // A value is defined once (ONNX graphs are in SSA form); a second definition would
        // silently replace the first for the nodes after it.
        const auto& origin = frames_.back().origin;  // not used past the conversion below
        for (int i = 0; i < node.output_size(); ++i) {
            const std::string& out = node.output(i);
            if (out.empty()) continue;
            for (int k = 0; k < i; ++k) {
                if (node.output(k) == out) {
                    user_error(loc) << "output '" << out << "' is named twice by the node";
                }
            }
            auto it = origin.find(out);
            if (it != origin.end()) {
                user_error(loc) << "output '" << out << "' is already " << it->second;
            }
        }
        node_locs_.push_back(loc);
        struct Pop {
            std::vector<SourceLoc>& stack;
            ~Pop() { stack.pop_back(); }
        } pop{node_locs_};
        // ai.onnx.preview.training holds the optimizers and Gradient, names no other op uses.
        bool training = node.domain() == "ai.onnx.preview.training" &&
                        (node.op_type() == "Adagrad" || node.op_type() == "Momentum" ||
                         node.op_type() == "Adam" || node.op_type() == "Gradient");
        // com.microsoft: ONNX Runtime's quantized contrib ops (convert_qlinear_contrib.cpp).
        bool microsoft =
            node.domain() == "com.microsoft" &&
            (node.op_type() == "QLinearAdd" || node.op_type() == "QLinearMul" ||
             node.op_type() == "QLinearConcat" || node.op_type() == "QLinearGlobalAveragePool" ||
             node.op_type() == "QLinearSigmoid" || node.op_type() == "QLinearLeakyRelu");
        if (!node.domain().empty() && node.domain() != "ai.onnx" && !training && !microsoft) {
            user_error(loc) << "op " << node.op_type() << " of domain '" << node.domain()
                            << "' is not supported";
        }
        std::vector<graph::Expr> inputs;
        for (const auto& name : node.input()) {
            inputs.push_back(name.empty() ? graph::Expr() : lookup(name, loc, "input"));
        }
        bool strings = std::any_of(inputs.begin(), inputs.end(), [](const graph::Expr& e) {
            return e.defined() && graph::holds_strings(e->type);
        });
        if (strings && !handles_strings(node.op_type())) {
            user_error(loc) << "op " << node.op_type()
                            << " does not take string tensors (StringNormalizer, Cast and "
                               "sequence ops do)";
        }
        ConvertContext ctx(node, opset_, loc, std::move(inputs), base_dir_, this);
        std::vector<graph::Expr> outs;
        try {
            if (auto folded = fold_shape_node(ctx)) {
                outs = std::move(*folded);
            } else {
                outs = find_converter(node, loc)->convert(ctx);
            }
        } catch (const UserError& e) {
            // Errors from helpers that do not know the node (tensor allocation, ...) get its
            // location; those raised at this node's location, or at a node of one of its
            // subgraphs, or at the model, already carry one.
            std::string where = loc.str();
            std::string msg = e.what();
            if (msg.rfind(where, 0) == 0 || msg.rfind(file_ + ": ", 0) == 0) throw;
            throw UserError(where + ": " + msg);
        }
        for (const auto& out : outs) {
            if (out.defined() && graph::holds_strings(out->type) &&
                !handles_strings(node.op_type())) {
                user_error(loc) << "op " << node.op_type() << " cannot make string tensors";
            }
        }
        for (int i = 0; i < node.output_size(); ++i) {
            const std::string& out_name = node.output(i);
            if (out_name.empty()) continue;
            if (i < static_cast<int>(outs.size()) && outs[i].defined()) {
                std::string what = "output " + std::to_string(i) + " ('" + out_name + "')";
                check_type_sizes(outs[i]->type, loc, what);
                frames_.back().values[out_name] = outs[i];
                frames_.back().origin[out_name] = "produced by node '" + name + "'";
            } else {
                std::string what = "output ";
                what.append(std::to_string(i)).append(" of node '").append(loc.node_name);
                dropped_[out_name] = what.append("' (").append(node.op_type()).append(")");
            }
        }
    }

    const ModelProto& model_;
    const ImportOptions& options_;
    std::string file_;
    std::string base_dir_;
    int opset_ = 1;
    bool has_default_opset_ = true;
    std::vector<SourceLoc> node_locs_;  // the node being converted, and those enclosing it
    // The values by name of the graph being converted and of the graphs enclosing it.
    struct Frame {
        std::unordered_map<std::string, graph::Expr> values;
        // What defined each value of this graph ("a graph input", "produced by node 'x'"), and
        // which node of it defines each value not yet converted.
        std::unordered_map<std::string, std::string> origin;
        std::unordered_map<std::string, std::string> later;
        std::vector<Ref<graph::Var>> capture_params;  // outer values the subgraph uses, and
        std::vector<graph::Expr> captured;            // those values outside it
    };
    // A deque: converting a node holds a reference to its frame while a subgraph pushes
    // another, which must not move it (a vector's reallocation did: use after free).
    std::deque<Frame> frames_;
    graph::IRModule module_;
    std::vector<std::string> added_;  // subgraph functions, in the order added
    std::unordered_map<std::string, std::string> dropped_;  // outputs no converter produced
    std::unordered_map<std::string, Ref<Var>> dim_vars_;
};

// How deep protobuf may nest messages. Each If/Loop/Scan level is three (graph, node,
// attribute): protobuf's default (100) would refuse a model nesting 33 subgraphs as merely
// "malformed", before the importer's own limit could name the node. Parsing costs little stack
// per level.
constexpr int kMaxMessageDepth = 1024;

constexpr int64_t kProtobufLimit = std::numeric_limits<int>::max();

bool parse_model(const void* data, size_t size, ModelProto* model) {
    google::protobuf::io::CodedInputStream stream(static_cast<const uint8_t*>(data),
                                                  static_cast<int>(size));
    stream.SetTotalBytesLimit(std::numeric_limits<int>::max());
    stream.SetRecursionLimit(kMaxMessageDepth);
    return model->ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

// UserError when a model of `size` bytes is over the caller's limit or protobuf's (which no
// limit can lift: one message is at most 2 GiB - 1).
void check_model_size(int64_t size, const ImportOptions& options, const std::string& what) {
    if (size > kProtobufLimit) {
        user_error() << what << " bytes, more than protobuf's limit of " << kProtobufLimit
                     << " bytes for one message; store the weights as external data "
                     << "(onnx.save_model(..., save_as_external_data=True))";
    }
    if (size > options.max_model_bytes) {
        user_error() << what << " bytes, more than the limit of " << options.max_model_bytes
                     << " bytes (ImportOptions::max_model_bytes)";
    }
}

}  // namespace

graph::IRModule from_onnx(const ModelProto& model, const ImportOptions& options,
                          const std::string& model_path) {
    return Importer(model, options, model_path).run();
}

graph::IRModule from_onnx_bytes(std::string_view bytes, const ImportOptions& options,
                                const std::string& model_path) {
    std::string name = model_path.empty() ? "<memory>" : model_path;
    check_model_size(static_cast<int64_t>(bytes.size()), options,
                     name + ": the model is " + std::to_string(bytes.size()));
    ModelProto model;
    if (!parse_model(bytes.data(), bytes.size(), &model)) {
        user_error() << name << ": not a valid ONNX model (the protobuf is truncated, malformed "
                     << "or nested deeper than " << kMaxMessageDepth << " messages)";
    }
    return from_onnx(model, options, model_path);
}

graph::IRModule from_onnx(const std::string& path, const ImportOptions& options) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        user_error() << path << ": is a directory, not an ONNX model file";
    }
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) user_error() << path << ": cannot open the model file";
    auto size = static_cast<int64_t>(in.tellg());
    if (size < 0) user_error() << path << ": cannot read the model file";
    // Checked before the file is read: a file too big is refused without reading it.
    check_model_size(size, options, path + ": the file is " + std::to_string(size));
    std::string bytes(static_cast<size_t>(size), '\0');
    in.seekg(0);
    if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
        user_error() << path << ": cannot read the model file";
    }
    return from_onnx_bytes(bytes, options, path);
}

}  // namespace anvil::frontend
