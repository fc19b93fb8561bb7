// Converters of reductions: sum, mean, prod, amax/amin, max/min (of a whole tensor, along a dim
// with indices, or elementwise), argmax/argmin, all/any, std/var (and std_mean/var_mean), the
// vector norms, logsumexp, count_nonzero and cumsum. `dim` is an int, a list or None (every
// axis), as each overload allows; `keepdim` keeps reduced axes as size 1; `dtype=` converts the
// input first. Types follow PyTorch: integer sums are int64, all/any give bool.
#include <cmath>
#include <limits>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/number_ops.h"
#include "ir/analyzer.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

DataType dtype_of(const PtContext& ctx, const Expr& x) {
    return ctx.tensor_type(x, "the input").dtype;
}

// The reduced axes of a tensor of rank `rank`, normalized and ascending; empty: every axis.
struct Dims {
    std::vector<int64_t> axes;
};

// Operand i as dims: None, absent or [] reduce every axis. A 0-d tensor has one axis to name
// (0 or -1), as in PyTorch.
Dims reduce_dims(const PtContext& ctx, size_t i, int64_t rank) {
    Dims d;
    if (i >= ctx.num_inputs() || ctx.is_none(i)) return d;
    std::vector<int64_t> given = ctx.ints(i);
    std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 1)), false);
    for (int64_t a : given) {
        int64_t n = ctx.normalize_axis(a, std::max<int64_t>(rank, 1), "dim");
        if (seen[static_cast<size_t>(n)]) ctx.error() << "dim " << n << " appears twice";
        seen[static_cast<size_t>(n)] = true;
    }
    if (rank == 0) return d;
    for (int64_t a = 0; a < rank; ++a) {
        if (seen[static_cast<size_t>(a)]) d.axes.push_back(a);
    }
    return d;
}

bool keepdim_arg(const PtContext& ctx, size_t i) {
    return i < ctx.num_inputs() && !ctx.is_none(i) && ctx.bool_arg(i);
}

// Operand 0 converted to `dtype=` (operand i) when given.
Expr input_as_dtype(const PtContext& ctx, size_t i) {
    Expr x = ctx.tensor(0);
    if (i < ctx.num_inputs()) {
        if (auto t = ctx.dtype_arg(i)) return cast_to(ctx, x, *t);
    }
    return x;
}

Expr reduce(const PtContext& ctx, const char* op, const Expr& x, const Dims& dims, bool keepdim) {
    auto [attrs, a] = new_attrs<ops::ReduceAttrs>();
    a->axes = dims.axes;
    a->keepdims = keepdim;
    return ctx.call(op, {x}, attrs);
}

// The number of elements the reduction combines, as a 0-d tensor of `t` (sizes may be
// symbolic).
Expr reduced_count(const PtContext& ctx, const Expr& x, const Dims& dims, DataType t) {
    const auto& shape = ctx.tensor_type(x, "the input").shape;
    PrimExpr n = make_int(DataType::int64(), 1);
    for (size_t d = 0; d < shape.size(); ++d) {
        bool reduced = dims.axes.empty() ||
                       std::find(dims.axes.begin(), dims.axes.end(), int64_t(d)) != dims.axes.end();
        if (reduced) n = n * cast(DataType::int64(), shape[d]);
    }
    return number_tensor_of(ctx, make_number(PtValue::Int, n), t);
}

// y (reduced with keepdim) with the reduced axes dropped.
Expr drop_reduced(const PtContext& ctx, const Expr& y, const Dims& dims) {
    int64_t rank = ctx.rank(y);
    if (rank == 0) return y;
    auto [attrs, a] = new_attrs<ops::SqueezeAttrs>();
    a->axes = dims.axes;
    if (a->axes.empty()) {
        for (int64_t d = 0; d < rank; ++d) a->axes.push_back(d);
    }
    return ctx.call("squeeze", {y}, attrs);
}

