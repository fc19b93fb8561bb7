// Converters of ONNX's data-movement ops: Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
// Concat, Split, Expand, Tile, Slice, Gather, GatherElements, Pad, DepthToSpace, SpaceToDepth
// (Resize and Upsample: convert_resize.cpp).
// Operands that say how to move the data (shapes, axes, pads, starts/ends, sizes) become the
// op's attributes when known at import time; otherwise the executor binds their values to
// dimension variables (bind_values) and the attributes hold expressions of those.
#include <algorithm>
#include <cmath>
#include <optional>

#include "frontend/onnx/convert_ops.h"
#include "ops/shape_tensor.h"
#include "ops/transform.h"
#include "ops/value_shapes.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// Axes given as an attribute before `input_from_opset` and as optional input `index` from then
// on; empty when neither is given.
std::vector<int64_t> axes_operand(ConvertContext& ctx, int input_from_opset, size_t index,
                                  const std::string& attr = "axes") {
    if (ctx.opset() < input_from_opset) return ctx.attr_ints(attr);
    Expr a = ctx.optional_input(index);
    return a.defined() ? ctx.const_ints(a, "the " + attr) : std::vector<int64_t>{};
}

}  // namespace

Exprs convert_reshape(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::ReshapeAttrs>();
    if (ctx.opset() >= 5) {
        if (const auto* st = ops::shape_tensor_attrs(ctx.input(1))) {
            // A shape computed from symbolic dimensions: the target stays symbolic.
            a->dims = st->values;
            a->allowzero = ctx.attr_int("allowzero", 0) != 0;
            return {ctx.call("reshape", {ctx.input(0)}, attrs)};
        }
        Expr shape = ctx.input(1);
        if (!constant_data(shape).defined()) {
            // A shape known only at run time: the executor reshapes (a view of the data).
            std::vector<int64_t> k = ctx.static_shape(shape, "the shape");
            if (k.size() != 1) ctx.error() << "the shape must be 1-D, not " << ints_str(k);
            auto [dynamic, d] = new_attrs<ops::DynamicReshapeAttrs>();
            d->dims = ctx.new_dims(static_cast<size_t>(k[0]));
            d->allowzero = ctx.attr_int("allowzero", 0) != 0;
            return {ctx.call("dynamic_reshape", {ctx.input(0), shape}, dynamic)};
        }
    }
    a->newshape =
        ctx.opset() < 5 ? ctx.attr_ints("shape") : ctx.const_ints(ctx.input(1), "the shape");
    a->allowzero = ctx.attr_int("allowzero", 0) != 0;
    // Checked here: the type rule's product of the sizes would wrap around.
    int64_t product = 1;
    for (int64_t d : a->newshape) {
        if (d < -1) ctx.error() << "shape entry " << d << " is not a size (nor -1 or 0)";
        if (d > 0 && __builtin_mul_overflow(product, d, &product)) {
            ctx.error() << "the target shape " << ints_str(a->newshape) << " overflows 64 bits";
        }
    }
    return {ctx.call("reshape", {ctx.input(0)}, attrs)};
}

Exprs convert_flatten(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::FlattenAttrs>();
    a->axis = ctx.attr_int("axis", 1);
    return {ctx.call("flatten", {ctx.input(0)}, attrs)};
}

Exprs convert_transpose(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
    a->axes = ctx.attr_ints("perm");
    return {ctx.call("transpose", {ctx.input(0)}, attrs)};
}

namespace {

// The axes operand when it is known only at run time (opset 13 on).
Expr dynamic_axes_input(ConvertContext& ctx) {
    Expr axes = ctx.opset() >= 13 ? ctx.optional_input(1) : Expr();
    return axes.defined() && !constant_data(axes).defined() ? axes : Expr();
}

}  // namespace

Exprs convert_squeeze(ConvertContext& ctx) {
    if (Expr axes = dynamic_axes_input(ctx); axes.defined()) {
        return {squeeze_values(ctx, ctx.input(0), shape_values(ctx, axes, "the axes"))};
    }
    auto [attrs, a] = new_attrs<ops::SqueezeAttrs>();
    a->axes = axes_operand(ctx, 13, 1);
    return {ctx.call("squeeze", {ctx.input(0)}, attrs)};
}

// One expand_dims per axis, ascending, each normalized against the output rank.
Exprs convert_unsqueeze(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    if (Expr axes = dynamic_axes_input(ctx); axes.defined()) {
        return {unsqueeze_values(ctx, x, shape_values(ctx, axes, "the axes"))};
    }
    std::vector<int64_t> axes = axes_operand(ctx, 13, 1);
    if (axes.empty()) ctx.error() << "no axes given";
    int64_t out_rank = ctx.rank(x) + static_cast<int64_t>(axes.size());
    for (auto& axis : axes) axis = ctx.normalize_axis(axis, out_rank, "axis");
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) {
        ctx.error() << "an axis is repeated";
    }
    for (int64_t axis : axes) {
        auto [attrs, a] = new_attrs<ops::ExpandDimsAttrs>();
        a->axis = axis;
        x = ctx.call("expand_dims", {x}, attrs);
    }
    return {x};
}

