// Converters that split a tensor into parts or join tensors: chunk, split, split_with_sizes,
// unbind, tensor_split, cat, stack, hstack, vstack, dstack, column_stack, and the reorderings
// flip and roll. A list of parts is a List of tensors, unpacked by prim::ListUnpack; each part is
// its own slice (shape_ops.h: slice_axis), so parts of symbolic dimensions work too.
#include <functional>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/shape_ops.h"
#include "frontend/pytorch/views.h"
#include "ir/analyzer.h"
#include "ir/polynomial.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

PtValue tensor_list(const std::vector<Expr>& parts) {
    PtValues items;
    for (const auto& p : parts) items.push_back(PtValue::of_tensor(p));
    return PtValue::of_list(std::move(items));
}

using PartsOf = std::function<std::vector<Expr>(const Expr&)>;

// The parts of operand 0 that `parts_of` makes, as views of it (split, chunk and unbind return
// views): each carries which elements of the tensor viewed it shows, the same parts of its index
// map, so that an in-place write into a part changes that tensor (views.h).
PtValue view_parts(const PtContext& ctx, const PartsOf& parts_of) {
    const PtValue& source = ctx.input(0);
    PtValue list = tensor_list(parts_of(source.tensor));
    int64_t base_id = source.view ? source.view->base_id : ctx.node().inputs[0];
    Expr map;
    if (source.view) {
        map = source.view->index_map;
    } else if (const auto* t = source.tensor->type.as<graph::TensorType>(); t && t->is_static()) {
        auto shape = t->static_shape();
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        map = reshape_to(ctx, iota(ctx, i64(n), ctx.constant_scalar(DataType::int64(), 0)), shape);
    }
    std::vector<Expr> maps = map.defined() ? parts_of(map) : std::vector<Expr>();
    for (size_t k = 0; k < list.items.size(); ++k) {
        // Parts along an inner axis are not contiguous; reshapes of any part are treated as
        // copies (views.h), the safe side.
        list.items[k].view =
            std::make_shared<ViewOf>(ViewOf{base_id, k < maps.size() ? maps[k] : Expr(), 0, false});
    }
    return list;
}

// The static size of `axis`; `what` says why it must be known.
int64_t static_axis(const PtContext& ctx, const Expr& x, int64_t axis, const char* what) {
    PrimExpr n = dims_of(ctx, x)[static_cast<size_t>(axis)];
    const int64_t* v = as_const_int(n);
    if (!v) {
        ctx.error() << "dimension " << axis << " has the symbolic size " << n << ", but " << what
                    << " depends on it; give it a static size";
    }
    return *v;
}

// Parts of `size` elements along `axis` (the last one smaller).
std::vector<Expr> split_by_size(const PtContext& ctx, const Expr& x, int64_t axis, int64_t size) {
    int64_t n = static_axis(ctx, x, axis, "the number of parts");
    if (size < 0) ctx.error() << "split_size must not be negative, got " << size;
    if (size == 0 && n > 0) ctx.error() << "split_size 0 cannot split a dimension of size " << n;
    if (n == 0) return {x};
    std::vector<Expr> parts;
    for (int64_t b = 0; b < n; b += size) {
        parts.push_back(slice_axis(ctx, x, axis, i64(b), i64(std::min(n, b + size)), i64(1)));
    }
    return parts;
}

// Parts of the given sizes (possibly symbolic), which must add up to the dimension.
std::vector<Expr> split_by_sizes(const PtContext& ctx, const Expr& x, int64_t axis,
                                 const std::vector<PrimExpr>& sizes) {
    PrimExpr n = dims_of(ctx, x)[static_cast<size_t>(axis)];
    PrimExpr total = i64(0);
    for (const auto& s : sizes) {
        if (const std::optional<int64_t> v = known_int(s); v && *v < 0) {
            ctx.error() << "split sizes must not be negative, got " << *v;
        }
        total = total + s;
    }
    if (!provably_equal(simplify(total), n)) {
        ctx.error() << "split sizes add up to " << simplify(total) << ", not to the size " << n
                    << " of dimension " << axis;
    }
    std::vector<Expr> parts;
    PrimExpr begin = i64(0);
    for (const auto& s : sizes) {
        PrimExpr end = simplify(begin + s);
        parts.push_back(slice_axis(ctx, x, axis, begin, end, i64(1)));
        begin = end;
    }
    return parts;
}

