// Converters of the view/reshape family: view, reshape, flatten, unflatten, permute, transpose,
// squeeze, unsqueeze, expand, repeat, repeat_interleave, movedim. Sizes may be symbolic (an input
// dimension declared by name): `x.view(x.size(0), -1)` keeps the symbolic batch in the result's
// shape (shape_ops.h: view_dims).
#include <algorithm>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/shape_ops.h"
#include "ir/analyzer.h"
#include "ops/axes.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

// The axes of `x` swapped pairwise: a permutation exchanging a and b.
std::vector<int64_t> swap_perm(int64_t rank, int64_t a, int64_t b) {
    std::vector<int64_t> p;
    for (int64_t d = 0; d < rank; ++d) p.push_back(d == a ? b : d == b ? a : d);
    return p;
}

std::vector<int64_t> normalized(const PtContext& ctx, std::vector<int64_t> axes, int64_t rank,
                                const char* what) {
    for (auto& a : axes) a = ctx.normalize_axis(a, rank, what);
    std::vector<int64_t> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        ctx.error() << what << " " << ints_str(axes) << " repeats an axis";
    }
    return axes;
}

}  // namespace

// aten::view(x, size), aten::reshape(x, shape), aten::_unsafe_view(x, size).
PtValues convert_view(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    // view(dtype), the other overload, reinterprets the bits; its operand is one int.
    if (ctx.kind() == "aten::view" && ctx.input(1).kind == PtValue::Int) {
        ctx.error() << "view(dtype) (the bits reinterpreted as another type) is not supported";
    }
    return {PtValue::of_tensor(view_sizes(ctx, x, sizes_operand(ctx, 1)))};
}

// aten::view_as(x, other), aten::reshape_as(x, other).
PtValues convert_view_as(PtContext& ctx) {
    return {PtValue::of_tensor(view_dims(ctx, ctx.tensor(0), dims_of(ctx, ctx.tensor(1))))};
}

// aten::flatten(x, start_dim, end_dim).
PtValues convert_flatten(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t rank = ctx.rank(x);
    if (rank == 0) return {PtValue::of_tensor(view_dims(ctx, x, {i64(1)}))};
    int64_t start =
        ctx.normalize_axis(ctx.num_inputs() > 1 ? ctx.int_arg(1) : 0, rank, "start_dim");
    int64_t end = ctx.normalize_axis(ctx.num_inputs() > 2 ? ctx.int_arg(2) : -1, rank, "end_dim");
    if (start > end) ctx.error() << "start_dim " << start << " is after end_dim " << end;
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    std::vector<PrimExpr> out(dims.begin(), dims.begin() + start);
    PrimExpr merged = i64(1);
    for (int64_t d = start; d <= end; ++d) merged = merged * dims[static_cast<size_t>(d)];
    out.push_back(simplify(merged));
    out.insert(out.end(), dims.begin() + end + 1, dims.end());
    return {PtValue::of_tensor(view_dims(ctx, x, out))};
}

// aten::unflatten(x, dim, sizes): dimension `dim` becomes `sizes` (one -1 inferred).
PtValues convert_unflatten(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (ctx.input(1).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), ctx.rank(x), "dim");
    std::vector<PrimExpr> sizes = ctx.int_exprs(2);
    if (sizes.empty()) ctx.error() << "sizes must not be empty";
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    PrimExpr at = dims[static_cast<size_t>(axis)];
    // The sizes must make up this dimension (view_dims checks the whole, which with a -1 is the
    // same).
    PrimExpr known = i64(1);
    bool inferred = false;
    for (const auto& s : sizes) {
        inferred = inferred || is_const_int(s, -1);
        known = known * s;
    }
    const std::optional<int64_t> k = known_int(known);
    const int64_t* n = as_const_int(at);
    if (!inferred && k && n && *k != *n) {
        ctx.error() << "sizes " << ints_str(ctx.ints(2)) << " do not make up the size " << *n
                    << " of dim " << axis;
    }
    dims.erase(dims.begin() + axis);
    dims.insert(dims.begin() + axis, sizes.begin(), sizes.end());
    return {PtValue::of_tensor(view_dims(ctx, x, dims))};
}