Exprs convert_concat(ConvertContext& ctx) {
    if (!ctx.has_attr("axis") && ctx.opset() >= 4) ctx.error() << "attribute 'axis' is required";
    auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
    a->axis = ctx.attr_int("axis", 1);
    std::vector<Expr> args;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) args.push_back(ctx.input(i));
    return {ctx.call("concatenate", args, attrs)};
}

// Split sizes: attribute `split` before opset 13, optional input 1 from 13; opset 18 adds
// num_outputs. Without sizes the outputs are equal parts.
Exprs convert_split(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    auto [attrs, a] = new_attrs<ops::SplitAttrs>();
    a->axis = ctx.normalize_axis(ctx.attr_int("axis", 0), ctx.rank(x), "axis");
    int outputs = ctx.node().output_size();
    if (Expr split = ctx.opset() >= 13 ? ctx.optional_input(1) : Expr();
        split.defined() && !constant_data(split).defined()) {
        return split_dynamic(ctx, x, a->axis, shape_values(ctx, split, "the split"), outputs);
    }
    std::vector<int64_t> sizes = axes_operand(ctx, 13, 1, "split");
    if (!sizes.empty()) {
        if (static_cast<int>(sizes.size()) != outputs) {
            ctx.error() << "split has " << sizes.size() << " sizes for " << outputs << " outputs";
        }
        int64_t at = 0;
        for (size_t i = 0; i + 1 < sizes.size(); ++i) a->indices.push_back(at += sizes[i]);
    } else {
        a->sections = ctx.attr_int("num_outputs", outputs);
    }
    Expr parts = ctx.call("split", {x}, attrs);
    Exprs outs;
    for (int i = 0; i < outputs; ++i)
        outs.push_back(graph::make_tuple_get_item(parts, i, ctx.loc()));
    return outs;
}

Exprs convert_expand(ConvertContext& ctx) {
    ShapeValues target = shape_values(ctx, ctx.input(1), "the shape");
    if (!target.all_constant) return {broadcast_to_values(ctx, ctx.input(0), target)};
    auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
    a->shape = target.constants;
    return {ctx.call("broadcast_to", {ctx.input(0)}, attrs)};
}

Exprs convert_tile(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::TileAttrs>();
    ShapeValues reps = shape_values(ctx, ctx.input(1), "the repeats");
    if (reps.all_constant) {
        const auto& xt = ctx.tensor_type(ctx.input(0), "the input");
        for (size_t i = 0; i < reps.constants.size(); ++i) {
            int64_t r = reps.constants[i], size = 0;
            if (r < 0) ctx.error() << "repeat " << r << " (axis " << i << ") is negative";
            const int64_t* d = i < xt.ndim() ? as_const_int(xt.shape[i]) : nullptr;
            if (d && __builtin_mul_overflow(*d, r, &size)) {
                ctx.error() << "dimension " << i << " of size " << *d << " repeated " << r
                            << " times overflows 64 bits";
            }
        }
        a->reps = reps.constants;
        return {ctx.call("tile", {ctx.input(0)}, attrs)};
    }
    std::vector<PrimExpr> checks;
    for (const auto& rep : reps.values) checks.push_back(rep >= make_int(DataType::int64(), 0));
    a->symbolic_reps = reps.values;
    return {ctx.call("tile", {bind_shape_values(ctx, ctx.input(0), reps, checks)}, attrs)};
}

namespace {

// Slice whose starts, ends, axes or steps are known only at run time: their values are bound to
// dimension variables, checked (steps not 0, axes in range and distinct), and the slice is
// strided_slice's dynamic form.
Expr dynamic_slice(ConvertContext& ctx, const Expr& x, const std::vector<Expr>& operands) {
    static const char* kWhat[] = {"the starts", "the ends", "the axes", "the steps"};
    std::vector<ShapeValues> values;
    for (size_t i = 0; i < operands.size(); ++i) {
        values.push_back(operands[i].defined() ? shape_values(ctx, operands[i], kWhat[i])
                                               : ShapeValues{});
    }
    size_t n = values[0].values.size();
    for (size_t i = 1; i < values.size(); ++i) {
        if (operands[i].defined() && values[i].values.size() != n) {
            ctx.error() << kWhat[i] << " have " << values[i].values.size() << " values, the starts "
                        << n;
        }
    }
    auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
    a->dynamic_begin = values[0].values;
    a->dynamic_end = values[1].values;
    a->dynamic_axes = values[2].values;
    a->dynamic_strides = values[3].values;
    int64_t rank = ctx.rank(x);
    std::vector<PrimExpr> checks;
    for (const auto& step : a->dynamic_strides) checks.push_back(ne(step, 0));
    normalized_axes(a->dynamic_axes, rank, &checks);
    return ctx.call("strided_slice", {bind_all_shape_values(ctx, x, values, std::move(checks))},
                    attrs);
}

}  // namespace

