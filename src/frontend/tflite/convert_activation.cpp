// Converters of TFLite's unary operators: RELU, RELU_N1_TO_1, RELU6, LEAKY_RELU, HARD_SWISH,
// LOGISTIC, TANH, SOFTMAX, QUANTIZE and DEQUANTIZE. Each keeps its operand's layout (SOFTMAX maps
// its axis).
//
// Quantized RELUs rescale to the output's quantization in fixed point and clamp, as TFLite's
// kernels do. QUANTIZE rounds x / scale half away from zero (TfLiteRound), or, from integers,
// rescales (x - zero point) by input scale / output scale in fixed point. DEQUANTIZE is exact.
// An 8-bit SOFTMAX computes as TFLite's CPU kernel: exp(-input_scale * beta * (max - x)) from a
// 256-entry float table, normalised in float32, rounded half away from zero. Quantized LOGISTIC,
// TANH and HARD_SWISH (and a 16-bit SOFTMAX) compute on the real values and quantize the result,
// which can differ from TFLite's fixed-point and lookup-table kernels by one step.
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/activation.h"
#include "ops/qnn.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

bool unquantized_input(const TfContext& ctx) {
    return !ctx.is_quantized(ctx.input_tensor(0));
}

// A RELU-family operator: `activation` on a float operand; on a quantized one, the operand less
// its zero point rescaled to the result's quantization, plus its zero point, clamped.
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
                                 per_tensor(ctx, out_t, "the result"));
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
// where not, plus the output zero point, saturated.
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

void convert_hard_swish(TfContext& ctx) {
    convert_through_float(ctx, "nn.hardswish");
}

void convert_logistic(TfContext& ctx) {
    convert_through_float(ctx, "sigmoid");
}
void convert_tanh(TfContext& ctx) {
    convert_through_float(ctx, "tanh");
}

namespace {

// TFLite's softmax of 8-bit integers along `axis` (its optimized CPU kernel, which the runtime
// uses): a table of exp(-input_scale * beta * d) for the distance d in [0, 255] from the row's
// maximum, each probability table[d] / (sum * output_scale) rounded half away from zero.
Expr softmax_8bit(const TfContext& ctx, const Expr& x, int64_t axis, float beta) {
    Quantized in = per_tensor(ctx, ctx.input_tensor(0), "the operand");
    Quantized out = per_tensor(ctx, ctx.output_tensor(0), "the result");
    const float scale = -float(in.scales[0]) * beta;
    std::vector<float> table(256);
    for (int d = 0; d < 256; ++d) table[size_t(d)] = std::exp(scale * float(d));
    runtime::NDArray t = runtime::NDArray::empty({256}, graph::dl_dtype_of(DataType::float32()));
    t.copy_from(table);
    auto [max_attrs, m] = new_attrs<ops::ReduceAttrs>();
    m->axes = {axis};
    m->keepdims = true;
    Expr wide = cast_to(ctx, x, DataType::int32());
    Expr distance = ctx.call("subtract", {ctx.call("max", {wide}, max_attrs), wide});
    Expr e = ctx.call("take", {ctx.constant(t), distance}, make_ref<ops::TakeAttrs>());
    auto [sum_attrs, a] = new_attrs<ops::ReduceAttrs>();
    a->axes = {axis};
    a->keepdims = true;
    Expr sum = ctx.call("sum", {e}, sum_attrs);
    Expr inv = ctx.call("divide",
                        {float32_scalar(ctx, 1.0),
                         ctx.call("multiply", {sum, float32_scalar(ctx, float(out.scales[0]))})});
    Expr q = round_half_away(ctx, ctx.call("multiply", {e, inv}));
    if (out.zero_points[0] != 0) {
        q = ctx.call("add", {q, float32_scalar(ctx, double(out.zero_points[0]))});
    }
    DataType t_out = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
    auto [lo, hi] = ops::quantized_range(t_out);
    return clamp_to(ctx, q, int64_t(lo), int64_t(hi), t_out);
}

bool is_8bit(int8_t type) {
    return type == tensor_type::kInt8 || type == tensor_type::kUInt8;
}

}  // namespace

void convert_softmax(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    float beta = ctx.options(options_type::kSoftmax).float32(softmax_options::kBeta, 0.0f);
    bool cf = ctx.input(0).channels_first;
    if (is_8bit(ctx.input_tensor(0).type) && is_8bit(ctx.output_tensor(0).type)) {
        int64_t axis = cf ? 1 : ctx.rank(ctx.input(0).expr) - 1;
        ctx.set_output(0, softmax_8bit(ctx, ctx.input(0).expr, axis, beta), cf);
        return;
    }
    Expr x = dequantized_input(ctx, 0, cf);
    if (beta != 1.0f) x = ctx.call("multiply", {x, float32_scalar(ctx, beta)});
    auto [attrs, a] = new_attrs<ops::SoftmaxAttrs>();
    a->axis = cf ? 1 : -1;  // TFLite's softmax runs along the last (NHWC: channel) axis
    ctx.set_output(0, quantized_result(ctx, ctx.call("nn.softmax", {x}, attrs)), cf);
}

void convert_quantize(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    const TfValue& x = ctx.input(0);
    const TfliteTensor& out_t = ctx.output_tensor(0);
    DataType t = ctx.dtype_of(out_t.type, "the result");
    const TfliteTensor& in_t = ctx.input_tensor(0);
    if (in_t.type == tensor_type::kFloat32) {
        ctx.set_output(0, quantized_result(ctx, x.expr), x.channels_first);
        return;
    }
    // From integers: rescaled in fixed point.
    Expr y = requantize_integers(ctx, x.expr, per_tensor(ctx, in_t, "the operand"),
                                 per_tensor(ctx, out_t, "the result"));
    auto [lo, hi] = ops::quantized_range(t);
    ctx.set_output(0, clamp_to(ctx, y, int64_t(lo), int64_t(hi), t), x.channels_first);
}

void convert_dequantize(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    bool cf = ctx.input(0).channels_first;
    ctx.set_output(0, dequantized_input(ctx, 0, cf), cf);
}

}  // namespace anvil::frontend::tflite
