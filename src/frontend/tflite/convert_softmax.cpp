// The converter of TFLite's SOFTMAX, along the last axis (the channel axis of a tensor held
// channels first). Float: nn.softmax of beta * x. Quantized, as TFLite's kernels compute it:
// - 8-bit: its optimized CPU kernel, exp(-input_scale * beta * (max - x)) from a 256-entry float
//   table, normalised in float32, rounded half away from zero;
// - int16: its fixed-point kernel (SoftmaxInt16), bit for bit: x - max rescaled so that [-65535, 0]
//   is [-10, 0], exp from TFLite's interpolated table, the sum normalised to [1, 2) by its leading
//   zeros, 1 / sum from a second table, each exp times it, shifted back;
// - other pairs (an int8 operand with an int16 result): on the real values, quantized.
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/int16_activation_tables.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/qnn.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

Expr reduced(const TfContext& ctx, const char* op, const Expr& x, int64_t axis) {
    auto [attrs, a] = new_attrs<ops::ReduceAttrs>();
    a->axes = {axis};
    a->keepdims = true;
    return ctx.call(op, {x}, attrs);
}

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
    Expr wide = cast_to(ctx, x, DataType::int32());
    Expr distance = ctx.call("subtract", {reduced(ctx, "max", wide, axis), wide});
    Expr e = ctx.call("take", {ctx.constant(t), distance}, make_ref<ops::TakeAttrs>());
    Expr sum = reduced(ctx, "sum", e, axis);
    Expr inv = ctx.call("divide",
                        {float32_scalar(ctx, 1.0),
                         ctx.call("multiply", {sum, float32_scalar(ctx, float(out.scales[0]))})});
    Expr q = round_half_away(ctx, float32_product(ctx, e, inv));
    if (out.zero_points[0] != 0) {
        q = ctx.call("add", {q, float32_scalar(ctx, double(out.zero_points[0]))});
    }
    DataType t_out = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
    auto [lo, hi] = ops::quantized_range(t_out);
    return clamp_to(ctx, q, int64_t(lo), int64_t(hi), t_out);
}

// The int16 table of TFLite's interpolated lookup in `lut`, over every int16 input, gathered at
// x (int32 values in the int16 range): int32.
Expr lookup(const TfContext& ctx, const std::vector<int16_t>& lut, const Expr& x) {
    Expr table =
        table_constant(ctx, int16_table([&](int16_t v) { return int16_lut_lookup(lut, v); }));
    return cast_to(ctx, table_lookup(ctx, table, x, -32768), DataType::int32());
}

// TFLite's SoftmaxInt16 along `axis`.
Expr softmax_int16(const TfContext& ctx, const Expr& x, int64_t axis, float beta) {
    Quantized in = per_tensor(ctx, ctx.input_tensor(0), "the operand");
    Quantized out = per_tensor(ctx, ctx.output_tensor(0), "the result");
    if (ctx.output_tensor(0).type != tensor_type::kInt16 || in.zero_points[0] != 0 ||
        out.zero_points[0] != 0 || std::abs(out.scales[0] * 32768.0 - 1.0) > 1e-3) {
        ctx.error() << "an int16 SOFTMAX needs zero points 0 and an int16 result of scale 2^-15, "
                       "as TFLite's kernel; got the zero points "
                    << in.zero_points[0] << " and " << out.zero_points[0] << ", the scale "
                    << out.scales[0] << " and " << tensor_type_name(ctx.output_tensor(0).type);
    }
    const float range = 65535.0f;
    static const std::vector<int16_t> exp_lut =
        int16_lut(10.0f / range, 32767, 2.0f / range, 0, [](float v) { return std::exp(v); });
    static const std::vector<int16_t> reciprocal_lut =
        int16_lut(1.0f / range, -32768, 2.0f / range, 0, [](float v) { return 1.0f / (1.0f + v); });
    // x - max in [-65535, 0], rescaled so that it spans [-65535, 0] for [-10, 0], recentered to
    // the int16 range.
    Expr wide = cast_to(ctx, x, DataType::int32());
    Expr diff = ctx.call("subtract", {wide, reduced(ctx, "max", wide, axis)});
    const double ratio = in.scales[0] * double(beta) / (10.0 / 65535.0);
    Expr scaled = multiply_by_ratio(ctx, diff, {ratio}, -1);
    scaled = clamp_to(ctx, ctx.call("add", {scaled, int32_scalar(ctx, 32767)}), -32768, 32767,
                      DataType::int32());
    Expr e = lookup(ctx, exp_lut, scaled);  // Q0.15
    Expr sum = reduced(ctx, "sum", e, axis);
    // The sum's leading zeros z (it is at least 1): z - 1 = 30 - floor(log2(sum)), counted.
    Expr log2 = int32_scalar(ctx, 0);
    for (int k = 1; k <= 30; ++k) {
        Expr at_least = ctx.call("greater_equal", {sum, int32_scalar(ctx, int64_t{1} << k)});
        log2 = ctx.call("add", {log2, cast_to(ctx, at_least, DataType::int32())});
    }
    Expr headroom = ctx.call("subtract", {int32_scalar(ctx, 30), log2});  // z - 1
    // The sum normalised to [2^30, 2^31), in Q1.15 after a rounding shift of 14, less 1.5 (TFLite
    // recenters [1, 2) to the table's [-1, 1)).
    Expr normalised = ctx.call("left_shift", {cast_to(ctx, sum, DataType::int64()),
                                              cast_to(ctx, headroom, DataType::int64())});
    Expr shifted = ctx.call(
        "right_shift",
        {ctx.call("add", {normalised, int64_scalar(ctx, 1 << 13)}), int64_scalar(ctx, 14)});
    shifted = cast_to(ctx, shifted, DataType::int32());
    Expr centered =
        clamp_to(ctx, ctx.call("add", {shifted, int32_scalar(ctx, -((1 << 15) + (1 << 16)))}),
                 -32768, 32767, DataType::int32());
    Expr reciprocal = lookup(ctx, reciprocal_lut, centered);  // Q0.15
    // e * reciprocal, rounded right by 31 - z = 30 - (z - 1).
    Expr right =
        cast_to(ctx, ctx.call("subtract", {int32_scalar(ctx, 30), headroom}), DataType::int64());
    Expr product = ctx.call("multiply", {cast_to(ctx, e, DataType::int64()),
                                         cast_to(ctx, reciprocal, DataType::int64())});
    Expr round = ctx.call(
        "left_shift", {int64_scalar(ctx, 1), ctx.call("subtract", {right, int64_scalar(ctx, 1)})});
    Expr y = ctx.call("right_shift", {ctx.call("add", {product, round}), right});
    return clamp_to(ctx, y, 0, 32767, DataType::int_(16));
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
    if (ctx.input_tensor(0).type == tensor_type::kInt16) {
        int64_t axis = cf ? 1 : ctx.rank(ctx.input(0).expr) - 1;
        ctx.set_output(0, softmax_int16(ctx, ctx.input(0).expr, axis, beta), cf);
        return;
    }
    Expr x = dequantized_input(ctx, 0, cf);
    if (beta != 1.0f) x = ctx.call("multiply", {x, float32_scalar(ctx, beta)});
    auto [attrs, a] = new_attrs<ops::SoftmaxAttrs>();
    a->axis = cf ? 1 : -1;  // TFLite's softmax runs along the last (NHWC: channel) axis
    ctx.set_output(0, quantized_result(ctx, ctx.call("nn.softmax", {x}, attrs)), cf);
}

}  // namespace anvil::frontend::tflite