// amax/amin of any type: bools reduce as uint8.
Expr extreme(const PtContext& ctx, bool is_max, const Expr& x, const Dims& dims, bool keepdim) {
    DataType t = dtype_of(ctx, x);
    const char* op = is_max ? "max" : "min";
    if (!t.is_bool()) return reduce(ctx, op, x, dims, keepdim);
    Expr r = reduce(ctx, op, cast_to(ctx, x, DataType::uint(8)), dims, keepdim);
    return cast_to(ctx, r, DataType::bool_());
}

// The reductions of import-time number lists (sum([a, b]), all([...]), any([...])).
std::optional<PtValue> list_reduction(const PtContext& ctx, NumOp op) {
    const PtValue& v = ctx.input(0);
    if (v.kind != PtValue::List && v.kind != PtValue::Tuple) return std::nullopt;
    bool logical = op == NumOp::And || op == NumOp::Or;
    PtValue acc = logical ? PtValue::of_bool(op == NumOp::And) : PtValue::of_int(0);
    for (const auto& item : v.items) {
        if (!item.is_import_time()) {
            ctx.error() << "reduces a list whose items are not numbers known at import time";
        }
        acc = *number_binary(ctx, op, acc, logical ? number_as(item, PtValue::Bool) : item);
    }
    return acc;
}

}  // namespace

// sum(x, dtype=None), sum(x, dim, keepdim=False, dtype=None), sum of a list of numbers; mean
// the same (floating-point only, as in PyTorch); prod(x, dtype=None), prod(x, dim, keepdim,
// dtype). Integer and bool tensors sum and multiply in int64.
PtValues convert_sum_mean_prod(PtContext& ctx) {
    const std::string& kind = ctx.kind();
    if (kind == "aten::sum") {
        if (auto v = list_reduction(ctx, NumOp::Add)) return {*v};
    }
    bool whole = ctx.num_inputs() <= 2;
    Expr x = input_as_dtype(ctx, whole ? 1 : 3);
    DataType t = dtype_of(ctx, x);
    Dims dims = whole ? Dims{} : reduce_dims(ctx, 1, ctx.rank(x));
    bool keepdim = !whole && keepdim_arg(ctx, 2);
    if (kind == "aten::mean") {
        if (!t.is_floating()) {
            ctx.error() << "mean of a " << t.str() << " tensor is not supported (by PyTorch "
                        << "either); pass dtype=torch.float32";
        }
        return {PtValue::of_tensor(reduce(ctx, "mean", x, dims, keepdim))};
    }
    if (!t.is_floating()) x = cast_to(ctx, x, DataType::int64());
    return {
        PtValue::of_tensor(reduce(ctx, kind == "aten::prod" ? "prod" : "sum", x, dims, keepdim))};
}

// amax / amin(x, dim=[], keepdim=False).
PtValues convert_amax_amin(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    Dims dims = reduce_dims(ctx, 1, ctx.rank(x));
    bool is_max = ctx.kind() == "aten::amax";
    return {PtValue::of_tensor(extreme(ctx, is_max, x, dims, keepdim_arg(ctx, 2)))};
}

// max / min: of the whole tensor (max(x)); along dim with the indices (max(x, dim, keepdim) ->
// (values, indices), the first index of the extreme value); elementwise (max(x, other)).
PtValues convert_max_min(PtContext& ctx) {
    if (ctx.num_inputs() == 2 && !ctx.is_none(1)) return convert_binary(ctx);
    bool is_max = ctx.kind() == "aten::max";
    Expr x = ctx.tensor(0);
    int64_t rank = ctx.rank(x);
    if (ctx.num_inputs() == 1) return {PtValue::of_tensor(extreme(ctx, is_max, x, Dims{}, false))};
    bool keepdim = keepdim_arg(ctx, 2);
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), std::max<int64_t>(rank, 1), "dim");
    if (rank == 0) {  // the one element, at index 0
        return {PtValue::of_tensor(x),
                PtValue::of_tensor(scalar_constant(ctx, DataType::int64(), 0))};
    }
    Expr values = extreme(ctx, is_max, x, Dims{{axis}}, keepdim);
    auto [attrs, a] = new_attrs<ops::ArgReduceAttrs>();
    a->axis = axis;
    a->keepdims = keepdim;
    Expr arg_input = dtype_of(ctx, x).is_bool() ? cast_to(ctx, x, DataType::uint(8)) : x;
    Expr indices = ctx.call(is_max ? "argmax" : "argmin", {arg_input}, attrs);
    return {PtValue::of_tensor(values), PtValue::of_tensor(indices)};
}

