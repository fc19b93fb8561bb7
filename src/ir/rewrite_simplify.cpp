#include <cmath>

#include "ir/bound_arith.h"
#include "ir/const_fold.h"
#include "ir/rewrite_simplifier.h"
#include "ir/structural_equal.h"
#include "support/error.h"

namespace anvil {

namespace {

bool is_true(const PrimExpr& e) {
    if (auto* b = e.as<Broadcast>()) return is_true(b->value);
    return e.dtype().element_of().is_bool() && is_one(e);
}

bool is_false(const PrimExpr& e) {
    if (auto* b = e.as<Broadcast>()) return is_false(b->value);
    return e.dtype().element_of().is_bool() && is_zero(e);
}

bool is_float_const(const PrimExpr& e, double v) {
    auto* f = e.as<FloatImm>();
    return f && f->value == v && std::signbit(f->value) == std::signbit(v);
}

// The same node when the rules kept the operands as they were, so unchanged subtrees are shared.
PrimExpr keep_if_unchanged(const PrimExpr& result, const BinaryExpr* op, const PrimExpr& self) {
    if (result->kind != op->kind) return result;
    auto* r = static_cast<const BinaryExpr*>(result.get());
    return r->a.same_as(op->a) && r->b.same_as(op->b) ? self : result;
}

}  // namespace

ConstIntBound RewriteSimplifier::bound(const LinearSum& s) {
    ConstIntBound total{s.signed_value(s.constant), s.signed_value(s.constant)};
    for (const auto& t : s.terms) {
        total = bound_add(total, bound_scale(bound(t.atom), s.signed_value(t.coeff)));
    }
    return total;
}

PrimExpr RewriteSimplifier::rewrite_binary(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    if (PrimExpr folded = fold_binary(kind, a, b); folded.defined()) return folded;
    DataType t = a.dtype();
    if (t.is_vector()) return rewrite_vector(kind, a, b);
    switch (kind) {
        case ExprKind::Add:
        case ExprKind::Sub:
        case ExprKind::Mul:
            if (t.is_integer()) return rewrite_linear(kind, a, b);
            if (t.is_floating()) return rewrite_float_arith(kind, a, b);
            break;
        case ExprKind::Div:
        case ExprKind::Mod:
        case ExprKind::FloorDiv:
        case ExprKind::FloorMod:
            return rewrite_div(kind, a, b);
        case ExprKind::Min:
        case ExprKind::Max:
            return rewrite_min_max(kind, a, b);
        case ExprKind::EQ:
        case ExprKind::NE:
        case ExprKind::LT:
        case ExprKind::LE:
        case ExprKind::GT:
        case ExprKind::GE:
            return rewrite_compare(kind, a, b);
        case ExprKind::And:
        case ExprKind::Or:
            return rewrite_logic(kind, a, b);
        default:
            break;
    }
    return make_binary(kind, a, b);
}

PrimExpr RewriteSimplifier::rewrite_linear(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    const int64_t* ca = as_const_int(a);
    const int64_t* cb = as_const_int(b);
    // A product of two non-constants is an atom; the form cannot improve it.
    if (kind == ExprKind::Mul && !ca && !cb) return make_binary(kind, a, b);
    LinearSum s(a.dtype());
    if (kind == ExprKind::Mul) {
        s = to_linear(cb ? a : b);
        s.scale(cb ? *cb : *ca);
    } else {
        s = to_linear(a);
        s.add(to_linear(b), kind == ExprKind::Add ? 1 : -1);
    }
    merge_div_mod(&s);
    return from_linear(s);
}

// Only identities that hold bit for bit in IEEE arithmetic: x*1, x/1 (see rewrite_div), x - 0
// and x + (-0). Not x + 0 (-0 + 0 is +0), not x*0 (NaN, inf, -0), never reassociation.
PrimExpr RewriteSimplifier::rewrite_float_arith(ExprKind kind, const PrimExpr& a,
                                                const PrimExpr& b) {
    switch (kind) {
        case ExprKind::Mul:
            if (is_float_const(b, 1.0)) return a;
            if (is_float_const(a, 1.0)) return b;
            break;
        case ExprKind::Sub:
            if (is_float_const(b, 0.0)) return a;
            break;
        case ExprKind::Add:
            if (is_float_const(b, -0.0)) return a;
            if (is_float_const(a, -0.0)) return b;
            break;
        default:
            break;
    }
    return make_binary(kind, a, b);
}

PrimExpr RewriteSimplifier::make_ramp_or_broadcast(const PrimExpr& base, const PrimExpr& stride,
                                                   int lanes) {
    if (is_zero(stride)) return make_broadcast(base, lanes);
    return make_ramp(base, stride, lanes);
}

PrimExpr RewriteSimplifier::rewrite_vector(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    auto* ba = a.as<Broadcast>();
    auto* bb = b.as<Broadcast>();
    if (ba && bb) return make_broadcast(rewrite_binary(kind, ba->value, bb->value), ba->lanes);
    // Identities with a constant broadcast operand, as for scalars (see rewrite_float_arith).
    auto splat_of = [](const Broadcast* x, double v) {
        if (!x) return false;
        if (x->value.dtype().is_floating()) return is_float_const(x->value, v);
        return is_const_int(x->value, static_cast<int64_t>(v));
    };
    bool is_int = a.dtype().element_of().is_integer();
    if (kind == ExprKind::Mul && splat_of(bb, 1.0)) return a;
    if (kind == ExprKind::Mul && splat_of(ba, 1.0)) return b;
    if (kind == ExprKind::Sub && splat_of(bb, 0.0)) return a;
    if (is_int && kind == ExprKind::Add && splat_of(bb, 0.0)) return a;
    if (is_int && kind == ExprKind::Add && splat_of(ba, 0.0)) return b;
    auto* ra = a.as<Ramp>();
    auto* rb = b.as<Ramp>();
    // Ramp arithmetic is exact for integers only: a float ramp's lanes are rounded separately.
    if (is_int) {
        auto add = [&](const PrimExpr& x, const PrimExpr& y) {
            return rewrite_binary(ExprKind::Add, x, y);
        };
        auto sub = [&](const PrimExpr& x, const PrimExpr& y) {
            return rewrite_binary(ExprKind::Sub, x, y);
        };
        auto mul = [&](const PrimExpr& x, const PrimExpr& y) {
            return rewrite_binary(ExprKind::Mul, x, y);
        };
        int lanes = a.dtype().lanes();
        switch (kind) {
            case ExprKind::Add:
                if (ra && rb)
                    return make_ramp_or_broadcast(add(ra->base, rb->base),
                                                  add(ra->stride, rb->stride), lanes);
                if (ra && bb)
                    return make_ramp_or_broadcast(add(ra->base, bb->value), ra->stride, lanes);
                if (ba && rb)
                    return make_ramp_or_broadcast(add(ba->value, rb->base), rb->stride, lanes);
                break;
            case ExprKind::Sub:
                if (ra && rb)
                    return make_ramp_or_broadcast(sub(ra->base, rb->base),
                                                  sub(ra->stride, rb->stride), lanes);
                if (ra && bb)
                    return make_ramp_or_broadcast(sub(ra->base, bb->value), ra->stride, lanes);
                if (ba && rb) {
                    PrimExpr zero = make_int(rb->stride.dtype(), 0);
                    return make_ramp_or_broadcast(sub(ba->value, rb->base), sub(zero, rb->stride),
                                                  lanes);
                }
                break;
            case ExprKind::Mul:
                if (ra && bb)
                    return make_ramp_or_broadcast(mul(ra->base, bb->value),
                                                  mul(ra->stride, bb->value), lanes);
                if (ba && rb)
                    return make_ramp_or_broadcast(mul(ba->value, rb->base),
                                                  mul(ba->value, rb->stride), lanes);
                break;
            case ExprKind::Min:
            case ExprKind::Max: {
                // One operand below the other in every lane (the bound of a ramp covers all
                // its lanes): the vectorizer's clamp of an index already in bounds.
                ConstIntBound d = bound_sub(bound(a), bound(b));
                bool is_min = kind == ExprKind::Min;
                if (d.max <= 0) return is_min ? a : b;
                if (d.min >= 0) return is_min ? b : a;
                break;
            }
            case ExprKind::FloorDiv:
            case ExprKind::FloorMod:
                if (ra && bb && as_const_int(bb->value) && *as_const_int(bb->value) > 0 &&
                    a.dtype().element_of().is_int()) {
                    PrimExpr r = rewrite_vector_div(kind, ra, *as_const_int(bb->value));
                    if (r.defined()) return r;
                }
                break;
            default:
                break;
        }
    }
    return make_binary(kind, a, b);
}

PrimExpr RewriteSimplifier::rewrite_logic(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    bool is_and = kind == ExprKind::And;
    // x && true -> x, x && false -> false; dually for ||.
    if (is_true(a)) return is_and ? b : a;
    if (is_false(a)) return is_and ? a : b;
    if (is_true(b)) return is_and ? a : b;
    if (is_false(b)) return is_and ? b : a;
    if (structural_equal(a, b)) return a;
    // x && !x is false, x || !x is true.
    auto* na = a.as<Not>();
    auto* nb = b.as<Not>();
    if ((na && structural_equal(na->a, b)) || (nb && structural_equal(nb->a, a))) {
        return make_const(a.dtype(), is_and ? 0 : 1);
    }
    return make_binary(kind, a, b);
}

PrimExpr RewriteSimplifier::rewrite_not(const PrimExpr& a) {
    if (PrimExpr folded = fold_not(a); folded.defined()) return folded;
    if (auto* n = a.as<Not>()) return n->a;
    if (auto* b = a.as<Broadcast>()) return make_broadcast(rewrite_not(b->value), b->lanes);
    ExprKind k = a->kind;
    if (k == ExprKind::EQ || k == ExprKind::NE || k == ExprKind::LT || k == ExprKind::LE) {
        auto* cmp = static_cast<const BinaryExpr*>(a.get());
        // !(x == y) and !(x != y) hold for every type; !(x < y) -> y <= x only without NaN.
        bool ordered = cmp->a.dtype().is_integer();
        if (k == ExprKind::EQ) return rewrite_compare(ExprKind::NE, cmp->a, cmp->b);
        if (k == ExprKind::NE) return rewrite_compare(ExprKind::EQ, cmp->a, cmp->b);
        if (ordered && k == ExprKind::LT) return rewrite_compare(ExprKind::LE, cmp->b, cmp->a);
        if (ordered && k == ExprKind::LE) return rewrite_compare(ExprKind::LT, cmp->b, cmp->a);
    }
    return make_not(a);
}

// ---------------------------------------------------------------------------------------------
// Node visitors: simplify the operands, then apply the node's rules.

PrimExpr RewriteSimplifier::mutate_(const Var* op, const PrimExpr& self) {
    auto value = analyzer_->var_values_.find(op);
    if (value != analyzer_->var_values_.end() && substitution_depth_ < 16) {
        ++substitution_depth_;  // guards against a value that mentions its own variable
        PrimExpr r = mutate(value->second);
        --substitution_depth_;
        return r;
    }
    if (op->dtype.is_integer() && op->dtype.is_scalar()) {
        ConstIntBound b = bound(self);
        if (b.min == b.max) return make_int(op->dtype, b.min);
    }
    return self;
}

#define ANVIL_X(name)                                                             \
    PrimExpr RewriteSimplifier::mutate_(const name* op, const PrimExpr& self) {   \
        PrimExpr a = mutate(op->a);                                               \
        PrimExpr b = mutate(op->b);                                               \
        return keep_if_unchanged(rewrite_binary(ExprKind::name, a, b), op, self); \
    }
ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X

PrimExpr RewriteSimplifier::mutate_(const Not* op, const PrimExpr& self) {
    PrimExpr a = mutate(op->a);
    PrimExpr r = rewrite_not(a);
    if (auto* n = r.as<Not>(); n && n->a.same_as(op->a)) return self;
    return r;
}

PrimExpr RewriteSimplifier::mutate_(const Select* op, const PrimExpr& self) {
    PrimExpr c = mutate(op->cond);
    PrimExpr t = mutate(op->true_value);
    PrimExpr f = mutate(op->false_value);
    if (is_true(c)) return t;
    if (is_false(c)) return f;
    if (structural_equal(t, f)) return t;
    if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
        return self;
    }
    return make_select(c, t, f);
}

