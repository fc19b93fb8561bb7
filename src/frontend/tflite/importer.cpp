// The TFLite importer: decodes the model (tflite_model.h), then converts the main subgraph's
// operators in order through the converter table.
#include <set>
#include <sstream>

#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/from_tflite.h"
#include "frontend/tflite/tflite_model.h"
#include "frontend/tflite/tflite_schema.h"
#include "graph/expr.h"

namespace anvil::frontend {

namespace tflite {
namespace {

class Importer : public ValueSource {
public:
    Importer(const TfliteModel& model, const TfliteImportOptions& options)
        : model_(model), graph_(model.subgraphs[0]), options_(options) {}

    graph::IRModule run() {
        SourceLoc model_loc{.file = model_.origin};
        if (options_.rounding != "TFLITE" && options_.rounding != "XNNPACK") {
            user_error(model_loc) << "rounding '" << options_.rounding
                                  << "' is neither TFLITE nor XNNPACK";
        }
        check_supported(model_loc);
        values_.assign(graph_.tensors.size(), std::nullopt);
        std::vector<Ref<graph::Var>> params = make_params(model_loc);
        for (size_t k = 0; k < graph_.operators.size(); ++k) convert(k);
        std::vector<graph::Expr> outputs;
        NodeBuilder at_model(model_loc, "output");
        for (int32_t t : graph_.outputs) {
            const TfValue& v = value(t, at_model);
            outputs.push_back(v.channels_first ? transpose_back(v.expr, model_loc) : v.expr);
        }
        if (outputs.empty()) user_error(model_loc) << "the model's main subgraph has no outputs";
        graph::Expr body = outputs.size() == 1 ? outputs[0] : graph::make_tuple(outputs, model_loc);
        graph::IRModule mod;
        mod.functions["main"] = graph::make_function(params, body, false, model_loc);
        return mod;
    }

    const TfValue& value(int32_t t, const NodeBuilder& user) override {
        if (values_[t]) return *values_[t];
        const TfliteTensor& tensor = graph_.tensors[t];
        std::span<const uint8_t> data = model_.buffers[tensor.buffer];
        int64_t count = 1;
        for (int32_t d : tensor.shape) count *= d;
        if (data.empty() && count != 0) {
            user.error() << "tensor " << t << " ('" << tensor.name << "') is read before any "
                         << "operator computes it, and it is neither an input nor a constant";
        }
        DataType dtype = dtype_of_tensor_type(tensor.type, user, "tensor '" + tensor.name + "'");
        std::vector<int64_t> shape(tensor.shape.begin(), tensor.shape.end());
        runtime::NDArray array = runtime::NDArray::empty(shape, graph::dl_dtype_of(dtype));
        array.copy_from(data.data(), data.size());
        values_[t] = TfValue{graph::make_constant(array, user.loc()), false};
        return *values_[t];
    }

private:
    // Every operator without a converter, listed in one error.
    void check_supported(const SourceLoc& loc) {
        std::ostringstream missing;
        size_t count = 0;
        for (size_t k = 0; k < graph_.operators.size(); ++k) {
            const TfliteOperator& op = graph_.operators[k];
            const TfliteOperatorCode& code = model_.operator_codes[op.opcode_index];
            if (find_converter(code)) continue;
            missing << (count++ ? ", " : "") << "operator " << k << " ("
                    << (code.builtin == op::kCustom ? "CUSTOM '" + code.custom + "'"
                                                    : builtin_name(code.builtin))
                    << ")";
        }
        if (count) {
            user_error(loc) << "the model uses " << count << " operator(s) the TFLite importer "
                            << "does not support: " << missing.str();
        }
    }

    std::vector<Ref<graph::Var>> make_params(const SourceLoc& loc) {
        std::set<std::string> names;
        for (const auto& [name, shape] : options_.input_shapes) names.insert(name);
        for (const auto& [name, dtype] : options_.input_dtypes) names.insert(name);
        std::vector<Ref<graph::Var>> params;
        NodeBuilder at(loc, "input");
        for (size_t i = 0; i < graph_.inputs.size(); ++i) {
            int32_t t = graph_.inputs[i];
            const TfliteTensor& tensor = graph_.tensors[t];
            std::string name = tensor.name.empty() ? "input_" + std::to_string(i) : tensor.name;
            if (values_[t]) user_error(loc) << "input '" << name << "' is listed twice";
            names.erase(name);
            std::vector<int64_t> shape(tensor.shape.begin(), tensor.shape.end());
            if (auto it = options_.input_shapes.find(name); it != options_.input_shapes.end()) {
                check_shape_override(name, tensor, it->second, loc);
                shape = it->second;
            }
            DataType dtype = dtype_of_tensor_type(tensor.type, at, "input '" + name + "'");
            if (auto it = options_.input_dtypes.find(name); it != options_.input_dtypes.end()) {
                if (it->second != dtype) {
                    user_error(loc) << "input '" << name << "' is " << dtype.str()
                                    << " in the model; the given dtype is " << it->second.str();
                }
            }
            auto var = graph::make_var(name, graph::make_tensor_type(shape, dtype), loc);
            values_[t] = TfValue{var, false};
            params.push_back(var);
        }
        if (!names.empty()) {
            user_error(loc) << "the model has no input named '" << *names.begin() << "'";
        }
        return params;
    }

