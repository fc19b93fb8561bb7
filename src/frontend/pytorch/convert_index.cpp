// Converters of slicing and indexing: slice (of tensors and of lists), select, narrow, and
// advanced indexing x[indices] (aten::index) and its write x[indices] = v (aten::index_put).
//
// Advanced indexing follows NumPy: the index tensors broadcast together to B; a boolean mask
// counts as the coordinates of its true elements (one index per dimension it covers, their
// number known only at run time). With one index the result is `take` along its dimension; with
// several the indexed dimensions move to the front and gather_nd picks B's tuples, after which
// the B dimensions go back to where the first index was when the indexed dimensions are
// adjacent (NumPy's rule; otherwise they stay in front).
#include <climits>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/shape_ops.h"
#include "frontend/selection.h"
#include "ir/analyzer.h"
#include "ir/polynomial.h"
#include "ops/axes.h"
#include "ops/reduce.h"
#include "ops/tensor_shape.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

// A slice bound: None, or an int (possibly symbolic). TorchScript spells "to the end" as
// INT64_MAX.
// A bound known only at run time (x[:int(n)]) is a dimension variable the executor binds from its
// tensor (added to `bindings`).
std::optional<PrimExpr> slice_bound(const PtContext& ctx, size_t i,
                                    std::vector<ShapeValues>& bindings) {
    if (ctx.is_none(i)) return std::nullopt;
    const PtValue& b = ctx.input(i);
    if (b.kind == PtValue::Int && !b.scalar.defined() && b.tensor.defined()) {
        Expr t = cast_to(ctx, b.tensor, DataType::int64());
        bindings.push_back(shape_values(ctx, t, "a slice bound"));
        return bindings.back().values[0];
    }
    PrimExpr v = ctx.int_expr(i);
    if (const int64_t* c = as_const_int(v); c && *c == INT64_MAX) return std::nullopt;
    return v;
}

// Python's slicing of a list: l[start:end:step].
PtValue slice_list(const PtContext& ctx) {
    const PtValue& l = ctx.input(0);
    auto n = static_cast<int64_t>(l.items.size());
    int64_t step = ctx.num_inputs() > 3 && !ctx.is_none(3) ? ctx.int_arg(3) : 1;
    if (step == 0) ctx.error() << "slice step cannot be zero";
    auto adjust = [&](size_t i, int64_t missing) {
        if (ctx.is_none(i)) return missing;
        int64_t v = ctx.int_arg(i);
        if (v < 0) v = std::max(v + n, step < 0 ? int64_t{-1} : int64_t{0});
        return std::min(v, step < 0 ? n - 1 : n);
    };
    int64_t begin = adjust(1, step < 0 ? n - 1 : 0);
    int64_t end = adjust(2, step < 0 ? -1 : n);
    PtValues items;
    for (int64_t i = begin; step > 0 ? i < end : i > end; i += step) {
        items.push_back(l.items[static_cast<size_t>(i)]);
    }
    return PtValue::of_list(std::move(items), l.kind);
}

struct AdvancedIndex {
    int64_t axis;
    Expr index;  // int32 or int64, any shape
};