// argmax / argmin(x, dim=None, keepdim=False): with no dim, the index into the flattened tensor
// (keepdim then gives a tensor of x's rank with every size 1).
PtValues convert_argmax_argmin(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (dtype_of(ctx, x).is_bool()) x = cast_to(ctx, x, DataType::uint(8));
    const char* op = ctx.kind() == "aten::argmax" ? "argmax" : "argmin";
    int64_t rank = ctx.rank(x);
    bool keepdim = keepdim_arg(ctx, 2);
    auto [attrs, a] = new_attrs<ops::ArgReduceAttrs>();
    a->keepdims = keepdim;
    if (ctx.num_inputs() > 1 && !ctx.is_none(1)) {
        a->axis = ctx.normalize_axis(ctx.int_arg(1), std::max<int64_t>(rank, 1), "dim");
        if (rank == 0) return {PtValue::of_tensor(scalar_constant(ctx, DataType::int64(), 0))};
        return {PtValue::of_tensor(ctx.call(op, {x}, attrs))};
    }
    auto [flat_attrs, f] = new_attrs<ops::ReshapeAttrs>();
    f->newshape = {-1};
    a->axis = 0;
    a->keepdims = false;
    Expr r = ctx.call(op, {ctx.call("reshape", {x}, flat_attrs)}, attrs);
    if (keepdim) r = reshape_to(ctx, r, std::vector<int64_t>(static_cast<size_t>(rank), 1));
    return {PtValue::of_tensor(r)};
}

// all / any(x) and (x, dim, keepdim=False); of a list of numbers too. The result is bool (uint8
// for a uint8 tensor, as in PyTorch).
PtValues convert_all_any(PtContext& ctx) {
    bool is_all = ctx.kind() == "aten::all";
    if (auto v = list_reduction(ctx, is_all ? NumOp::And : NumOp::Or)) return {*v};
    Expr x = ctx.tensor(0);
    DataType t = dtype_of(ctx, x);
    Expr b = t.is_bool() ? x : ctx.call("not_equal", {x, scalar_constant(ctx, t, 0)});
    Dims dims = ctx.num_inputs() > 1 ? reduce_dims(ctx, 1, ctx.rank(x)) : Dims{};
    Expr r = extreme(ctx, !is_all, b, dims, keepdim_arg(ctx, 2));
    if (t == DataType::uint(8)) r = cast_to(ctx, r, t);
    return {PtValue::of_tensor(r)};
}

// var / std(x, unbiased=True), (x, dim, unbiased, keepdim), (x, dim, correction=, keepdim): the
// sum of squared deviations from the mean over (N - correction), correction 1 when unbiased;
// var_mean / std_mean return (var or std, mean).
PtValues convert_var_std(PtContext& ctx) {
    const std::string& kind = ctx.kind();
    Expr x = ctx.tensor(0);
    DataType t = dtype_of(ctx, x);
    if (!t.is_floating()) {
        ctx.error() << kind << " of a " << t.str() << " tensor is not supported (by PyTorch "
                    << "either)";
    }
    bool whole = ctx.num_inputs() <= 2;
    Dims dims = whole ? Dims{} : reduce_dims(ctx, 1, ctx.rank(x));
    bool keepdim = !whole && keepdim_arg(ctx, 3);
    size_t c = whole ? 1 : 2;
    double correction = 1;
    if (c < ctx.num_inputs() && !ctx.is_none(c)) {
        const PtValue& v = ctx.input(c);
        correction = v.kind == PtValue::Bool ? (ctx.bool_arg(c) ? 1 : 0) : ctx.float_arg(c);
    }
    Expr mean = reduce(ctx, "mean", x, dims, true);
    Expr dev = ctx.call("subtract", {x, mean});
    Expr ss = reduce(ctx, "sum", ctx.call("multiply", {dev, dev}), dims, keepdim);
    // max(0, N - correction), as PyTorch divides by: 0 gives inf or nan, as there.
    Expr n =
        ctx.call("subtract", {reduced_count(ctx, x, dims, t), scalar_constant(ctx, t, correction)});
    n = ctx.call("maximum", {n, scalar_constant(ctx, t, 0)});
    Expr var = ctx.call("divide", {ss, n});
    bool is_std = kind == "aten::std" || kind == "aten::std_mean";
    Expr r = is_std ? ctx.call("sqrt", {var}) : var;
    if (kind == "aten::var_mean" || kind == "aten::std_mean") {
        return {PtValue::of_tensor(r),
                PtValue::of_tensor(keepdim ? mean : drop_reduced(ctx, mean, dims))};
    }
    return {PtValue::of_tensor(r)};
}

