// Converters of TFLite's unary operators: RELU, RELU_N1_TO_1, RELU6, LEAKY_RELU, HARD_SWISH,
// LOGISTIC, TANH, QUANTIZE and DEQUANTIZE (SOFTMAX: convert_softmax.cpp). Each keeps its
// operand's layout.
//
// Quantized RELUs rescale to the output's quantization in fixed point and clamp, as TFLite's
// kernels do. QUANTIZE rounds x / scale half away from zero (TfLiteRound), or, from integers,
// rescales (x - zero point) by input scale / output scale in fixed point; with rounding="XNNPACK",
// 8-bit results are XNNPACK's conversions (which the runtime's delegate takes): x times 1 / scale
// rounded half to even, and the requantization with an 8-bit fraction of the ratio. DEQUANTIZE is
// exact. Quantized LOGISTIC and TANH gather from a table of every input value's result: TFLite's
// interpolated fixed-point tables for int16 (int16_activation_tables.h), TFLite Micro's
// fixed-point kernels for int8 with rounding="TFLITE" (gemmlowp_fixed_point.h), else TFLite's
// float32 function of the real value. An 8-bit HARD_SWISH gathers from a table of TFLite's
// fixed-point kernel's results (quantized_hard_swish.h).
#include <algorithm>
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/gemmlowp_fixed_point.h"
#include "frontend/tflite/int16_activation_tables.h"
#include "frontend/tflite/quantized_hard_swish.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/activation.h"
#include "ops/qnn.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

bool unquantized_input(const TfContext& ctx) {
    return !ctx.is_quantized(ctx.input_tensor(0));
}

// A RELU-family operator: `activation` on a float operand; on a quantized one, the operand less
// its zero point rescaled to the result's quantization (the ratio of the scales divided in float,
// as TFLite's kernels), plus its zero point, clamped.
void convert_relu_family(TfContext& ctx, int8_t activation) {
    ctx.expect_arity(1, 1, 1);
    const TfValue& x = ctx.input(0);
    if (unquantized_input(ctx)) {
        ctx.set_output(0, float_activation(ctx, x.expr, activation), x.channels_first);
        return;
    }
    const TfliteTensor& out_t = ctx.output_tensor(0);
    DataType t = ctx.dtype_of(out_t.type, "the result");
    ctx.expect_same_type();
    Expr y = requantize_integers(ctx, x.expr, per_tensor(ctx, ctx.input_tensor(0), "the operand"),
                                 per_tensor(ctx, out_t, "the result"), /*ratio_in_float=*/true);
    auto [lo, hi] = quantized_activation_range(ctx, activation, out_t, t);
    ctx.set_output(0, clamp_to(ctx, y, lo, hi, t), x.channels_first);
}

// A float op `op` (with `attrs`) on the operand's real values; the result quantized as the
// model's result is.
void convert_through_float(TfContext& ctx, const char* op, Ref<graph::Attrs> attrs = nullptr) {
    ctx.expect_arity(1, 1, 1);
    bool cf = ctx.input(0).channels_first;
    Expr y = ctx.call(op, {dequantized_input(ctx, 0, cf)}, std::move(attrs));
    ctx.set_output(0, quantized_result(ctx, y), cf);
}

}  // namespace

Expr dequantized_input(const TfContext& ctx, size_t i, bool channels_first) {
    const TfliteTensor& t = ctx.input_tensor(i);
    Expr x = channels_first ? ctx.input_channels_first(i) : ctx.input_tflite(i);
    if (t.type == tensor_type::kFloat32) return x;
    if (t.type == tensor_type::kFloat16) return cast_to(ctx, x, DataType::float32());
    Quantized q = quantization_of(ctx, t, "operand " + std::to_string(i));
    int64_t rank = ctx.rank(x);
    int64_t axis = q.axis;
    if (axis >= 0 && channels_first) axis = channels_first_axis(axis);
    // (x - zero point) and the scale are exact in float32; their product rounds once, as
    // TFLite's float(double(scale) * (x - zero point)) does.
    Expr v = ctx.call("subtract", {cast_to(ctx, x, DataType::int32()),
                                   int32_along(ctx, q.zero_points, rank, axis)});
    return ctx.call("multiply", {cast_to(ctx, v, DataType::float32()),
                                 float32_along(ctx, q.scales, rank, axis)});
}

