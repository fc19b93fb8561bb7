// Symbolic interval evaluation: the range an expression covers while some variables sweep their
// intervals and the rest stay fixed. Lowering uses it to size buffers and loop nests, so every
// rule is conservative: when a side cannot be expressed it is left undefined (unbounded).
#include "ir/analyzer.h"
#include "ir/expr_functor.h"
#include "ir/structural_equal.h"
#include "support/error.h"

namespace anvil {

bool Interval::is_point() const {
    return min.defined() && max.defined() && (min.same_as(max) || structural_equal(min, max));
}

class IntervalEvaluator {
public:
    IntervalEvaluator(Analyzer* analyzer, const std::unordered_map<const Var*, Interval>& relax)
        : analyzer_(analyzer), relax_(relax) {}

    Interval eval(const PrimExpr& e) {
        if (!uses_relaxed(e)) return Interval::point(analyzer_->simplify(e));
        switch (e->kind) {
            case ExprKind::Var:
                return eval_var(e.as<Var>());
            case ExprKind::Add:
                return eval_add(binary(e), false);
            case ExprKind::Sub:
                return eval_add(binary(e), true);
            case ExprKind::Mul:
                return eval_mul(binary(e));
            case ExprKind::Div:
            case ExprKind::FloorDiv:
                return eval_div(e->kind, binary(e));
            case ExprKind::Mod:
            case ExprKind::FloorMod:
                return eval_mod(e->kind, binary(e));
            case ExprKind::Min:
            case ExprKind::Max:
                return eval_min_max(e->kind, binary(e));
            case ExprKind::Select: {
                auto* s = e.as<Select>();
                Interval t = eval(s->true_value), f = eval(s->false_value);
                return {both(ExprKind::Min, t.min, f.min), both(ExprKind::Max, t.max, f.max)};
            }
            case ExprKind::Cast:
                return eval_cast(e.as<Cast>());
            case ExprKind::Broadcast:
                return eval(e.as<Broadcast>()->value);
            case ExprKind::Ramp:
                return eval_ramp(e.as<Ramp>());
            default:
                break;
        }
        if (e.dtype().element_of().is_bool()) return {make_bool(false), make_bool(true)};
        return Interval::everything();  // loads and calls of relaxed indices
    }

private:
    static const BinaryExpr* binary(const PrimExpr& e) {
        return static_cast<const BinaryExpr*>(e.get());
    }

    bool uses_relaxed(const PrimExpr& e) {
        bool found = false;
        pre_order_visit(e, [&](const PrimExpr& x) {
            if (auto* v = x.as<Var>()) {
                if (relax_.count(v)) found = true;
                auto value = analyzer_->var_values_.find(v);
                if (!found && value != analyzer_->var_values_.end()) {
                    found = uses_relaxed(value->second);
                }
            }
        });
        return found;
    }

    PrimExpr simplified(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
        return analyzer_->simplify(make_binary(kind, a, b));
    }
    // kind(a, b) when both sides are bounded, else unbounded.
    PrimExpr both(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
        if (!a.defined() || !b.defined()) return {};
        return simplified(kind, a, b);
    }
    bool prove(const PrimExpr& cond) { return analyzer_->can_prove(cond); }
    bool non_negative(const PrimExpr& e) {
        return e.defined() && prove(make_binary(ExprKind::GE, e, make_int(e.dtype(), 0)));
    }
    bool non_positive(const PrimExpr& e) {
        return e.defined() && prove(make_binary(ExprKind::LE, e, make_int(e.dtype(), 0)));
    }

    Interval eval_var(const Var* v) {
        auto relaxed = relax_.find(v);
        if (relaxed != relax_.end()) {
            const Interval& r = relaxed->second;
            return {r.min.defined() ? analyzer_->simplify(r.min) : PrimExpr(),
                    r.max.defined() ? analyzer_->simplify(r.max) : PrimExpr()};
        }
        return eval(analyzer_->var_values_.at(v));  // a let-bound value mentioning relaxed vars
    }

    Interval eval_add(const BinaryExpr* op, bool subtract) {
        Interval a = eval(op->a), b = eval(op->b);
        ExprKind k = subtract ? ExprKind::Sub : ExprKind::Add;
        // x - y is smallest at x.min - y.max.
        const PrimExpr& b_lo = subtract ? b.max : b.min;
        const PrimExpr& b_hi = subtract ? b.min : b.max;
        return {both(k, a.min, b_lo), both(k, a.max, b_hi)};
    }

    // a interval times the fixed value s, whose sign is known.
    Interval scale(const Interval& a, const PrimExpr& s) {
        if (non_negative(s)) return {both(ExprKind::Mul, a.min, s), both(ExprKind::Mul, a.max, s)};
        if (non_positive(s)) return {both(ExprKind::Mul, a.max, s), both(ExprKind::Mul, a.min, s)};
        return Interval::everything();
    }