PrimExpr RewriteSimplifier::mutate_(const Cast* op, const PrimExpr& self) {
    PrimExpr v = mutate(op->value);
    DataType t = op->dtype;
    if (v.dtype() == t) return v;
    if (PrimExpr folded = fold_cast(t, v); folded.defined()) return folded;
    if (auto* b = v.as<Broadcast>()) {
        PrimExpr scalar = make_cast(t.element_of(), b->value);
        if (PrimExpr folded = fold_cast(t.element_of(), b->value); folded.defined()) {
            scalar = folded;
        }
        return make_broadcast(scalar, b->lanes);
    }
    return v.same_as(op->value) ? self : make_cast(t, v);
}

PrimExpr RewriteSimplifier::mutate_(const Ramp* op, const PrimExpr& self) {
    PrimExpr base = mutate(op->base);
    PrimExpr stride = mutate(op->stride);
    if (is_zero(stride)) return make_broadcast(base, op->lanes);
    if (base.same_as(op->base) && stride.same_as(op->stride)) return self;
    return make_ramp(base, stride, op->lanes);
}

PrimExpr RewriteSimplifier::mutate_(const Broadcast* op, const PrimExpr& self) {
    PrimExpr v = mutate(op->value);
    return v.same_as(op->value) ? self : make_broadcast(v, op->lanes);
}

// ---------------------------------------------------------------------------------------------

PrimExpr Analyzer::simplify(const PrimExpr& e) {
    ANVIL_CHECK(e.defined()) << "simplify of an undefined expression";
    // Each round applies every rule once bottom-up; a rule's output can enable a rule at a
    // parent that already ran, hence the rounds. Four suffice for the rule set here.
    constexpr int kMaxRounds = 4;
    PrimExpr current = e;
    for (int round = 0; round < kMaxRounds; ++round) {
        PrimExpr next = RewriteSimplifier(this).mutate(current);
        if (next.same_as(current) || structural_equal(next, current)) return current;
        current = next;
    }
    return current;
}

PrimExpr simplify(const PrimExpr& e) {
    Analyzer analyzer;
    return analyzer.simplify(e);
}

}  // namespace anvil
