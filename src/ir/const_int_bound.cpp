// Constant integer bounds of expressions, from the analyzer's facts about variables.
//
// Bounds are computed in ideal integers and then fitted to the expression's type: signed results
// are clamped to the type's range (index arithmetic is assumed not to overflow, see analyzer.h),
// unsigned results that would leave the range give the whole range (unsigned arithmetic wraps).
#include <algorithm>

#include "ir/bound_arith.h"
#include "ir/expr_functor.h"
#include "ir/structural_equal.h"
#include "support/error.h"

namespace anvil {

namespace {

constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kPosInf = ConstIntBound::kPosInf;

bool is_inf(int64_t x) {
    return x == kNegInf || x == kPosInf;
}

int64_t saturate(__int128 v) {
    if (v >= kPosInf) return kPosInf;
    if (v <= kNegInf) return kNegInf;
    return static_cast<int64_t>(v);
}

int64_t sat_neg(int64_t x) {
    if (x == kNegInf) return kPosInf;
    if (x == kPosInf) return kNegInf;
    return -x;
}

// One corner of a division x / y (y != 0) on extended integers.
int64_t div_corner(int64_t x, int64_t y, bool floor) {
    bool negative = (x < 0) != (y < 0);
    if (is_inf(x)) return negative ? kNegInf : kPosInf;
    if (is_inf(y)) {
        // |x| / inf is 0 from one side; flooring a tiny negative quotient gives -1.
        return floor && negative && x != 0 ? -1 : 0;
    }
    int64_t q = x / y, r = x % y;
    if (floor && r != 0 && ((r < 0) != (y < 0))) q -= 1;
    return q;
}

ConstIntBound bound_div(const ConstIntBound& a, const ConstIntBound& b, bool floor) {
    if (b.min <= 0 && b.max >= 0) return kEverything;
    int64_t c[4] = {div_corner(a.min, b.min, floor), div_corner(a.min, b.max, floor),
                    div_corner(a.max, b.min, floor), div_corner(a.max, b.max, floor)};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

ConstIntBound bound_trunc_mod(const ConstIntBound& a, const ConstIntBound& b) {
    if (b.min <= 0 && b.max >= 0) return kEverything;
    if (b.min > 0 && a.min >= 0 && a.max < b.min) return a;
    int64_t m = std::max(sat_neg(b.min), b.max);
    m = is_inf(m) ? kPosInf : m - 1;
    if (a.min >= 0) return {0, std::min(a.max, m)};
    if (a.max <= 0) return {std::max(a.min, sat_neg(m)), 0};
    return {std::max(a.min, sat_neg(m)), std::min(a.max, m)};
}

ConstIntBound bound_floor_mod(const ConstIntBound& a, const ConstIntBound& b) {
    if (b.min > 0) {
        if (a.min >= 0 && a.max < b.min) return a;
        int64_t m = b.max == kPosInf ? kPosInf : b.max - 1;
        return {0, a.min >= 0 ? std::min(a.max, m) : m};
    }
    if (b.max < 0) return {b.min == kNegInf ? kNegInf : b.min + 1, 0};
    return kEverything;
}

// Fits an ideal-integer bound to the values of type t.
ConstIntBound fit_to_type(const ConstIntBound& r, DataType t) {
    ConstIntBound range = type_bound(t);
    if (!t.is_int() && !(r.min >= range.min && r.max <= range.max)) return range;
    ConstIntBound clamped = bound_intersect(r, range);
    return clamped.min > clamped.max ? range : clamped;
}

}  // namespace

int64_t sat_add(int64_t x, int64_t y) {
    if (x == kPosInf || y == kPosInf) return kPosInf;
    if (x == kNegInf || y == kNegInf) return kNegInf;
    return saturate(static_cast<__int128>(x) + y);
}

int64_t sat_mul(int64_t x, int64_t y) {
    if (x == 0 || y == 0) return 0;
    bool negative = (x < 0) != (y < 0);
    if (is_inf(x) || is_inf(y)) return negative ? kNegInf : kPosInf;
    return saturate(static_cast<__int128>(x) * y);
}

ConstIntBound bound_add(const ConstIntBound& a, const ConstIntBound& b) {
    int64_t lo = (a.min == kNegInf || b.min == kNegInf) ? kNegInf : sat_add(a.min, b.min);
    int64_t hi = (a.max == kPosInf || b.max == kPosInf) ? kPosInf : sat_add(a.max, b.max);
    return {lo, hi};
}

ConstIntBound bound_sub(const ConstIntBound& a, const ConstIntBound& b) {
    return bound_add(a, {sat_neg(b.max), sat_neg(b.min)});
}

ConstIntBound bound_mul(const ConstIntBound& a, const ConstIntBound& b) {
    int64_t c[4] = {sat_mul(a.min, b.min), sat_mul(a.min, b.max), sat_mul(a.max, b.min),
                    sat_mul(a.max, b.max)};
    return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

ConstIntBound bound_scale(const ConstIntBound& a, int64_t c) {
    return bound_mul(a, {c, c});
}

ConstIntBound bound_union(const ConstIntBound& a, const ConstIntBound& b) {
    return {std::min(a.min, b.min), std::max(a.max, b.max)};
}

ConstIntBound bound_intersect(const ConstIntBound& a, const ConstIntBound& b) {
    return {std::max(a.min, b.min), std::min(a.max, b.max)};
}

ConstIntBound type_bound(DataType t) {
    if (t.is_bool()) return {0, 1};
    if (t.is_int()) {
        if (t.bits() >= 64) return kEverything;
        return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
    }
    if (t.is_uint()) {
        if (t.bits() >= 64) return {0, kPosInf};
        return {0, static_cast<int64_t>((uint64_t{1} << t.bits()) - 1)};
    }
    return kEverything;
}

// Evaluates bounds bottom-up; the recursion depth is the expression's depth.
class ConstIntBoundEvaluator {
public:
    explicit ConstIntBoundEvaluator(const Analyzer* analyzer) : analyzer_(analyzer) {}

    ConstIntBound eval(const PrimExpr& e) {
        DataType t = e.dtype();
        if (!t.is_integer() && !t.is_bool()) return kEverything;
        return fit_to_type(eval_ideal(e), t);
    }

private:
    // A loop variable over [0, c * d) divided by d >= 1 is below c: the outer part of a loop
    // fused from an outer loop of c iterations and an inner one of symbolic extent d.
    ConstIntBound quotient_of_loop(const BinaryExpr& div, const ConstIntBound& a,
                                   const ConstIntBound& b) {
        auto* v = div.a.as<Var>();
        if (!v || a.min < 0 || b.min < 1) return kEverything;
        PrimExpr c = analyzer_->extent_cofactor(v, div.b);
        if (!c.defined()) return kEverything;
        ConstIntBound cb = eval(c);
        return cb.max == kPosInf || cb.max < 1 ? kEverything : ConstIntBound{0, cb.max - 1};
    }

    ConstIntBound eval_ideal(const PrimExpr& e) {
        DataType t = e.dtype();
        auto binary = [&]() { return static_cast<const BinaryExpr*>(e.get()); };
        switch (e->kind) {
            case ExprKind::IntImm: {
                int64_t v = e.as<IntImm>()->value;
                if (t.is_uint() && v < 0) return type_bound(t);  // above INT64_MAX
                return {v, v};
            }
            case ExprKind::Var: {
                const Var* v = e.as<Var>();
                auto value = analyzer_->var_values_.find(v);
                if (value != analyzer_->var_values_.end()) return eval(value->second);
                auto bound = analyzer_->var_bounds_.find(v);
                if (bound != analyzer_->var_bounds_.end()) return bound->second;
                return type_bound(t);
            }
            case ExprKind::Add:
                return bound_add(eval(binary()->a), eval(binary()->b));
            case ExprKind::Sub:
                return bound_sub(eval(binary()->a), eval(binary()->b));
            case ExprKind::Mul:
                return bound_mul(eval(binary()->a), eval(binary()->b));
            case ExprKind::Div:
            case ExprKind::FloorDiv: {
                ConstIntBound a = eval(binary()->a), b = eval(binary()->b);
                ConstIntBound q = bound_div(a, b, e->kind == ExprKind::FloorDiv);
                return bound_intersect(q, quotient_of_loop(*binary(), a, b));
            }
            case ExprKind::Mod:
                return bound_trunc_mod(eval(binary()->a), eval(binary()->b));
            case ExprKind::FloorMod:
                return bound_floor_mod(eval(binary()->a), eval(binary()->b));
            case ExprKind::Min: {
                ConstIntBound a = eval(binary()->a), b = eval(binary()->b);
                return {std::min(a.min, b.min), std::min(a.max, b.max)};
            }
            case ExprKind::Max: {
                ConstIntBound a = eval(binary()->a), b = eval(binary()->b);
                return {std::max(a.min, b.min), std::max(a.max, b.max)};
            }
            case ExprKind::Select: {
                auto* s = e.as<Select>();
                return bound_union(eval(s->true_value), eval(s->false_value));
            }
            case ExprKind::Cast: {
                const PrimExpr& v = e.as<Cast>()->value;
                if (!v.dtype().is_integer() && !v.dtype().is_bool()) return type_bound(t);
                ConstIntBound b = eval(v);
                ConstIntBound range = type_bound(t);
                if (t.is_bool()) return (b.min > 0 || b.max < 0) ? ConstIntBound{1, 1} : range;
                return (b.min >= range.min && b.max <= range.max) ? b : range;
            }
            case ExprKind::Ramp: {
                auto* r = e.as<Ramp>();
                ConstIntBound base = eval(r->base);
                ConstIntBound last = bound_add(base, bound_scale(eval(r->stride), r->lanes - 1));
                return bound_union(base, last);
            }
            case ExprKind::Broadcast:
                return eval(e.as<Broadcast>()->value);
            case ExprKind::Call: {
                auto* c = e.as<Call>();
                if (c->name == "likely" && c->args.size() == 1) return eval(c->args[0]);
                return type_bound(t);
            }
            default:
                return type_bound(t);  // comparisons and logic are bool: [0, 1]
        }
    }

    const Analyzer* analyzer_;
};

ConstIntBound Analyzer::const_int_bound(const PrimExpr& e) {
    ANVIL_CHECK(e.defined()) << "const_int_bound of an undefined expression";
    return ConstIntBoundEvaluator(this).eval(e);
}

}  // namespace anvil
