// Converters of TFLite's resizes: RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR(x, size [2]), on
// channels-first data. TFLite's sampling maps onto resize2d's coordinate transformations:
// align_corners, half_pixel_centers (for nearest: TensorFlow's half-pixel rule, rounding down),
// or neither (asymmetric). A nearest resize moves quantized integers as they are. A bilinear one
// of int16 data, and of int8 data with rounding="TFLITE", computes as TFLite's integer kernel
// (ResizeBilinearInteger): sampling positions in 10-bit fixed point, the four neighbours weighted
// in int64, the sum rounded half away from zero; bit for bit. Of uint8 data, and of int8 data
// with rounding="XNNPACK" (whose kernel samples in its own fixed point), it interpolates the real
// values and quantizes the result, which can differ from the runtime's by one step.
#include <algorithm>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
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

// x gathered at `indices` along `axis`, as int64, times `weights` (one per index).
Expr weighted_take(const TfContext& ctx, const Expr& x, const std::vector<int32_t>& indices,
                   const std::vector<int64_t>& weights, int64_t axis) {
    runtime::NDArray i =
        runtime::NDArray::empty({int64_t(indices.size())}, graph::dl_dtype_of(DataType::int32()));
    i.copy_from(indices);
    std::vector<int64_t> shape{int64_t(weights.size())};
    if (axis == 2) shape.push_back(1);
    runtime::NDArray w = runtime::NDArray::empty(shape, graph::dl_dtype_of(DataType::int64()));
    w.copy_from(weights);
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = axis;
    Expr taken = cast_to(ctx, ctx.call("take", {x, ctx.constant(i)}, attrs), DataType::int64());
    return ctx.call("multiply", {taken, ctx.constant(w)});
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
    if (t == DataType::int_(16) || (t == DataType::int_(8) && !ctx.xnnpack_rounding())) {
        // TFLite's integer kernel interpolates the integers as they are.
        Quantized in = per_tensor(ctx, in_t, "the input");
        Quantized out = per_tensor(ctx, ctx.output_tensor(0), "the result");
        if (float(in.scales[0]) != float(out.scales[0]) ||
            in.zero_points[0] != out.zero_points[0]) {
            ctx.error() << "an integer bilinear resize keeps its input's quantization (scale "
                        << in.scales[0] << ", zero point " << in.zero_points[0]
                        << "), as TFLite's kernel, but the result has scale " << out.scales[0]
                        << " and zero point " << out.zero_points[0];
        }
        ctx.set_output(
            0,
            integer_bilinear(ctx, ctx.input_channels_first(0), size, align_corners, half_pixel, t),
            true);
        return;
    }
    Expr x = dequantized_input(ctx, 0, true);
    ctx.set_output(0, quantized_result(ctx, ctx.call("resize2d", {x}, attrs)), true);
}

}  // namespace

void convert_resize_bilinear(TfContext& ctx) {
    convert_resize(ctx, true);
}
void convert_resize_nearest_neighbor(TfContext& ctx) {
    convert_resize(ctx, false);
}

}  // namespace anvil::frontend::tflite