// The index tensors of x[...] (None for a whole dimension), masks replaced by the coordinates of
// their true elements; constant indices are checked against their dimensions.
std::vector<AdvancedIndex> advanced_indices(const PtContext& ctx, const Expr& x,
                                            const PtValue& list) {
    if (list.kind != PtValue::List && list.kind != PtValue::Tuple) {
        ctx.error() << "the indices must be a list, got " << kind_name(list.kind);
    }
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    auto rank = static_cast<int64_t>(dims.size());
    std::vector<AdvancedIndex> out;
    int64_t axis = 0;
    for (const auto& item : list.items) {
        if (item.kind == PtValue::None) {
            ++axis;
            continue;
        }
        if (item.kind != PtValue::Tensor) {
            ctx.error() << "an index must be a tensor or None, got " << kind_name(item.kind);
        }
        const auto& t = ctx.tensor_type(item.tensor, "an index");
        if (t.dtype.is_bool() || t.dtype == DataType::uint(8)) {
            auto m = static_cast<int64_t>(t.ndim());
            if (axis + m > rank) ctx.error() << "too many indices for a tensor of rank " << rank;
            for (int64_t k = 0; k < m; ++k) {
                const int64_t* a = as_const_int(t.shape[k]);
                const int64_t* b = as_const_int(dims[static_cast<size_t>(axis + k)]);
                if (a && b && *a != *b) {
                    ctx.error() << "the mask's dimension " << k << " (" << *a
                                << ") does not match the indexed dimension " << axis + k << " ("
                                << *b << ")";
                }
            }
            std::vector<Expr> coordinates = nonzero_coordinates(ctx, item.tensor);
            for (int64_t k = 0; k < m; ++k) out.push_back({axis + k, coordinates[k]});
            axis += m;
            continue;
        }
        if (!t.dtype.is_int() && !t.dtype.is_uint()) {
            ctx.error() << "tensors used as indices must be long, int, byte or bool, got "
                        << t.dtype.str();
        }
        if (axis >= rank) ctx.error() << "too many indices for a tensor of rank " << rank;
        Expr index = item.tensor;
        if (t.dtype != DataType::int32() && t.dtype != DataType::int64()) {
            index = cast_to(ctx, index, DataType::int64());
        }
        const int64_t* n = as_const_int(dims[static_cast<size_t>(axis)]);
        if (runtime::NDArray data = constant_data(index);
            data.defined() && n && data.num_elements() <= (int64_t{1} << 20)) {
            for (int64_t v : ctx.const_ints(index, "the index")) {
                if (v < -*n || v >= *n) {
                    ctx.error() << "index " << v << " is out of bounds for dimension " << axis
                                << " with size " << *n;
                }
            }
        }
        out.push_back({axis, index});
        ++axis;
    }
    if (out.empty()) ctx.error() << "indexing with only None is not supported";
    return out;
}

// How x[indices] lays its dimensions out.
struct IndexLayout {
    std::vector<int64_t> perm;    // x's dimensions: the indexed ones first, then the rest
    std::vector<PrimExpr> batch;  // B, the broadcast shape of the indices
    Expr tuples;                  // [B..., m] int64 (several indices only)
    int64_t front = 0;            // where B goes in the result (0: in front)
};

IndexLayout index_layout(const PtContext& ctx, const Expr& x,
                         const std::vector<AdvancedIndex>& advanced) {
    IndexLayout l;
    int64_t rank = ctx.rank(x);
    std::vector<bool> indexed(static_cast<size_t>(rank), false);
    std::vector<std::vector<PrimExpr>> shapes;
    bool adjacent = true;
    for (size_t k = 0; k < advanced.size(); ++k) {
        l.perm.push_back(advanced[k].axis);
        indexed[static_cast<size_t>(advanced[k].axis)] = true;
        shapes.push_back(dims_of(ctx, advanced[k].index));
        adjacent = adjacent && advanced[k].axis == advanced[0].axis + static_cast<int64_t>(k);
    }
    for (int64_t d = 0; d < rank; ++d) {
        if (!indexed[static_cast<size_t>(d)]) l.perm.push_back(d);
    }
    l.batch = ops::broadcast_shape(shapes, ctx.loc(), "the indices");
    l.front = adjacent ? advanced[0].axis : 0;
    if (advanced.size() > 1) {
        std::vector<Expr> columns;
        auto b = static_cast<int64_t>(l.batch.size());
        for (const auto& a : advanced) {
            Expr i = broadcast_dims(ctx, cast_to(ctx, a.index, DataType::int64()), l.batch);
            columns.push_back(expand_dims(ctx, i, b));
        }
        auto [attrs, c] = new_attrs<ops::ConcatenateAttrs>();
        c->axis = b;
        l.tuples = ctx.call("concatenate", columns, attrs);
    }
    return l;
}

