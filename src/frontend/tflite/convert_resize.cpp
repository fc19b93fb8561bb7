// Converters of TFLite's resizes: RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR(x, size [2]), on
// channels-first data. TFLite's sampling maps onto resize2d's coordinate transformations:
// align_corners, half_pixel_centers (for nearest: TensorFlow's half-pixel rule, rounding down),
// or neither (asymmetric). A nearest resize moves quantized integers as they are; a bilinear one
// of quantized data interpolates the real values and quantizes the result, which can differ
// from TFLite's fixed-point kernel by one step.
#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

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
