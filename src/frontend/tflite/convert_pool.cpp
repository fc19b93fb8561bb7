// Converters of TFLite's pooling and reductions: AVERAGE_POOL_2D, MAX_POOL_2D, MEAN and SUM.
//
// Pools read their data channels first and give a channels-first result. TFLite averages over
// the window positions inside the input (SAME padding never counts); a quantized average is the
// integer sum divided by that count, rounded half away from zero, as TFLite's kernel computes
// it, and a quantized maximum compares the integers. Both need the result quantized as the
// input, as TFLite does. Reductions over a channels-first operand map their axes; quantized ones
// compute as TFLite's kernels (quantized_reduce).
#include <algorithm>
#include <bit>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/pool.h"
#include "ops/qnn.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

void check_same_quantization(const TfContext& ctx) {
    Quantized in = per_tensor(ctx, ctx.input_tensor(0), "the input");
    Quantized out = per_tensor(ctx, ctx.output_tensor(0), "the result");
    if (ctx.input_tensor(0).type != ctx.output_tensor(0).type || in.scales[0] != out.scales[0] ||
        in.zero_points[0] != out.zero_points[0]) {
        ctx.error() << "the input (scale " << in.scales[0] << ", zero point " << in.zero_points[0]
                    << ") and the result (scale " << out.scales[0] << ", zero point "
                    << out.zero_points[0] << ") must be quantized alike";
    }
}

void convert_pool(TfContext& ctx, bool average) {
    ctx.expect_arity(1, 1, 1);
    const TfliteOptions& o = ctx.options(options_type::kPool2D);
    int64_t sh = o.int32(pool2d_options::kStrideH), sw = o.int32(pool2d_options::kStrideW);
    int64_t fh = o.int32(pool2d_options::kFilterHeight), fw = o.int32(pool2d_options::kFilterWidth);
    int8_t activation = o.int8(pool2d_options::kActivation);
    if (sh < 1 || sw < 1 || fh < 1 || fw < 1) {
        ctx.error() << "the filter [" << fh << ", " << fw << "] and strides [" << sh << ", " << sw
                    << "] must be positive";
    }
    Expr x = ctx.input_channels_first(0);
    std::vector<int64_t> xs = ctx.static_shape(x, "the input");
    int8_t pad = o.int8(pool2d_options::kPadding);
    auto [top, bottom] = window_padding(ctx, pad, xs[2], fh, sh, 1);
    auto [left, right] = window_padding(ctx, pad, xs[3], fw, sw, 1);
    auto [attrs, a] = new_attrs<ops::Pool2DAttrs>();
    a->pool_size = {fh, fw};
    a->strides = {sh, sw};
    a->padding = {top, left, bottom, right};
    a->count_include_pad = false;
    const TfliteTensor& in_t = ctx.input_tensor(0);
    if (!ctx.is_quantized(in_t)) {
        Expr y = ctx.call(average ? "nn.avg_pool2d" : "nn.max_pool2d", {x}, attrs);
        ctx.set_output(0, float_activation(ctx, y, activation), true);
        return;
    }
    check_same_quantization(ctx);
    DataType t = ctx.dtype_of(in_t.type, "the input");
    Expr y;
    if (average) {
        // sum / count in float32 (float64 for 16-bit data, whose sums pass 2^24) is within half
        // an ulp of the exact quotient, far closer than the 1 / count by which a non-tie differs
        // from a tie: rounding it is exact.
        DataType ft = t.bits() == 16 ? DataType::float64() : DataType::float32();
        y = ctx.call("nn.avg_pool2d", {cast_to(ctx, x, ft)}, attrs);
        y = round_half_away(ctx, y);
    } else {
        y = ctx.call("nn.max_pool2d", {x}, attrs);
    }
    // The runtime's XNNPACK delegate takes 8-bit max pools (whose activation bounds round as
    // XNNPACK's), not average pools.
    auto [lo, hi] = quantized_activation_range(ctx, activation, ctx.output_tensor(0), t, !average);
    ctx.set_output(0, clamp_to(ctx, y, lo, hi, t), true);
}