// The permutation moving B (its `b` dimensions in front of `rest` others) to position `front`,
// and its inverse.
std::vector<int64_t> batch_to(int64_t b, int64_t front, int64_t rest) {
    std::vector<int64_t> p;
    for (int64_t d = 0; d < front; ++d) p.push_back(b + d);
    for (int64_t d = 0; d < b; ++d) p.push_back(d);
    for (int64_t d = front; d < rest; ++d) p.push_back(b + d);
    return p;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& p) {
    std::vector<int64_t> q(p.size());
    for (size_t i = 0; i < p.size(); ++i) q[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
    return q;
}

}  // namespace

// aten::slice(x, dim, start, end, step) on a tensor; aten::slice(list, start, end, step) on a
// list known at import time.
PtValues convert_slice(PtContext& ctx) {
    const PtValue& v = ctx.input(0);
    if (v.kind == PtValue::List || v.kind == PtValue::Tuple) return {slice_list(ctx)};
    if (v.kind == PtValue::Str) ctx.error() << "slicing a string is not supported";
    Expr x = ctx.tensor(0);
    int64_t axis = ctx.normalize_axis(ctx.is_none(1) ? 0 : ctx.int_arg(1), ctx.rank(x), "dim");
    PrimExpr step = ctx.num_inputs() > 4 && !ctx.is_none(4) ? ctx.int_expr(4) : i64(1);
    std::vector<ShapeValues> bindings;
    std::optional<PrimExpr> begin = slice_bound(ctx, 2, bindings);
    std::optional<PrimExpr> end = slice_bound(ctx, 3, bindings);
    x = bind_all_shape_values(ctx, x, bindings, {});
    return {PtValue::of_tensor(slice_axis(ctx, x, axis, begin, end, step))};
}

// aten::select(x, dim, index): the dimension removed.
PtValues convert_select(PtContext& ctx) {
    if (ctx.input(0).kind != PtValue::Tensor) ctx.error() << "select of a non-tensor";
    if (ctx.input(1).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    Expr x = ctx.tensor(0);
    if (ctx.rank(x) == 0) ctx.error() << "select() cannot be applied to a 0-dim tensor";
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), ctx.rank(x), "dim");
    const PtValue& index = ctx.input(2);
    if (index.kind == PtValue::Int && !index.scalar.defined() && index.tensor.defined()) {
        // Known only at run time: take reads it (a negative index counts from the end).
        auto [attrs, a] = new_attrs<ops::TakeAttrs>();
        a->axis = axis;
        Expr i = reshape_to(ctx, cast_to(ctx, index.tensor, DataType::int64()), {});
        return {PtValue::of_tensor(ctx.call("take", {x, i}, attrs))};
    }
    return {PtValue::of_tensor(select_axis(ctx, x, axis, ctx.int_expr(2)))};
}

// aten::narrow(x, dim, start, length); start may be a one-element tensor, or known only at run
// time.
PtValues convert_narrow(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), ctx.rank(x), "dim");
    PrimExpr n = dims_of(ctx, x)[static_cast<size_t>(axis)];
    PrimExpr start;
    const PtValue& first = ctx.input(2);
    if ((first.kind == PtValue::Tensor || !first.scalar.defined()) && first.tensor.defined()) {
        // A tensor or a number known only at run time: bound by the executor, checked in range.
        const auto& t = ctx.tensor_type(first.tensor, "start");
        if (!t.is_static() || t.num_elements() != 1) ctx.error() << "start must be one value";
        ShapeValues v = shape_values(ctx, cast_to(ctx, first.tensor, DataType::int64()), "start");
        PrimExpr b = v.values[0];
        start = v.all_constant ? b : select(b < 0, b + n, b);
        if (!v.all_constant) x = bind_shape_values(ctx, x, v, {b >= -n && b <= n});
    } else {
        start = ctx.int_expr(2);
    }
    PrimExpr length = ctx.int_expr(3);
    const int64_t* s = as_const_int(start);
    const int64_t* len = as_const_int(length);
    if (len && *len < 0) ctx.error() << "narrow(): length must be non-negative, got " << *len;
    if (s && *s < 0) start = simplify(n + start);
    const int64_t* size = as_const_int(n);
    if (s && len && size) {
        int64_t b = *s < 0 ? *s + *size : *s;
        if (b < 0 || b > *size || b + *len > *size) {
            ctx.error() << "narrow(): start " << *s << " and length " << *len
                        << " exceed dimension " << axis << " of size " << *size;
        }
    }
    return {PtValue::of_tensor(slice_axis(ctx, x, axis, start, simplify(start + length), i64(1)))};
}

