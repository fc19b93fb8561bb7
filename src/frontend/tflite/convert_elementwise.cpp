// Converters of TFLite's binary elementwise operators: ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM,
// PRELU; and CAST.
//
// Operands broadcast as numpy does. When one is a 4-D tensor held channels first, both are
// brought to that form (a lower-rank operand is first extended to 4-D NHWC), so the result stays
// channels first. Quantized ADD, SUB and MUL compute as TFLite's integer kernels: ADD and SUB
// rescale both operands (less their zero points, shifted left by 20 bits, 15 for int16) to twice
// the larger input scale in fixed point, add, and rescale the sum to the output (int16 operands
// whose scales are all powers of two, with pot_scale_int16, instead shift the operand of the
// smaller scale right, rounding, and add or subtract in int16); MUL rescales the
// product of the operands less their zero points (8-bit ones with rounding="XNNPACK" in float32,
// as XNNPACK's multiply). MAXIMUM and MINIMUM compare the integers of
// operands quantized as their result is. Quantized PRELU rescales x - zero point by
// input_scale / output_scale where it is >= 0, else its product with alpha - alpha's zero point
// by input_scale * alpha_scale / output_scale (ratios computed in float, as TFLite does).
#include <cmath>
#include <optional>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/quantized_division.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/qnn.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

// Operand i in channels-first form: extended to 4-D NHWC first when of lower rank (a scalar
// stays as it is: it broadcasts either way).
Expr channels_first_operand(const TfContext& ctx, size_t i) {
    const TfValue& v = ctx.input(i);
    if (v.channels_first) return v.expr;
    std::vector<int64_t> shape = ctx.static_shape(v.expr, "operand " + std::to_string(i));
    if (shape.empty()) return v.expr;
    if (shape.size() > 4) {
        ctx.error() << "operand " << i << " of rank " << shape.size()
                    << " cannot broadcast against a 4-D operand";
    }
    Expr x = v.expr;
    if (shape.size() < 4) {
        shape.insert(shape.begin(), 4 - shape.size(), 1);
        x = reshape_to(ctx, x, shape);
    }
    return ctx.transpose(x, kToChannelsFirst);
}

struct Operands {
    Expr a, b;
    bool channels_first;
};

Operands binary_operands(const TfContext& ctx) {
    bool cf = (ctx.input(0).channels_first || ctx.input(1).channels_first) &&
              ctx.output_tensor(0).shape.size() == 4;
    if (cf) return {channels_first_operand(ctx, 0), channels_first_operand(ctx, 1), true};
    return {ctx.input_tflite(0), ctx.input_tflite(1), false};
}

// Whether the operator computes on its operands as they are (float, or integers without a scale).
bool unquantized(const TfContext& ctx) {
    return !ctx.is_quantized(ctx.input_tensor(0));
}

int8_t fused_activation(const TfContext& ctx, uint8_t options_type) {
    return ctx.options(options_type).int8(binary_options::kActivation);
}

// A float operator `op` with a fused activation.
void convert_float(TfContext& ctx, const char* op, int8_t activation) {
    Operands o = binary_operands(ctx);
    ctx.set_output(0, float_activation(ctx, ctx.call(op, {o.a, o.b}), activation),
                   o.channels_first);
}

void check_quantized_types(const TfContext& ctx) {
    int8_t t = ctx.input_tensor(0).type;
    if (ctx.input_tensor(1).type != t || ctx.output_tensor(0).type != t ||
        (t != tensor_type::kInt8 && t != tensor_type::kUInt8 && t != tensor_type::kInt16)) {
        ctx.error() << "quantized operands and result must all be int8, uint8 or int16; got "
                    << tensor_type_name(t) << ", " << tensor_type_name(ctx.input_tensor(1).type)
                    << " -> " << tensor_type_name(ctx.output_tensor(0).type);
    }
    if (t == tensor_type::kInt16) {  // TFLite's 16-bit quantization is symmetric
        for (const TfliteTensor* q :
             {&ctx.input_tensor(0), &ctx.input_tensor(1), &ctx.output_tensor(0)}) {
            if (per_tensor(ctx, *q, "an int16 tensor").zero_points[0] != 0) {
                ctx.error() << "int16 tensor '" << q->name << "' must have the zero point 0";
            }
        }
    }
}

Expr minus_zero_point(const TfContext& ctx, const Expr& x, int64_t zero_point) {
    Expr wide = cast_to(ctx, x, DataType::int32());
    if (zero_point == 0) return wide;
    return ctx.call("subtract", {wide, int32_scalar(ctx, zero_point)});
}

