// Converters that make tensors: zeros/ones/full/empty and their _like and new_ forms, fill,
// zero and copy (what TorchScript makes of fill_, zero_ and copy_ on a fresh tensor), arange,
// linspace, logspace, eye, tensor / as_tensor / scalar_tensor; and the casts: to, type_as,
// _to_copy. `empty` is a fill with zeros: its contents are unspecified. Random tensors are an
// error: a compiled model is deterministic.
//
// Sizes may be symbolic (torch.zeros(x.size(0), 4)): a fill is a broadcast of one value, and a
// range or an identity matrix is computed by graph ops over a symbolic length. Values known at
// import time (a linspace of constants, a tensor of a list of numbers) are constants.
#include <cmath>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/shape_ops.h"
#include "frontend/shape_values.h"
#include "ir/analyzer.h"
#include "ops/shape_tensor.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

// More elements than any tensor a model makes; a range this long is a mistake in its bounds.
constexpr double kMaxElements = 9.0e15;

// The operand index of `dtype=` in the creation op's overloads, told apart by their operand
// counts (the .names overloads have one more operand before it).
size_t dtype_index(const PtContext& ctx, size_t plain_count, size_t plain_index) {
    if (ctx.num_inputs() == plain_count + 1) {
        if (!ctx.is_none(plain_index)) ctx.error() << "named tensors are not supported";
        return plain_index + 1;
    }
    return plain_index;
}

DataType number_kind_dtype(const PtValue& v) {
    if (v.kind == PtValue::Float) return DataType::float32();
    if (v.kind == PtValue::Bool) return DataType::bool_();
    return DataType::int64();
}

// A number item of a list as a 0-D tensor of `dtype`: a constant, a symbolic size's
// shape_tensor, or the run-time number's own tensor.
Expr item_tensor(const PtContext& ctx, const PtValue& v, DataType dtype) {
    if (v.kind == PtValue::Tensor) {
        if (ctx.rank(v.tensor) != 0) {
            ctx.error() << "a list of tensors of rank " << ctx.rank(v.tensor)
                        << " cannot be made a tensor (only numbers and 0-D tensors)";
        }
        return cast_to(ctx, v.tensor, dtype);
    }
    if (!v.is_number()) ctx.error() << "cannot make a tensor of a " << kind_name(v.kind);
    if (!v.scalar.defined()) return cast_to(ctx, v.tensor, dtype);
    PrimExpr s = simplify(v.scalar);
    if (const int64_t* c = as_const_int(s)) {
        return cast_to(ctx, ctx.constant_scalar(DataType::int64(), double(*c)), dtype);
    }
    if (const auto* f = s.as<FloatImm>()) {
        return cast_to(ctx, ctx.constant_scalar(DataType::float64(), f->value), dtype);
    }
    return cast_to(
        ctx, ops::make_shape_tensor({cast(DataType::int64(), s)}, {}, DataType::int64(), ctx.loc()),
        dtype);
}

// The element type a list of numbers makes (float if any is, bool if all are, else int64).
DataType list_dtype(const PtValue& v) {
    if (v.kind != PtValue::List && v.kind != PtValue::Tuple) return number_kind_dtype(v);
    bool any_float = false, all_bool = !v.items.empty();
    for (const auto& item : v.items) {
        DataType t = list_dtype(item);
        any_float = any_float || t.is_floating();
        all_bool = all_bool && t.is_bool();
    }
    if (any_float) return DataType::float32();
    return all_bool ? DataType::bool_() : DataType::int64();
}

// A (nested) list of numbers as a tensor: each level stacks its items along a new axis 0.
Expr list_tensor(const PtContext& ctx, const PtValue& v, DataType dtype) {
    if (v.kind != PtValue::List && v.kind != PtValue::Tuple) return item_tensor(ctx, v, dtype);
    if (v.items.empty()) ctx.error() << "an empty list cannot be made a tensor";
    std::vector<Expr> rows;
    for (const auto& item : v.items)
        rows.push_back(expand_dims(ctx, list_tensor(ctx, item, dtype), 0));
    if (rows.size() == 1) return rows[0];
    auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
    a->axis = 0;
    return ctx.call("concatenate", rows, attrs);
}

