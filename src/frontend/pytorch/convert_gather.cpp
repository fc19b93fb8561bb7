// Converters that pick or place elements by index or by value: gather, take_along_dim, scatter
// (and scatter_add, scatter_reduce), index_add, index_copy, index_fill, masked_fill, masked_select,
// tril/triu, topk, sort, argsort, nonzero. Sorting and selection rank and count
// (frontend/selection.h); results whose size depends on the data (masked_select, nonzero) get it
// bound at run time.
#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/shape_ops.h"
#include "frontend/selection.h"
#include "ir/analyzer.h"
#include "ir/polynomial.h"
#include "ops/shape_tensor.h"
#include "ops/tensor_shape.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

Expr as_bool(const PtContext& ctx, const Expr& mask) {
    return cast_to(ctx, mask, DataType::bool_());
}

// An index operand of gather/scatter: an integer tensor of x's rank.
Expr index_operand(const PtContext& ctx, size_t i, int64_t rank) {
    Expr index = ctx.tensor(i);
    DataType t = ctx.tensor_type(index, "the index").dtype;
    if (!t.is_int()) ctx.error() << "the index must be an int64 tensor, got " << t.str();
    if (ctx.rank(index) != rank) {
        ctx.error() << "the index has rank " << ctx.rank(index) << " but the input " << rank;
    }
    return index;
}

// The sizes two dimensions broadcast to (equal unless one is 1; checked by broadcast_dims).
PrimExpr broadcast_dim(const PrimExpr& a, const PrimExpr& b) {
    return is_one(a) ? b : a;
}

PtValue tensor_list(const std::vector<Expr>& parts) {
    PtValues items;
    for (const auto& p : parts) items.push_back(PtValue::of_tensor(p));
    return PtValue::of_list(std::move(items));
}

// The number operand `i` as a 0-D tensor of x's element type.
Expr value_like(const PtContext& ctx, size_t i, const Expr& x) {
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    return filled(ctx, {}, ctx.input(i), dt);
}

// The sort/topk axis and direction operands: (dim, descending/largest).
std::pair<int64_t, bool> sort_operands(const PtContext& ctx, const Expr& x) {
    // sort(x, dim, descending) or sort.stable(x, stable, dim, descending).
    size_t at = ctx.num_inputs() >= 4 ? 2 : 1;
    if (ctx.input(at).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    int64_t axis = ctx.num_inputs() > at ? ctx.int_arg(at) : -1;
    bool descending = ctx.num_inputs() > at + 1 && ctx.bool_arg(at + 1);
    return {ctx.normalize_axis(axis, std::max<int64_t>(ctx.rank(x), 1), "dim"), descending};
}

// The whole axis sorted: topk with k the axis's size. A 0-D tensor is its own sort.
std::pair<Expr, Expr> sorted(const PtContext& ctx, const Expr& x, int64_t axis, bool descending) {
    if (ctx.tensor_type(x, "the input").dtype.is_bool()) {
        ctx.error() << "sorting bool tensors is not supported";
    }
    if (ctx.rank(x) == 0) return {x, ctx.constant_int64({0}, {})};
    ShapeValues k;
    k.values = {dims_of(ctx, x)[static_cast<size_t>(axis)]};
    return top_k(ctx, x, axis, k, descending);
}

}  // namespace

// aten::gather(x, dim, index, sparse_grad).
PtValues convert_gather(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (ctx.input(1).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), ctx.rank(x), "dim");
    Expr index = index_operand(ctx, 2, ctx.rank(x));
    auto [attrs, a] = new_attrs<ops::GatherElementsAttrs>();
    a->axis = axis;
    return {PtValue::of_tensor(ctx.call("gather_elements", {x, index}, attrs))};
}