namespace {

// The p-norm of x over dims: max |x| (inf), min |x| (-inf), the count of non-zeros (0), the
// sum of |x| (1), the root of the sum of squares (2), (sum |x|^p)^(1/p) otherwise.
Expr vector_norm(const PtContext& ctx, const Expr& x, double p, const Dims& dims, bool keepdim) {
    DataType t = dtype_of(ctx, x);
    if (!t.is_floating()) {
        ctx.error() << "the norm of a " << t.str() << " tensor is not supported (by PyTorch "
                    << "either)";
    }
    if (std::isnan(p)) ctx.error() << "the norm's order is nan";
    Expr a = ctx.call("abs", {x});
    if (std::isinf(p)) return reduce(ctx, p > 0 ? "max" : "min", a, dims, keepdim);
    if (p == 0) {
        Expr nonzero = cast_to(ctx, ctx.call("not_equal", {x, scalar_constant(ctx, t, 0)}), t);
        return reduce(ctx, "sum", nonzero, dims, keepdim);
    }
    if (p == 1) return reduce(ctx, "sum", a, dims, keepdim);
    if (p == 2)
        return ctx.call("sqrt", {reduce(ctx, "sum", ctx.call("multiply", {x, x}), dims, keepdim)});
    Expr s = reduce(ctx, "sum", ctx.call("power", {a, scalar_constant(ctx, t, p)}), dims, keepdim);
    return ctx.call("power", {s, scalar_constant(ctx, t, 1.0 / p)});
}

double order_or(const PtContext& ctx, size_t i, double fallback) {
    if (i >= ctx.num_inputs() || ctx.is_none(i)) return fallback;
    return ctx.float_arg(i);
}

}  // namespace

