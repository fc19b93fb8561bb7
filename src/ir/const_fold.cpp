#include "ir/const_fold.h"

#include <cmath>
#include <limits>

namespace anvil {

int64_t wrap_int(DataType t, int64_t value) {
    if (t.is_bool()) return value != 0 ? 1 : 0;
    int w = t.bits();
    if (w >= 64) return value;
    uint64_t bits = static_cast<uint64_t>(value);
    uint64_t mask = (uint64_t{1} << w) - 1;
    bits &= mask;
    if (t.is_int() && ((bits >> (w - 1)) & 1)) bits |= ~mask;
    return static_cast<int64_t>(bits);
}

namespace {

// Rounds to `mant_bits` explicit mantissa bits with exponent range down to `min_exp` (the
// smallest normal exponent) and overflow beyond `max_finite`; subnormals lose precision.
double round_to_format(double v, int mant_bits, int min_exp, double max_finite) {
    if (std::isnan(v) || std::isinf(v) || v == 0) return v;
    int e = 0;
    std::frexp(v, &e);  // v = m * 2^e with 0.5 <= |m| < 1, so the IEEE exponent is e - 1
    int exp = std::max(e - 1, min_exp);
    double quantum = std::ldexp(1.0, exp - mant_bits);
    double r = std::nearbyint(v / quantum) * quantum;  // the default mode rounds ties to even
    if (std::fabs(r) > max_finite) return v > 0 ? INFINITY : -INFINITY;
    return r;
}

}  // namespace

double round_float(DataType t, double value) {
    // bfloat16 through float32, as the code generator converts (a constant is a float32 one
    // first): rounding twice differs from once at float32 ties.
    if (t.is_bfloat()) {
        return round_to_format(static_cast<float>(value), 7, -126, 3.38953139e38);
    }
    switch (t.bits()) {
        case 16:
            return round_to_format(value, 10, -14, 65504.0);
        case 32:
            return static_cast<double>(static_cast<float>(value));
        default:
            return value;
    }
}

bool const_value(const PrimExpr& e, double* out) {
    if (auto* i = e.as<IntImm>()) {
        *out = e.dtype().is_uint() ? static_cast<double>(static_cast<uint64_t>(i->value))
                                   : static_cast<double>(i->value);
        return true;
    }
    if (auto* f = e.as<FloatImm>()) {
        *out = f->value;
        return true;
    }
    return false;
}

namespace {

PrimExpr fold_int(ExprKind kind, DataType t, int64_t x, int64_t y) {
    bool is_unsigned = t.is_uint() || t.is_bool();
    uint64_t ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
    auto num = [&](int64_t v) { return make_int(t, wrap_int(t, v)); };
    auto wrap128 = [&](__int128 v) { return num(static_cast<int64_t>(static_cast<uint64_t>(v))); };
    auto cmp = [&](bool r) { return make_bool(r); };
    switch (kind) {
        case ExprKind::Add:
            return num(static_cast<int64_t>(ux + uy));
        case ExprKind::Sub:
            return num(static_cast<int64_t>(ux - uy));
        case ExprKind::Mul:
            return num(static_cast<int64_t>(ux * uy));
        case ExprKind::Div:
        case ExprKind::Mod:
        case ExprKind::FloorDiv:
        case ExprKind::FloorMod: {
            if (y == 0) return {};
            if (is_unsigned) {
                bool div = kind == ExprKind::Div || kind == ExprKind::FloorDiv;
                return num(static_cast<int64_t>(div ? ux / uy : ux % uy));
            }
            __int128 a = x, b = y;
            __int128 q = a / b, r = a % b;  // truncating
            if (kind == ExprKind::Div) return wrap128(q);
            if (kind == ExprKind::Mod) return wrap128(r);
            if (r != 0 && ((r < 0) != (b < 0))) {
                q -= 1;
                r += b;
            }
            return wrap128(kind == ExprKind::FloorDiv ? q : r);
        }
        case ExprKind::Min:
            return num(is_unsigned ? static_cast<int64_t>(std::min(ux, uy)) : std::min(x, y));
        case ExprKind::Max:
            return num(is_unsigned ? static_cast<int64_t>(std::max(ux, uy)) : std::max(x, y));
        case ExprKind::EQ:
            return cmp(x == y);
        case ExprKind::NE:
            return cmp(x != y);
        case ExprKind::LT:
            return cmp(is_unsigned ? ux < uy : x < y);
        case ExprKind::LE:
            return cmp(is_unsigned ? ux <= uy : x <= y);
        case ExprKind::GT:
            return cmp(is_unsigned ? ux > uy : x > y);
        case ExprKind::GE:
            return cmp(is_unsigned ? ux >= uy : x >= y);
        case ExprKind::And:
            return cmp(x && y);
        case ExprKind::Or:
            return cmp(x || y);
        default:
            return {};
    }
}

PrimExpr fold_float(ExprKind kind, DataType t, double x, double y) {
    auto num = [&](double v) { return make_float(t, round_float(t, v)); };
    auto cmp = [&](bool r) { return make_bool(r); };
    switch (kind) {
        case ExprKind::Add:
            return num(x + y);
        case ExprKind::Sub:
            return num(x - y);
        case ExprKind::Mul:
            return num(x * y);
        case ExprKind::Div:
            if (y == 0) return {};
            return num(x / y);
        case ExprKind::Mod:
            if (y == 0) return {};
            return num(std::fmod(x, y));
        case ExprKind::FloorDiv:
            if (y == 0) return {};
            return num(std::floor(x / y));
        case ExprKind::FloorMod:
            if (y == 0) return {};
            return num(x - std::floor(x / y) * y);
        case ExprKind::Min:
            return num(std::fmin(x, y));  // minnum: a NaN operand is ignored
        case ExprKind::Max:
            return num(std::fmax(x, y));
        case ExprKind::EQ:
            return cmp(x == y);
        case ExprKind::NE:
            return cmp(x != y);
        case ExprKind::LT:
            return cmp(x < y);
        case ExprKind::LE:
            return cmp(x <= y);
        case ExprKind::GT:
            return cmp(x > y);
        case ExprKind::GE:
            return cmp(x >= y);
        default:
            return {};
    }
}

}  // namespace

PrimExpr fold_binary(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    if (!a.defined() || !b.defined() || a.dtype() != b.dtype()) return {};
    auto* ia = a.as<IntImm>();
    auto* ib = b.as<IntImm>();
    if (ia && ib) return fold_int(kind, a.dtype(), ia->value, ib->value);
    auto* fa = a.as<FloatImm>();
    auto* fb = b.as<FloatImm>();
    // Each operand as its type holds it (see fold_cast).
    if (fa && fb) {
        return fold_float(kind, a.dtype(), round_float(a.dtype(), fa->value),
                          round_float(a.dtype(), fb->value));
    }
    return {};
}

PrimExpr fold_not(const PrimExpr& a) {
    if (auto* i = a.as<IntImm>()) return make_bool(i->value == 0);
    return {};
}

PrimExpr fold_cast(DataType t, const PrimExpr& value) {
    if (!t.is_scalar()) return {};
    DataType from = value.dtype();
    if (auto* i = value.as<IntImm>()) {
        if (t.is_bool()) return make_bool(i->value != 0);
        if (t.is_integer()) return make_int(t, wrap_int(t, i->value));
        if (t.is_floating()) {
            double v = from.is_uint() ? static_cast<double>(static_cast<uint64_t>(i->value))
                                      : static_cast<double>(i->value);
            return make_float(t, round_float(t, v));
        }
        return {};
    }
    if (auto* f = value.as<FloatImm>()) {
        // The value the code would convert: the constant in its own type (a FloatImm made from
        // a double holds it unrounded).
        double v = round_float(from, f->value);
        if (t.is_floating()) return make_float(t, round_float(t, v));
        if (t.is_bool()) return make_bool(v != 0);  // NaN is nonzero
        if (!t.is_integer() || std::isnan(v)) return {};
        double tr = std::trunc(v);
        // As the code generator converts (codegen_expr.cpp): integers narrower than 32 bits
        // through int32, uint32 through int64, wrapping; out of the range converted through, the
        // conversion is undefined: left for the target to decide.
        const int through = t.bits() < 32 ? 32 : t.bits() == 32 && t.is_uint() ? 64 : 0;
        if (through) {
            const double half = std::ldexp(1.0, through - 1);
            if (tr < -half || tr >= half) return {};
            return make_int(t, wrap_int(t, static_cast<int64_t>(tr)));
        }
        double lo = t.is_uint() ? 0.0 : -std::ldexp(1.0, t.bits() - 1);
        double hi = t.is_uint() ? std::ldexp(1.0, t.bits()) : std::ldexp(1.0, t.bits() - 1);
        if (tr < lo || tr >= hi) return {};
        if (t.is_uint())
            return make_int(t, wrap_int(t, static_cast<int64_t>(static_cast<uint64_t>(tr))));
        return make_int(t, static_cast<int64_t>(tr));
    }
    return {};
}

}  // namespace anvil