// aten::take_along_dim(x, indices, dim): gather after broadcasting the two in every other
// dimension; without dim, over both flattened.
PtValues convert_take_along_dim(PtContext& ctx) {
    Expr x = ctx.tensor(0), index = ctx.tensor(1);
    auto flat = [&](const Expr& t) {
        PrimExpr n = i64(1);
        for (const auto& d : dims_of(ctx, t)) n = n * d;
        return view_dims(ctx, t, {simplify(n)});
    };
    int64_t axis = 0;
    if (ctx.num_inputs() < 3 || ctx.is_none(2)) {
        x = flat(x);
        index = flat(index);
    } else {
        if (ctx.rank(x) != ctx.rank(index)) {
            ctx.error() << "the indices have rank " << ctx.rank(index) << " but the input "
                        << ctx.rank(x);
        }
        axis = ctx.normalize_axis(ctx.int_arg(2), ctx.rank(x), "dim");
        std::vector<PrimExpr> xd = dims_of(ctx, x), id = dims_of(ctx, index);
        for (size_t d = 0; d < xd.size(); ++d) {
            if (static_cast<int64_t>(d) == axis) continue;
            xd[d] = id[d] = broadcast_dim(xd[d], id[d]);
        }
        x = broadcast_dims(ctx, x, xd);
        index = broadcast_dims(ctx, index, id);
    }
    auto [attrs, a] = new_attrs<ops::GatherElementsAttrs>();
    a->axis = axis;
    return {PtValue::of_tensor(ctx.call("gather_elements", {x, index}, attrs))};
}

// aten::scatter(x, dim, index, src | value [, reduce]), scatter_add(x, dim, index, src),
// scatter_reduce(x, dim, index, src, reduce, include_self): x with src[i] written (or added,
// multiplied) at index[i] along dim. Only the part of src the index covers is used.
PtValues convert_scatter(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (ctx.input(1).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    int64_t rank = ctx.rank(x);
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), rank, "dim");
    Expr index = index_operand(ctx, 2, rank);
    std::vector<PrimExpr> id = dims_of(ctx, index);
    Expr src;
    if (ctx.input(3).kind == PtValue::Tensor) {
        src = cast_to(ctx, ctx.tensor(3), dt);
        if (ctx.rank(src) != rank) {
            ctx.error() << "src has rank " << ctx.rank(src) << " but the input " << rank;
        }
        std::vector<PrimExpr> sd = dims_of(ctx, src);
        for (size_t d = 0; d < sd.size(); ++d) {
            if (!provably_equal(sd[d], id[d])) {
                src = slice_axis(ctx, src, static_cast<int64_t>(d), i64(0), id[d], i64(1));
            }
        }
    } else {
        src = filled(ctx, id, ctx.input(3), dt);
    }
    std::string reduction = "none";
    const std::string& k = ctx.kind();
    if (k == "aten::scatter_add") {
        reduction = "add";
    } else if (k == "aten::scatter_reduce") {
        std::string r = ctx.str_arg(4);
        bool include_self = ctx.num_inputs() <= 5 || ctx.is_none(5) || ctx.bool_arg(5);
        if ((r != "sum" && r != "prod") || !include_self) {
            ctx.error() << "scatter_reduce with reduce='" << r << "'"
                        << (include_self ? "" : " and include_self=False")
                        << " is not supported (only 'sum' and 'prod' including self)";
        }
        reduction = r == "sum" ? "add" : "mul";
    } else if (ctx.num_inputs() > 4 && !ctx.is_none(4)) {
        std::string r = ctx.str_arg(4);
        if (r != "add" && r != "multiply") {
            ctx.error() << "scatter reduce='" << r << "' is not 'add' or 'multiply'";
        }
        reduction = r == "add" ? "add" : "mul";
    }
    auto [attrs, a] = new_attrs<ops::ScatterAttrs>();
    a->axis = axis;
    a->reduction = reduction;
    return {PtValue::of_tensor(ctx.call("scatter_elements", {x, index, src}, attrs))};
}

