// Converter of ONNX's Resize and Upsample: the output size, the resampling attributes and the
// region of interest, each known at import time or bound at run time.
#include <cmath>
#include <optional>

#include "frontend/onnx/convert_ops.h"
#include "ops/shape_tensor.h"
#include "ops/transform.h"
#include "ops/value_shapes.h"

namespace anvil::frontend {

using graph::Expr;

// Resize (opset 10+) and Upsample (7-9) of an NCHW tensor's two spatial axes. The output size
// comes from `sizes` or, floored, from `scales`; either may be known only at run time.
Exprs convert_resize(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    std::vector<int64_t> in = ctx.static_shape(x, "the data");
    if (in.size() != 4) ctx.error() << "only 4-D (NCHW) data is supported";
    bool upsample = ctx.node().op_type() == "Upsample";
    std::vector<double> scales;
    std::vector<int64_t> sizes;
    Expr runtime_scales;                       // scales known only at run time
    std::optional<ShapeValues> runtime_sizes;  // sizes known only at run time
    auto read_scales = [&](const Expr& e) {
        if (ctx.tensor_type(e, "the scales").dtype != DataType::float32()) {
            ctx.error() << "the scales must be a float32 tensor";
        }
        runtime::NDArray d = constant_data(e);
        if (!d.defined()) {
            runtime_scales = e;
            return;
        }
        for (float f : d.to_vector<float>()) scales.push_back(f);
    };
    if (upsample && ctx.opset() < 9) {
        for (float f : ctx.attr_floats("scales")) scales.push_back(f);
    } else if (upsample || ctx.opset() == 10) {
        read_scales(ctx.input(1));
    } else {
        if (Expr s = ctx.optional_input(2);
            s.defined() && ctx.rank(s) == 1 && ctx.static_shape(s, "the scales")[0] > 0) {
            read_scales(s);
        }
        if (Expr s = ctx.optional_input(3); s.defined()) {
            if (constant_data(s).defined()) {
                sizes = ctx.const_ints(s, "the sizes");
            } else {
                runtime_sizes = shape_values(ctx, s, "the sizes");
            }
        }
    }
    if ((runtime_scales.defined() || runtime_sizes) && ctx.opset() >= 18 &&
        !ctx.attr_ints("axes").empty()) {
        ctx.error() << "axes with scales or sizes known only at run time are not supported";
    }
    if (ctx.opset() >= 18) {
        std::vector<int64_t> axes = ctx.attr_ints("axes");
        if (!axes.empty() && axes != std::vector<int64_t>{2, 3} &&
            axes != std::vector<int64_t>{-2, -1}) {
            ctx.error() << "axes " << ints_str(axes) << " are not supported (the spatial axes are)";
        }
        if (!axes.empty()) {
            scales.insert(scales.begin(), scales.empty() ? 0 : 2, 1.0);
            sizes.insert(sizes.begin(), {in[0], in[1]});
            if (sizes.size() == 2) sizes.clear();
        }
        if (ctx.attr_int("antialias", 0) != 0) ctx.error() << "antialias is not supported";
        std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
        if (policy != "stretch" && !sizes.empty()) {
            ctx.error() << "keep_aspect_ratio_policy '" << policy << "' is not supported";
        }
    }
    auto attrs = make_ref<ops::Resize2DAttrs>();
    auto* a = const_cast<ops::Resize2DAttrs*>(attrs.get());
    std::vector<Expr> args = {x};
    // Output sizes known only at run time (N, C, H, W values): the executor binds them and
    // checks that N and C stay and H, W are positive.
    auto bind_output_size = [&](const ShapeValues& v) {
        const auto& d = v.values;
        a->dynamic_size = {d[2], d[3]};
        args[0] = bind_shape_values(ctx, x, v,
                                    {eq(d[0], make_int(DataType::int64(), in[0])) &&
                                         eq(d[1], make_int(DataType::int64(), in[1])),
                                     d[2] > 0 && d[3] > 0});
    };
    if (runtime_sizes) {
        if (runtime_sizes->values.size() != 4) ctx.error() << "sizes must have 4 values";
        bind_output_size(*runtime_sizes);
    } else if (runtime_scales.defined()) {
        // The output size floor(in * scale) is computed in float32 by a kernel; the resize
        // kernel reads the scales themselves.
        if (ctx.static_shape(runtime_scales, "the scales") != std::vector<int64_t>{4}) {
            ctx.error() << "the scales must have 4 values (N, C, H, W)";
        }
        runtime::NDArray dims =
            runtime::NDArray::empty({4}, graph::dl_dtype_of(DataType::float32()));
        for (int k = 0; k < 4; ++k) dims.data<float>()[k] = static_cast<float>(in[k]);
        Expr sizes_f =
            ctx.call("floor", {ctx.call("multiply", {ctx.constant(dims), runtime_scales})});
        bind_output_size(
            shape_values(ctx, cast_to(ctx, sizes_f, DataType::int64()), "the output size"));
        args.push_back(runtime_scales);
    } else if (!sizes.empty()) {
        if (sizes.size() != 4 || sizes[0] != in[0] || sizes[1] != in[1]) {
            ctx.error() << "sizes " << ints_str(sizes) << " must keep N and C of " << ints_str(in);
        }
        a->size = {sizes[2], sizes[3]};
    } else {
        if (scales.size() != 4 || scales[0] != 1.0 || scales[1] != 1.0) {
            ctx.error() << "scales must have 4 values, 1 for N and C";
        }
        a->scales = {scales[2], scales[3]};
        for (int k = 2; k < 4; ++k) {  // converting a double out of int64's range is undefined
            double size = std::floor(in[k] * scales[k]);
            if (!(size >= 0 && size < 0x1p62)) {
                ctx.error() << "scale " << scales[k] << " of dimension " << k << " (size " << in[k]
                            << ") gives an output size out of range";
            }
            a->size.push_back(static_cast<int64_t>(size));
        }
    }
    a->mode = ctx.attr_string("mode", "nearest");
    if (a->mode == "bilinear" || a->mode == "trilinear") a->mode = "linear";  // Upsample-7
    if (a->mode != "nearest" && a->mode != "linear" && a->mode != "cubic") {
        ctx.error() << "mode '" << a->mode << "' is not supported";
    }
    // Upsample and Resize-10 sample at asymmetric coordinates, floor-rounding for nearest.
    bool legacy = upsample || ctx.opset() == 10;
    a->coordinate_transformation_mode =
        legacy ? "asymmetric" : ctx.attr_string("coordinate_transformation_mode", "half_pixel");
    a->nearest_mode = legacy ? "floor" : ctx.attr_string("nearest_mode", "round_prefer_floor");
    a->cubic_coeff_a = ctx.attr_float("cubic_coeff_a", -0.75f);
    a->exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
    static const char* kModes[] = {
        "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
        "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
    if (std::find(std::begin(kModes), std::end(kModes), a->coordinate_transformation_mode) ==
        std::end(kModes)) {
        ctx.error() << "coordinate_transformation_mode '" << a->coordinate_transformation_mode
                    << "' is not supported";
    }
    if (a->coordinate_transformation_mode == "tf_crop_and_resize") {
        // The region of interest: starts then ends of every axis (opset 18's axes: of those).
        Expr roi = ctx.optional_input(1);
        if (!roi.defined()) ctx.error() << "tf_crop_and_resize needs the roi input";
        roi = cast_to(ctx, roi, DataType::float32());
        std::vector<int64_t> n = ctx.static_shape(roi, "the roi");
        if (n == std::vector<int64_t>{4} && ctx.opset() >= 18 && !ctx.attr_ints("axes").empty()) {
            // [H0, W0, H1, W1] → [0, 0, H0, W0, 1, 1, H1, W1]
            auto [cat, c] = new_attrs<ops::ConcatenateAttrs>();
            auto part = [&](int64_t begin) {
                auto [sa, s] = new_attrs<ops::StridedSliceAttrs>();
                s->begin = {begin};
                s->end = {begin + 2};
                s->axes = {0};
                return ctx.call("strided_slice", {roi}, sa);
            };
            runtime::NDArray zeros = runtime::NDArray::empty({2}, {kDLFloat, 32, 1});
            runtime::NDArray ones = runtime::NDArray::empty({2}, {kDLFloat, 32, 1});
            zeros.copy_from(std::vector<float>{0, 0});
            ones.copy_from(std::vector<float>{1, 1});
            c->axis = 0;
            roi = ctx.call("concatenate",
                           {ctx.constant(zeros), part(0), ctx.constant(ones), part(2)}, cat);
        } else if (n != std::vector<int64_t>{8}) {
            ctx.error() << "the roi must hold 8 values (starts and ends of N, C, H, W), got "
                        << ints_str(n);
        }
        a->extrapolation_value = ctx.attr_float("extrapolation_value", 0.0f);
        args.push_back(roi);
    }
    return {ctx.call("resize2d", args, attrs)};
}

}  // namespace anvil::frontend