int64_t dim_operand(const PtContext& ctx, size_t i, const Expr& x) {
    if (ctx.num_inputs() <= i) return 0;
    if (ctx.input(i).kind == PtValue::Str) ctx.error() << "named dimensions are not supported";
    return ctx.normalize_axis(ctx.int_arg(i), ctx.rank(x), "dim");
}

// x with at least `rank` dimensions, as atleast_1d/2d/3d add them: a 1-D tensor becomes [1, n]
// (2-D) or [1, n, 1] (3-D), a 2-D one [m, n, 1].
Expr at_least(const PtContext& ctx, const Expr& x, int64_t rank) {
    std::vector<PrimExpr> d = dims_of(ctx, x);
    if (static_cast<int64_t>(d.size()) >= rank) return x;
    std::vector<PrimExpr> out;
    if (d.empty()) {
        out.assign(static_cast<size_t>(rank), i64(1));
    } else if (d.size() == 1) {
        out = rank == 2 ? std::vector<PrimExpr>{i64(1), d[0]}
                        : std::vector<PrimExpr>{i64(1), d[0], i64(1)};
    } else {
        out = {d[0], d[1], i64(1)};
    }
    return view_dims(ctx, x, out);
}

}  // namespace

// aten::chunk / unsafe_chunk(x, chunks, dim): parts of ceil(n / chunks) elements, so there may
// be fewer than `chunks` of them.
PtValues convert_chunk(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t chunks = ctx.int_arg(1);
    if (chunks <= 0) ctx.error() << "chunks must be positive, got " << chunks;
    int64_t axis = dim_operand(ctx, 2, x);
    int64_t n = static_axis(ctx, x, axis, "the number of chunks");
    int64_t size = (n + chunks - 1) / chunks;
    return {view_parts(ctx, [&](const Expr& t) { return split_by_size(ctx, t, axis, size); })};
}

// aten::split(x, split_size or sizes, dim), split_with_sizes, unsafe_split(_with_sizes).
PtValues convert_split(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t axis = dim_operand(ctx, 2, x);
    if (ctx.input(1).kind == PtValue::List || ctx.input(1).kind == PtValue::Tuple) {
        std::vector<PrimExpr> sizes = ctx.int_exprs(1);
        return {
            view_parts(ctx, [&](const Expr& t) { return split_by_sizes(ctx, t, axis, sizes); })};
    }
    int64_t size = ctx.int_arg(1);
    return {view_parts(ctx, [&](const Expr& t) { return split_by_size(ctx, t, axis, size); })};
}

// aten::unbind(x, dim): every element along dim, the dimension removed.
PtValues convert_unbind(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t axis = dim_operand(ctx, 1, x);
    int64_t n = static_axis(ctx, x, axis, "the number of parts");
    return {view_parts(ctx, [&](const Expr& t) {
        std::vector<Expr> parts;
        for (int64_t i = 0; i < n; ++i) parts.push_back(select_axis(ctx, t, axis, i64(i)));
        return parts;
    })};
}

