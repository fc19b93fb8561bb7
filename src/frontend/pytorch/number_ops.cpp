// Import-time number arithmetic (number_ops.h).
#include "frontend/pytorch/number_ops.h"

#include <cmath>
#include <limits>

#include "ir/analyzer.h"
#include "ops/shape_tensor.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

DataType scalar_dtype(PtValue::Kind kind) {
    if (kind == PtValue::Float) return DataType::float64();
    if (kind == PtValue::Bool) return DataType::bool_();
    return DataType::int64();
}

// A constant number: an int (ints and bools) or a double.
struct Const {
    bool is_float = false;
    int64_t i = 0;
    double f = 0;
    double value() const { return is_float ? f : static_cast<double>(i); }
};

std::optional<Const> constant_of(const PrimExpr& e) {
    if (const int64_t* i = as_const_int(e)) return Const{false, *i, 0};
    if (const auto* f = e.as<FloatImm>()) return Const{true, 0, f->value};
    return std::nullopt;
}

PtValue int_value(int64_t v) {
    return PtValue::of_int(v);
}
PtValue float_value(double v) {
    return PtValue::of_float(v);
}
PtValue bool_value(bool v) {
    return PtValue::of_bool(v);
}

// TorchScript's ints are int64 and wrap around; C++'s signed overflow is undefined.
int64_t wrap(uint64_t v) {
    return static_cast<int64_t>(v);
}