// Starts/ends/axes are attributes before opset 10, inputs (with steps) from 10 on; inputs known
// only at run time stay run-time values.
Exprs convert_slice(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
    if (ctx.opset() >= 10) {
        std::vector<Expr> operands = {ctx.input(1), ctx.input(2), ctx.optional_input(3),
                                      ctx.optional_input(4)};
        for (const auto& o : operands) {
            if (o.defined() && !constant_data(o).defined()) {
                return {dynamic_slice(ctx, ctx.input(0), operands)};
            }
        }
    }
    if (ctx.opset() < 10) {
        a->begin = ctx.attr_ints("starts");
        a->end = ctx.attr_ints("ends");
        a->axes = ctx.attr_ints("axes");
    } else {
        a->begin = ctx.const_ints(ctx.input(1), "the starts");
        a->end = ctx.const_ints(ctx.input(2), "the ends");
        if (Expr axes = ctx.optional_input(3); axes.defined())
            a->axes = ctx.const_ints(axes, "the axes");
        if (Expr steps = ctx.optional_input(4); steps.defined()) {
            a->strides = ctx.const_ints(steps, "the steps");
        }
    }
    return {ctx.call("strided_slice", {ctx.input(0)}, attrs)};
}

Exprs convert_gather(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = ctx.attr_int("axis", 0);
    // Constant indices are checked here: ONNX makes one out of range an error; a kernel cannot.
    const auto& data = ctx.tensor_type(ctx.input(0), "the data");
    runtime::NDArray indices = constant_data(ctx.input(1));
    int64_t axis = ctx.normalize_axis(a->axis, static_cast<int64_t>(data.ndim()), "axis");
    const int64_t* dim = as_const_int(data.shape[axis]);
    if (indices.defined() && dim && indices.num_elements() <= (int64_t{1} << 24)) {
        for (int64_t i : ctx.const_ints(ctx.input(1), "the indices")) {
            if (i < -*dim || i >= *dim) {
                ctx.error() << "index " << i << " is out of range for axis " << axis << " of size "
                            << *dim;
            }
        }
    }
    return {ctx.call("take", {ctx.input(0), ctx.input(1)}, attrs)};
}

Exprs convert_gather_nd(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::GatherNDAttrs>();
    a->batch_dims = ctx.attr_int("batch_dims", 0);
    return {ctx.call("gather_nd", {ctx.input(0), ctx.input(1)}, attrs)};
}

Exprs convert_reverse_sequence(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::ReverseSequenceAttrs>();
    a->batch_axis = ctx.attr_int("batch_axis", 1);
    a->time_axis = ctx.attr_int("time_axis", 0);
    return {ctx.call("reverse_sequence", {ctx.input(0), ctx.input(1)}, attrs)};
}

// ScatterElements (and its former name Scatter); ScatterND.
Exprs convert_scatter(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::ScatterAttrs>();
    bool nd = ctx.node().op_type() == "ScatterND";
    if (!nd) a->axis = ctx.attr_int("axis", 0);
    a->reduction = ctx.attr_string("reduction", "none");
    return {ctx.call(nd ? "scatter_nd" : "scatter_elements",
                     {ctx.input(0), ctx.input(1), ctx.input(2)}, attrs)};
}

Exprs convert_grid_sample(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::GridSampleAttrs>();
    a->mode = ctx.attr_string("mode", "bilinear");
    a->padding_mode = ctx.attr_string("padding_mode", "zeros");
    a->align_corners = ctx.attr_int("align_corners", 0) != 0;
    return {ctx.call("grid_sample", {ctx.input(0), ctx.input(1)}, attrs)};
}

