// Converters of ONNX's reductions (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd,
// ArgMax, ArgMin).
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

}  // namespace

// The axes are an attribute until opset 13 (ReduceSum) or 18 (the others), then an optional
// input; no axes reduce everything, unless noop_with_empty_axes.
Exprs convert_reduce(ConvertContext& ctx) {
    const std::string& op_type = ctx.node().op_type();
    Expr x = ctx.input(0);
    int axes_input_from = op_type == "ReduceSum" ? 13 : 18;
    std::vector<int64_t> axes;
    if (ctx.opset() < axes_input_from) {
        axes = ctx.attr_ints("axes");
    } else if (Expr a = ctx.optional_input(1); a.defined()) {
        axes = ctx.const_ints(a, "the axes");
    }
    if (axes.empty() && ctx.opset() >= axes_input_from &&
        ctx.attr_int("noop_with_empty_axes", 0) != 0) {
        return {x};
    }
    auto attrs = make_ref<ops::ReduceAttrs>();
    auto* a = const_cast<ops::ReduceAttrs*>(attrs.get());
    int64_t rank = ctx.rank(x);
    for (int64_t axis : axes) a->axes.push_back(ctx.normalize_axis(axis, rank, "axis"));
    a->keepdims = ctx.attr_int("keepdims", 1) != 0;
    return {ctx.call(reduce_op(op_type), {x}, attrs)};
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