Expr quantized_result(const TfContext& ctx, const Expr& y) {
    const TfliteTensor& out_t = ctx.output_tensor(0);
    if (out_t.type == tensor_type::kFloat32) return y;
    DataType t = ctx.dtype_of(out_t.type, "the result");
    Quantized q = per_tensor(ctx, out_t, "the result");
    Expr v = round_half_away(ctx, ctx.call("divide", {y, float32_scalar(ctx, q.scales[0])}));
    if (q.zero_points[0] != 0) {
        v = ctx.call("add", {v, float32_scalar(ctx, double(q.zero_points[0]))});
    }
    auto [lo, hi] = ops::quantized_range(t);
    return clamp_to(ctx, v, int64_t(lo), int64_t(hi), t);
}

void convert_relu(TfContext& ctx) {
    convert_relu_family(ctx, activation::kRelu);
}
void convert_relu_n1_to_1(TfContext& ctx) {
    convert_relu_family(ctx, activation::kReluN1To1);
}
void convert_relu6(TfContext& ctx) {
    convert_relu_family(ctx, activation::kRelu6);
}
// LEAKY_RELU: x or alpha * x; quantized, (x - zero point) rescaled by input_scale / output_scale
// where it is >= 0 and by input_scale * alpha / output_scale (computed in float, as TFLite does)
// where not, plus the output zero point, saturated; 8-bit ones with rounding="XNNPACK" as
// XNNPACK's kernel where the runtime's delegate takes them.
void convert_leaky_relu(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    float alpha = ctx.options(options_type::kLeakyRelu).float32(leaky_relu_options::kAlpha);
    const TfValue& x = ctx.input(0);
    if (unquantized_input(ctx)) {
        auto [attrs, a] = new_attrs<ops::LeakyReluAttrs>();
        a->alpha = alpha;
        ctx.set_output(0, ctx.call("nn.leaky_relu", {x.expr}, attrs), x.channels_first);
        return;
    }
    const TfliteTensor& out_t = ctx.output_tensor(0);
    DataType t = ctx.dtype_of(out_t.type, "the result");
    ctx.expect_same_type();
    Quantized in = per_tensor(ctx, ctx.input_tensor(0), "the operand");
    Quantized out = per_tensor(ctx, out_t, "the result");
    float in_scale = float(in.scales[0]), out_scale = float(out.scales[0]);
    Expr v = cast_to(ctx, x.expr, DataType::int32());
    if (in.zero_points[0] != 0) v = ctx.call("subtract", {v, int32_scalar(ctx, in.zero_points[0])});
    if (alpha < 0 || !std::isfinite(alpha)) {
        ctx.error() << "quantized LEAKY_RELU with alpha " << alpha
                    << " is not supported (alpha >= 0)";
    }
    // XNNPACK's 8-bit leaky ReLU, which the runtime's delegate takes where both ratios (in float)
    // are in [2^-8, 2^7]: (x - zero point) times round(256 ratio), plus 128 and the output zero
    // point times 256, shifted right by 8.
    const float positive = in_scale / out_scale, negative = positive * alpha;
    if (ctx.xnnpack_rounding() && t.bits() == 8 && positive >= 0x1p-8f && positive <= 0x1p+7f &&
        negative >= 0x1p-8f && negative <= 0x1p+7f) {
        auto times = [&](float ratio) {
            return ctx.call("multiply",
                            {v, int32_scalar(ctx, int64_t(std::lrint(256.0f * ratio)))});
        };
        Expr y = ctx.call("where", {ctx.call("greater_equal", {v, int32_scalar(ctx, 0)}),
                                    times(positive), times(negative)});
        y = ctx.call("add", {y, int32_scalar(ctx, out.zero_points[0] * 256 + 128)});
        y = ctx.call("right_shift", {y, int32_scalar(ctx, 8)});
        auto [lo, hi] = ops::quantized_range(t);
        ctx.set_output(0, clamp_to(ctx, y, int64_t(lo), int64_t(hi), t), x.channels_first);
        return;
    }
    Expr identity = multiply_by_ratio(ctx, v, {double(in_scale / out_scale)}, -1);
    // alpha 0: TFLite's multiplier is 0, so are the negative values.
    Expr scaled = alpha == 0
                      ? int32_scalar(ctx, 0)
                      : multiply_by_ratio(ctx, v, {double(in_scale * alpha / out_scale)}, -1);
    Expr y =
        ctx.call("where", {ctx.call("greater_equal", {v, int32_scalar(ctx, 0)}), identity, scaled});
    if (out.zero_points[0] != 0) y = ctx.call("add", {y, int32_scalar(ctx, out.zero_points[0])});
    auto [lo, hi] = ops::quantized_range(t);
    ctx.set_output(0, clamp_to(ctx, y, int64_t(lo), int64_t(hi), t), x.channels_first);
}