    Interval eval_mul(const BinaryExpr* op) {
        Interval a = eval(op->a), b = eval(op->b);
        if (b.is_point()) return scale(a, b.min);
        if (a.is_point()) return scale(b, a.min);
        if (non_negative(a.min) && non_negative(b.min)) {
            return {simplified(ExprKind::Mul, a.min, b.min), both(ExprKind::Mul, a.max, b.max)};
        }
        return Interval::everything();
    }

    Interval eval_div(ExprKind kind, const BinaryExpr* op) {
        Interval a = eval(op->a), b = eval(op->b);
        if (!b.is_point()) return Interval::everything();
        // Both divisions are monotone in the numerator for a fixed divisor.
        const PrimExpr& d = b.min;
        if (prove(make_binary(ExprKind::GT, d, make_int(d.dtype(), 0)))) {
            return {both(kind, a.min, d), both(kind, a.max, d)};
        }
        if (prove(make_binary(ExprKind::LT, d, make_int(d.dtype(), 0)))) {
            return {both(kind, a.max, d), both(kind, a.min, d)};
        }
        return Interval::everything();
    }

    Interval eval_mod(ExprKind kind, const BinaryExpr* op) {
        Interval a = eval(op->a), b = eval(op->b);
        if (!b.is_point()) return Interval::everything();
        const PrimExpr& d = b.min;
        DataType t = d.dtype();
        if (!prove(make_binary(ExprKind::GT, d, make_int(t, 0)))) return Interval::everything();
        bool floor = kind == ExprKind::FloorMod || non_negative(a.min);
        // When the whole interval lies between two multiples of d, the remainder is monotone.
        if (floor && a.min.defined() && a.max.defined() &&
            prove(make_binary(ExprKind::EQ, make_binary(ExprKind::FloorDiv, a.min, d),
                              make_binary(ExprKind::FloorDiv, a.max, d)))) {
            return {simplified(ExprKind::FloorMod, a.min, d),
                    simplified(ExprKind::FloorMod, a.max, d)};
        }
        PrimExpr top = simplified(ExprKind::Sub, d, make_int(t, 1));
        if (floor) return {make_int(t, 0), top};
        return {simplified(ExprKind::Sub, make_int(t, 0), top), top};
    }

    Interval eval_min_max(ExprKind kind, const BinaryExpr* op) {
        Interval a = eval(op->a), b = eval(op->b);
        // An unbounded side of one operand leaves the other operand's side (min's upper end).
        auto either = [&](const PrimExpr& x, const PrimExpr& y) {
            if (!x.defined()) return y;
            if (!y.defined()) return x;
            return simplified(kind, x, y);
        };
        if (kind == ExprKind::Min) return {both(kind, a.min, b.min), either(a.max, b.max)};
        return {either(a.min, b.min), both(kind, a.max, b.max)};
    }

    Interval eval_cast(const Cast* op) {
        Interval a = eval(op->value);
        DataType from = op->value.dtype(), to = op->dtype;
        // Monotone casts only: integer widening, or integer to float.
        bool widening = from.is_integer() && to.is_integer() && to.bits() >= from.bits() &&
                        (from.is_uint() || to.is_int()) &&
                        !(from.is_uint() && to.is_int() && to.bits() == from.bits());
        bool to_float = from.is_integer() && to.is_floating();
        if (!widening && !to_float) return Interval::everything();
        auto convert = [&](const PrimExpr& x) {
            return x.defined() ? analyzer_->simplify(make_cast(to, x)) : PrimExpr();
        };
        return {convert(a.min), convert(a.max)};
    }

    Interval eval_ramp(const Ramp* op) {
        Interval base = eval(op->base), stride = eval(op->stride);
        if (!stride.is_point()) return Interval::everything();
        PrimExpr last =
            simplified(ExprKind::Mul, stride.min, make_int(stride.min.dtype(), op->lanes - 1));
        Interval span = scale(Interval{make_int(last.dtype(), 0), make_int(last.dtype(), 1)}, last);
        if (!span.min.defined()) return Interval::everything();
        return {both(ExprKind::Add, base.min, span.min), both(ExprKind::Add, base.max, span.max)};
    }

    Analyzer* analyzer_;
    const std::unordered_map<const Var*, Interval>& relax_;
};

Interval Analyzer::eval_interval(const PrimExpr& e,
                                 const std::unordered_map<const Var*, Interval>& relax) {
    ANVIL_CHECK(e.defined()) << "eval_interval of an undefined expression";
    return IntervalEvaluator(this, relax).eval(e);
}

}  // namespace anvil
