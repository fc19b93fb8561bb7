// The QNN ops on quantized tensors other than the products (ops/qnn_conv.cpp): quantize,
// dequantize, requantize, the quantized elementwise ops, concatenate and average pooling, and
// fixed_point_multiply, the integer op requantize becomes. Only fixed_point_multiply has a kernel;
// the others are rewritten by canonicalize_qnn (ops/qnn.h says what each computes).
#include "ops/qnn.h"

#include <algorithm>
#include <cmath>

#include "graph/op.h"
#include "ir/intrinsics.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/op_table.h"
#include "ops/pool.h"
#include "ops/qnn_params.h"
#include "ops/tensor_shape.h"
#include "ops/transform.h"
#include "support/error.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::TensorType;
using graph::Type;

void check_rounding(const std::string& rounding, const std::string& op, const SourceLoc& loc) {
    if (rounding != "UPWARD" && rounding != "TONEAREST" && rounding != "TFLITE") {
        user_error(loc) << op << ": rounding \"" << rounding
                        << "\" is not one of \"UPWARD\", \"TONEAREST\", \"TFLITE\"";
    }
}

std::pair<double, double> quantized_range(DataType t) {
    if (t == DataType::uint(8)) return {0, 255};
    if (t == DataType::int_(8)) return {-128, 127};
    if (t == DataType::uint(16)) return {0, 65535};
    if (t == DataType::int_(16)) return {-32768, 32767};
    return {double(INT32_MIN), double(INT32_MAX)};
}

FixedPoint fixed_point_of(double ratio, const std::string& what, const SourceLoc& loc) {
    if (!(ratio > 0) || !std::isfinite(ratio) || ratio >= std::ldexp(1.0, 30)) {
        user_error(loc) << what << " = " << ratio
                        << " cannot be a fixed-point multiplier (it must be in (0, 2^30))";
    }
    int exponent = 0;
    double significand = std::frexp(ratio, &exponent);  // in [0.5, 1)
    auto m = static_cast<int64_t>(std::llround(significand * std::ldexp(1.0, 31)));
    if (m == (int64_t(1) << 31)) {
        m /= 2;
        ++exponent;
    }
    // Just below 2^30 the significand can round up to 2^31: the largest multiplier instead, as
    // TFLite's QuantizeMultiplier saturates it (the shift stays within [-31, 30]).
    if (exponent > 30) return {INT32_MAX, 30};
    if (exponent < -31) return {0, 0};
    return {static_cast<int32_t>(m), exponent};
}

Ref<FixedPointMultiplyAttrs> fixed_point_multiply_attrs(const std::string& rounding,
                                                        const std::vector<int32_t>& shifts) {
    auto attrs = make_ref<FixedPointMultiplyAttrs>();
    auto* a = const_cast<FixedPointMultiplyAttrs*>(attrs.get());
    a->rounding = rounding;
    a->is_lshift_required =
        std::any_of(shifts.begin(), shifts.end(), [](int32_t s) { return s > 0; });
    return attrs;
}

namespace {

// ---- type rules ---------------------------------------------------------------------------

Type quantize_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                   const SourceLoc& loc) {
    const auto& a = attrs_as<QuantizeAttrs>(attrs);
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    if (!x.dtype.is_float()) {
        user_error(loc) << op.name << " needs a floating-point input, got " << x.dtype.str();
    }
    check_quantized_dtype(op.name, "out_dtype", a.out_dtype, loc);
    check_qparams(op.name, {args[1], args[2]}, "", x, a.axis, loc);
    return graph::make_tensor_type(x.shape, a.out_dtype);
}

Type dequantize_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                     const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    check_quantized_dtype(op.name, "the input", x.dtype, loc);
    check_qparams(op.name, {args[1], args[2]}, "", x, attrs_as<DequantizeAttrs>(attrs).axis, loc);
    return graph::make_tensor_type(x.shape, DataType::float32());
}

Type requantize_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                     const SourceLoc& loc) {
    const auto& a = attrs_as<RequantizeAttrs>(attrs);
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    check_quantized_dtype(op.name, "the input", x.dtype, loc);
    check_quantized_dtype(op.name, "out_dtype", a.out_dtype, loc);
    check_rounding(a.rounding, op.name, loc);
    if (a.compute_dtype != "int64" && a.compute_dtype != "float32" &&
        a.compute_dtype != "float64") {
        user_error(loc) << op.name << ": compute_dtype \"" << a.compute_dtype
                        << "\" is not one of \"int64\", \"float32\", \"float64\"";
    }
    check_qparams(op.name, {args[1], args[2]}, "input ", x, a.axis, loc);
    check_qparams(op.name, {args[3], args[4]}, "output ", x, std::nullopt, loc);
    return graph::make_tensor_type(x.shape, a.out_dtype);
}