// aten::permute(x, dims).
PtValues convert_permute(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t rank = ctx.rank(x);
    std::vector<int64_t> perm = ctx.ints(1);
    if (static_cast<int64_t>(perm.size()) != rank) {
        ctx.error() << "permute has " << perm.size() << " dims for a tensor of rank " << rank;
    }
    return {PtValue::of_tensor(permute_axes(ctx, x, normalized(ctx, perm, rank, "dims")))};
}

// aten::transpose(x, dim0, dim1), aten::swapaxes, aten::swapdims.
PtValues convert_transpose(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t rank = ctx.rank(x);
    if (ctx.input(1).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    // A 0-d tensor has the one axis 0 (or -1) to swap with itself.
    int64_t r = std::max<int64_t>(rank, 1);
    int64_t a = ctx.normalize_axis(ctx.int_arg(1), r, "dim0");
    int64_t b = ctx.normalize_axis(ctx.int_arg(2), r, "dim1");
    if (rank == 0) return {PtValue::of_tensor(x)};
    return {PtValue::of_tensor(permute_axes(ctx, x, swap_perm(rank, a, b)))};
}

// aten::numpy_T(x) (x.T): every axis reversed.
PtValues convert_numpy_t(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    std::vector<int64_t> perm;
    for (int64_t d = ctx.rank(x); d-- > 0;) perm.push_back(d);
    return {PtValue::of_tensor(permute_axes(ctx, x, perm))};
}

// aten::movedim / moveaxis(x, source, destination), ints or lists: the source axes go to the
// destination positions, the others keep their order in the positions left.
PtValues convert_movedim(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t rank = ctx.rank(x);
    std::vector<int64_t> src = normalized(ctx, ctx.ints(1), rank, "source");
    std::vector<int64_t> dst = normalized(ctx, ctx.ints(2), rank, "destination");
    if (src.size() != dst.size()) {
        ctx.error() << "source has " << src.size() << " dims but destination " << dst.size();
    }
    std::vector<int64_t> perm(static_cast<size_t>(rank), -1);
    std::vector<bool> moved(static_cast<size_t>(rank), false);
    for (size_t i = 0; i < src.size(); ++i) {
        perm[static_cast<size_t>(dst[i])] = src[i];
        moved[static_cast<size_t>(src[i])] = true;
    }
    int64_t next = 0;
    for (auto& p : perm) {
        if (p >= 0) continue;
        while (moved[static_cast<size_t>(next)]) ++next;
        p = next++;
    }
    return {PtValue::of_tensor(permute_axes(ctx, x, perm))};
}

// aten::squeeze(x) drops every size-1 dimension; squeeze(x, dim) (an int, or a list) drops the
// given ones that have size 1 and leaves the others. A symbolic dimension could be 1 at run time
// or not, which decides the result's rank: squeeze() keeps it, squeeze(dim) of it is an error.
PtValues convert_squeeze(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t rank = ctx.rank(x);
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    std::vector<bool> drop(dims.size(), false);
    if (ctx.num_inputs() < 2 || ctx.is_none(1)) {
        for (size_t d = 0; d < dims.size(); ++d) drop[d] = is_const_int(dims[d], 1);
    } else {
        if (ctx.input(1).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
        for (int64_t a : ctx.ints(1)) {
            if (rank == 0) {
                ctx.normalize_axis(a, 1, "dim");
                continue;
            }
            auto d = static_cast<size_t>(ctx.normalize_axis(a, rank, "dim"));
            if (!as_const_int(dims[d])) {
                ctx.error() << "squeeze of dimension " << d << ", whose size " << dims[d]
                            << " is symbolic: whether it is removed depends on its size at run "
                               "time; give it a static size";
            }
            drop[d] = is_const_int(dims[d], 1);
        }
    }
    std::vector<int64_t> axes;
    for (size_t d = 0; d < drop.size(); ++d) {
        if (drop[d]) axes.push_back(static_cast<int64_t>(d));
    }
    if (axes.empty()) return {PtValue::of_tensor(x)};
    auto [attrs, a] = new_attrs<ops::SqueezeAttrs>();
    a->axes = axes;
    return {PtValue::of_tensor(ctx.call("squeeze", {x}, attrs))};
}

// aten::unsqueeze(x, dim): dim in [-rank-1, rank].
PtValues convert_unsqueeze(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), ctx.rank(x) + 1, "dim");
    return {PtValue::of_tensor(expand_dims(ctx, x, axis))};
}

