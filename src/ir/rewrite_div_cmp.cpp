// Simplifier rules that need bounds: division and modulo by constants, min/max, comparisons.
// The signed-integer rules reason in ideal integers (see analyzer.h); unsigned ones only use
// bounds of whole operands, which stay sound under wrapping.
#include <numeric>

#include "ir/bound_arith.h"
#include "ir/const_fold.h"
#include "ir/rewrite_simplifier.h"
#include "ir/structural_equal.h"

namespace anvil {

namespace {

constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kPosInf = ConstIntBound::kPosInf;

int64_t floor_div(int64_t x, int64_t c) {
    int64_t q = x / c;
    return (x % c != 0 && ((x < 0) != (c < 0))) ? q - 1 : q;
}

int64_t floor_mod(int64_t x, int64_t c) {
    return x - floor_div(x, c) * c;
}

bool finite(const ConstIntBound& b) {
    return b.min != kNegInf && b.max != kPosInf;
}

// Two's-complement negation without undefined behaviour at INT64_MIN.
int64_t negate(int64_t x) {
    return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
}

int64_t abs_value(int64_t x) {
    return x < 0 ? negate(x) : x;
}

// True when c1 * c2 is representable in t.
bool product_fits(DataType t, int64_t c1, int64_t c2) {
    __int128 p = static_cast<__int128>(c1) * c2;
    ConstIntBound range = type_bound(t);
    return p >= range.min && p <= range.max;
}

// Comparisons of a floor quotient by a positive constant with a constant, as comparisons of the
// dividend (exact in ideal integers; signed types, whose wrap-around the simplifier excludes):
//   x div c < k   ->  x < k * c          k < x div c   ->  (k + 1) * c <= x
//   x div c <= k  ->  x < (k + 1) * c    k <= x div c  ->  k * c <= x
// A concatenation's "which input" test on a fused index then stays a comparison of the index,
// which vectorizes without a division per lane. Undefined when the rule does not apply.
PrimExpr compare_floordiv(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    DataType t = a.dtype();
    if (!t.is_int() || (kind != ExprKind::LT && kind != ExprKind::LE)) return PrimExpr();
    bool div_left = a.is<FloorDiv>();
    const FloorDiv* div = div_left ? a.as<FloorDiv>() : b.as<FloorDiv>();
    const int64_t* c = div ? as_const_int(div->b) : nullptr;
    const int64_t* k = as_const_int(div_left ? b : a);
    if (!c || *c <= 0 || !k || *k == kPosInf || *k == kNegInf) return PrimExpr();
    // The dividend's bound: k + 1 (and the products) are exact when the bound is.
    int64_t bound_k = div_left == (kind == ExprKind::LT) ? *k : *k + 1;
    if (!product_fits(t, bound_k, *c) || *k == type_bound(t).max) return PrimExpr();
    PrimExpr limit = make_int(t, bound_k * *c);
    if (div_left) return make_binary(ExprKind::LT, div->a, limit);  // x < limit
    return make_binary(ExprKind::LE, limit, div->a);                // limit <= x
}

}  // namespace

PrimExpr RewriteSimplifier::rewrite_div(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    DataType t = a.dtype();
    if (t.is_floating()) {
        if (kind == ExprKind::Div && b.as<FloatImm>() && b.as<FloatImm>()->value == 1.0) return a;
        return make_binary(kind, a, b);
    }
    const int64_t* cb = as_const_int(b);
    if (t.is_int() && !cb) return rewrite_div_by_extent(kind, a, b);
    if (!t.is_integer() || !cb) return make_binary(kind, a, b);
    int64_t c = *cb;
    bool is_div = kind == ExprKind::Div || kind == ExprKind::FloorDiv;
    if (c == 1) return is_div ? a : make_int(t, 0);
    // Division by zero stays for the runtime; negative divisors are rare enough to leave alone.
    if (c <= 0) return make_binary(kind, a, b);
    ConstIntBound ba = bound(a);
    if (kind == ExprKind::Div || kind == ExprKind::Mod) {
        // Truncation equals flooring when the numerator is non-negative (the divisor is > 0).
        if (ba.min < 0) return make_binary(kind, a, b);
        kind = is_div ? ExprKind::FloorDiv : ExprKind::FloorMod;
    }
    if (t.is_uint()) {
        if (ba.max < c) return is_div ? make_int(t, 0) : a;
        return make_binary(kind, a, b);
    }
    return is_div ? rewrite_floordiv(a, c) : rewrite_floormod(a, c);
}

PrimExpr RewriteSimplifier::rewrite_div_by_extent(ExprKind kind, const PrimExpr& a,
                                                  const PrimExpr& b) {
    // A loop variable over [0, d) divided by d >= 1 (a loop fused from a single outer iteration
    // and an inner one of symbolic extent d): quotient 0, remainder the variable.
    auto* v = a.as<Var>();
    if (!v || bound(a).min < 0 || bound(b).min < 1 || !is_one(analyzer_->extent_cofactor(v, b))) {
        return make_binary(kind, a, b);
    }
    bool is_div = kind == ExprKind::Div || kind == ExprKind::FloorDiv;
    return is_div ? make_int(a.dtype(), 0) : a;
}

PrimExpr RewriteSimplifier::rewrite_floordiv(const PrimExpr& a, int64_t c) {
    DataType t = a.dtype();
    // floordiv(floordiv(x, c1), c2) == floordiv(x, c1 * c2) for positive divisors.
    if (auto* inner = a.as<FloorDiv>()) {
        const int64_t* c1 = as_const_int(inner->b);
        if (c1 && *c1 > 0 && product_fits(t, *c1, c)) return rewrite_floordiv(inner->a, *c1 * c);
    }
    LinearSum s = to_linear(a);
    // A common factor of the numerator and the divisor cancels: floordiv(i*4, 8) = floordiv(i, 2).
    int64_t g = c;
    for (const auto& term : s.terms) g = std::gcd(g, abs_value(s.signed_value(term.coeff)));
    g = std::gcd(g, abs_value(s.signed_value(s.constant)));
    if (g > 1) {
        LinearSum reduced(t);
        for (const auto& term : s.terms)
            reduced.add_term(term.atom, s.signed_value(term.coeff) / g, term.hash);
        reduced.constant = wrap_int(t, s.signed_value(s.constant) / g);
        s = reduced;
        c /= g;
    }
    // floordiv(c*q + r, c) == q + floordiv(r, c); the second part is a constant when the bounds
    // of r fit between two multiples of c.
    LinearSum q(t), r(t);
    for (const auto& term : s.terms) {
        int64_t k = s.signed_value(term.coeff);
        if (k % c == 0) {
            q.add_term(term.atom, k / c, term.hash);
        } else {
            r.add_term(term.atom, k, term.hash);
        }
    }
    r.constant = s.constant;
    ConstIntBound br = bound(r);
    if (finite(br) && floor_div(br.min, c) == floor_div(br.max, c)) {
        q.constant = wrap_int(t, floor_div(br.min, c));
        return from_linear(q);
    }
    if (q.is_const()) {
        PrimExpr numerator = g > 1 ? from_linear(s) : a;
        return make_binary(ExprKind::FloorDiv, numerator, make_int(t, c));
    }
    q.add_term(make_binary(ExprKind::FloorDiv, from_linear(r), make_int(t, c)), 1);
    return from_linear(q);
}

PrimExpr RewriteSimplifier::rewrite_floormod(const PrimExpr& a, int64_t c) {
    DataType t = a.dtype();
    // floormod(floormod(x, k*c), c) == floormod(x, c).
    if (auto* inner = a.as<FloorMod>()) {
        const int64_t* c1 = as_const_int(inner->b);
        if (c1 && *c1 > 0 && *c1 % c == 0) return rewrite_floormod(inner->a, c);
    }
    // Terms that are multiples of c vanish; the constant reduces modulo c.
    LinearSum s = to_linear(a);
    LinearSum r(t);
    for (const auto& term : s.terms) {
        int64_t k = s.signed_value(term.coeff);
        if (k % c != 0) r.add_term(term.atom, k, term.hash);
    }
    r.constant = wrap_int(t, floor_mod(s.signed_value(s.constant), c));
    ConstIntBound br = bound(r);
    if (finite(br) && floor_div(br.min, c) == floor_div(br.max, c)) {
        r.constant = wrap_int(t, r.constant - floor_div(br.min, c) * c);
        return from_linear(r);
    }
    if (r.terms.size() == s.terms.size() && r.constant == s.constant) {
        return make_binary(ExprKind::FloorMod, a, make_int(t, c));
    }
    return make_binary(ExprKind::FloorMod, from_linear(r), make_int(t, c));
}

// floordiv / floormod of ramp(base, stride, lanes) by c when all lanes share one quotient.
PrimExpr RewriteSimplifier::rewrite_vector_div(ExprKind kind, const Ramp* ramp, int64_t c) {
    const int64_t* stride = as_const_int(ramp->stride);
    if (!stride || *stride < 0) return {};
    PrimExpr offset = rewrite_floormod(ramp->base, c);
    ConstIntBound bo = bound(offset);
    int64_t span = 0;
    if (__builtin_mul_overflow(*stride, int64_t{ramp->lanes - 1}, &span)) return {};
    // The lanes stay in one block of c when the offset's bounds leave room for them, or when
    // the base is a multiple of some g dividing c with the lanes spanning less than g: the
    // offset is then a multiple of g, at most c - g (ramp(j * 16, 1, 16) over blocks of 64).
    LinearSum base = to_linear(ramp->base);
    int64_t g = c;
    for (const auto& term : base.terms) g = std::gcd(g, abs_value(base.signed_value(term.coeff)));
    g = std::gcd(g, abs_value(base.signed_value(base.constant)));
    const bool aligned = span < g;
    if (!aligned && (bo.min < 0 || bo.max == kPosInf || bo.max + span >= c)) return {};
    if (kind == ExprKind::FloorDiv) {
        return make_broadcast(rewrite_floordiv(ramp->base, c), ramp->lanes);
    }
    return make_ramp_or_broadcast(offset, ramp->stride, ramp->lanes);
}

PrimExpr RewriteSimplifier::rewrite_min_max(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    bool is_min = kind == ExprKind::Min;
    if (structural_equal(a, b)) return a;
    DataType t = a.dtype();
    if (!t.is_integer()) return make_binary(kind, a, b);
    // min(min(x, c1), c2) -> min(x, min(c1, c2))
    if (a->kind == kind && as_const_int(b)) {
        auto* inner = static_cast<const BinaryExpr*>(a.get());
        if (as_const_int(inner->b)) {
            return rewrite_min_max(kind, inner->a, fold_binary(kind, inner->b, b));
        }
    }
    ConstIntBound d;
    if (t.is_int()) {
        LinearSum diff = to_linear(a);
        diff.add(to_linear(b), -1);
        d = bound(diff);
    } else {
        d = bound_sub(bound(a), bound(b));
    }
    if (d.max <= 0) return is_min ? a : b;  // a <= b
    if (d.min >= 0) return is_min ? b : a;  // a >= b
    return make_binary(kind, a, b);
}

PrimExpr RewriteSimplifier::rewrite_compare(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    // One direction only: a > b is b < a (for floats too, NaN compares false both ways).
    if (kind == ExprKind::GT) return rewrite_compare(ExprKind::LT, b, a);
    if (kind == ExprKind::GE) return rewrite_compare(ExprKind::LE, b, a);
    if (PrimExpr folded = fold_binary(kind, a, b); folded.defined()) return folded;
    DataType t = a.dtype();
    auto decided = [&](bool v) { return make_const(DataType::bool_(t.lanes()), v ? 1 : 0); };
    if (structural_equal(a, b)) {
        if (t.is_integer() || t.is_bool()) {
            return decided(kind == ExprKind::EQ || kind == ExprKind::LE);
        }
        if (kind == ExprKind::LT) return decided(false);  // NaN < NaN is false as well
    }
    if (!t.is_integer() || t.is_vector()) return make_binary(kind, a, b);
    if (PrimExpr r = compare_floordiv(kind, a, b); r.defined()) return r;
    // The bound of a - b decides the comparison.
    LinearSum la = to_linear(a), lb = to_linear(b);
    LinearSum diff = la;
    diff.add(lb, -1);
    ConstIntBound d = t.is_int() ? bound(diff) : bound_sub(bound(a), bound(b));
    switch (kind) {
        case ExprKind::LT:
            if (d.max < 0) return decided(true);
            if (d.min >= 0) return decided(false);
            break;
        case ExprKind::LE:
            if (d.max <= 0) return decided(true);
            if (d.min > 0) return decided(false);
            break;
        case ExprKind::EQ:
        case ExprKind::NE:
            if (d.min == 0 && d.max == 0) return decided(kind == ExprKind::EQ);
            if (d.min > 0 || d.max < 0) return decided(kind == ExprKind::NE);
            break;
        default:
            break;
    }
    // Cancel what both sides share: i*4 + j < i*4 + 8 -> j < 8. Signed only: moving terms
    // across is not valid under unsigned wrap-around.
    bool cancels = diff.terms.size() < la.terms.size() + lb.terms.size() ||
                   (la.constant != 0 && lb.constant != 0);
    if (t.is_int() && cancels) {
        LinearSum lhs(t), rhs(t);
        for (const auto& term : diff.terms) {
            int64_t k = diff.signed_value(term.coeff);
            if (k > 0) {
                lhs.add_term(term.atom, k, term.hash);
            } else {
                rhs.add_term(term.atom, wrap_int(t, negate(k)), term.hash);
            }
        }
        int64_t c = diff.signed_value(diff.constant);
        if (c > 0) lhs.constant = c;
        if (c < 0) rhs.constant = wrap_int(t, negate(c));
        return make_binary(kind, from_linear(lhs), from_linear(rhs));
    }
    return make_binary(kind, a, b);
}

}  // namespace anvil