// qnn.add, qnn.subtract, qnn.mul.
Type qnn_binary_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                     const SourceLoc& loc) {
    const auto& a = attrs_as<QnnBinaryAttrs>(attrs);
    const auto& l = graph::expect_tensor(args[0], loc, "the lhs of " + op.name);
    const auto& r = graph::expect_tensor(args[1], loc, "the rhs of " + op.name);
    check_quantized_dtype(op.name, "the lhs", l.dtype, loc);
    check_quantized_dtype(op.name, "the rhs", r.dtype, loc);
    check_qparams(op.name, {args[2], args[3]}, "lhs ", l, a.lhs_axis, loc);
    check_qparams(op.name, {args[4], args[5]}, "rhs ", r, a.rhs_axis, loc);
    auto shape = broadcast_shape({l.shape, r.shape}, loc, op.name, true);
    check_qparams(op.name, {args[6], args[7]}, "output ", l, std::nullopt, loc);
    return graph::make_tensor_type(shape, l.dtype);
}

const graph::TupleType& expect_tuple(const Type& t, const std::string& op, const char* what,
                                     const SourceLoc& loc) {
    auto* tuple = t.as<graph::TupleType>();
    if (!tuple) user_error(loc) << op << ": " << what << " must be a tuple, got " << type_str(t);
    return *tuple;
}

// qnn.concatenate((q...), (scale...), (zp...), out_scale, out_zp): concatenate's rule on the
// tensors; each tensor's scale and zero point are scalars.
Type qnn_concatenate_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                          const SourceLoc& loc) {
    const auto& data = expect_tuple(args[0], op.name, "the data", loc);
    const auto& scales = expect_tuple(args[1], op.name, "the input scales", loc);
    const auto& zps = expect_tuple(args[2], op.name, "the input zero points", loc);
    size_t n = data.fields.size();
    if (scales.fields.size() != n || zps.fields.size() != n) {
        user_error(loc) << op.name << ": " << n << " tensors but " << scales.fields.size()
                        << " scales and " << zps.fields.size() << " zero points";
    }
    for (size_t i = 0; i < n; ++i) {
        std::string which = "input " + std::to_string(i);
        const auto& t = graph::expect_tensor(data.fields[i], loc, which + " of " + op.name);
        check_quantized_dtype(op.name, which.c_str(), t.dtype, loc);
        check_qparams(op.name, {scales.fields[i], zps.fields[i]}, which + " ", t, std::nullopt,
                      loc);
    }
    const auto& first = graph::expect_tensor(data.fields.empty() ? args[0] : data.fields[0], loc,
                                             "input 0 of " + op.name);
    check_qparams(op.name, {args[3], args[4]}, "output ", first, std::nullopt, loc);
    return get_op("concatenate").infer_type(op, data.fields, attrs, loc);
}

// qnn.avg_pool2d: nn.avg_pool2d's rule on the quantized data.
Type qnn_avg_pool2d_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                         const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    check_quantized_dtype(op.name, "the input", x.dtype, loc);
    check_qparams(op.name, {args[1], args[2]}, "input ", x, std::nullopt, loc);
    check_qparams(op.name, {args[3], args[4]}, "output ", x, std::nullopt, loc);
    Type as_float = graph::make_tensor_type(x.shape, DataType::float32());
    Type pooled = get_op("nn.avg_pool2d").infer_type(op, {as_float}, attrs, loc);
    return graph::make_tensor_type(graph::expect_tensor(pooled, loc, op.name).shape, x.dtype);
}

// qnn.sigmoid, qnn.tanh, qnn.hardswish.
Type qnn_unary_type(const Op& op, const std::vector<Type>& args, const Attrs&,
                    const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    check_quantized_dtype(op.name, "the input", x.dtype, loc);
    check_qparams(op.name, {args[1], args[2]}, "input ", x, std::nullopt, loc);
    check_qparams(op.name, {args[3], args[4]}, "output ", x, std::nullopt, loc);
    return args[0];
}

Type fixed_point_multiply_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                               const SourceLoc& loc) {
    check_rounding(attrs_as<FixedPointMultiplyAttrs>(attrs).rounding, op.name, loc);
    const char* names[] = {"x", "the multiplier", "the shift"};
    std::vector<std::vector<PrimExpr>> shapes;
    for (size_t i = 0; i < 3; ++i) {
        const auto& t =
            graph::expect_tensor(args[i], loc, std::string(names[i]) + " of " + op.name);
        if (t.dtype != DataType::int32()) {
            user_error(loc) << op.name << ": " << names[i] << " must be int32, got "
                            << t.dtype.str();
        }
        shapes.push_back(t.shape);
    }
    return graph::make_tensor_type(broadcast_shape(shapes, loc, op.name, true), DataType::int32());
}