// log2(scale) when TFLite takes the scale for a power of two (CheckedLog2: in float, within
// 1e-3 of an integer).
std::optional<int> power_of_two_exponent(double scale) {
    ScaleLog2 l = scale_log2(scale);
    if (!l.power_of_two) return std::nullopt;
    return l.rounded;
}

// TFLite's 16-bit ADD and SUB of operands with power-of-two scales (pot_scale_int16): the operand
// of the smaller scale is divided by the power of two between its scale and the result's,
// rounding half away from zero (gemmlowp's RoundingDivideByPOT); the other must have the result's
// scale. The int16 sum or difference saturates, then the fused activation clamps it.
void convert_pot_scaled_sum(TfContext& ctx, bool subtract, int8_t activation, int exponent_a,
                            int exponent_b, int exponent_out) {
    const int shift_a = exponent_out - exponent_a, shift_b = exponent_out - exponent_b;
    // gemmlowp's int16 RoundingDivideByPOT is exact up to 2^15; TFLite's kernel computes
    // nonsense past it (its mask wraps), refused here.
    if ((shift_a != 0 && shift_b != 0) || shift_a < 0 || shift_b < 0 || shift_a > 15 ||
        shift_b > 15) {
        ctx.error() << "int16 operands with power-of-two scales (pot_scale_int16) need one "
                       "operand at the result's scale 2^"
                    << exponent_out << " and the other at most 15 powers of two below, got 2^"
                    << exponent_a << " and 2^" << exponent_b;
    }
    Operands o = binary_operands(ctx);
    auto divided = [&](const Expr& x, int shift) {
        Expr wide = cast_to(ctx, x, DataType::int32());
        if (shift == 0) return wide;
        // (x + 2^(shift-1) - [x < 0]) >> shift; x >> 31 is -1 for a negative x, else 0.
        Expr sign = ctx.call("right_shift", {wide, int32_scalar(ctx, 31)});
        Expr biased = ctx.call(
            "add", {ctx.call("add", {wide, sign}), int32_scalar(ctx, int64_t{1} << (shift - 1))});
        return ctx.call("right_shift", {biased, int32_scalar(ctx, shift)});
    };
    Expr y =
        ctx.call(subtract ? "subtract" : "add", {divided(o.a, shift_a), divided(o.b, shift_b)});
    auto [lo, hi] =
        quantized_activation_range(ctx, activation, ctx.output_tensor(0), DataType::int_(16));
    ctx.set_output(0, clamp_to(ctx, y, lo, hi, DataType::int_(16)), o.channels_first);
}

// The rescaled sum (ADD, `subtract` false) or difference (SUB) of quantized operands.
void convert_quantized_sum(TfContext& ctx, bool subtract, uint8_t options_type) {
    check_quantized_types(ctx);
    const TfliteOptions& opt = ctx.options(options_type);
    int8_t activation = opt.int8(binary_options::kActivation);
    DataType t = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
    Quantized qa = per_tensor(ctx, ctx.input_tensor(0), "operand 0");
    Quantized qb = per_tensor(ctx, ctx.input_tensor(1), "operand 1");
    Quantized qo = per_tensor(ctx, ctx.output_tensor(0), "the result");
    if (t.bits() == 16 && opt.boolean(binary_options::kPotScaleInt16, true)) {
        // TFLite takes this path only when every scale is a power of two (zero points are 0).
        auto ea = power_of_two_exponent(qa.scales[0]), eb = power_of_two_exponent(qb.scales[0]);
        auto eo = power_of_two_exponent(qo.scales[0]);
        if (ea && eb && eo) {
            convert_pot_scaled_sum(ctx, subtract, activation, *ea, *eb, *eo);
            return;
        }
    }
    const int left_shift = t.bits() == 16 ? 15 : 20;
    double twice_max = 2 * std::max(qa.scales[0], qb.scales[0]);
    Operands o = binary_operands(ctx);
    auto scaled = [&](const Expr& x, const Quantized& q) {
        Expr shifted = ctx.call("multiply", {minus_zero_point(ctx, x, q.zero_points[0]),
                                             int32_scalar(ctx, int64_t{1} << left_shift)});
        return multiply_by_ratio(ctx, shifted, {q.scales[0] / twice_max}, -1);
    };
    Expr sum = ctx.call(subtract ? "subtract" : "add", {scaled(o.a, qa), scaled(o.b, qb)});
    double out_ratio = twice_max / (double(int64_t{1} << left_shift) * qo.scales[0]);
    Expr y = multiply_by_ratio(ctx, sum, {out_ratio}, -1);
    if (qo.zero_points[0] != 0) y = ctx.call("add", {y, int32_scalar(ctx, qo.zero_points[0])});
    auto [lo, hi] = quantized_activation_range(ctx, activation, ctx.output_tensor(0), t, true);
    ctx.set_output(0, clamp_to(ctx, y, lo, hi, t), o.channels_first);
}

