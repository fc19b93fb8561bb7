// Converters of ONNX ops whose result picks elements by their values: TopK, NonZero, Compress,
// Unique. TopK and NonZero are the shared rankings and counts of frontend/selection.h; Compress
// takes the positions of its condition's true elements (selected_positions), Unique compares
// every pair of slices.
#include "frontend/onnx/convert_ops.h"
#include "frontend/selection.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

Expr sum(ConvertContext& ctx, const Expr& x, int64_t axis) {
    return reduce_over(ctx, "sum", x, axis);
}

}  // namespace

// NonZero: [rank, count] coordinates of the non-zero elements in row-major order.
Exprs convert_non_zero(ConvertContext& ctx) {
    std::vector<Expr> rows = nonzero_coordinates(ctx, ctx.input(0));
    for (auto& r : rows) r = expand_dims(ctx, r, 0);
    auto cat = make_ref<ops::ConcatenateAttrs>();
    return {rows.size() == 1 ? rows[0] : ctx.call("concatenate", rows, cat)};
}

// Compress: the slices along `axis` (of the flattened input without one) whose condition is
// true; a condition shorter than the axis leaves the rest out.
Exprs convert_compress(ConvertContext& ctx) {
    Expr x = ctx.input(0), condition = ctx.input(1);
    int64_t axis = 0;
    if (ctx.has_attr("axis")) {
        axis = ctx.normalize_axis(ctx.attr_int("axis", 0), ctx.rank(x), "axis");
    } else {
        std::vector<int64_t> shape = ctx.static_shape(x, "the input");
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        x = reshape_to(ctx, x, {n});
    }
    const auto& ct = ctx.tensor_type(condition, "the condition");
    const auto& xt = ctx.tensor_type(x, "the input");
    if (ct.ndim() != 1)
        ctx.error() << "the condition must be 1-D, got " << graph::type_str(condition->type);
    const int64_t* len = as_const_int(ct.shape[0]);
    const int64_t* dim = as_const_int(xt.shape[axis]);
    if (len && dim && *len > *dim) {
        ctx.error() << "the condition has " << *len << " elements for an axis of " << *dim;
    }
    Expr mask = ct.dtype.is_bool()
                    ? condition
                    : ctx.call("not_equal", {condition, ctx.constant_scalar(ct.dtype, 0)});
    auto take = make_ref<ops::TakeAttrs>();
    const_cast<ops::TakeAttrs*>(take.get())->axis = axis;
    return {ctx.call("take", {x, selected_positions(ctx, mask)}, take)};
}

// Unique over the slices along `axis` (the elements without one), as comparisons of every pair:
// with the slices flattened to rows of A [n, m], same[i, j] says rows i and j are equal and
// before[i, j] that row j sorts before row i (lexicographically: at their first differing
// element). A row is a first occurrence when no earlier row equals it; the unique rows are the
// first occurrences ordered by value (sorted) or by position, their count bound at run time.
Exprs convert_unique(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    bool sorted = ctx.attr_int("sorted", 1) != 0;
    bool has_axis = ctx.has_attr("axis");
    int64_t rank = static_cast<int64_t>(shape.size());
    int64_t axis = has_axis ? ctx.normalize_axis(ctx.attr_int("axis", 0), rank, "axis") : 0;
    // The rows: the axis first, the other axes (in order) flattened.
    Expr rows = x;
    int64_t n = 1, m = 1;
    if (has_axis) {
        if (axis != 0) {
            auto attrs = make_ref<ops::TransposeAttrs>();
            auto* t = const_cast<ops::TransposeAttrs*>(attrs.get());
            t->axes.push_back(axis);
            for (int64_t d = 0; d < rank; ++d) {
                if (d != axis) t->axes.push_back(d);
            }
            rows = ctx.call("transpose", {rows}, attrs);
        }
        n = shape[axis];
        for (int64_t d = 0; d < rank; ++d) m *= d == axis ? 1 : shape[d];
    } else {
        for (int64_t d : shape) n *= d;
    }
    rows = reshape_to(ctx, rows, {n, m});
    DataType i64 = DataType::int64();
    Expr zero = ctx.constant_scalar(i64, 0);
    auto count_true = [&](const Expr& mask, int64_t over) {
        return sum(ctx, cast_to(ctx, mask, i64), over);
    };
    Expr ri = expand_dims(ctx, rows, 1), rj = expand_dims(ctx, rows, 0);  // [n, 1, m], [1, n, m]
    Expr differ = ctx.call("not_equal", {rj, ri});                        // [n, n, m]
    Expr same = ctx.call("equal", {count_true(differ, 2), zero});         // [n, n]
    Expr j = iota(ctx, make_int(i64, n), zero);                           // [n]
    Expr i = expand_dims(ctx, j, 1);                                      // [n, 1]
    Expr earlier = ctx.call("less", {j, i});                              // [n, n]: j < i
    Expr first = ctx.call("equal", {count_true(ctx.call("logical_and", {same, earlier}), 1), zero});
    Expr first_j = expand_dims(ctx, first, 0);  // [1, n]
    Expr order;                                 // [n, n]: j comes before i in the result
    if (sorted) {
        Expr k = iota(ctx, make_int(i64, m), zero);
        Expr first_diff = reduce_over(
            ctx, "min", ctx.call("where", {differ, k, ctx.constant_scalar(i64, double(m))}), 2);
        Expr at_first_diff = ctx.call("equal", {k, expand_dims(ctx, first_diff, 2)});  // [n, n, m]
        Expr less = ctx.call("logical_and", {ctx.call("less", {rj, ri}), at_first_diff});
        order = ctx.call("greater", {count_true(less, 2), zero});
    } else {
        order = earlier;
    }
    Expr ranks = count_true(ctx.call("logical_and", {first_j, order}), 1);  // [n]
    ShapeValues unique = shape_values(ctx, count_true(first, 0), "the number of unique values");
    Expr p = iota(ctx, unique.values[0], bind_shape_values(ctx, zero, unique, {}));  // [u]
    Expr hit =
        ctx.call("logical_and", {expand_dims(ctx, first, 1),
                                 ctx.call("equal", {expand_dims(ctx, ranks, 1), p})});  // [n, u]
    Expr indices = sum(ctx, ctx.call("where", {hit, i, zero}), 0);
    Expr inverse = sum(ctx,
                       ctx.call("where", {ctx.call("logical_and", {same, first_j}),
                                          expand_dims(ctx, ranks, 0), zero}),
                       1);
    Expr counts =
        sum(ctx, ctx.call("where", {hit, expand_dims(ctx, count_true(same, 1), 1), zero}), 0);
    auto take = make_ref<ops::TakeAttrs>();
    const_cast<ops::TakeAttrs*>(take.get())->axis = axis;
    Expr source = has_axis ? x : reshape_to(ctx, x, {n});
    return {ctx.call("take", {source, indices}, take), indices, inverse, counts};
}

Exprs convert_top_k(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), ctx.rank(x), "axis");
    // k: an attribute before opset 10, then input 1.
    ShapeValues k = ctx.opset() < 10
                        ? shape_values(ctx, ctx.constant_int64({ctx.attr_int("k", 0)}, {1}), "k")
                        : shape_values(ctx, ctx.input(1), "k");
    auto [values, indices] = top_k(ctx, x, axis, k, ctx.attr_int("largest", 1) != 0);
    return {values, indices};
}

}  // namespace anvil::frontend