// aten::expand(x, size, implicit): -1 keeps a dimension; new dimensions go in front.
PtValues convert_expand(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    std::vector<PrimExpr> sizes = ctx.int_exprs(1);
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    int64_t k = static_cast<int64_t>(sizes.size()), r = static_cast<int64_t>(dims.size());
    if (k < r) {
        ctx.error() << "the number of sizes (" << k << ") is less than the tensor's rank (" << r
                    << ")";
    }
    for (int64_t i = 0; i < k; ++i) {
        int64_t j = i - (k - r);
        if (!is_const_int(sizes[i], -1)) continue;
        if (j < 0) ctx.error() << "-1 is not allowed for the new leading dimension " << i;
        sizes[i] = dims[static_cast<size_t>(j)];
    }
    return {PtValue::of_tensor(broadcast_dims(ctx, x, sizes))};
}

// aten::expand_as(x, other).
PtValues convert_expand_as(PtContext& ctx) {
    return {PtValue::of_tensor(broadcast_dims(ctx, ctx.tensor(0), dims_of(ctx, ctx.tensor(1))))};
}

// aten::repeat(x, repeats): numpy's tile; repeats may be symbolic.
PtValues convert_repeat(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    std::vector<PrimExpr> reps = ctx.int_exprs(1);
    int64_t rank = ctx.rank(x);
    if (static_cast<int64_t>(reps.size()) < rank) {
        ctx.error() << "the number of repeats (" << reps.size()
                    << ") is less than the tensor's rank (" << rank << ")";
    }
    auto [attrs, a] = new_attrs<ops::TileAttrs>();
    bool constant = true, identity = static_cast<int64_t>(reps.size()) == rank;
    for (const auto& r : reps) {
        const std::optional<int64_t> v = known_int(r);
        if (!v) {
            constant = false;
            continue;
        }
        if (*v < 0) ctx.error() << "repeats must not be negative, got " << *v;
        if (*v == 0) ctx.error() << "a repeat count of 0 (an empty result) is not supported";
        identity = identity && *v == 1;
        a->reps.push_back(*v);
    }
    if (constant && identity) return {PtValue::of_tensor(x)};
    if (!constant) {
        a->reps.clear();
        for (const auto& r : reps) a->symbolic_reps.push_back(simplify(r));
    }
    return {PtValue::of_tensor(ctx.call("tile", {x}, attrs))};
}

// aten::repeat_interleave(x, repeats, dim, output_size): each element repeated `repeats` times
// along dim (the flattened tensor when dim is None). Repeats are one number; a tensor of them
// must be a constant whose values are all equal.
PtValues convert_repeat_interleave(PtContext& ctx) {
    if (ctx.num_inputs() < 3) {
        ctx.error() << "repeat_interleave(repeats) (the indices repeated) is not supported";
    }
    Expr x = ctx.tensor(0);
    PrimExpr r;
    if (ctx.input(1).kind == PtValue::Tensor) {
        Expr t = ctx.tensor(1);
        if (!constant_data(t).defined()) {
            ctx.error() << "repeats given per element by a tensor computed at run time is not "
                           "supported (the result's size would depend on its values)";
        }
        std::vector<int64_t> v = ctx.const_ints(t, "repeats");
        if (v.empty() || std::adjacent_find(v.begin(), v.end(), std::not_equal_to<>()) != v.end()) {
            ctx.error() << "repeats that differ per element are not supported";
        }
        r = i64(v[0]);
    } else {
        r = ctx.int_expr(1);
    }
    if (const std::optional<int64_t> v = known_int(r); v && *v <= 0) {
        ctx.error() << "repeats must be positive, got " << *v;
    }
    int64_t axis = 0;
    if (ctx.is_none(2)) {
        PrimExpr n = i64(1);
        for (const auto& d : dims_of(ctx, x)) n = n * d;
        x = view_dims(ctx, x, {simplify(n)});
    } else {
        axis = ctx.normalize_axis(ctx.int_arg(2), ctx.rank(x), "dim");
    }
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    Expr y = expand_dims(ctx, x, axis + 1);
    std::vector<PrimExpr> wide = dims;
    wide.insert(wide.begin() + axis + 1, r);
    y = broadcast_dims(ctx, y, wide);
    dims[static_cast<size_t>(axis)] = simplify(dims[static_cast<size_t>(axis)] * r);
    return {PtValue::of_tensor(view_dims(ctx, y, dims))};
}

}  // namespace anvil::frontend::pytorch