// HARD_SWISH: x * relu6(x + 3) / 6. A quantized 8-bit one gathers from a table of TFLite's
// fixed-point result for each input value (quantized_hard_swish.h); TFLite defines no int16 one,
// which computes on the real values.
void convert_hard_swish(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    int8_t type = ctx.input_tensor(0).type;
    if (type != tensor_type::kInt8 && type != tensor_type::kUInt8) {
        convert_through_float(ctx, "nn.hardswish");
        return;
    }
    ctx.expect_same_type();
    DataType t = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
    Quantized in = per_tensor(ctx, ctx.input_tensor(0), "the operand");
    Quantized out = per_tensor(ctx, ctx.output_tensor(0), "the result");
    auto [lo, hi] = ops::quantized_range(t);
    auto hard_swish = QuantizedHardSwish::from_scales(
        float(in.scales[0]), int32_t(in.zero_points[0]), float(out.scales[0]),
        int32_t(out.zero_points[0]), int32_t(lo), int32_t(hi), ctx.loc());
    std::vector<uint8_t> values;  // the bytes of the int8 or uint8 results
    for (int64_t v = int64_t(lo); v <= int64_t(hi); ++v) {
        values.push_back(uint8_t(hard_swish(int32_t(v))));
    }
    const TfValue& x = ctx.input(0);
    ctx.set_output(0, table_lookup(ctx, table_constant(ctx, t, values), x.expr, int64_t(lo)),
                   x.channels_first);
}