    static void check_shape_override(const std::string& name, const TfliteTensor& t,
                                     const std::vector<int64_t>& shape, const SourceLoc& loc) {
        const std::vector<int32_t>& known = t.shape_signature.empty() ? t.shape : t.shape_signature;
        bool fits = shape.size() == known.size();
        for (size_t d = 0; fits && d < shape.size(); ++d) {
            fits = shape[d] >= 0 && (known[d] < 0 || known[d] == shape[d] || d == 0);
        }
        if (!fits) {
            std::vector<int64_t> k(known.begin(), known.end());
            user_error(loc) << "the shape " << ints_str(shape) << " given for input '" << name
                            << "' does not fit the model's " << ints_str(k)
                            << " (-1: any size; the batch may change)";
        }
    }

    static graph::Expr transpose_back(const graph::Expr& e, const SourceLoc& loc) {
        return transpose_at(NodeBuilder(loc, "output"), e, kToChannelsLast);
    }

    void convert(size_t k) {
        const TfliteOperator& op = graph_.operators[k];
        const TfliteOperatorCode& code = model_.operator_codes[op.opcode_index];
        std::string first_output =
            op.outputs.empty() ? std::string() : graph_.tensors[op.outputs[0]].name;
        SourceLoc loc{.file = model_.origin,
                      .node_name = "operator " + std::to_string(k) +
                                   (first_output.empty() ? "" : " -> " + first_output),
                      .op_type = operator_name(code),
                      .opset = code.version};
        TfContext ctx(model_, graph_, op, loc, *this, options_.rounding == "XNNPACK");
        find_converter(code)(ctx);
        for (size_t i = 0; i < op.outputs.size(); ++i) {
            const std::optional<TfValue>& v = ctx.outputs()[i];
            if (!v) internal_error() << loc.str() << ": the converter set no result " << i;
            check_result(ctx, op.outputs[i], *v);
            values_[op.outputs[i]] = *v;
        }
    }

    // A result must have the element type the model declares, and its shape when the model's
    // input shapes are used.
    void check_result(const TfContext& ctx, int32_t t, const TfValue& v) {
        const TfliteTensor& tensor = graph_.tensors[t];
        const graph::TensorType& type = ctx.tensor_type(v.expr, "the result");
        DataType want = ctx.dtype_of(tensor.type, "the result");
        if (type.dtype != want) {
            ctx.error() << "computes " << type.dtype.str() << " for tensor '" << tensor.name
                        << "', which the model declares " << want.str();
        }
        if (!options_.input_shapes.empty()) return;
        std::vector<int64_t> declared(tensor.shape.begin(), tensor.shape.end());
        std::vector<int64_t> shape = ctx.static_shape(v.expr, "the result");
        if (v.channels_first && shape.size() == 4) {
            shape = {shape[0], shape[2], shape[3], shape[1]};
        }
        if (shape != declared &&
            !(declared.empty() && tensor.shape_signature.empty() && shape.size() <= 1)) {
            ctx.error() << "computes the shape " << ints_str(shape) << " for tensor '"
                        << tensor.name << "', which the model declares " << ints_str(declared);
        }
    }

    const TfliteModel& model_;
    const TfliteSubgraph& graph_;
    const TfliteImportOptions& options_;
    std::vector<std::optional<TfValue>> values_;
};

}  // namespace
}  // namespace tflite

graph::IRModule from_tflite_file(const std::string& path, const TfliteImportOptions& options) {
    tflite::TfliteModel model = tflite::read_tflite_file(path);
    return tflite::Importer(model, options).run();
}

graph::IRModule from_tflite_bytes(std::string_view bytes, const TfliteImportOptions& options,
                                  const std::string& origin) {
    tflite::TfliteModel model =
        tflite::read_tflite_model(std::vector<uint8_t>(bytes.begin(), bytes.end()), origin);
    return tflite::Importer(model, options).run();
}

}  // namespace anvil::frontend
