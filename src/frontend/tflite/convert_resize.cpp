// Converters of TFLite's resizes: RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR(x, size [2]), on
// channels-first data. TFLite's sampling maps onto resize2d's coordinate transformations:
// align_corners, half_pixel_centers (for nearest: TensorFlow's half-pixel rule, rounding down),
// or neither (asymmetric). A nearest resize moves quantized integers as they are. A bilinear one
// of int16 data, and of int8 data with rounding="TFLITE", computes as TFLite's integer kernel
// (ResizeBilinearInteger): sampling positions in 10-bit fixed point, the four neighbours weighted
// in int64, the sum rounded half away from zero; bit for bit. With rounding="XNNPACK", an 8-bit
// one computes as XNNPACK's kernel (the runtime's delegate), bit for bit: positions in float,
// weights and sums in Q11 fixed point. A uint8 one with rounding="TFLITE" is TFLite's reference
// kernel, which interpolates the integers in float32; bit for bit. TFLite's kernels do not
// requantize: a result quantized unlike the input is refused.
#include <algorithm>
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/qnn.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

// TFLite's sampling of one axis in 10-bit fixed point (ComputeInterpolationValuesInteger): for
// each output index, the lower and upper input indices and the upper one's weight in 1/1024ths.
struct IntegerSampling {
    std::vector<int32_t> lower, upper;
    std::vector<int64_t> weight_lower, weight_upper;
};