namespace {

// TFLite's int16 LOGISTIC and TANH (int16_activation_tables.h): both zero points 0, the
// result in Q0.15.
void convert_int16_sigmoid_or_tanh(TfContext& ctx, bool tanh) {
    Quantized in = per_tensor(ctx, ctx.input_tensor(0), "the operand");
    Quantized out = per_tensor(ctx, ctx.output_tensor(0), "the result");
    if (ctx.output_tensor(0).type != tensor_type::kInt16 || in.zero_points[0] != 0 ||
        out.zero_points[0] != 0 || std::abs(out.scales[0] * 32768.0 - 1.0) > 1e-3) {
        ctx.error() << "an int16 " << (tanh ? "TANH" : "LOGISTIC")
                    << " needs zero points 0 and an int16 result of scale 2^-15, as TFLite's "
                       "kernel; got the zero points "
                    << in.zero_points[0] << " and " << out.zero_points[0] << ", the scale "
                    << out.scales[0] << " and " << tensor_type_name(ctx.output_tensor(0).type);
    }
    Int16Prescale p = int16_activation_prescale(in.scales[0], tanh);
    if (p.multiplier > 32767) {
        ctx.error() << "the input scale " << in.scales[0] << " is too large for TFLite's int16 "
                    << (tanh ? "TANH" : "LOGISTIC") << " (at most about 2.67)";
    }
    std::vector<int16_t> values =
        int16_table([&](int16_t v) { return tanh ? int16_tanh(p, v) : int16_logistic(p, v); });
    const TfValue& x = ctx.input(0);
    ctx.set_output(0, table_lookup(ctx, table_constant(ctx, values), x.expr, -32768),
                   x.channels_first);
}

// TFLite Micro's int8 LOGISTIC or TANH (reference_integer_ops' Logistic and Tanh) of every int8
// value, as bytes: the input less its zero point rescaled to Q4.27 (the multiplier and shift of
// frexp(scale * 2^27)), gemmlowp's fixed-point logistic or tanh, rounded to Q0.8 less 128
// (LOGISTIC) or to Q0.7 (TANH), saturated; inputs at or past the radius where the rescale would
// overflow saturate directly.
std::vector<uint8_t> micro_int8_table(double input_scale, int32_t input_zero_point, bool tanh) {
    constexpr int kInputIntegerBits = 4;
    int shift = 0;
    const double significand =
        std::frexp(double(float(input_scale)) * double(1 << (31 - kInputIntegerBits)), &shift);
    const auto multiplier = int32_t(std::round(significand * double(int64_t{1} << 31)));
    // TFLite's CalculateInputRadius: floor(15 * 2^27 / 2^shift).
    const auto radius =
        int32_t(std::floor(15.0 * double(int64_t{1} << 27) / std::ldexp(1.0, shift)));
    std::vector<uint8_t> values;
    for (int32_t v = -128; v <= 127; ++v) {
        const int32_t input = v - input_zero_point;
        int32_t y = 0;
        if (input <= -radius) {
            y = -128;
        } else if (input >= radius) {
            y = 127;
        } else {
            const int32_t q4 = gemmlowp::multiply_by_quantized_multiplier(input, multiplier, shift);
            y = tanh ? gemmlowp::rounding_divide_by_pot(gemmlowp::tanh(q4, kInputIntegerBits), 24)
                     : gemmlowp::rounding_divide_by_pot(gemmlowp::logistic(q4, kInputIntegerBits),
                                                        23) -
                           128;
            y = std::clamp(y, -128, 127);
        }
        values.push_back(uint8_t(int8_t(y)));
    }
    return values;
}

// An 8-bit LOGISTIC or TANH, gathered from a table of each input value's result. With
// rounding="TFLITE", an int8 one is TFLite Micro's fixed-point kernel (micro_int8_table), whose
// result quantization is fixed: scale 1/256 and zero point -128 (LOGISTIC), 1/128 and 0 (TANH).
// Otherwise as TFLite's CPU kernels: the function of the input's real value in float32, divided
// by the output scale and rounded (half away from zero; half to even with rounding="XNNPACK", as
// XNNPACK's table), plus the zero point, clamped.
void convert_8bit_sigmoid_or_tanh(TfContext& ctx, bool tanh) {
    ctx.expect_same_type();
    DataType t = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
    Quantized in = per_tensor(ctx, ctx.input_tensor(0), "the operand");
    Quantized out = per_tensor(ctx, ctx.output_tensor(0), "the result");
    auto [lo, hi] = ops::quantized_range(t);
    const TfValue& x = ctx.input(0);
    if (t == DataType::int_(8) && !ctx.xnnpack_rounding()) {
        const float scale = tanh ? 1.0f / 128 : 1.0f / 256;
        const int64_t zero_point = tanh ? 0 : -128;
        if (float(out.scales[0]) != scale || out.zero_points[0] != zero_point) {
            ctx.error() << "an int8 " << (tanh ? "TANH" : "LOGISTIC")
                        << "'s result must have scale " << (tanh ? "1/128" : "1/256")
                        << " and zero point " << zero_point << ", as TFLite's kernel; got "
                        << out.scales[0] << " and " << out.zero_points[0];
        }
        // Below 2^-28 the kernel's shift is negative, which its input radius does not take.
        if (!(float(in.scales[0]) >= std::ldexp(1.0f, -28))) {
            ctx.error() << "the input scale " << in.scales[0] << " is too small for TFLite's int8 "
                        << (tanh ? "TANH" : "LOGISTIC") << " (at least 2^-28)";
        }
        std::vector<uint8_t> values =
            micro_int8_table(in.scales[0], int32_t(in.zero_points[0]), tanh);
        ctx.set_output(0, table_lookup(ctx, table_constant(ctx, t, values), x.expr, -128),
                       x.channels_first);
        return;
    }
    std::vector<uint8_t> values;
    for (int64_t v = int64_t(lo); v <= int64_t(hi); ++v) {
        const float real = float(in.scales[0]) * float(v - in.zero_points[0]);
        const float f = tanh ? std::tanh(real) : 1.0f / (1.0f + std::exp(-real));
        const float scaled = ctx.xnnpack_rounding() ? std::nearbyint(f / float(out.scales[0]))
                                                    : std::round(f * (1.0f / float(out.scales[0])));
        const double q = std::clamp(double(scaled) + double(out.zero_points[0]), lo, hi);
        values.push_back(uint8_t(int64_t(q)));  // the byte of the int8 or uint8 value
    }
    ctx.set_output(0, table_lookup(ctx, table_constant(ctx, t, values), x.expr, int64_t(lo)),
                   x.channels_first);
}

void convert_sigmoid_or_tanh(TfContext& ctx, bool tanh) {
    ctx.expect_arity(1, 1, 1);
    int8_t type = ctx.input_tensor(0).type;
    if (!ctx.is_quantized(ctx.input_tensor(0))) {
        convert_through_float(ctx, tanh ? "tanh" : "sigmoid");
    } else if (type == tensor_type::kInt16) {
        convert_int16_sigmoid_or_tanh(ctx, tanh);
    } else {
        convert_8bit_sigmoid_or_tanh(ctx, tanh);
    }
}

}  // namespace

