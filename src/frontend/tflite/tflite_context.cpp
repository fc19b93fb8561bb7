#include "frontend/tflite/tflite_context.h"

#include "frontend/composite_ops.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

namespace {

std::string output_name(const TfliteSubgraph& g, const TfliteOperator& op) {
    if (op.outputs.empty()) return "y";
    const std::string& name = g.tensors[op.outputs[0]].name;
    return name.empty() ? "y" : name;
}

}  // namespace

TfContext::TfContext(const TfliteModel& model, const TfliteSubgraph& graph,
                     const TfliteOperator& op, SourceLoc loc, ValueSource& values,
                     bool xnnpack_rounding)
    : NodeBuilder(std::move(loc), output_name(graph, op)),
      model_(model),
      graph_(graph),
      op_(op),
      code_(model.operator_codes[op.opcode_index]),
      values_(values),
      xnnpack_rounding_(xnnpack_rounding),
      outputs_(op.outputs.size()) {}

void TfContext::expect_arity(size_t min, size_t max, size_t outputs,
                             std::initializer_list<size_t> required) const {
    if (num_inputs() < min || num_inputs() > max) {
        auto e = error();
        e << "takes ";
        if (min == max) {
            e << min;
        } else {
            e << min << " to " << max;
        }
        e << " operand(s), the model gives it " << num_inputs();
    }
    auto require = [&](size_t i) {
        if (!has_input(i)) error() << "operand " << i << " is required, the model omits it";
    };
    if (required.size() == 0) {
        for (size_t i = 0; i < min; ++i) require(i);
    }
    for (size_t i : required) require(i);
    if (num_outputs() != outputs) {
        error() << "has " << outputs << " result(s), the model gives it " << num_outputs();
    }
}

const TfliteTensor& TfContext::input_tensor(size_t i) const {
    if (!has_input(i)) error() << "operand " << i << " is missing";
    return graph_.tensors[op_.inputs[i]];
}

void TfContext::expect_same_type() const {
    if (input_tensor(0).type != output_tensor(0).type) {
        error() << "the operand is " << tensor_type_name(input_tensor(0).type) << ", the result "
                << tensor_type_name(output_tensor(0).type) << "; they must match";
    }
}

const TfliteTensor& TfContext::output_tensor(size_t i) const {
    if (i >= op_.outputs.size()) error() << "result " << i << " is missing";
    return graph_.tensors[op_.outputs[i]];
}

const TfValue& TfContext::input(size_t i) const {
    if (!has_input(i)) error() << "operand " << i << " is missing";
    return values_.value(op_.inputs[i], *this);
}

graph::Expr TfContext::input_tflite(size_t i) const {
    const TfValue& v = input(i);
    return v.channels_first ? transpose(v.expr, kToChannelsLast) : v.expr;
}

graph::Expr TfContext::input_channels_first(size_t i) const {
    const TfValue& v = input(i);
    if (v.channels_first) return v.expr;
    if (rank(v.expr) != 4) {
        error() << "operand " << i << " must be 4-D (NHWC), got rank " << rank(v.expr);
    }
    return transpose(v.expr, kToChannelsFirst);
}

runtime::NDArray TfContext::constant_input(size_t i, const std::string& what) const {
    const TfValue& v = input(i);
    runtime::NDArray data = constant_data(v.expr);
    if (!data.defined() || v.channels_first) {
        error() << what << " (operand " << i << ", tensor '" << input_tensor(i).name
                << "') must be a constant tensor of the model";
    }
    return data;
}

std::vector<int64_t> TfContext::constant_ints(size_t i, const std::string& what) const {
    const TfValue& v = input(i);
    if (v.channels_first) {
        error() << what << " (operand " << i << ") must be a constant tensor of the model";
    }
    return const_ints(v.expr, what + " (operand " + std::to_string(i) + ")");
}

const TfliteOptions& TfContext::options(uint8_t type) const {
    if (op_.options.type() != 0 && op_.options.type() != type) {
        error() << "its builtin options are of union type " << int(op_.options.type())
                << ", this operator's are of type " << int(type);
    }
    return op_.options;
}

void TfContext::set_output(size_t i, graph::Expr e, bool channels_first) {
    if (i >= outputs_.size()) error() << "result " << i << " is missing";
    outputs_[i] = TfValue{std::move(e), channels_first};
}

graph::Expr transpose_at(const NodeBuilder& at, const graph::Expr& x,
                         const std::vector<int64_t>& perm) {
    auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
    a->axes = perm;
    return at.call("transpose", {x}, attrs);
}

graph::Expr TfContext::transpose(const graph::Expr& x, const std::vector<int64_t>& perm) const {
    return transpose_at(*this, x, perm);
}

DataType TfContext::dtype_of(int8_t type, const std::string& what) const {
    return dtype_of_tensor_type(type, *this, what);
}

DataType dtype_of_tensor_type(int8_t type, const NodeBuilder& at, const std::string& what) {
    switch (type) {
        case tensor_type::kFloat32:
            return DataType::float32();
        case tensor_type::kFloat16:
            return DataType::float_(16);
        case tensor_type::kFloat64:
            return DataType::float64();
        case tensor_type::kInt8:
            return DataType::int_(8);
        case tensor_type::kInt16:
            return DataType::int_(16);
        case tensor_type::kInt32:
            return DataType::int32();
        case tensor_type::kInt64:
            return DataType::int64();
        case tensor_type::kUInt8:
            return DataType::uint(8);
        case tensor_type::kUInt16:
            return DataType::uint(16);
        case tensor_type::kUInt32:
            return DataType::uint(32);
        case tensor_type::kUInt64:
            return DataType::uint(64);
        case tensor_type::kBool:
            return DataType::bool_();
        default:
            break;
    }
    at.error() << what << " has element type " << tensor_type_name(type)
               << ", which Anvil does not support";
    ANVIL_UNREACHABLE();
}

bool TfContext::is_quantized(const TfliteTensor& t) const {
    return t.quantization.has_value() && t.type != tensor_type::kFloat32;
}

}  // namespace anvil::frontend::tflite