void convert_quantized_product(TfContext& ctx) {
    check_quantized_types(ctx);
    int8_t activation = fused_activation(ctx, options_type::kMul);
    DataType t = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
    Quantized qa = per_tensor(ctx, ctx.input_tensor(0), "operand 0");
    Quantized qb = per_tensor(ctx, ctx.input_tensor(1), "operand 1");
    Quantized qo = per_tensor(ctx, ctx.output_tensor(0), "the result");
    Operands o = binary_operands(ctx);
    Expr product = ctx.call("multiply", {minus_zero_point(ctx, o.a, qa.zero_points[0]),
                                         minus_zero_point(ctx, o.b, qb.zero_points[0])});
    // XNNPACK's 8-bit multiply, which the runtime's delegate takes where its ratio (in float32)
    // is in [2^-16, 2^8): the product (exact in float32) times the ratio, rounded half to even.
    const float float_ratio =
        float(float(qa.scales[0]) * float(qb.scales[0])) / float(qo.scales[0]);
    const bool xnnpack =
        ctx.xnnpack_rounding() && t.bits() == 8 && float_ratio >= 0x1p-16f && float_ratio < 0x1p+8f;
    auto [lo, hi] = quantized_activation_range(ctx, activation, ctx.output_tensor(0), t, xnnpack);
    if (xnnpack) {
        Expr y =
            ctx.call("round", {ctx.call("multiply", {cast_to(ctx, product, DataType::float32()),
                                                     float32_scalar(ctx, float_ratio)})});
        if (qo.zero_points[0] != 0) {
            y = ctx.call("add", {y, float32_scalar(ctx, double(qo.zero_points[0]))});
        }
        ctx.set_output(0, clamp_to(ctx, y, lo, hi, t), o.channels_first);
        return;
    }
    // TFLite's kernel: the runtime computes the ratio in float, TFLite Micro in double.
    const double ratio =
        ctx.xnnpack_rounding() ? double(float_ratio) : qa.scales[0] * qb.scales[0] / qo.scales[0];
    Expr y = multiply_by_ratio(ctx, product, {ratio}, -1);
    if (qo.zero_points[0] != 0) y = ctx.call("add", {y, int32_scalar(ctx, qo.zero_points[0])});
    ctx.set_output(0, clamp_to(ctx, y, lo, hi, t), o.channels_first);
}

// MAXIMUM / MINIMUM: on the integers when both operands are quantized as the result.
void convert_extremum(TfContext& ctx, const char* op) {
    ctx.expect_arity(2, 2, 1);
    if (!unquantized(ctx)) {
        check_quantized_types(ctx);
        Quantized qo = per_tensor(ctx, ctx.output_tensor(0), "the result");
        for (size_t i = 0; i < 2; ++i) {
            Quantized q = per_tensor(ctx, ctx.input_tensor(i), "operand " + std::to_string(i));
            if (q.scales[0] != qo.scales[0] || q.zero_points[0] != qo.zero_points[0]) {
                ctx.error() << "operand " << i << " is quantized with scale " << q.scales[0]
                            << " and zero point " << q.zero_points[0] << ", the result with "
                            << qo.scales[0] << " and " << qo.zero_points[0]
                            << "; quantized operands must share the result's quantization";
            }
        }
    }
    Operands o = binary_operands(ctx);
    ctx.set_output(0, ctx.call(op, {o.a, o.b}), o.channels_first);
}

}  // namespace

void convert_add(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    if (unquantized(ctx))
        return convert_float(ctx, "add", fused_activation(ctx, options_type::kAdd));
    convert_quantized_sum(ctx, false, options_type::kAdd);
}

void convert_sub(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    if (unquantized(ctx)) {
        return convert_float(ctx, "subtract", fused_activation(ctx, options_type::kSub));
    }
    convert_quantized_sum(ctx, true, options_type::kSub);
}

void convert_mul(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    if (unquantized(ctx)) {
        return convert_float(ctx, "multiply", fused_activation(ctx, options_type::kMul));
    }
    convert_quantized_product(ctx);
}