// The value of an import-time number operand, for ranges; nullopt when not a constant.
std::optional<double> constant_number(const PtContext& ctx, size_t i) {
    const PtValue& v = ctx.input(i);
    if (v.kind == PtValue::Tensor && constant_data(v.tensor).defined()) {
        return ctx.const_scalar(v.tensor, "a bound");
    }
    if (!v.is_import_time()) return std::nullopt;
    PrimExpr s = simplify(v.scalar);
    if (const int64_t* c = as_const_int(s)) return static_cast<double>(*c);
    if (const auto* f = s.as<FloatImm>()) return f->value;
    return std::nullopt;
}

bool is_integral(const PtValue& v) {
    if (v.kind == PtValue::Tensor)
        return !v.tensor->type.as<graph::TensorType>()->dtype.is_floating();
    return v.kind == PtValue::Int || v.kind == PtValue::Bool;
}

// A range start + i * step, i below `length`, computed in `work` and given as `dtype`.
Expr range(const PtContext& ctx, const PrimExpr& length, Expr start, Expr step, DataType work,
           DataType dtype) {
    auto [attrs, a] = new_attrs<ops::ArangeAttrs>();
    a->length = {simplify(length)};
    Expr r = ctx.call("arange", {cast_to(ctx, start, work), cast_to(ctx, step, work)}, attrs);
    return cast_to(ctx, r, dtype);
}

// A 1-D constant of `dtype` from double values.
Expr constant_values(const PtContext& ctx, const std::vector<double>& values, DataType dtype) {
    runtime::NDArray a = runtime::NDArray::empty({static_cast<int64_t>(values.size())},
                                                 graph::dl_dtype_of(DataType::float64()));
    a.copy_from(values);
    return cast_to(ctx, ctx.constant(a), dtype);
}

}  // namespace

// aten::zeros / ones / empty(size, dtype, layout, device, pin_memory[, memory_format]) and
// full(size, fill_value, dtype, ...).
PtValues convert_full(PtContext& ctx) {
    const std::string& k = ctx.kind();
    Sizes dims = sizes_operand(ctx, 0);
    if (k == "aten::full") {
        DataType fallback = number_kind_dtype(ctx.input(1));
        DataType dt = creation_dtype(ctx, dtype_index(ctx, 6, 2), fallback);
        return {PtValue::of_tensor(filled_sizes(ctx, dims, ctx.input(1), dt))};
    }
    size_t at = dtype_index(ctx, k == "aten::empty" ? 6 : 5, 1);
    DataType dt = creation_dtype(ctx, at, DataType::float32());
    return {PtValue::of_tensor(
        filled_sizes(ctx, dims, PtValue::of_int(k == "aten::ones" ? 1 : 0), dt))};
}

// aten::zeros_like / ones_like / empty_like(x, dtype, ...), full_like(x, fill_value, dtype, ...)
// and fill(x, value), zero(x): the shape (and, by default, the type) of x.
PtValues convert_full_like(PtContext& ctx) {
    const std::string& k = ctx.kind();
    Expr x = ctx.tensor(0);
    DataType own = ctx.tensor_type(x, "the input").dtype;
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    if (k == "aten::full_like" || k == "aten::fill") {
        DataType dt = k == "aten::fill" ? own : creation_dtype(ctx, 2, own);
        return {PtValue::of_tensor(filled(ctx, dims, ctx.input(1), dt))};
    }
    DataType dt = k == "aten::zero" ? own : creation_dtype(ctx, 1, own);
    PtValue value = PtValue::of_int(k == "aten::ones_like" ? 1 : 0);
    return {PtValue::of_tensor(filled(ctx, dims, value, dt))};
}

// aten::new_zeros / new_ones / new_empty(x, size, dtype, ...), new_full(x, size, value, ...):
// x's type unless dtype is given.
PtValues convert_new_full(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType own = ctx.tensor_type(x, "the input").dtype;
    Sizes dims = sizes_operand(ctx, 1);
    if (ctx.kind() == "aten::new_full") {
        return {
            PtValue::of_tensor(filled_sizes(ctx, dims, ctx.input(2), creation_dtype(ctx, 3, own)))};
    }
    DataType dt = creation_dtype(ctx, 2, own);
    PtValue value = PtValue::of_int(ctx.kind() == "aten::new_ones" ? 1 : 0);
    return {PtValue::of_tensor(filled_sizes(ctx, dims, value, dt))};
}

// aten::copy(x, src, non_blocking): src broadcast to x's shape, in x's type.
PtValues convert_copy(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    return {
        PtValue::of_tensor(broadcast_dims(ctx, cast_to(ctx, ctx.tensor(1), dt), dims_of(ctx, x)))};
}