// RoiAlign (opset 16: coordinate_transformation_mode; before, the legacy output_half_pixel).
Exprs convert_roi_align(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::RoiAlignAttrs>();
    if (ctx.attr_string("mode", "avg") != "avg") ctx.error() << "only mode avg is supported";
    a->output_height = ctx.attr_int("output_height", 1);
    a->output_width = ctx.attr_int("output_width", 1);
    a->sampling_ratio = ctx.attr_int("sampling_ratio", 0);
    a->spatial_scale = ctx.attr_float("spatial_scale", 1.0f);
    std::string mode = ctx.attr_string("coordinate_transformation_mode",
                                       ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (mode != "half_pixel" && mode != "output_half_pixel") {
        ctx.error() << "coordinate_transformation_mode '" << mode << "' is not supported";
    }
    a->half_pixel = mode == "half_pixel";
    return {ctx.call("roi_align", {ctx.input(0), ctx.input(1), ctx.input(2)}, attrs)};
}

// Trilu: k (optional input, default 0) is read at run time.
Exprs convert_trilu(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::TriluAttrs>();
    a->upper = ctx.attr_int("upper", 1) != 0;
    Expr k = ctx.optional_input(1);
    if (!k.defined()) k = ctx.constant_int64({0}, {});
    return {ctx.call("trilu", {ctx.input(0), k}, attrs)};
}

Exprs convert_gather_elements(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::GatherElementsAttrs>();
    a->axis = ctx.attr_int("axis", 0);
    return {ctx.call("gather_elements", {ctx.input(0), ctx.input(1)}, attrs)};
}

// Pads: attribute `pads` (`paddings` in opset 1) before opset 11, input 1 from 11 (with input 3,
// axes, from 18); ONNX's [b0, b1, ..., e0, e1, ...] becomes pad_width [b0, e0, b1, e1, ...].
Exprs convert_pad(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    int64_t rank = ctx.rank(x);
    auto [attrs, a] = new_attrs<ops::PadAttrs>();
    a->pad_mode = ctx.attr_string("mode", "constant");
    if (a->pad_mode != "constant" && a->pad_mode != "reflect" && a->pad_mode != "edge" &&
        !(a->pad_mode == "wrap" && ctx.opset() >= 19)) {
        ctx.error() << "mode '" << a->pad_mode
                    << "' is not supported (constant, reflect, edge, wrap)";
    }
    std::vector<Expr> args = {x};
    ShapeValues pads;
    std::vector<int64_t> axes;
    if (ctx.opset() < 11) {
        pads.constants = ctx.attr_ints(ctx.opset() < 2 ? "paddings" : "pads");
        pads.all_constant = true;
        a->pad_value = ctx.attr_float("value", 0.0f);
    } else {
        pads = shape_values(ctx, ctx.input(1), "the pads");
        if (Expr v = ctx.optional_input(2); v.defined()) {
            if (constant_data(v).defined()) {
                a->pad_value = ctx.const_scalar(v, "the constant value");
            } else {
                args.push_back(v);  // read at run time
            }
        }
        if (Expr ax = ctx.optional_input(3); ax.defined()) axes = ctx.const_ints(ax, "the axes");
    }
    if (axes.empty()) {
        for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    }
    size_t count = pads.all_constant ? pads.constants.size() : pads.values.size();
    if (count != 2 * axes.size()) {
        ctx.error() << "pads has " << count << " values for " << axes.size() << " axes";
    }
    if (pads.all_constant) {
        a->pad_width.assign(2 * rank, 0);
    } else {
        a->dynamic_pad_width.assign(2 * rank, make_int(DataType::int64(), 0));
    }
    for (size_t i = 0; i < axes.size(); ++i) {
        int64_t axis = ctx.normalize_axis(axes[i], rank, "axis");
        if (pads.all_constant) {
            a->pad_width[2 * axis] = pads.constants[i];
            a->pad_width[2 * axis + 1] = pads.constants[i + axes.size()];
        } else {
            a->dynamic_pad_width[2 * axis] = pads.values[i];
            a->dynamic_pad_width[2 * axis + 1] = pads.values[i + axes.size()];
        }
    }
    if (!pads.all_constant) {
        // The result must not be cropped below nothing.
        const auto& shape = ctx.tensor_type(x, "the data").shape;
        std::vector<PrimExpr> checks;
        for (int64_t d = 0; d < rank; ++d) {
            checks.push_back(cast(DataType::int64(), shape[d]) + a->dynamic_pad_width[2 * d] +
                                 a->dynamic_pad_width[2 * d + 1] >=
                             0);
        }
        args[0] = bind_shape_values(ctx, x, pads, std::move(checks));
    }
    return {ctx.call("nn.pad", args, attrs)};
}

Exprs convert_depth_to_space(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::DepthToSpaceAttrs>();
    a->blocksize = ctx.attr_int("blocksize", 0);
    a->mode = ctx.attr_string("mode", "DCR");
    if (a->mode != "DCR" && a->mode != "CRD") ctx.error() << "mode '" << a->mode << "' is unknown";
    return {ctx.call("depth_to_space", {ctx.input(0)}, attrs)};
}

Exprs convert_space_to_depth(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::SpaceToDepthAttrs>();
    a->blocksize = ctx.attr_int("blocksize", 0);
    return {ctx.call("space_to_depth", {ctx.input(0)}, attrs)};
}

}  // namespace anvil::frontend