// norm(x, p=2), norm(x, p, dtype=), norm(x, p, dim, keepdim, dtype=); linalg_vector_norm(x,
// ord=2, dim=None, keepdim=False, dtype=None); frobenius_norm(x, dim=all, keepdim=False);
// linalg_norm(x, ord=None | 'fro', dim=None, keepdim, dtype=) for vector norms and Frobenius.
PtValues convert_norm(PtContext& ctx) {
    const std::string& kind = ctx.kind();
    size_t n = ctx.num_inputs();
    Expr x = ctx.tensor(0);
    auto with_dtype = [&](size_t i) {
        if (i < n) {
            if (auto t = ctx.dtype_arg(i)) x = cast_to(ctx, x, *t);
        }
    };
    int64_t rank = ctx.rank(x);
    if (kind == "aten::frobenius_norm") {
        Dims dims = n > 1 ? reduce_dims(ctx, 1, rank) : Dims{};
        return {PtValue::of_tensor(vector_norm(ctx, x, 2, dims, keepdim_arg(ctx, 2)))};
    }
    if (kind == "aten::linalg_vector_norm") {
        with_dtype(4);
        double p = order_or(ctx, 1, 2);
        return {PtValue::of_tensor(
            vector_norm(ctx, x, p, reduce_dims(ctx, 2, rank), keepdim_arg(ctx, 3)))};
    }
    if (kind == "aten::linalg_norm") {
        with_dtype(4);
        Dims dims = reduce_dims(ctx, 2, rank);
        bool vector = (n > 2 && !ctx.is_none(2) && ctx.ints(2).size() == 1) ||
                      ((n <= 2 || ctx.is_none(2)) && rank == 1);
        double p = 2;
        if (n > 1 && !ctx.is_none(1)) {
            if (ctx.input(1).kind == PtValue::Str) {
                if (ctx.str_arg(1) != "fro") {
                    ctx.error() << "the matrix norm '" << ctx.str_arg(1) << "' is not supported";
                }
            } else {
                p = ctx.float_arg(1);
                if (!vector) {
                    ctx.error() << "matrix norms of order " << p
                                << " are not supported; only "
                                   "vector norms and the Frobenius norm";
                }
            }
        }
        return {PtValue::of_tensor(vector_norm(ctx, x, p, dims, keepdim_arg(ctx, 3)))};
    }
    // aten::norm: (x, p), (x, p, dtype), (x, p, dim, keepdim), (x, p, dim, keepdim, dtype).
    double p = order_or(ctx, 1, 2);
    if (n == 3) with_dtype(2);
    if (n == 5) with_dtype(4);
    Dims dims = n >= 4 ? reduce_dims(ctx, 2, rank) : Dims{};
    return {PtValue::of_tensor(vector_norm(ctx, x, p, dims, n >= 4 && keepdim_arg(ctx, 3)))};
}

// logsumexp(x, dim, keepdim=False) = m + log(sum(exp(x - m))), m the maximum (0 where it is
// infinite, so that a row of -inf gives -inf rather than nan). Integer tensors give float32.
PtValues convert_logsumexp(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (!dtype_of(ctx, x).is_floating()) x = cast_to(ctx, x, DataType::float32());
    DataType t = dtype_of(ctx, x);
    Dims dims = reduce_dims(ctx, 1, ctx.rank(x));
    bool keepdim = keepdim_arg(ctx, 2);
    Expr m = reduce(ctx, "max", x, dims, true);
    Expr infinite = ctx.call(
        "equal",
        {ctx.call("abs", {m}), scalar_constant(ctx, t, std::numeric_limits<double>::infinity())});
    m = ctx.call("where", {infinite, scalar_constant(ctx, t, 0), m});
    Expr s = reduce(ctx, "sum", ctx.call("exp", {ctx.call("subtract", {x, m})}), dims, true);
    Expr r = ctx.call("add", {ctx.call("log", {s}), m});
    return {PtValue::of_tensor(keepdim ? r : drop_reduced(ctx, r, dims))};
}

// count_nonzero(x, dim=None | int | [int]): int64.
PtValues convert_count_nonzero(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType t = dtype_of(ctx, x);
    Expr nonzero = t.is_bool() ? x : ctx.call("not_equal", {x, scalar_constant(ctx, t, 0)});
    Dims dims = reduce_dims(ctx, 1, ctx.rank(x));
    return {PtValue::of_tensor(
        reduce(ctx, "sum", cast_to(ctx, nonzero, DataType::int64()), dims, false))};
}

// cumsum(x, dim, dtype=None): integer and bool tensors sum in int64.
PtValues convert_cumsum(PtContext& ctx) {
    Expr x = input_as_dtype(ctx, 2);
    if (!dtype_of(ctx, x).is_floating()) x = cast_to(ctx, x, DataType::int64());
    int64_t rank = ctx.rank(x);
    int64_t axis = ctx.normalize_axis(ctx.int_arg(1), std::max<int64_t>(rank, 1), "dim");
    if (rank == 0) return {PtValue::of_tensor(x)};
    auto [attrs, a] = new_attrs<ops::CumsumAttrs>();
    a->axis = axis;
    return {PtValue::of_tensor(ctx.call("cumsum", {x}, attrs))};
}

}  // namespace anvil::frontend::pytorch