// aten::arange(end, ...), arange(start, end, ...), arange(start, end, step, ...): the bounds may
// be constants, symbolic sizes or (integers) numbers known only at run time.
PtValues convert_arange(PtContext& ctx) {
    size_t n = ctx.num_inputs();
    if (n < 5 || n > 7) ctx.error() << "an arange overload of " << n << " operands is unknown";
    size_t bounds = n - 4;  // end | start, end | start, end, step
    size_t s_at = bounds == 1 ? SIZE_MAX : 0, e_at = bounds == 1 ? 0 : 1;
    size_t d_at = bounds == 3 ? 2 : SIZE_MAX;
    bool integral = is_integral(ctx.input(e_at));
    if (s_at != SIZE_MAX) integral = integral && is_integral(ctx.input(s_at));
    if (d_at != SIZE_MAX) integral = integral && is_integral(ctx.input(d_at));
    DataType dt = creation_dtype(ctx, bounds, integral ? DataType::int64() : DataType::float32());
    auto operand = [&](size_t at, int64_t missing) {
        return at == SIZE_MAX ? ctx.constant_scalar(DataType::int64(), double(missing))
                              : ctx.tensor(at);
    };
    Expr start = operand(s_at, 0), end = operand(e_at, 0), step = operand(d_at, 1);
    if (!integral) {
        std::optional<double> s = s_at == SIZE_MAX ? 0.0 : constant_number(ctx, s_at);
        std::optional<double> e = constant_number(ctx, e_at);
        std::optional<double> d = d_at == SIZE_MAX ? 1.0 : constant_number(ctx, d_at);
        if (!s || !e || !d) {
            ctx.error() << "arange with floating-point bounds computed by the model is not "
                           "supported (only constants)";
        }
        if (*d == 0) ctx.error() << "arange: step must be nonzero";
        double steps = std::ceil((*e - *s) / *d);
        if (steps < 0) ctx.error() << "arange: the bounds are inconsistent with the step sign";
        if (!(steps < kMaxElements)) {
            ctx.error() << "arange from " << *s << " to " << *e << " by " << *d << " has " << steps
                        << " elements, too many";
        }
        // PyTorch computes in double; the kernel does too, then rounds to the result's type.
        Expr s64 = ctx.constant_scalar(DataType::float64(), *s);
        Expr d64 = ctx.constant_scalar(DataType::float64(), *d);
        return {PtValue::of_tensor(
            range(ctx, i64(static_cast<int64_t>(steps)), s64, d64, DataType::float64(), dt))};
    }
    std::vector<ShapeValues> v;
    for (const Expr* t : {&start, &end, &step}) {
        v.push_back(shape_values(ctx, cast_to(ctx, *t, DataType::int64()), "an arange bound"));
        if (v.back().values.size() != 1) ctx.error() << "an arange bound must be one value";
    }
    PrimExpr b = v[0].values[0], e = v[1].values[0], d = v[2].values[0];
    if (const std::optional<int64_t> c = known_int(d); c && *c == 0) {
        ctx.error() << "arange: step must be nonzero";
    }
    // ceil((e - b) / d) == -floor((b - e) / d), for either sign of d; an arange from 0 by 1 is
    // its end (a size, never negative).
    PrimExpr length =
        is_zero(simplify(b)) && is_one(simplify(d)) ? e : max(i64(0) - floordiv(b - e, d), i64(0));
    std::vector<PrimExpr> checks;
    if (!known_int(d)) checks.push_back(ne(d, i64(0)));
    Expr bound = bind_all_shape_values(ctx, cast_to(ctx, start, DataType::int64()), v, checks);
    DataType work = dt.is_floating() ? DataType::float64() : DataType::int64();
    return {PtValue::of_tensor(range(ctx, length, bound, step, work, dt))};
}

// aten::linspace(start, end, steps, dtype, ...) and logspace(start, end, steps, base, dtype,
// ...), of import-time bounds: constants computed as PyTorch does (from both ends).
PtValues convert_linspace(PtContext& ctx) {
    bool log = ctx.kind() == "aten::logspace";
    std::optional<double> s = constant_number(ctx, 0), e = constant_number(ctx, 1);
    if (!s || !e) ctx.error() << "the bounds must be known at import time";
    int64_t steps = ctx.int_arg(2);
    if (steps < 0) ctx.error() << "number of steps must be non-negative";
    // The values are made at import time (a constant of the model).
    if (steps > (int64_t{1} << 24)) ctx.error() << steps << " steps are too many";
    double base = log ? ctx.float_arg(3) : 1.0;
    DataType dt = creation_dtype(ctx, log ? 4 : 3, DataType::float32());
    std::vector<double> values(static_cast<size_t>(steps));
    double delta = steps > 1 ? (*e - *s) / static_cast<double>(steps - 1) : 0.0;
    int64_t half = steps / 2;
    for (int64_t i = 0; i < steps; ++i) {
        double v = i < half ? *s + delta * static_cast<double>(i)
                            : *e - delta * static_cast<double>(steps - 1 - i);
        values[static_cast<size_t>(i)] = log ? std::pow(base, v) : v;
    }
    return {PtValue::of_tensor(constant_values(ctx, values, dt))};
}