int64_t floor_div(int64_t a, int64_t b) {
    if (b == -1) return wrap(0 - static_cast<uint64_t>(a));  // INT64_MIN / -1 wraps
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t floor_mod(int64_t a, int64_t b) {
    if (b == -1) return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

// Python's float // and %, which floor the quotient computed from fmod (so 2.5 // 0.3 is 8).
double float_floor_div(double x, double y) {
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0 && ((y < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return std::copysign(0.0, x / y);
    double floored = std::floor(div);
    if (div - floored > 0.5) floored += 1.0;
    return floored;
}

double float_mod(double x, double y) {
    double r = std::fmod(x, y);
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    if (r == 0) r = std::copysign(0.0, y);
    return r;
}

int64_t int_pow(int64_t base, int64_t exp) {
    uint64_t result = 1, b = static_cast<uint64_t>(base);
    for (; exp > 0; exp >>= 1) {
        if (exp & 1) result *= b;
        b *= b;
    }
    return wrap(result);
}

PtValue constant_binary(const PtContext& ctx, NumOp op, const Const& a, const Const& b, bool fl,
                        bool both_bool) {
    double x = a.value(), y = b.value();
    auto nonzero_divisor = [&] {
        if (y == 0) ctx.error() << "division by zero (" << x << " by " << y << ")";
    };
    auto ua = static_cast<uint64_t>(a.i), ub = static_cast<uint64_t>(b.i);
    switch (op) {
        case NumOp::Add:
            return fl ? float_value(x + y) : int_value(wrap(ua + ub));
        case NumOp::Sub:
            return fl ? float_value(x - y) : int_value(wrap(ua - ub));
        case NumOp::Mul:
            return fl ? float_value(x * y) : int_value(wrap(ua * ub));
        case NumOp::Div:
            nonzero_divisor();
            return float_value(x / y);
        case NumOp::FloorDiv:
            nonzero_divisor();
            return fl ? float_value(float_floor_div(x, y)) : int_value(floor_div(a.i, b.i));
        case NumOp::Mod:
            nonzero_divisor();
            return fl ? float_value(float_mod(x, y)) : int_value(floor_mod(a.i, b.i));
        case NumOp::Fmod:
            nonzero_divisor();
            return float_value(std::fmod(x, y));
        case NumOp::Pow:
            if (!fl && b.i >= 0) return int_value(int_pow(a.i, b.i));
            return float_value(std::pow(x, y));
        case NumOp::Min:
            return fl ? float_value(std::fmin(x, y)) : int_value(std::min(a.i, b.i));
        case NumOp::Max:
            return fl ? float_value(std::fmax(x, y)) : int_value(std::max(a.i, b.i));
        case NumOp::Eq:
            return bool_value(fl ? x == y : a.i == b.i);
        case NumOp::Ne:
            return bool_value(fl ? x != y : a.i != b.i);
        case NumOp::Lt:
            return bool_value(fl ? x < y : a.i < b.i);
        case NumOp::Le:
            return bool_value(fl ? x <= y : a.i <= b.i);
        case NumOp::Gt:
            return bool_value(fl ? x > y : a.i > b.i);
        case NumOp::Ge:
            return bool_value(fl ? x >= y : a.i >= b.i);
        case NumOp::And:
        case NumOp::Or:
        case NumOp::Xor: {
            if (fl) ctx.error() << "a bitwise operation on a float";
            int64_t r = op == NumOp::And  ? (a.i & b.i)
                        : op == NumOp::Or ? (a.i | b.i)
                                          : (a.i ^ b.i);
            return both_bool ? bool_value(r != 0) : int_value(r);
        }
        case NumOp::LeftShift:
        case NumOp::RightShift: {
            // TorchScript's ints are int64: bits shifted past them are lost, as the shift ops
            // lose them; Python refuses negative amounts.
            if (fl) ctx.error() << "a shift of a float";
            if (b.i < 0) ctx.error() << "negative shift count " << b.i;
            if (op == NumOp::LeftShift) return int_value(b.i >= 64 ? 0 : wrap(ua << b.i));
            return int_value(b.i >= 64 ? (a.i < 0 ? -1 : 0) : a.i >> b.i);
        }
    }
    ANVIL_UNREACHABLE();
}

std::optional<PtValue> symbolic_binary(const PtContext& ctx, NumOp op, const PrimExpr& x,
                                       const PrimExpr& y, bool fl, bool both_bool) {
    if (auto c = constant_of(y);
        c && c->value() == 0 && (op == NumOp::Div || op == NumOp::FloorDiv || op == NumOp::Mod)) {
        ctx.error() << "division by zero (" << x << " by 0)";
    }
    if (both_bool) {
        if (op == NumOp::And) return make_number(PtValue::Bool, x && y);
        if (op == NumOp::Or) return make_number(PtValue::Bool, x || y);
        if (op == NumOp::Xor) return make_number(PtValue::Bool, ne(x, y));
    }
    DataType t = fl ? DataType::float64() : DataType::int64();
    PtValue::Kind kind = fl ? PtValue::Float : PtValue::Int;
    PrimExpr a = cast(t, x), b = cast(t, y);
    switch (op) {
        case NumOp::Add:
            return make_number(kind, a + b);
        case NumOp::Sub:
            return make_number(kind, a - b);
        case NumOp::Mul:
            return make_number(kind, a * b);
        case NumOp::Div:
            return make_number(PtValue::Float,
                               cast(DataType::float64(), a) / cast(DataType::float64(), b));
        case NumOp::FloorDiv:
            if (fl) return std::nullopt;
            return make_number(kind, floordiv(a, b));
        case NumOp::Mod:
            if (fl) return std::nullopt;
            return make_number(kind, floormod(a, b));
        case NumOp::Min:
            return make_number(kind, min(a, b));
        case NumOp::Max:
            return make_number(kind, max(a, b));
        case NumOp::Eq:
            return make_number(PtValue::Bool, eq(a, b));
        case NumOp::Ne:
            return make_number(PtValue::Bool, ne(a, b));
        case NumOp::Lt:
            return make_number(PtValue::Bool, a < b);
        case NumOp::Le:
            return make_number(PtValue::Bool, a <= b);
        case NumOp::Gt:
            return make_number(PtValue::Bool, a > b);
        case NumOp::Ge:
            return make_number(PtValue::Bool, a >= b);
        default:
            return std::nullopt;  // pow, fmod, bitwise ops of symbolic ints
    }
}

// floor or ceil of a symbolic float that is an int divided by an int (`h / 7`): the integer
// division that gives it exactly. Undefined for any other float.
PrimExpr rounded_quotient(const PrimExpr& e, bool ceil) {
    auto as_int = [](const PrimExpr& v) -> PrimExpr {
        if (const auto* c = v.as<Cast>(); c && !c->value.dtype().is_floating()) {
            return cast(DataType::int64(), c->value);
        }
        if (const auto* f = v.as<FloatImm>(); f && f->value == std::trunc(f->value) &&
                                              std::fabs(f->value) < 9.0e15 && f->value != 0) {
            return make_int(DataType::int64(), static_cast<int64_t>(f->value));
        }
        return PrimExpr();
    };
    if (PrimExpr whole = as_int(e); whole.defined()) return whole;
    const auto* div = e.as<Div>();
    if (!div) return PrimExpr();
    PrimExpr n = as_int(div->a), d = as_int(div->b);
    if (!n.defined() || !d.defined()) return PrimExpr();
    return ceil ? -floordiv(-n, d) : floordiv(n, d);
}

double constant_unary(const PtContext& ctx, NumFn fn, double x) {
    switch (fn) {
        case NumFn::Sqrt:
            return std::sqrt(x);
        case NumFn::Exp:
            return std::exp(x);
        case NumFn::Expm1:
            return std::expm1(x);
        case NumFn::Log:
            return std::log(x);
        case NumFn::Log2:
            return std::log2(x);
        case NumFn::Log10:
            return std::log10(x);
        case NumFn::Log1p:
            return std::log1p(x);
        case NumFn::Erf:
            return std::erf(x);
        case NumFn::Erfc:
            return std::erfc(x);
        case NumFn::Sin:
            return std::sin(x);
        case NumFn::Cos:
            return std::cos(x);
        case NumFn::Tan:
            return std::tan(x);
        case NumFn::Asin:
            return std::asin(x);
        case NumFn::Acos:
            return std::acos(x);
        case NumFn::Atan:
            return std::atan(x);
        case NumFn::Sinh:
            return std::sinh(x);
        case NumFn::Cosh:
            return std::cosh(x);
        case NumFn::Tanh:
            return std::tanh(x);
        case NumFn::Asinh:
            return std::asinh(x);
        case NumFn::Acosh:
            return std::acosh(x);
        case NumFn::Atanh:
            return std::atanh(x);
        case NumFn::Round:
            return std::nearbyint(x);  // half to even, as Python's round
        default:
            break;
    }
    ctx.error() << "is not a math function of numbers";
    ANVIL_UNREACHABLE();
}

}  // namespace

PtValue make_number(PtValue::Kind kind, PrimExpr e) {
    PtValue v = PtValue::of_int(simplify(cast(scalar_dtype(kind), std::move(e))));
    v.kind = kind;
    return v;
}

std::optional<PtValue> known_number(const PtContext& ctx, const PtValue& v) {
    if (v.is_import_time()) return v;
    if (v.kind != PtValue::Tensor || !v.tensor.defined()) return std::nullopt;
    const auto& type = ctx.tensor_type(v.tensor, "the operand");
    if (type.ndim() != 0) return std::nullopt;
    PtValue::Kind kind = type.dtype.is_bool()       ? PtValue::Bool
                         : type.dtype.is_floating() ? PtValue::Float
                                                    : PtValue::Int;
    if (const auto* st = ops::shape_tensor_attrs(v.tensor); st && st->values.size() == 1) {
        return make_number(kind, st->values[0]);
    }
    runtime::NDArray data = constant_data(v.tensor);
    if (!data.defined() ||
        !(type.dtype.is_floating() || type.dtype.is_integer() || type.dtype.is_bool())) {
        return std::nullopt;
    }
    if (kind == PtValue::Float) {
        if (type.dtype != DataType::float32() && type.dtype != DataType::float64()) {
            return std::nullopt;  // float16: NodeBuilder reads float32/64 constants only
        }
        return float_value(ctx.const_scalar(v.tensor, "the operand"));
    }
    int64_t i = ctx.const_ints(v.tensor, "the operand")[0];
    return kind == PtValue::Bool ? bool_value(i != 0) : int_value(i);
}

std::optional<PtValue> number_binary(const PtContext& ctx, NumOp op, const PtValue& a,
                                     const PtValue& b) {
    bool fl = a.kind == PtValue::Float || b.kind == PtValue::Float;
    bool both_bool = a.kind == PtValue::Bool && b.kind == PtValue::Bool;
    PrimExpr x = simplify(a.scalar), y = simplify(b.scalar);
    auto ca = constant_of(x), cb = constant_of(y);
    if (ca && cb) {
        // An int that is a float's value still computes as a float (3 // 2.0 is 1.0).
        if (a.kind == PtValue::Float) ca->is_float = true, ca->f = ca->value();
        if (b.kind == PtValue::Float) cb->is_float = true, cb->f = cb->value();
        return constant_binary(ctx, op, *ca, *cb, fl, both_bool);
    }
    return symbolic_binary(ctx, op, x, y, fl, both_bool);
}

std::optional<PtValue> number_unary(const PtContext& ctx, NumFn fn, const PtValue& a) {
    PrimExpr x = simplify(a.scalar);
    bool fl = a.kind == PtValue::Float;
    PtValue::Kind same = a.kind == PtValue::Bool ? PtValue::Int : a.kind;
    auto c = constant_of(x);
    switch (fn) {
        case NumFn::Neg:
            return make_number(same, -cast(scalar_dtype(same), x));
        case NumFn::Abs: {
            PrimExpr v = cast(scalar_dtype(same), x);
            if (c)
                return make_number(same, fl ? make_float(DataType::float64(), std::fabs(c->value()))
                                            : make_int(DataType::int64(), c->i < 0 ? -c->i : c->i));
            return make_number(same, select(v < make_const(v.dtype(), 0), -v, v));
        }
        case NumFn::Sign: {
            PrimExpr v = cast(scalar_dtype(same), x), zero = make_const(v.dtype(), 0);
            return make_number(same, select(v > zero, make_const(v.dtype(), 1),
                                            select(v < zero, make_const(v.dtype(), -1), zero)));
        }
        case NumFn::Not:
            return make_number(PtValue::Bool, !cast(DataType::bool_(), x));
        case NumFn::Floor:
        case NumFn::Ceil:
        case NumFn::Trunc: {
            if (!fl) return make_number(PtValue::Int, x);
            if (c) {
                double v = c->value();
                // Beyond +-2^63 (or not finite) the value has no int64.
                if (!(std::fabs(v) < 9.2e18)) ctx.error() << "cannot convert " << v << " to an int";
                v = fn == NumFn::Floor  ? std::floor(v)
                    : fn == NumFn::Ceil ? std::ceil(v)
                                        : std::trunc(v);
                return int_value(static_cast<int64_t>(v));
            }
            if (fn == NumFn::Trunc) return std::nullopt;
            PrimExpr q = rounded_quotient(x, fn == NumFn::Ceil);
            if (!q.defined()) return std::nullopt;
            return make_number(PtValue::Int, q);
        }
        default:
            break;
    }
    if (!c) {
        // Rounding an int is the int; other math of a symbolic size is left to the graph.
        if (fn == NumFn::Round && !fl) return make_number(PtValue::Float, x);
        return std::nullopt;
    }
    return float_value(constant_unary(ctx, fn, c->value()));
}

PtValue number_as(const PtValue& v, PtValue::Kind kind) {
    if (v.kind == kind || !v.is_import_time()) return v;
    if (kind == PtValue::Bool) {
        return make_number(kind, ne(v.scalar, make_const(v.scalar.dtype(), 0)));
    }
    return make_number(kind, v.scalar);
}

PtValue::Kind output_number_kind(const PtContext& ctx, PtValue::Kind fallback) {
    if (ctx.node().outputs.empty()) return fallback;
    switch (ctx.output_type(0).kind) {
        case TsType::Int:
            return PtValue::Int;
        case TsType::Float:
            return PtValue::Float;
        case TsType::Bool:
            return PtValue::Bool;
        default:
            return fallback;
    }
}

Expr number_tensor_of(const PtContext& ctx, const PtValue& v, DataType dtype) {
    PrimExpr s = simplify(v.scalar);
    if (auto c = constant_of(s)) return scalar_constant(ctx, dtype, c->value());
    if (s.dtype().is_floating()) return Expr();
    Expr t = ops::make_shape_tensor({cast(DataType::int64(), s)}, {}, DataType::int64(), ctx.loc());
    return cast_to(ctx, t, dtype);
}

Expr scalar_constant(const PtContext& ctx, DataType dtype, double value) {
    bool common = dtype == DataType::float32() || dtype == DataType::float64() ||
                  dtype == DataType::int64() || dtype == DataType::int32() || dtype.is_bool() ||
                  dtype == DataType::uint(8) || dtype == DataType::int_(8);
    if (common) return ctx.constant_scalar(dtype, value);
    DataType via = dtype.is_floating() ? DataType::float32() : DataType::int64();
    return cast_to(ctx, ctx.constant_scalar(via, value), dtype);
}

}  // namespace anvil::frontend::pytorch