// aten::index_add(x, dim, index, source, alpha), index_copy(x, dim, index, source): the slices
// of source written (added) at the 1-D positions index along dim: a scatter of source whose index
// repeats each position across the slice.
PtValues convert_index_add(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (ctx.input(1).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    int64_t rank = ctx.rank(x);
    if (rank == 0) ctx.error() << "index_add/index_copy of a 0-D tensor is not supported";
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), rank, "dim");
    Expr index = ctx.tensor(2);
    if (ctx.rank(index) > 1 || !ctx.tensor_type(index, "the index").dtype.is_int()) {
        ctx.error() << "the index must be a 0-D or 1-D integer tensor";
    }
    Expr source = cast_to(ctx, ctx.tensor(3), dt);
    if (ctx.rank(source) != rank) {
        ctx.error() << "the source has rank " << ctx.rank(source) << " but the input " << rank;
    }
    bool add = ctx.kind() == "aten::index_add";
    if (add && ctx.num_inputs() > 4 && !ctx.is_none(4)) {
        double alpha = ctx.float_arg(4);
        if (alpha != 1.0)
            source = ctx.call("multiply", {source, filled(ctx, {}, ctx.input(4), dt)});
    }
    std::vector<PrimExpr> sd = dims_of(ctx, source);
    std::vector<PrimExpr> along(static_cast<size_t>(rank), i64(1));
    along[static_cast<size_t>(axis)] = sd[static_cast<size_t>(axis)];
    Expr positions =
        broadcast_dims(ctx, view_dims(ctx, cast_to(ctx, index, DataType::int64()), along), sd);
    auto [attrs, a] = new_attrs<ops::ScatterAttrs>();
    a->axis = axis;
    a->reduction = add ? "add" : "none";
    return {PtValue::of_tensor(ctx.call("scatter_elements", {x, positions, source}, attrs))};
}

// aten::index_fill(x, dim, index, value): value at the positions index along dim.
PtValues convert_index_fill(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (ctx.input(1).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    int64_t rank = ctx.rank(x);
    if (rank == 0) ctx.error() << "index_fill of a 0-D tensor is not supported";
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), rank, "dim");
    Expr index = ctx.tensor(2);
    if (ctx.rank(index) > 1 || !ctx.tensor_type(index, "the index").dtype.is_int()) {
        ctx.error() << "the index must be a 0-D or 1-D integer tensor";
    }
    PrimExpr n = dims_of(ctx, x)[static_cast<size_t>(axis)];
    DataType i64t = DataType::int64();
    Expr zero = ctx.constant_scalar(i64t, 0);
    Expr i = view_dims(ctx, cast_to(ctx, index, i64t), {i64(-1)});
    // A negative index counts from the end.
    Expr size = ops::make_shape_tensor({n}, {}, i64t, ctx.loc());
    i = ctx.call("where", {ctx.call("less", {i, zero}), ctx.call("add", {i, size}), i});
    Expr positions = expand_dims(ctx, iota(ctx, n, zero), 1);                  // [n, 1]
    Expr hits = cast_to(ctx, ctx.call("equal", {positions, i}), i64t);         // [n, k]
    Expr hit = ctx.call("greater", {reduce_over(ctx, "sum", hits, 1), zero});  // [n]
    std::vector<PrimExpr> along(static_cast<size_t>(rank), i64(1));
    along[static_cast<size_t>(axis)] = n;
    Expr mask = view_dims(ctx, hit, along);
    return {PtValue::of_tensor(ctx.call("where", {mask, value_like(ctx, 3, x), x}))};
}

// aten::masked_fill(x, mask, value): value where mask is true.
PtValues convert_masked_fill(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    Expr v = value_like(ctx, 2, x);
    return {PtValue::of_tensor(ctx.call("where", {as_bool(ctx, ctx.tensor(1)), v, x}))};
}

// aten::masked_select(x, mask): the elements where the (broadcast) mask is true, as a 1-D tensor
// whose length is bound at run time.
PtValues convert_masked_select(PtContext& ctx) {
    Expr x = ctx.tensor(0), mask = as_bool(ctx, ctx.tensor(1));
    std::vector<PrimExpr> shape =
        ops::broadcast_shape({dims_of(ctx, x), dims_of(ctx, mask)}, ctx.loc(), "masked_select");
    PrimExpr n = i64(1);
    for (const auto& d : shape) n = n * d;
    n = simplify(n);
    x = view_dims(ctx, broadcast_dims(ctx, x, shape), {n});
    mask = view_dims(ctx, broadcast_dims(ctx, mask, shape), {n});
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = 0;
    return {PtValue::of_tensor(ctx.call("take", {x, selected_positions(ctx, mask)}, attrs))};
}