// aten::tensor_split(x, sections | indices | tensor of either, dim): `sections` parts, the first
// n % sections one element longer; or the parts between the indices (clamped, as slices).
PtValues convert_tensor_split(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t axis = dim_operand(ctx, 2, x);
    const PtValue& spec = ctx.input(1);
    std::vector<int64_t> indices;
    std::optional<int64_t> sections;
    if (spec.kind == PtValue::Tensor) {
        Expr t = ctx.tensor(1);
        std::vector<int64_t> v = ctx.const_ints(t, "tensor_indices_or_sections");
        if (ctx.rank(t) == 0) {
            sections = v[0];
        } else if (ctx.rank(t) == 1) {
            indices = v;
        } else {
            ctx.error() << "tensor_indices_or_sections must be 0-D or 1-D";
        }
    } else if (spec.kind == PtValue::List || spec.kind == PtValue::Tuple) {
        indices = ctx.ints(1);
    } else {
        sections = ctx.int_arg(1);
    }
    if (sections && *sections <= 0) ctx.error() << "sections must be positive, got " << *sections;
    int64_t n = sections ? static_axis(ctx, x, axis, "the part sizes") : 0;
    return {view_parts(ctx, [&](const Expr& t) {
        std::vector<Expr> parts;
        if (sections) {
            int64_t q = n / *sections, extra = n % *sections, b = 0;
            for (int64_t k = 0; k < *sections; ++k) {
                int64_t len = q + (k < extra ? 1 : 0);
                parts.push_back(slice_axis(ctx, t, axis, i64(b), i64(b + len), i64(1)));
                b += len;
            }
            return parts;
        }
        std::optional<PrimExpr> begin;
        for (int64_t i : indices) {
            parts.push_back(slice_axis(ctx, t, axis, begin, i64(i), i64(1)));
            begin = i64(i);
        }
        parts.push_back(slice_axis(ctx, t, axis, begin, std::nullopt, i64(1)));
        return parts;
    })};
}

// aten::cat / concat(tensors, dim).
PtValues convert_cat(PtContext& ctx) {
    std::vector<Expr> xs = ctx.tensors(0);
    if (xs.empty()) ctx.error() << "expects a non-empty list of tensors";
    if (ctx.num_inputs() > 1 && ctx.input(1).kind == PtValue::Str) {
        ctx.error() << "named dimensions are not supported";
    }
    // The rank of the first tensor that is not a legacy empty one.
    int64_t rank = ctx.rank(xs[0]);
    for (const auto& x : xs) {
        const auto& t = ctx.tensor_type(x, "an operand");
        if (!(t.ndim() == 1 && is_zero(t.shape[0]))) {
            rank = static_cast<int64_t>(t.ndim());
            break;
        }
    }
    if (rank == 0) ctx.error() << "zero-dimensional tensors cannot be concatenated";
    int64_t axis = ctx.normalize_axis(ctx.num_inputs() > 1 ? ctx.int_arg(1) : 0, rank, "dim");
    return {PtValue::of_tensor(concat(ctx, xs, axis))};
}

// aten::stack(tensors, dim): the tensors joined along a new dimension.
PtValues convert_stack(PtContext& ctx) {
    std::vector<Expr> xs = ctx.tensors(0);
    if (xs.empty()) ctx.error() << "expects a non-empty list of tensors";
    int64_t axis =
        ctx.normalize_axis(ctx.num_inputs() > 1 ? ctx.int_arg(1) : 0, ctx.rank(xs[0]) + 1, "dim");
    for (auto& x : xs) x = expand_dims(ctx, x, axis);
    return {PtValue::of_tensor(concat(ctx, xs, axis))};
}

// aten::hstack (along dim 1, dim 0 for 1-D), vstack / row_stack (dim 0 of at least 2-D),
// dstack (dim 2 of at least 3-D), column_stack (0-D and 1-D as columns, along dim 1).
PtValues convert_hstack(PtContext& ctx) {
    std::vector<Expr> xs = ctx.tensors(0);
    if (xs.empty()) ctx.error() << "expects a non-empty list of tensors";
    const std::string& k = ctx.kind();
    int64_t axis = 0;
    for (auto& x : xs) {
        if (k == "aten::hstack") {
            x = at_least(ctx, x, 1);
        } else if (k == "aten::dstack") {
            x = at_least(ctx, x, 3);
        } else if (k == "aten::column_stack") {
            if (ctx.rank(x) <= 1) {
                PrimExpr n = ctx.rank(x) == 0 ? i64(1) : dims_of(ctx, x)[0];
                x = view_dims(ctx, x, {n, i64(1)});
            }
        } else {
            x = at_least(ctx, x, 2);
        }
    }
    if (k == "aten::hstack") axis = ctx.rank(xs[0]) == 1 ? 0 : 1;
    if (k == "aten::dstack") axis = 2;
    if (k == "aten::column_stack") axis = 1;
    return {PtValue::of_tensor(concat(ctx, xs, axis))};
}