// `x` (as held) reduced by `op` over the NHWC `axes`, in TFLite's layout unless kept 4-D
// (then held as `x` is); the second value says whether the result is held channels first.
std::pair<Expr, bool> reduce_axes(const TfContext& ctx, const char* op, const TfValue& x,
                                  const Expr& data, const std::vector<int64_t>& axes,
                                  bool keep_dims) {
    auto [attrs, a] = new_attrs<ops::ReduceAttrs>();
    a->keepdims = keep_dims;
    if (!x.channels_first) {
        a->axes = axes;
        return {ctx.call(op, {data}, attrs), false};
    }
    for (int64_t axis : axes) a->axes.push_back(channels_first_axis(axis));
    std::sort(a->axes.begin(), a->axes.end());
    Expr y = ctx.call(op, {data}, attrs);
    if (keep_dims) return {y, true};
    // The NHWC axes left, in TFLite's order and in the order the NCHW data holds them.
    auto kept = [&](int64_t nhwc) {
        return std::find(axes.begin(), axes.end(), nhwc) == axes.end();
    };
    std::vector<int64_t> tflite_order, held_order;
    for (int64_t nhwc = 0; nhwc < 4; ++nhwc) {
        if (kept(nhwc)) tflite_order.push_back(nhwc);
    }
    for (int64_t nhwc : kToChannelsFirst) {
        if (kept(nhwc)) held_order.push_back(nhwc);
    }
    if (held_order != tflite_order) {
        std::vector<int64_t> perm;
        for (int64_t nhwc : tflite_order) {
            perm.push_back(std::find(held_order.begin(), held_order.end(), nhwc) -
                           held_order.begin());
        }
        y = ctx.transpose(y, perm);
    }
    return {y, false};
}

// A quantized MEAN or SUM as TFLite's kernels compute it. With rounding="XNNPACK", an 8-bit MEAN
// as XNNPACK's (see below). MEAN over H and W of a 4-D tensor with keep_dims: the int32 sum of
// x - zero point, rescaled by input_scale / output_scale in fixed point, divided by the count
// rounding half away from zero (with rounding="XNNPACK", for int16, as TFLite's optimized kernel:
// the count folded into one fixed-point ratio). Otherwise, TFLite's reference QuantizedMeanOrSum
// in fixed point; with rounding="XNNPACK" for an 8-bit SUM, as the runtime's kernel: the sum of
// the integers in float32 times s = input_scale / output_scale, plus -zero point * s * count,
// rounded half away from zero.
Expr quantized_reduce(const TfContext& ctx, bool mean, const TfValue& x,
                      const std::vector<int64_t>& axes, bool keep_dims, bool* channels_first) {
    const TfliteTensor& in_t = ctx.input_tensor(0);
    const TfliteTensor& out_t = ctx.output_tensor(0);
    ctx.expect_same_type();
    DataType t = ctx.dtype_of(out_t.type, "the result");
    Quantized in = per_tensor(ctx, in_t, "the operand");
    Quantized out = per_tensor(ctx, out_t, "the result");
    std::vector<int64_t> shape = ctx.static_shape(ctx.input_tflite(0), "the operand");
    int64_t count = 1;
    for (int64_t axis : axes) count *= shape[size_t(axis)];
    if (count == 0) ctx.error() << "the reduction is over no elements";
    auto [lo, hi] = ops::quantized_range(t);
    Expr wide = cast_to(ctx, x.expr, DataType::int32());
    std::vector<int64_t> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    if (mean && ctx.xnnpack_rounding() && t.bits() == 8) {
        // XNNPACK's mean (the runtime's delegate takes 8-bit MEANs): the integer sum times
        // input_scale / (output_scale * count), plus output zero point - input zero point *
        // input_scale / output_scale, all in float32, rounded half to even.
        auto [sum, cf] = reduce_axes(ctx, "sum", x, wide, axes, keep_dims);
        *channels_first = cf;
        const float ratio = float(in.scales[0]) / float(out.scales[0]);
        const float s = float(in.scales[0]) / (float(out.scales[0]) * float(count));
        const float bias = float(out.zero_points[0]) - float(in.zero_points[0]) * ratio;
        Expr v =
            ctx.call("round", {ctx.call("add", {float32_product(ctx, sum, float32_scalar(ctx, s)),
                                                float32_scalar(ctx, bias)})});
        return clamp_to(ctx, v, int64_t(lo), int64_t(hi), t);
    }
    if (mean && keep_dims && shape.size() == 4 && sorted == std::vector<int64_t>{1, 2}) {
        if (in.zero_points[0] != 0) {
            wide = ctx.call("subtract", {wide, int32_scalar(ctx, in.zero_points[0])});
        }
        auto [sum, cf] = reduce_axes(ctx, "sum", x, wide, axes, true);
        *channels_first = cf;
        if (ctx.xnnpack_rounding() && t == DataType::int_(16)) {
            // The runtime's optimized kernel (XNNPACK takes no int16; zero points are 0): the
            // sum times input_scale / (count * output_scale), a float32 ratio, in fixed point.
            float ratio = float(in.scales[0]) / (float(count) * float(out.scales[0]));
            Expr v = multiply_by_ratio(ctx, sum, {double(ratio)}, -1);
            return clamp_to(ctx, v, int64_t(lo), int64_t(hi), t);
        }
        Expr scaled = multiply_by_ratio(ctx, sum, {in.scales[0] / out.scales[0]}, -1);
        // (acc +- count / 2) / count, truncated: exact in float64 for int32 values.
        Expr acc = cast_to(ctx, scaled, DataType::float64());
        Expr half = ctx.constant_scalar(DataType::float64(), double(count / 2));
        Expr magnitude = ctx.call(
            "floor",
            {ctx.call("divide", {ctx.call("add", {ctx.call("abs", {acc}), half}),
                                 ctx.constant_scalar(DataType::float64(), double(count))})});
        Expr y = ctx.call("multiply", {ctx.call("sign", {acc}), magnitude});
        y = ctx.call("add",
                     {y, ctx.constant_scalar(DataType::float64(), double(out.zero_points[0]))});
        return clamp_to(ctx, y, int64_t(lo), int64_t(hi), t);
    }
    auto [sum, cf] = reduce_axes(ctx, "sum", x, wide, axes, keep_dims);
    *channels_first = cf;
    if (!ctx.xnnpack_rounding() || mean) {
        // TFLite's reference QuantizedMeanOrSum (TFLite Micro's; the runtime's for an int16 MEAN,
        // which XNNPACK does not take): the sum less count * zero point times input_scale /
        // output_scale in fixed point, for MEAN with the count folded into the multiplier by an
        // integer division, plus the output zero point.
        ops::FixedPoint f =
            ops::fixed_point_of(in.scales[0] / out.scales[0], "the scale ratio", ctx.loc());
        int64_t multiplier = f.multiplier, shift = f.shift;
        if (mean) {
            int64_t k =
                std::min<int64_t>({int64_t(std::bit_width(uint64_t(count))) - 1, 32, 31 + shift});
            multiplier = (multiplier << k) / count;
            shift -= k;
        }
        Expr shifted = sum;
        if (in.zero_points[0] != 0) {
            shifted = ctx.call("subtract", {sum, int32_scalar(ctx, in.zero_points[0] * count)});
        }
        Expr v = multiply_by_fixed_point(ctx, shifted, {multiplier}, {shift}, -1);
        if (out.zero_points[0] != 0)
            v = ctx.call("add", {v, int32_scalar(ctx, out.zero_points[0])});
        return clamp_to(ctx, v, int64_t(lo), int64_t(hi), t);
    }
    // The runtime's SUM: in float32.
    float scale = float(in.scales[0]) / float(out.scales[0]);
    float bias = -float(in.zero_points[0]) * scale * float(count);
    Expr v = ctx.call(
        "add", {float32_product(ctx, sum, float32_scalar(ctx, scale)), float32_scalar(ctx, bias)});
    v = ctx.call("add", {round_half_away(ctx, v), float32_scalar(ctx, double(out.zero_points[0]))});
    return clamp_to(ctx, v, int64_t(lo), int64_t(hi), t);
}

