// Converters of ONNX's reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ArgMax, ArgMin).
#include <algorithm>
#include <optional>

#include "frontend/onnx/convert_ops.h"
#include "ops/reduce.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

const char* reduce_op(const std::string& op_type) {
    if (op_type == "ReduceSum") return "sum";
    if (op_type == "ReduceMean") return "mean";
    if (op_type == "ReduceMax") return "max";
    if (op_type == "ReduceMin") return "min";
    if (op_type == "ReduceProd") return "prod";
    internal_error() << "no reduction for " << op_type;
    ANVIL_UNREACHABLE();
}

// The axes and keepdims of a reduction node, and whether it reduces nothing (empty axes with
// noop_with_empty_axes).
struct ReduceArgs {
    std::vector<int64_t> axes;  // normalised; empty: all
    bool keepdims = true;
    bool noop = false;
    // Axes known only at run time (values bound by the executor); replace `axes`.
    std::optional<ShapeValues> dynamic;
};

// The axes are an attribute until opset 13 (ReduceSum) or 18 (the others), then an optional
// input; no axes reduce everything, unless noop_with_empty_axes.
ReduceArgs reduce_args(ConvertContext& ctx, const Expr& x) {
    const std::string& op_type = ctx.node().op_type();
    int axes_input_from = op_type == "ReduceSum" ? 13 : 18;
    std::vector<int64_t> axes;
    if (ctx.opset() < axes_input_from) {
        axes = ctx.attr_ints("axes");
    } else if (Expr a = ctx.optional_input(1); a.defined()) {
        if (!constant_data(a).defined() && ctx.tensor_type(a, "the axes").num_elements() != 0) {
            ReduceArgs r;
            r.dynamic = shape_values(ctx, a, "the axes");
            r.keepdims = ctx.attr_int("keepdims", 1) != 0;
            return r;
        }
        if (constant_data(a).defined()) axes = ctx.const_ints(a, "the axes");
    }
    ReduceArgs r;
    r.noop = axes.empty() && ctx.opset() >= axes_input_from &&
             ctx.attr_int("noop_with_empty_axes", 0) != 0;
    int64_t rank = ctx.rank(x);
    for (int64_t axis : axes) r.axes.push_back(ctx.normalize_axis(axis, rank, "axis"));
    r.keepdims = ctx.attr_int("keepdims", 1) != 0;
    return r;
}

// The reduction over axes known only at run time: checked and bound by the executor, reduced
// with keepdims, then squeezed when not keepdims.
Expr reduce_dynamic(ConvertContext& ctx, const char* op, const Expr& x, const ShapeValues& axes,
                    bool keepdims) {
    std::vector<PrimExpr> checks;
    normalized_axes(axes.values, ctx.rank(x), &checks);
    auto attrs = make_ref<ops::ReduceAttrs>();
    auto* a = const_cast<ops::ReduceAttrs*>(attrs.get());
    a->dynamic_axes = axes.values;
    a->keepdims = true;
    Expr y = ctx.call(op, {bind_shape_values(ctx, x, axes, std::move(checks))}, attrs);
    if (keepdims) return y;
    ShapeValues bound = axes;
    bound.bound_from = Expr();  // already bound above
    return squeeze_values(ctx, y, bound);
}

Expr reduce_call(ConvertContext& ctx, const char* op, const Expr& x, const ReduceArgs& r,
                 bool keepdims) {
    if (r.noop) return x;
    if (r.dynamic) return reduce_dynamic(ctx, op, x, *r.dynamic, keepdims);
    auto attrs = make_ref<ops::ReduceAttrs>();
    auto* a = const_cast<ops::ReduceAttrs*>(attrs.get());
    a->axes = r.axes;
    a->keepdims = keepdims;
    return ctx.call(op, {x}, attrs);
}

}  // namespace

Exprs convert_reduce(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    ReduceArgs r = reduce_args(ctx, x);
    return {reduce_call(ctx, reduce_op(ctx.node().op_type()), x, r, r.keepdims)};
}

// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp: ONNX defines them as
// ReduceSum of an elementwise function, followed by one (and so do we; with
// noop_with_empty_axes only the elementwise functions remain). LogSumExp subtracts the maximum
// first so that exp cannot overflow.
Exprs convert_composite_reduce(ConvertContext& ctx) {
    const std::string& op_type = ctx.node().op_type();
    Expr x = ctx.input(0);
    ReduceArgs r = reduce_args(ctx, x);
    if (op_type == "ReduceL1")
        return {reduce_call(ctx, "sum", ctx.call("abs", {x}), r, r.keepdims)};
    Expr square = ctx.call("multiply", {x, x});
    if (op_type == "ReduceSumSquare") return {reduce_call(ctx, "sum", square, r, r.keepdims)};
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) {
        ctx.error() << op_type << " needs a floating-point input, got " << dt.str();
    }
    if (op_type == "ReduceL2") {
        return {ctx.call("sqrt", {reduce_call(ctx, "sum", square, r, r.keepdims)})};
    }
    if (op_type == "ReduceLogSum") {
        return {ctx.call("log", {reduce_call(ctx, "sum", x, r, r.keepdims)})};
    }
    // ReduceLogSumExp
    if (r.noop) return {ctx.call("log", {ctx.call("exp", {x})})};
    Expr m = reduce_call(ctx, "max", x, r, true);
    Expr s = reduce_call(ctx, "sum", ctx.call("exp", {ctx.call("subtract", {x, m})}), r, true);
    Expr y = ctx.call("add", {ctx.call("log", {s}), m});
    if (r.keepdims) return {y};
    if (r.dynamic) {
        ShapeValues bound = *r.dynamic;
        bound.bound_from = Expr();  // the reductions bound them
        return {squeeze_values(ctx, y, bound)};
    }
    std::vector<int64_t> in_shape = ctx.static_shape(x, "the input"), shape;
    for (size_t i = 0; i < in_shape.size(); ++i) {
        bool reduced =
            r.axes.empty() || std::find(r.axes.begin(), r.axes.end(), int64_t(i)) != r.axes.end();
        if (!reduced) shape.push_back(in_shape[i]);
    }
    return {reshape_to(ctx, y, shape)};
}

// CumSum. An axis known at import time gives one cumsum; a rank-1 input has one axis anyway;
// otherwise the axis is read at run time and selects among the cumsums along every axis.
Exprs convert_cumsum(ConvertContext& ctx) {
    Expr x = ctx.input(0), axis_input = ctx.input(1);
    int64_t rank = ctx.rank(x);
    auto cumsum = [&](int64_t axis) {
        auto attrs = make_ref<ops::CumsumAttrs>();
        auto* a = const_cast<ops::CumsumAttrs*>(attrs.get());
        a->axis = axis;
        a->exclusive = ctx.attr_int("exclusive", 0) != 0;
        a->reverse = ctx.attr_int("reverse", 0) != 0;
        return ctx.call("cumsum", {x}, attrs);
    };
    if (constant_data(axis_input).defined()) {
        std::vector<int64_t> axis = ctx.const_ints(axis_input, "the axis");
        if (axis.size() != 1) ctx.error() << "the axis must have one element, got " << axis.size();
        return {cumsum(ctx.normalize_axis(axis[0], rank, "axis"))};
    }
    if (rank == 1) return {cumsum(0)};
    const auto& at = ctx.tensor_type(axis_input, "the axis");
    if (!at.dtype.is_integer()) ctx.error() << "the axis must be an integer tensor";
    Expr axis = cast_to(ctx, axis_input, DataType::int64());
    Expr y = cumsum(rank - 1);
    for (int64_t d = rank - 2; d >= 0; --d) {
        Expr is_d =
            ctx.call("logical_or",
                     {ctx.call("equal", {axis, ctx.constant_scalar(DataType::int64(), d)}),
                      ctx.call("equal", {axis, ctx.constant_scalar(DataType::int64(), d - rank)})});
        y = ctx.call("where", {is_d, cumsum(d), y});
    }
    return {y};
}

Exprs convert_einsum(ConvertContext& ctx) {
    auto attrs = make_ref<ops::EinsumAttrs>();
    const_cast<ops::EinsumAttrs*>(attrs.get())->equation = ctx.attr_string("equation", "");
    return {ctx.call("einsum", ctx.inputs(), attrs)};
}

Exprs convert_arg_reduce(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    auto attrs = make_ref<ops::ArgReduceAttrs>();
    auto* a = const_cast<ops::ArgReduceAttrs*>(attrs.get());
    a->axis = ctx.normalize_axis(ctx.attr_int("axis", 0), ctx.rank(x), "axis");
    a->keepdims = ctx.attr_int("keepdims", 1) != 0;
    a->select_last_index = ctx.attr_int("select_last_index", 0) != 0;
    return {ctx.call(ctx.node().op_type() == "ArgMax" ? "argmax" : "argmin", {x}, attrs)};
}

}  // namespace anvil::frontend
