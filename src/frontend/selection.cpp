// Picking elements by their values by ranking and counting (selection.h says how).
#include "frontend/selection.h"

#include "frontend/composite_ops.h"
#include "ir/analyzer.h"
#include "ops/reduce.h"
#include "ops/shape_tensor.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

Expr transpose(const NodeBuilder& ctx, const Expr& x, int64_t a, int64_t b) {
    auto [attrs, t] = new_attrs<ops::TransposeAttrs>();
    for (int64_t d = 0; d < ctx.rank(x); ++d) t->axes.push_back(d == a ? b : d == b ? a : d);
    return ctx.call("transpose", {x}, attrs);
}

}  // namespace

// The element at position i is the p-th selected one when it is true and the running count
// there is p + 1.
Expr selected_positions(const NodeBuilder& ctx, const Expr& mask) {
    DataType i64 = DataType::int64();
    PrimExpr n = cast(i64, ctx.tensor_type(mask, "the mask").shape[0]);
    Expr ones = cast_to(ctx, mask, i64);
    auto c = make_ref<ops::CumsumAttrs>();
    Expr running = ctx.call("cumsum", {ones}, c);
    auto all = make_ref<ops::ReduceAttrs>();
    Expr count = ctx.call("sum", {ones}, all);
    ShapeValues selected = shape_values(ctx, count, "the number of selected elements");
    Expr one = ctx.constant_scalar(i64, 1);
    Expr ordinals = iota(ctx, selected.values[0], bind_shape_values(ctx, one, selected, {}));
    Expr hit = ctx.call("logical_and",
                        {expand_dims(ctx, mask, 1),
                         ctx.call("equal", {expand_dims(ctx, running, 1), ordinals})});  // [n, c]
    Expr i = expand_dims(ctx, iota(ctx, n, ctx.constant_scalar(i64, 0)), 1);
    return reduce_over(ctx, "sum", ctx.call("where", {hit, i, ctx.constant_scalar(i64, 0)}), 0);
}

// Unravelled flat positions: coordinate d is (index / stride_d) % shape_d. Sizes may be symbolic
// (the executor makes their values).
std::vector<Expr> nonzero_coordinates(const NodeBuilder& ctx, const Expr& x) {
    const auto& type = ctx.tensor_type(x, "the input");
    if (type.ndim() == 0) ctx.error() << "the non-zero elements of a 0-D tensor are not supported";
    DataType i64 = DataType::int64();
    std::vector<PrimExpr> shape;
    PrimExpr n = make_int(i64, 1);
    for (const auto& d : type.shape) {
        shape.push_back(simplify(cast(i64, d)));
        n = n * shape.back();
    }
    n = simplify(n);
    auto number = [&](const PrimExpr& v) {
        if (const int64_t* c = as_const_int(v)) return ctx.constant_scalar(i64, double(*c));
        return ops::make_shape_tensor({v}, {}, i64, ctx.loc());
    };
    Expr flat = x;
    if (shape.size() > 1) {
        auto [attrs, a] = new_attrs<ops::ReshapeAttrs>();
        a->dims = {n};
        a->allowzero = true;
        flat = ctx.call("reshape", {x}, attrs);
    }
    Expr mask = type.dtype.is_bool()
                    ? flat
                    : ctx.call("not_equal", {flat, ctx.constant_scalar(type.dtype, 0)});
    Expr flat_index = selected_positions(ctx, mask);
    std::vector<Expr> coordinates;
    for (size_t d = 0; d < shape.size(); ++d) {
        PrimExpr stride = make_int(i64, 1);
        for (size_t k = d + 1; k < shape.size(); ++k) stride = stride * shape[k];
        stride = simplify(stride);
        Expr c = flat_index;
        if (!is_one(stride)) c = ctx.call("divide", {c, number(stride)});
        if (d > 0) c = ctx.call("mod", {c, number(shape[d])});
        coordinates.push_back(c);
    }
    return coordinates;
}

std::pair<Expr, Expr> top_k(const NodeBuilder& ctx, Expr x, int64_t axis, const ShapeValues& k,
                            bool largest) {
    int64_t rank = ctx.rank(x);
    if (k.values.size() != 1) ctx.error() << "k must be one value";
    // Work along the last axis.
    if (axis != rank - 1) x = transpose(ctx, x, axis, rank - 1);
    const auto& xt = ctx.tensor_type(x, "the input");
    PrimExpr n = cast(DataType::int64(), xt.shape[rank - 1]);
    DataType i64 = DataType::int64();
    Expr zero = ctx.constant_scalar(i64, 0);
    Expr j = iota(ctx, n, zero);                       // [n]: the other element
    Expr i = expand_dims(ctx, iota(ctx, n, zero), 1);  // [n, 1]: this element
    Expr xi = expand_dims(ctx, x, rank), xj = expand_dims(ctx, x, rank - 1);
    Expr before = ctx.call(largest ? "greater" : "less", {xj, xi});
    Expr tie = ctx.call("logical_and", {ctx.call("equal", {xj, xi}), ctx.call("less", {j, i})});
    Expr ranks =
        reduce_over(ctx, "sum", cast_to(ctx, ctx.call("logical_or", {before, tie}), i64), rank);
    // The element of rank p, for p below k: exactly one element has each rank.
    Expr positions = iota(ctx, k.values[0],
                          bind_shape_values(ctx, zero, k, {k.values[0] >= 0 && k.values[0] <= n}));
    Expr is_p = ctx.call("equal", {expand_dims(ctx, ranks, rank), positions});  // [.., n, k]
    Expr index = reduce_over(ctx, "sum", ctx.call("where", {is_p, i, zero}), rank - 1);  // [.., k]
    auto [g, ga] = new_attrs<ops::GatherElementsAttrs>();
    ga->axis = rank - 1;
    Expr values = ctx.call("gather_elements", {x, index}, g);
    if (axis != rank - 1) {
        values = transpose(ctx, values, axis, rank - 1);
        index = transpose(ctx, index, axis, rank - 1);
    }
    return {values, index};
}

}  // namespace anvil::frontend