void convert_logistic(TfContext& ctx) {
    convert_sigmoid_or_tanh(ctx, false);
}
void convert_tanh(TfContext& ctx) {
    convert_sigmoid_or_tanh(ctx, true);
}

void convert_quantize(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    const TfValue& x = ctx.input(0);
    const TfliteTensor& out_t = ctx.output_tensor(0);
    DataType t = ctx.dtype_of(out_t.type, "the result");
    const TfliteTensor& in_t = ctx.input_tensor(0);
    auto [lo, hi] = ops::quantized_range(t);
    Quantized out = per_tensor(ctx, out_t, "the result");
    const bool xnnpack_8bit = ctx.xnnpack_rounding() && t.bits() == 8;
    if (in_t.type == tensor_type::kFloat32) {
        if (!xnnpack_8bit) {
            ctx.set_output(0, quantized_result(ctx, x.expr), x.channels_first);
            return;
        }
        // XNNPACK's conversion: x times the float32 reciprocal of the scale, rounded half to
        // even, plus the zero point.
        Expr v = ctx.call(
            "round",
            {ctx.call("multiply", {x.expr, float32_scalar(ctx, 1.0f / float(out.scales[0]))})});
        v = ctx.call("add", {v, float32_scalar(ctx, double(out.zero_points[0]))});
        ctx.set_output(0, clamp_to(ctx, v, int64_t(lo), int64_t(hi), t), x.channels_first);
        return;
    }
    Quantized in = per_tensor(ctx, in_t, "the operand");
    const float ratio = float(in.scales[0]) / float(out.scales[0]);
    if (xnnpack_8bit && in_t.type == out_t.type && ratio >= 0x1.0p-8f && ratio <= 0x1.0p+7f) {
        // XNNPACK's 8-bit requantization (which takes these ratios): (x - zero point) times
        // round(256 ratio), plus 128, shifted right by 8 (halves up), plus the zero point.
        Expr v = ctx.call("subtract", {cast_to(ctx, x.expr, DataType::int32()),
                                       int32_scalar(ctx, in.zero_points[0])});
        v = ctx.call("add", {ctx.call("multiply",
                                      {v, int32_scalar(ctx, int64_t(std::lrint(256.0f * ratio)))}),
                             int32_scalar(ctx, 128)});
        v = ctx.call("add", {ctx.call("right_shift", {v, int32_scalar(ctx, 8)}),
                             int32_scalar(ctx, out.zero_points[0])});
        ctx.set_output(0, clamp_to(ctx, v, int64_t(lo), int64_t(hi), t), x.channels_first);
        return;
    }
    // From integers: rescaled in fixed point.
    Expr y = requantize_integers(ctx, x.expr, in, out);
    ctx.set_output(0, clamp_to(ctx, y, int64_t(lo), int64_t(hi), t), x.channels_first);
}

void convert_dequantize(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    bool cf = ctx.input(0).channels_first;
    ctx.set_output(0, dequantized_input(ctx, 0, cf), cf);
}

}  // namespace anvil::frontend::tflite