// MEAN / SUM over the axes of operand 1.
void convert_reduce(TfContext& ctx, const char* op) {
    ctx.expect_arity(2, 2, 1);
    bool keep_dims = ctx.options(options_type::kReducer).boolean(reducer_options::kKeepDims);
    const TfValue& x = ctx.input(0);
    int64_t rank = ctx.rank(x.expr);
    std::vector<int64_t> axes;
    for (int64_t axis : ctx.constant_ints(1, "the axes")) {
        axis = ctx.normalize_axis(axis, rank, "an axis");
        if (std::find(axes.begin(), axes.end(), axis) == axes.end()) axes.push_back(axis);
    }
    if (axes.empty()) {  // TFLite reduces over nothing: the values, requantized when quantized
        const TfliteTensor& in_t = ctx.input_tensor(0);
        if (!ctx.is_quantized(in_t)) return ctx.set_output(0, x.expr, x.channels_first);
        DataType t = ctx.dtype_of(ctx.output_tensor(0).type, "the result");
        Expr y = requantize_integers(ctx, x.expr, per_tensor(ctx, in_t, "the operand"),
                                     per_tensor(ctx, ctx.output_tensor(0), "the result"));
        auto [lo, hi] = ops::quantized_range(t);
        return ctx.set_output(0, clamp_to(ctx, y, int64_t(lo), int64_t(hi), t), x.channels_first);
    }
    if (ctx.is_quantized(ctx.input_tensor(0))) {
        bool cf = false;
        Expr y = quantized_reduce(ctx, std::string(op) == "mean", x, axes, keep_dims, &cf);
        ctx.set_output(0, y, cf);
        return;
    }
    auto [y, cf] = reduce_axes(ctx, op, x, x.expr, axes, keep_dims);
    ctx.set_output(0, y, cf);
}

}  // namespace

int64_t channels_first_axis(int64_t axis) {
    static constexpr int64_t kPosition[4] = {0, 2, 3, 1};  // N, H, W, C in NCHW
    return kPosition[axis];
}

void convert_average_pool2d(TfContext& ctx) {
    convert_pool(ctx, true);
}
void convert_max_pool2d(TfContext& ctx) {
    convert_pool(ctx, false);
}
void convert_mean(TfContext& ctx) {
    convert_reduce(ctx, "mean");
}
void convert_sum(TfContext& ctx) {
    convert_reduce(ctx, "sum");
}

}  // namespace anvil::frontend::tflite