// ---- fixed_point_multiply's kernel --------------------------------------------------------

// One intrinsic call per element: the code generator expands it (ir/fixed_point.h), so that a
// chain of requantizations inlined into one kernel stays one call per step.
const char* fixed_point_multiply_intrinsic(const FixedPointMultiplyAttrs& a) {
    const std::string& rounding = a.rounding;
    if (rounding == "TFLITE") {
        return a.is_lshift_required ? intrin::kFixedPointMultiplyTflite
                                    : intrin::kFixedPointMultiplyTfliteRightShift;
    }
    if (rounding == "TONEAREST") return intrin::kFixedPointMultiplyToNearest;
    return intrin::kFixedPointMultiplyUpward;
}

std::vector<te::Tensor> fixed_point_multiply_compute(const std::vector<te::Tensor>& in,
                                                     const Attrs& attrs, const Type& out) {
    const char* intrinsic =
        fixed_point_multiply_intrinsic(attrs_as<FixedPointMultiplyAttrs>(attrs));
    std::vector<PrimExpr> shape = te_shape(out);
    return {te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            auto at = [&](const te::Tensor& t) { return t(broadcast_index(t.shape(), i, shape)); };
            return make_call(DataType::int32(), intrinsic, {at(in[0]), at(in[1]), at(in[2])});
        },
        "fixed_point_multiply")};
}

Ref<Op> make_qnn_op(const std::string& name, int num_inputs, Ref<Attrs> (*attrs)(),
                    graph::TypeRule rule, const std::string& description) {
    return make_op({.name = name,
                    .num_inputs = num_inputs,
                    .make_default_attrs = attrs,
                    .infer_type = rule,
                    .description = description + " (rewritten by canonicalize_qnn)"});
}

}  // namespace

Ref<Op> make_qnn_quantize_op() {
    return make_qnn_op("qnn.quantize", 3, default_attrs<QuantizeAttrs>, quantize_type,
                       "saturate(round(x / scale) + zero_point)");
}

Ref<Op> make_qnn_dequantize_op() {
    return make_qnn_op("qnn.dequantize", 3, default_attrs<DequantizeAttrs>, dequantize_type,
                       "(q - zero_point) * scale");
}

Ref<Op> make_qnn_requantize_op() {
    return make_qnn_op("qnn.requantize", 5, default_attrs<RequantizeAttrs>, requantize_type,
                       "q from one scale and zero point to another, in fixed point");
}

Ref<Op> make_qnn_add_op() {
    return make_qnn_op("qnn.add", 8, default_attrs<QnnBinaryAttrs>, qnn_binary_type,
                       "quantized numpy-broadcast add");
}

Ref<Op> make_qnn_subtract_op() {
    return make_qnn_op("qnn.subtract", 8, default_attrs<QnnBinaryAttrs>, qnn_binary_type,
                       "quantized numpy-broadcast subtract");
}

Ref<Op> make_qnn_mul_op() {
    return make_qnn_op("qnn.mul", 8, default_attrs<QnnBinaryAttrs>, qnn_binary_type,
                       "quantized numpy-broadcast multiply");
}

Ref<Op> make_qnn_concatenate_op() {
    return make_qnn_op("qnn.concatenate", 5, default_attrs<ConcatenateAttrs>, qnn_concatenate_type,
                       "concatenate of quantized tensors");
}

Ref<Op> make_qnn_avg_pool2d_op() {
    return make_qnn_op("qnn.avg_pool2d", 5, default_attrs<Pool2DAttrs>, qnn_avg_pool2d_type,
                       "average pooling of a quantized tensor");
}

Ref<Op> make_qnn_sigmoid_op() {
    return make_qnn_op("qnn.sigmoid", 5, default_attrs<graph::NoAttrs>, qnn_unary_type,
                       "sigmoid of a quantized tensor");
}

Ref<Op> make_qnn_tanh_op() {
    return make_qnn_op("qnn.tanh", 5, default_attrs<graph::NoAttrs>, qnn_unary_type,
                       "tanh of a quantized tensor");
}

Ref<Op> make_qnn_hardswish_op() {
    return make_qnn_op("qnn.hardswish", 5, default_attrs<graph::NoAttrs>, qnn_unary_type,
                       "hardswish of a quantized tensor");
}

Ref<Op> make_fixed_point_multiply_op() {
    return make_op({.name = "fixed_point_multiply",
                    .num_inputs = 3,
                    .make_default_attrs = default_attrs<FixedPointMultiplyAttrs>,
                    .infer_type = fixed_point_multiply_type,
                    .compute = fixed_point_multiply_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Broadcast,
                    .description = "round(x * multiplier * 2^(shift - 31)) in int32"});
}

}  // namespace anvil::ops