// aten::eye(n, ...) and eye(n, m, ...): ones on the diagonal; n and m may be symbolic.
PtValues convert_eye(PtContext& ctx) {
    bool square = ctx.num_inputs() == 5;
    PrimExpr n = ctx.int_expr(0), m = square ? n : ctx.int_expr(1);
    for (const auto& d : {n, m}) {
        if (const std::optional<int64_t> v = known_int(d); v && *v < 0) {
            ctx.error() << "eye: the sizes must be non-negative, got " << *v;
        }
    }
    DataType dt = creation_dtype(ctx, square ? 1 : 2, DataType::float32());
    Expr zero = ctx.constant_scalar(DataType::int64(), 0);
    Expr rows = expand_dims(ctx, iota(ctx, n, zero), 1);
    Expr columns = iota(ctx, m, zero);
    return {PtValue::of_tensor(cast_to(ctx, ctx.call("equal", {rows, columns}), dt))};
}

// aten::tensor(data, dtype, device, requires_grad), as_tensor(data, dtype, device),
// scalar_tensor(s, dtype, ...): a tensor of a (nested) list of numbers or of a number; of a
// tensor (as_tensor), that tensor cast.
PtValues convert_tensor(PtContext& ctx) {
    const PtValue& data = ctx.input(0);
    if (data.kind == PtValue::Tensor && ctx.kind() == "aten::tensor") {
        ctx.error() << "torch.tensor() of a tensor is not supported (use clone or detach)";
    }
    DataType fallback = data.kind == PtValue::Tensor
                            ? ctx.tensor_type(data.tensor, "the data").dtype
                            : list_dtype(data);
    DataType dt = creation_dtype(ctx, 1, fallback);
    if (data.kind == PtValue::Tensor) return {PtValue::of_tensor(cast_to(ctx, data.tensor, dt))};
    return {PtValue::of_tensor(list_tensor(ctx, data, dt))};
}

// aten::to in its overloads (dtype; device, dtype; other tensor; dtype=, layout=, device=; the
// prim_ forms), _to_copy(x, dtype, ...), type_as(x, other): a cast, or x itself. Devices and
// memory formats do not matter to a compiled model.
PtValues convert_to(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    const std::string& k = ctx.kind();
    std::optional<DataType> dt;
    if (k == "aten::type_as") {
        dt = ctx.tensor_type(ctx.tensor(1), "other").dtype;
    } else if (k == "aten::_to_copy") {
        dt = ctx.dtype_arg(1);
    } else {
        // Told apart by operand 1: other (a tensor), a device (dtype follows), a dtype, or None
        // (to(None, dtype, non_blocking, copy) has 5 operands; the others with None have no
        // dtype). A bool is prim_other's non_blocking.
        size_t n = ctx.num_inputs();
        const PtValue& a = n > 1 ? ctx.input(1) : ctx.input(0);
        if (n > 1 && a.kind == PtValue::Tensor) {
            dt = ctx.tensor_type(a.tensor, "other").dtype;
        } else if (n > 1 && (a.kind == PtValue::Device || (a.kind == PtValue::None && n == 5))) {
            dt = ctx.dtype_arg(2);
        } else if (n > 1 && a.kind == PtValue::Int) {
            dt = ctx.dtype_arg(1);
        } else if (n > 1 && a.kind == PtValue::Str) {
            ctx.error() << "to('" << a.str << "') is not supported";
        }
    }
    return {PtValue::of_tensor(dt ? cast_to(ctx, x, *dt) : x)};
}

// Random tensors (rand, randn, randint, normal, bernoulli, ...).
PtValues convert_random(PtContext& ctx) {
    ctx.error() << "random numbers are not supported: a compiled model is deterministic (draw "
                   "them outside the model and pass them as an input)";
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::frontend::pytorch