// aten::tril / triu(x, diagonal).
PtValues convert_trilu(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (ctx.rank(x) < 2) ctx.error() << "tril/triu expects a tensor of at least 2 dimensions";
    Expr k = ctx.num_inputs() > 1 && !ctx.is_none(1)
                 ? cast_to(ctx, ctx.tensor(1), DataType::int64())
                 : ctx.constant_int64({0}, {});
    auto [attrs, a] = new_attrs<ops::TriluAttrs>();
    a->upper = ctx.kind() == "aten::triu";
    return {PtValue::of_tensor(ctx.call("trilu", {x, k}, attrs))};
}

// aten::topk(x, k, dim, largest, sorted): values and int64 indices, always sorted (sorted=False
// leaves the order to the implementation).
PtValues convert_topk(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (ctx.rank(x) == 0) ctx.error() << "topk of a 0-D tensor is not supported";
    PrimExpr k = ctx.int_expr(1);
    int64_t axis =
        ctx.normalize_axis(ctx.num_inputs() > 2 ? ctx.int_arg(2) : -1, ctx.rank(x), "dim");
    bool largest = ctx.num_inputs() <= 3 || ctx.bool_arg(3);
    PrimExpr n = dims_of(ctx, x)[static_cast<size_t>(axis)];
    const int64_t* kv = as_const_int(k);
    const int64_t* nv = as_const_int(n);
    if (kv && (*kv < 0 || (nv && *kv > *nv))) {
        ctx.error() << "k (" << *kv << ") is out of range for dimension " << axis << " of size "
                    << n;
    }
    ShapeValues kk;
    kk.values = {k};
    auto [values, indices] = top_k(ctx, x, axis, kk, largest);
    return {PtValue::of_tensor(values), PtValue::of_tensor(indices)};
}

// aten::sort(x, dim, descending) and sort(x, stable, dim, descending): stable (equal elements
// keep their order).
PtValues convert_sort(PtContext& ctx) {
    if (ctx.input(0).kind != PtValue::Tensor) ctx.error() << "sorting a list is not supported";
    Expr x = ctx.tensor(0);
    auto [axis, descending] = sort_operands(ctx, x);
    auto [values, indices] = sorted(ctx, x, axis, descending);
    return {PtValue::of_tensor(values), PtValue::of_tensor(indices)};
}

// aten::argsort(x, dim, descending) and argsort(x, stable, dim, descending).
PtValues convert_argsort(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    auto [axis, descending] = sort_operands(ctx, x);
    return {PtValue::of_tensor(sorted(ctx, x, axis, descending).second)};
}

// aten::msort(x): sorted along dim 0.
PtValues convert_msort(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (ctx.rank(x) == 0) return {PtValue::of_tensor(x)};
    return {PtValue::of_tensor(sorted(ctx, x, 0, false).first)};
}

// aten::nonzero(x) / argwhere(x): [count, rank] int64 coordinates of the non-zero elements;
// aten::nonzero_numpy(x) (as_tuple=True) and where(x) with one operand: one [count] tensor per
// dimension.
PtValues convert_nonzero(PtContext& ctx) {
    std::vector<Expr> coordinates = nonzero_coordinates(ctx, ctx.tensor(0));
    if (ctx.kind() == "aten::nonzero_numpy" || ctx.kind() == "aten::where") {
        return {tensor_list(coordinates)};
    }
    for (auto& c : coordinates) c = expand_dims(ctx, c, 1);
    if (coordinates.size() == 1) return {PtValue::of_tensor(coordinates[0])};
    auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
    a->axis = 1;
    return {PtValue::of_tensor(ctx.call("concatenate", coordinates, attrs))};
}

}  // namespace anvil::frontend::pytorch