// aten::flip(x, dims): each listed dimension reversed.
PtValues convert_flip(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t rank = ctx.rank(x);
    std::vector<int64_t> axes;
    for (int64_t a : ctx.ints(1)) {
        int64_t d = ctx.normalize_axis(a, rank, "dim");
        if (std::find(axes.begin(), axes.end(), d) != axes.end()) {
            ctx.error() << "dim " << d << " appears twice in dims";
        }
        axes.push_back(d);
    }
    if (axes.empty()) return {PtValue::of_tensor(x)};
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    bool constant = true;
    for (int64_t d : axes) constant &= as_const_int(dims[static_cast<size_t>(d)]) != nullptr;
    auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
    for (int64_t d : axes) {
        if (constant) {
            a->begin.push_back(-1);
            a->end.push_back(INT64_MIN);
            a->strides.push_back(-1);
            a->axes.push_back(d);
        } else {
            PrimExpr n = dims[static_cast<size_t>(d)];
            a->dynamic_begin.push_back(n - 1);
            a->dynamic_end.push_back(-n - 1);
            a->dynamic_strides.push_back(i64(-1));
            a->dynamic_axes.push_back(i64(d));
        }
    }
    return {PtValue::of_tensor(ctx.call("strided_slice", {x}, attrs))};
}

// aten::roll(x, shifts, dims): elements shifted (with wrap-around) along each dim; without dims
// over the flattened tensor, then viewed back.
PtValues convert_roll(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    std::vector<PrimExpr> shifts = ctx.int_exprs(1);
    std::vector<int64_t> axes = ctx.num_inputs() > 2 ? ctx.ints(2) : std::vector<int64_t>{};
    std::vector<PrimExpr> shape = dims_of(ctx, x);
    bool flat = axes.empty();
    if (flat) {
        if (shifts.size() != 1) ctx.error() << "without dims, shifts must be one value";
        PrimExpr n = i64(1);
        for (const auto& d : shape) n = n * d;
        x = view_dims(ctx, x, {simplify(n)});
        axes = {0};
    }
    if (shifts.size() != axes.size()) {
        ctx.error() << "shifts has " << shifts.size() << " values for " << axes.size() << " dims";
    }
    for (size_t k = 0; k < axes.size(); ++k) {
        int64_t axis = ctx.normalize_axis(axes[k], ctx.rank(x), "dim");
        PrimExpr n = dims_of(ctx, x)[static_cast<size_t>(axis)];
        const int64_t* size = as_const_int(n);
        const std::optional<int64_t> shift = known_int(shifts[k]);
        if (size && *size == 0) continue;
        // The last `s` elements move to the front.
        PrimExpr s = size && shift ? i64(((*shift % *size) + *size) % *size)
                                   : simplify(floormod(shifts[k], n));
        if (is_zero(s)) continue;
        PrimExpr cut = simplify(n - s);
        Expr tail = slice_axis(ctx, x, axis, cut, std::nullopt, i64(1));
        Expr head = slice_axis(ctx, x, axis, i64(0), cut, i64(1));
        x = concat(ctx, {tail, head}, axis);
    }
    if (flat) x = view_dims(ctx, x, shape);
    return {PtValue::of_tensor(x)};
}

}  // namespace anvil::frontend::pytorch