// Quantized DIV (uint8 in TFLite, int8 in TFLite Micro): every quotient of two 8-bit values,
// computed as TFLite's kernel does (quantized_division.h) into a table of 256 x 256, which the
// graph gathers from at a x 256 + b (offset to start at 0).
void convert_quantized_div(TfContext& ctx) {
    check_quantized_types(ctx);
    DataType t = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
    if (t.bits() != 8) {
        ctx.error() << "quantized DIV takes int8 or uint8 operands (as TFLite), got "
                    << tensor_type_name(ctx.output_tensor(0).type);
    }
    Quantized qa = per_tensor(ctx, ctx.input_tensor(0), "operand 0");
    Quantized qb = per_tensor(ctx, ctx.input_tensor(1), "operand 1");
    Quantized qo = per_tensor(ctx, ctx.output_tensor(0), "the result");
    // TFLite's ratio is computed in float: input1_scale / (input2_scale * output_scale).
    double ratio = double(float(qa.scales[0]) / (float(qb.scales[0]) * float(qo.scales[0])));
    ops::FixedPoint f = ops::fixed_point_of(ratio, "the scale ratio of the division", ctx.loc());
    auto [lo, hi] = quantized_activation_range(ctx, fused_activation(ctx, options_type::kDiv),
                                               ctx.output_tensor(0), t);
    QuantizedDivision divide{.dividend_zero_point = int32_t(qa.zero_points[0]),
                             .divisor_zero_point = int32_t(qb.zero_points[0]),
                             .output_zero_point = int32_t(qo.zero_points[0]),
                             .multiplier = f.multiplier,
                             .shift = f.shift,
                             .lo = int32_t(lo),
                             .hi = int32_t(hi)};
    const int32_t first = t.is_uint() ? 0 : -128;
    std::vector<uint8_t> quotients;  // the bytes of uint8 or int8 values
    quotients.reserve(256 * 256);
    for (int32_t a = first; a < first + 256; ++a) {
        for (int32_t b = first; b < first + 256; ++b) quotients.push_back(uint8_t(divide(a, b)));
    }
    Operands o = binary_operands(ctx);
    auto offset = [&](const Expr& x) { return minus_zero_point(ctx, x, first); };
    Expr index =
        ctx.call("add", {ctx.call("multiply", {offset(o.a), int32_scalar(ctx, 256)}), offset(o.b)});
    ctx.set_output(0, table_lookup(ctx, table_constant(ctx, t, quotients), index, 0),
                   o.channels_first);
}

void convert_div(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    if (!unquantized(ctx)) {
        convert_quantized_div(ctx);
        return;
    }
    convert_float(ctx, "divide", fused_activation(ctx, options_type::kDiv));
}

void convert_prelu(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    Operands o = binary_operands(ctx);
    if (unquantized(ctx)) {
        Expr zero = ctx.constant_scalar(ctx.tensor_type(o.a, "the input").dtype, 0);
        Expr y = ctx.call("where", {ctx.call("greater_equal", {o.a, zero}), o.a,
                                    ctx.call("multiply", {o.a, o.b})});
        ctx.set_output(0, y, o.channels_first);
        return;
    }
    check_quantized_types(ctx);
    DataType t = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
    Quantized qx = per_tensor(ctx, ctx.input_tensor(0), "the input");
    Quantized qa = per_tensor(ctx, ctx.input_tensor(1), "alpha");
    Quantized qo = per_tensor(ctx, ctx.output_tensor(0), "the result");
    float sx = float(qx.scales[0]), sa = float(qa.scales[0]), so = float(qo.scales[0]);
    Expr x = minus_zero_point(ctx, o.a, qx.zero_points[0]);
    Expr alpha = minus_zero_point(ctx, o.b, qa.zero_points[0]);
    Expr positive = multiply_by_ratio(ctx, x, {double(sx / so)}, -1);
    Expr negative =
        multiply_by_ratio(ctx, ctx.call("multiply", {x, alpha}), {double(sx * sa / so)}, -1);
    Expr y = ctx.call("where",
                      {ctx.call("greater_equal", {x, int32_scalar(ctx, 0)}), positive, negative});
    if (qo.zero_points[0] != 0) y = ctx.call("add", {y, int32_scalar(ctx, qo.zero_points[0])});
    auto [lo, hi] = ops::quantized_range(t);
    ctx.set_output(0, clamp_to(ctx, y, int64_t(lo), int64_t(hi), t), o.channels_first);
}

// CAST: the values converted to the result's element type (quantized tensors' integers as they
// are, as TFLite's kernel does).
void convert_cast(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    const TfValue& x = ctx.input(0);
    DataType t = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
    ctx.set_output(0, cast_to(ctx, x.expr, t), x.channels_first);
}

void convert_maximum(TfContext& ctx) {
    convert_extremum(ctx, "maximum");
}
void convert_minimum(TfContext& ctx) {
    convert_extremum(ctx, "minimum");
}

}  // namespace anvil::frontend::tflite