IntegerSampling integer_sampling(int64_t in, int64_t out, bool align_corners, bool half_pixel) {
    int64_t scale = ((int64_t{1} << 10) * in + out / 2) / out;
    if (align_corners && out > 1)
        scale = ((int64_t{1} << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
    IntegerSampling s;
    for (int64_t o = 0; o < out; ++o) {
        // C++'s division truncates toward zero, as TFLite's does on the (possibly negative)
        // half-pixel position.
        int64_t pos = half_pixel ? o * scale + scale / 2 - (1 << 9) : o * scale;
        int64_t lower = std::max<int64_t>(pos / 1024, 0);
        int64_t upper = std::min<int64_t>((pos + 1023) / 1024, in - 1);
        s.lower.push_back(int32_t(lower));
        s.upper.push_back(int32_t(upper));
        s.weight_upper.push_back(pos - 1024 * lower);
        s.weight_lower.push_back(1024 - (pos - 1024 * lower));
    }
    return s;
}

// x gathered at `indices` along `axis`.
Expr take_along(const TfContext& ctx, const Expr& x, const std::vector<int32_t>& indices,
                int64_t axis) {
    runtime::NDArray i =
        runtime::NDArray::empty({int64_t(indices.size())}, graph::dl_dtype_of(DataType::int32()));
    i.copy_from(indices);
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = axis;
    return ctx.call("take", {x, ctx.constant(i)}, attrs);
}

// Per-index weights of the H axis (2: shape [n, 1]) or the W axis (3: shape [n]) of a
// channels-first tensor, as a constant of type `t` (T's).
template <typename T>
Expr axis_weights(const TfContext& ctx, const std::vector<T>& values, DataType t, int64_t axis) {
    std::vector<int64_t> shape{int64_t(values.size())};
    if (axis == 2) shape.push_back(1);
    runtime::NDArray a = runtime::NDArray::empty(shape, graph::dl_dtype_of(t));
    a.copy_from(values);
    return ctx.constant(a);
}

// x gathered at `indices` along `axis`, as int64, times `weights` (one per index).
Expr weighted_take(const TfContext& ctx, const Expr& x, const std::vector<int32_t>& indices,
                   const std::vector<int64_t>& weights, int64_t axis) {
    Expr taken = cast_to(ctx, take_along(ctx, x, indices, axis), DataType::int64());
    return ctx.call("multiply", {taken, axis_weights(ctx, weights, DataType::int64(), axis)});
}

// TFLite's ResizeBilinearInteger of x [N, C, H, W] (channels first) to `size`.
Expr integer_bilinear(const TfContext& ctx, const Expr& x, const std::vector<int64_t>& size,
                      bool align_corners, bool half_pixel, DataType t) {
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    IntegerSampling ys = integer_sampling(shape[2], size[0], align_corners, half_pixel);
    IntegerSampling xs = integer_sampling(shape[3], size[1], align_corners, half_pixel);
    Expr rows = ctx.call("add", {weighted_take(ctx, x, ys.lower, ys.weight_lower, 2),
                                 weighted_take(ctx, x, ys.upper, ys.weight_upper, 2)});
    Expr sum = ctx.call("add", {weighted_take(ctx, rows, xs.lower, xs.weight_lower, 3),
                                weighted_take(ctx, rows, xs.upper, xs.weight_upper, 3)});
    // TFLite's (sum + (sum > 0 ? 2^19 : -2^19)) / 2^20, truncating: halves away from zero.
    Expr magnitude = ctx.call("add", {ctx.call("abs", {sum}), int64_scalar(ctx, 1 << 19)});
    Expr quotient = ctx.call("right_shift", {magnitude, int64_scalar(ctx, 20)});
    Expr y = ctx.call("where", {ctx.call("less", {sum, int64_scalar(ctx, 0)}),
                                ctx.call("negative", {quotient}), quotient});
    const int64_t bound = int64_t{1} << (t.bits() - 1);
    return clamp_to(ctx, y, -bound, bound - 1, t);
}

// XNNPACK's sampling of one axis (its q11 indirection): for each output index, the lower and
// upper input indices and the upper one's weight in 1/2048ths, from positions computed in float.
struct Q11Sampling {
    std::vector<int32_t> lower, upper, weight;
};

Q11Sampling q11_sampling(int64_t in, int64_t out, bool align_corners, bool half_pixel) {
    const int64_t adjustment = align_corners && out != 1 ? 1 : 0;
    const float scale = float(in - adjustment) / float(out - adjustment);
    const float offset = 0.5f * scale - 0.5f;
    Q11Sampling s;
    for (int64_t o = 0; o < out; ++o) {
        // The product rounded to float before the add (float64 holds it exactly), so that no
        // fused multiply-add changes it.
        float pos = float(double(o) * double(scale));
        if (half_pixel && !align_corners) pos = std::clamp(pos + offset, 0.0f, float(in - 1));
        const auto lower = int32_t(pos);
        s.lower.push_back(lower);
        s.upper.push_back(std::min(lower + 1, int32_t(in - 1)));
        s.weight.push_back(int32_t(std::lrint((pos - float(lower)) * 2048.0f)));
    }
    return s;
}

// XNNPACK's 8-bit bilinear resize (its ibilinear kernels) of x [N, C, H, W]: the two rows
// interpolated along W, then those along H, in Q11 fixed point, the Q22 result rounded (halves
// up) by an arithmetic shift; the integers as they are (in and out quantized alike).
Expr xnnpack_bilinear(const TfContext& ctx, const Expr& x, const std::vector<int64_t>& size,
                      bool align_corners, bool half_pixel, DataType t) {
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    Q11Sampling ys = q11_sampling(shape[2], size[0], align_corners, half_pixel);
    Q11Sampling xs = q11_sampling(shape[3], size[1], align_corners, half_pixel);
    Expr wide = cast_to(ctx, x, DataType::int32());
    auto q11 = [&](const Expr& v) { return ctx.call("multiply", {v, int32_scalar(ctx, 2048)}); };
    // a * 2^11 + (b - a) * weight
    auto lerp = [&](const Expr& a, const Expr& b, const Expr& w) {
        return ctx.call("add", {q11(a), ctx.call("multiply", {ctx.call("subtract", {b, a}), w})});
    };
    Expr column_weights = axis_weights(ctx, xs.weight, DataType::int32(), 3);
    Expr top = take_along(ctx, wide, ys.lower, 2), bottom = take_along(ctx, wide, ys.upper, 2);
    Expr t_row =
        lerp(take_along(ctx, top, xs.lower, 3), take_along(ctx, top, xs.upper, 3), column_weights);
    Expr b_row = lerp(take_along(ctx, bottom, xs.lower, 3), take_along(ctx, bottom, xs.upper, 3),
                      column_weights);
    Expr sum = lerp(t_row, b_row, axis_weights(ctx, ys.weight, DataType::int32(), 2));
    Expr y = ctx.call("right_shift",
                      {ctx.call("add", {sum, int32_scalar(ctx, 1 << 21)}), int32_scalar(ctx, 22)});
    auto [lo, hi] = ops::quantized_range(t);
    return clamp_to(ctx, y, int64_t(lo), int64_t(hi), t);
}

// TFLite's reference sampling of one axis in float (ComputeInterpolationValues): for each output
// index, the lower and upper input indices and their weights 1 - d and d, d the position less
// the lower index (negative before the first half-pixel centre, where the kernel extrapolates).
struct FloatSampling {
    std::vector<int32_t> lower, upper;
    std::vector<float> weight_lower, weight_upper;
};

FloatSampling float_sampling(int64_t in, int64_t out, bool align_corners, bool half_pixel) {
    float scale = float(in) / float(out);
    if (align_corners && out > 1) scale = float(in - 1) / float(out - 1);
    FloatSampling s;
    for (int64_t o = 0; o < out; ++o) {
        // Each product rounded to float before the next operation, as the kernel's (float64 holds
        // it exactly): no fused multiply-add.
        const float pos = half_pixel ? float(double(float(o) + 0.5f) * double(scale)) - 0.5f
                                     : float(double(o) * double(scale));
        const auto lower = std::max(int32_t(std::floor(pos)), int32_t{0});
        s.lower.push_back(lower);
        s.upper.push_back(std::min(int32_t(std::ceil(pos)), int32_t(in - 1)));
        const float d = pos - float(lower);
        s.weight_lower.push_back(1.0f - d);
        s.weight_upper.push_back(d);
    }
    return s;
}

// TFLite's reference bilinear resize of uint8 x [N, C, H, W] (ResizeBilinear<uint8_t>): in
// float32, v00 (1 - dy)(1 - dx) + v10 dy (1 - dx) + v01 (1 - dy) dx + v11 dy dx + 0.5, each
// product and sum rounded in that order, truncated to an integer.
Expr reference_uint8_bilinear(const TfContext& ctx, const Expr& x, const std::vector<int64_t>& size,
                              bool align_corners, bool half_pixel) {
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    FloatSampling ys = float_sampling(shape[2], size[0], align_corners, half_pixel);
    FloatSampling xs = float_sampling(shape[3], size[1], align_corners, half_pixel);
    Expr top = take_along(ctx, x, ys.lower, 2), bottom = take_along(ctx, x, ys.upper, 2);
    auto term = [&](const Expr& rows, const std::vector<int32_t>& columns, const Expr& wy,
                    const Expr& wx) {
        Expr v = cast_to(ctx, take_along(ctx, rows, columns, 3), DataType::float32());
        return float32_product(ctx, float32_product(ctx, v, wy), wx);
    };
    const DataType f32 = DataType::float32();
    Expr wy0 = axis_weights(ctx, ys.weight_lower, f32, 2);
    Expr wy1 = axis_weights(ctx, ys.weight_upper, f32, 2);
    Expr wx0 = axis_weights(ctx, xs.weight_lower, f32, 3);
    Expr wx1 = axis_weights(ctx, xs.weight_upper, f32, 3);
    Expr sum = ctx.call("add", {term(top, xs.lower, wy0, wx0), term(bottom, xs.lower, wy1, wx0)});
    sum = ctx.call("add", {sum, term(top, xs.upper, wy0, wx1)});
    sum = ctx.call("add", {sum, term(bottom, xs.upper, wy1, wx1)});
    sum = ctx.call("add", {sum, float32_scalar(ctx, 0.5)});
    // The sum is at least 0.5 (the weights of each axis sum to 1), so truncating is flooring.
    return clamp_to(ctx, ctx.call("floor", {sum}), 0, 255, DataType::uint(8));
}

void convert_resize(TfContext& ctx, bool bilinear) {
    ctx.expect_arity(2, 2, 1);
    const TfliteOptions& o = ctx.options(bilinear ? options_type::kResizeBilinear
                                                  : options_type::kResizeNearestNeighbor);
    bool align_corners = o.boolean(bilinear ? resize_bilinear_options::kAlignCorners
                                            : resize_nearest_options::kAlignCorners);
    bool half_pixel = o.boolean(bilinear ? resize_bilinear_options::kHalfPixelCenters
                                         : resize_nearest_options::kHalfPixelCenters);
    if (align_corners && half_pixel) {
        ctx.error() << "align_corners and half_pixel_centers cannot both be set";
    }
    std::vector<int64_t> size = ctx.constant_ints(1, "the size");
    if (size.size() != 2 || size[0] < 1 || size[1] < 1) {
        ctx.error() << "the size " << ints_str(size) << " must be two positive values";
    }
    const std::vector<int32_t>& in_shape = ctx.input_tensor(0).shape;
    if (in_shape.size() == 4 && (in_shape[1] < 1 || in_shape[2] < 1)) {
        ctx.error() << "the input's height and width must be positive, got " << in_shape[1]
                    << " and " << in_shape[2];
    }
    auto [attrs, a] = new_attrs<ops::Resize2DAttrs>();
    a->size = size;
    a->mode = bilinear ? "linear" : "nearest";
    if (bilinear) {
        a->coordinate_transformation_mode = align_corners ? "align_corners"
                                            : half_pixel  ? "half_pixel"
                                                          : "asymmetric";
    } else {
        a->coordinate_transformation_mode = align_corners ? "align_corners"
                                            : half_pixel  ? "tf_half_pixel_for_nn"
                                                          : "asymmetric";
        a->nearest_mode = align_corners ? "round_prefer_ceil" : "floor";
    }
    const TfliteTensor& in_t = ctx.input_tensor(0);
    if (!bilinear || !ctx.is_quantized(in_t)) {
        ctx.set_output(0, ctx.call("resize2d", {ctx.input_channels_first(0)}, attrs), true);
        return;
    }
    DataType t = ctx.dtype_of(in_t.type, "the input");
    Quantized in = per_tensor(ctx, in_t, "the input");
    Quantized out = per_tensor(ctx, ctx.output_tensor(0), "the result");
    if (float(in.scales[0]) != float(out.scales[0]) || in.zero_points[0] != out.zero_points[0]) {
        ctx.error() << "a quantized bilinear resize keeps its input's quantization (scale "
                    << in.scales[0] << ", zero point " << in.zero_points[0]
                    << "), as TFLite's kernels, but the result has scale " << out.scales[0]
                    << " and zero point " << out.zero_points[0];
    }
    if (t.bits() == 8 && ctx.xnnpack_rounding()) {
        ctx.set_output(
            0,
            xnnpack_bilinear(ctx, ctx.input_channels_first(0), size, align_corners, half_pixel, t),
            true);
        return;
    }
    if (t == DataType::int_(16) || (t == DataType::int_(8) && !ctx.xnnpack_rounding())) {
        // TFLite's integer kernel interpolates the integers as they are.
        ctx.set_output(
            0,
            integer_bilinear(ctx, ctx.input_channels_first(0), size, align_corners, half_pixel, t),
            true);
        return;
    }
    // uint8 with rounding="TFLITE": TFLite's reference kernel in float.
    ctx.set_output(
        0,
        reference_uint8_bilinear(ctx, ctx.input_channels_first(0), size, align_corners, half_pixel),
        true);
}

}  // namespace

void convert_resize_bilinear(TfContext& ctx) {
    convert_resize(ctx, true);
}
void convert_resize_nearest_neighbor(TfContext& ctx) {
    convert_resize(ctx, false);
}

}  // namespace anvil::frontend::tflite
