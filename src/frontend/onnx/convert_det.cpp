// Det as Gaussian elimination with partial pivoting, as LAPACK's getrf computes it for numpy: a
// control.loop over the pivot columns p = 0 .. n-1, all matrices of the batch at once. Each
// iteration takes the row at or below p with the largest |a[i, p]| (the first of equals), swaps
// it with row p (a swap negates the determinant), multiplies the determinant by the pivot and
// subtracts multiples of the pivot row from the rows below so that column p vanishes there. A
// zero pivot (the matrix is singular) makes the determinant 0 and eliminates nothing, so no
// division by zero happens and no NaN appears. One loop serves every n, so the graph stays small
// however large the matrices are; float16 and bfloat16 matrices are reduced in float32.
#include <cctype>

#include "frontend/onnx/convert_ops.h"
#include "ops/control_flow.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

Expr take(ConvertContext& ctx, const Expr& x, const Expr& index, int64_t axis) {
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = axis;
    return ctx.call("take", {x, index}, attrs);
}

// The loop body (p, cond, a, det, rows) → (cond, a', det') for matrices a [B, n, n], their
// determinants so far det [B] and rows = 0 .. n-1.
Expr elimination_step(ConvertContext& ctx, const std::vector<Ref<graph::Var>>& params,
                      DataType dt) {
    const Expr &p = params[0], &a = params[2], &det = params[3], &rows = params[4];
    Expr zero = ctx.constant_scalar(dt, 0), one = ctx.constant_scalar(dt, 1);
    // The pivot row: the largest magnitude in column p at or below the diagonal.
    Expr column = take(ctx, a, p, 2);  // [B, n]
    Expr candidates = ctx.call("where", {ctx.call("greater_equal", {rows, p}),
                                         ctx.call("abs", {column}), ctx.constant_scalar(dt, -1)});
    auto [arg, g] = new_attrs<ops::ArgReduceAttrs>();
    g->axis = 1;
    g->keepdims = false;
    Expr pivot_row = ctx.call("argmax", {candidates}, arg);  // [B]
    // Rows p and pivot_row swapped.
    Expr row_p = take(ctx, a, p, 1);  // [B, n]
    auto [gather, ga] = new_attrs<ops::GatherNDAttrs>();
    ga->batch_dims = 1;
    Expr row_pivot = ctx.call("gather_nd", {a, expand_dims(ctx, pivot_row, 1)}, gather);  // [B, n]
    Expr row = expand_dims(ctx, rows, 1);                                                 // [n, 1]
    Expr is_pivot_row =
        ctx.call("equal", {row, expand_dims(ctx, expand_dims(ctx, pivot_row, 1), 2)});  // [B, n, 1]
    Expr swapped = ctx.call(
        "where", {ctx.call("equal", {row, p}), expand_dims(ctx, row_pivot, 1),
                  ctx.call("where", {is_pivot_row, expand_dims(ctx, row_p, 1), a})});  // [B, n, n]
    Expr pivot = take(ctx, row_pivot, p, 1);                                           // [B]
    Expr sign =
        ctx.call("where", {ctx.call("equal", {pivot_row, p}), one, ctx.constant_scalar(dt, -1)});
    Expr new_det = ctx.call("multiply", {ctx.call("multiply", {det, pivot}), sign});
    // Rows below p lose factor * the pivot row; nothing changes when the pivot is 0.
    Expr nonzero = ctx.call("not_equal", {pivot, zero});
    Expr safe_pivot = ctx.call("where", {nonzero, pivot, one});
    Expr below = ctx.call(
        "logical_and", {ctx.call("greater", {rows, p}), expand_dims(ctx, nonzero, 1)});  // [B, n]
    Expr factor = ctx.call(
        "where",
        {below, ctx.call("divide", {take(ctx, swapped, p, 2), expand_dims(ctx, safe_pivot, 1)}),
         zero});  // [B, n]
    Expr eliminated =
        ctx.call("subtract", {swapped, ctx.call("multiply", {expand_dims(ctx, factor, 2),
                                                             expand_dims(ctx, row_pivot, 1)})});
    return graph::make_tuple({ctx.constant_scalar(DataType::bool_(), 1), eliminated, new_det});
}

}  // namespace

Exprs convert_det(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) ctx.error() << "the input must be floating-point, got " << dt.str();
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    size_t r = shape.size();
    if (r < 2 || shape[r - 1] != shape[r - 2]) {
        ctx.error() << "the input must be square matrices [..., n, n], got "
                    << graph::type_str(x->type);
    }
    std::vector<int64_t> batch(shape.begin(), shape.end() - 2);
    int64_t n = shape.back(), count = 1;
    for (int64_t d : batch) count *= d;
    if (n == 0 || count == 0) {  // the determinant of a 0x0 matrix is 1; no matrices, no values
        auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
        a->shape = batch;
        return {ctx.call("broadcast_to", {ctx.constant_scalar(dt, 1)}, attrs)};
    }
    DataType work = dt.bits() < 32 ? DataType::float32() : dt;
    Expr a = reshape_to(ctx, cast_to(ctx, x, work), {count, n, n});
    DataType i64 = DataType::int64();
    Expr rows = iota(ctx, make_int(i64, n), ctx.constant_scalar(i64, 0));
    auto param = [&](const char* name, const graph::Type& t) {
        return graph::make_var(name, t, ctx.loc());
    };
    auto scalar = [](DataType t) { return graph::make_tensor_type(std::vector<int64_t>{}, t); };
    std::vector<Ref<graph::Var>> params = {
        param("p", scalar(i64)), param("cond", scalar(DataType::bool_())), param("a", a->type),
        param("det", graph::make_tensor_type(std::vector<int64_t>{count}, work)),
        param("rows", rows->type)};
    Expr body = elimination_step(ctx, params, work);
    std::string name = (ctx.node().output_size() ? ctx.node().output(0) : "det") + "_eliminate";
    for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    SubgraphFunction f = ctx.subgraphs().add_function(name, params, body);
    auto [ones, o] = new_attrs<ops::BroadcastToAttrs>();
    o->shape = {count};
    Expr det = ctx.call("broadcast_to", {ctx.constant_scalar(work, 1)}, ones);
    graph::Type result = graph::make_tuple_type({params[2]->type, params[3]->type});
    Expr loop =
        ops::make_loop(ctx.constant_int64({n}, {}), ctx.constant_scalar(DataType::bool_(), 1),
                       {a, det}, {rows}, f.name, result, ctx.loc());
    Expr out = graph::make_tuple_get_item(loop, 1, ctx.loc());
    return {cast_to(ctx, reshape_to(ctx, out, batch), dt)};
}

}  // namespace anvil::frontend