// aten::index(x, indices): x[indices] with integer and boolean index tensors.
PtValues convert_index(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    std::vector<AdvancedIndex> advanced = advanced_indices(ctx, x, ctx.input(1));
    if (advanced.size() == 1) {
        auto [attrs, a] = new_attrs<ops::TakeAttrs>();
        a->axis = advanced[0].axis;
        return {PtValue::of_tensor(ctx.call("take", {x, advanced[0].index}, attrs))};
    }
    IndexLayout l = index_layout(ctx, x, advanced);
    Expr y = ctx.call("gather_nd", {permute_axes(ctx, x, l.perm), l.tuples});
    auto b = static_cast<int64_t>(l.batch.size());
    int64_t rest = ctx.rank(x) - static_cast<int64_t>(advanced.size());
    return {PtValue::of_tensor(permute_axes(ctx, y, batch_to(b, l.front, rest)))};
}

namespace {

// x[mask] = values for a mask covering dimensions [at, at + m) of x: a `where` over the mask.
// Values that vary along the masked elements (their dimension `at` counts the true elements) are
// taken at each true element's ordinal, the running count of the mask there.
Expr put_masked(const PtContext& ctx, const Expr& x, const Expr& mask, int64_t at,
                const Expr& values, bool accumulate) {
    int64_t m = ctx.rank(mask);
    int64_t post = ctx.rank(x) - at - m;
    std::vector<PrimExpr> md = dims_of(ctx, mask);
    // The mask with size-1 dimensions for those after it, so that it broadcasts against x.
    std::vector<PrimExpr> wide = md;
    wide.insert(wide.end(), static_cast<size_t>(post), i64(1));
    Expr where_mask = view_dims(ctx, cast_to(ctx, mask, DataType::bool_()), wide);
    Expr v = values;
    if (ctx.rank(v) > post) {
        // Values of rank at + 1 + post: dimension `at` holds one entry per true element.
        std::vector<PrimExpr> vd = dims_of(ctx, v);
        int64_t missing = at + 1 + post - ctx.rank(v);
        if (missing < 0) ctx.error() << "the values have more dimensions than x[mask]";
        vd.insert(vd.begin(), static_cast<size_t>(missing), i64(1));
        v = view_dims(ctx, v, vd);
        PrimExpr n = i64(1);
        for (const auto& d : md) n = n * d;
        Expr flat = view_dims(ctx, cast_to(ctx, mask, DataType::int64()), {simplify(n)});
        auto [c, ca] = new_attrs<ops::CumsumAttrs>();
        Expr ordinal = ctx.call(
            "subtract", {ctx.call("cumsum", {flat}, c), ctx.constant_scalar(DataType::int64(), 1)});
        auto [t, ta] = new_attrs<ops::TakeAttrs>();
        ta->axis = at;
        v = ctx.call("take", {v, view_dims(ctx, ordinal, md)}, t);
    }
    if (accumulate) v = ctx.call("add", {x, v});
    Expr y = ctx.call("where", {where_mask, v, x});
    // The result keeps x's shape (values could only broadcast into it).
    return broadcast_dims(ctx, y, dims_of(ctx, x));
}

}  // namespace

// aten::index_put(x, indices, values, accumulate): x with x[indices] = values (or += with
// accumulate). One boolean mask is a `where` (put_masked); integer indices write their index
// tuples with scatter_nd.
PtValues convert_index_put(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    Expr values = cast_to(ctx, ctx.tensor(2), dt);
    bool accumulate = ctx.num_inputs() > 3 && !ctx.is_none(3) && ctx.bool_arg(3);
    const PtValue& list = ctx.input(1);
    if (list.kind != PtValue::List && list.kind != PtValue::Tuple) {
        ctx.error() << "the indices must be a list, got " << kind_name(list.kind);
    }
    int64_t at = 0, masks = 0, others = 0;
    Expr mask;
    for (const auto& item : list.items) {
        if (item.kind != PtValue::Tensor) {
            if (masks + others == 0) ++at;
            continue;
        }
        DataType t = ctx.tensor_type(item.tensor, "an index").dtype;
        if (t.is_bool() || t == DataType::uint(8)) {
            ++masks;
            mask = item.tensor;
        } else {
            ++others;
        }
    }
    if (masks == 1 && others == 0) {
        if (at + ctx.rank(mask) > ctx.rank(x)) {
            ctx.error() << "the mask has more dimensions than the tensor it indexes";
        }
        return {PtValue::of_tensor(put_masked(ctx, x, mask, at, values, accumulate))};
    }
    if (masks > 0) {
        ctx.error() << "x[indices] = v with a boolean mask beside other indices is not supported";
    }
    std::vector<AdvancedIndex> advanced = advanced_indices(ctx, x, list);
    IndexLayout l = index_layout(ctx, x, advanced);
    if (!l.tuples.defined()) {
        Expr i = cast_to(ctx, advanced[0].index, DataType::int64());
        l.tuples = expand_dims(ctx, i, static_cast<int64_t>(l.batch.size()));
    }
    // The values broadcast to the shape x[indices] has, then laid out as scatter_nd reads them.
    std::vector<PrimExpr> xd = dims_of(ctx, x);
    std::vector<PrimExpr> rest;
    for (size_t k = advanced.size(); k < l.perm.size(); ++k) {
        rest.push_back(xd[static_cast<size_t>(l.perm[k])]);
    }
    auto b = static_cast<int64_t>(l.batch.size());
    auto r = static_cast<int64_t>(rest.size());
    std::vector<int64_t> to_result = batch_to(b, l.front, r);
    std::vector<PrimExpr> batch_first = l.batch;
    batch_first.insert(batch_first.end(), rest.begin(), rest.end());
    std::vector<PrimExpr> result_shape;
    for (int64_t p : to_result) result_shape.push_back(batch_first[static_cast<size_t>(p)]);
    Expr updates = permute_axes(ctx, broadcast_dims(ctx, values, result_shape), inverse(to_result));
    auto [attrs, a] = new_attrs<ops::ScatterAttrs>();
    a->reduction = accumulate ? "add" : "none";
    Expr y = ctx.call("scatter_nd", {permute_axes(ctx, x, l.perm), l.tuples, updates}, attrs);
    return {PtValue::of_tensor(permute_axes(ctx, y, inverse(l.perm)))};
}

// aten::index_select(x, dim, index): the elements at the (0-D or 1-D) indices along dim.
PtValues convert_index_select(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (ctx.input(1).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), std::max<int64_t>(ctx.rank(x), 1), "dim");
    Expr index = ctx.tensor(2);
    if (ctx.rank(index) > 1) ctx.error() << "index_select(): the index must be 0-D or 1-D";
    if (!ctx.tensor_type(index, "the index").dtype.is_int()) {
        ctx.error() << "index_select(): the index must be int64 or int32";
    }
    if (ctx.rank(index) == 0) index = view_dims(ctx, index, {i64(1)});
    if (ctx.rank(x) == 0) x = view_dims(ctx, x, {i64(1)});
    PtValue list = PtValue::of_list({});
    for (int64_t d = 0; d < axis; ++d) list.items.push_back(PtValue::none());
    list.items.push_back(PtValue::of_tensor(index));
    std::vector<AdvancedIndex> advanced = advanced_indices(ctx, x, list);
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = axis;
    return {PtValue::of_tensor(ctx.call("take", {x, advanced[0].index}, attrs))};
}

// aten::take(x, index): x flattened, indexed.
PtValues convert_take(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    PrimExpr n = i64(1);
    for (const auto& d : dims_of(ctx, x)) n = n * d;
    x = view_dims(ctx, x, {simplify(n)});
    PtValue list = PtValue::of_list({ctx.input(1)});
    std::vector<AdvancedIndex> advanced = advanced_indices(ctx, x, list);
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = 0;
    return {PtValue::of_tensor(ctx.call("take", {x, advanced[0].index}, attrs))};
}

}  // namespace anvil::frontend::pytorch
