// The analyzer's facts and the questions built on the simplifier.
#include "ir/analyzer.h"

#include "ir/bound_arith.h"
#include "ir/structural_equal.h"
#include "support/error.h"

namespace anvil {

void Analyzer::bind(const Ref<Var>& v, const Range& r) {
    ANVIL_CHECK(v.defined() && r.min.defined() && r.extent.defined())
        << "bind of an undefined range";
    // The fact is the constant hull of [min, min + extent - 1] under the facts known so far.
    PrimExpr last = simplify(r.min + r.extent - make_int(r.extent.dtype(), 1));
    ConstIntBound lo = const_int_bound(r.min);
    ConstIntBound hi = const_int_bound(last);
    if (lo.min > hi.max) return;  // an empty loop: nothing holds inside it, nothing to learn
    var_values_.erase(v.get());
    var_bounds_[v.get()] = {lo.min, hi.max};
    PrimExpr extent = simplify(r.extent);
    if (is_zero(simplify(r.min)) && !extent.is<IntImm>()) {
        var_extents_[v.get()] = extent;
    } else {
        var_extents_.erase(v.get());
    }
    bound_vars_.push_back(v);
}

void Analyzer::bind(const Ref<Var>& v, const PrimExpr& value) {
    ANVIL_CHECK(v.defined() && value.defined()) << "bind of an undefined value";
    ANVIL_CHECK(v->dtype == value.dtype())
        << "bind of " << v->name << " (" << v->dtype.str() << ") to a " << value.dtype().str();
    var_bounds_.erase(v.get());
    var_extents_.erase(v.get());
    var_values_[v.get()] = simplify(value);
    bound_vars_.push_back(v);
}

void Analyzer::forget(const Ref<Var>& v) {
    var_bounds_.erase(v.get());
    var_values_.erase(v.get());
    var_extents_.erase(v.get());
}

void Analyzer::bind_dimensions(const std::vector<Ref<Buffer>>& params) {
    for (const auto& b : params) {
        for (const auto& d : b->shape) {
            const Var* v = dimension_var(d);
            if (!v || var_values_.count(v)) continue;
            ConstIntBound size{0, std::min(type_bound(d.dtype()).max, type_bound(v->dtype).max)};
            auto known = var_bounds_.find(v);
            var_bounds_[v] =
                known == var_bounds_.end() ? size : bound_intersect(size, known->second);
            bound_vars_.push_back(Ref<Var>(v));
        }
    }
}

PrimExpr Analyzer::extent_cofactor(const Var* v, const PrimExpr& d) const {
    auto extent = var_extents_.find(v);
    if (extent == var_extents_.end()) return PrimExpr();
    const PrimExpr& e = extent->second;
    if (structural_equal(e, d)) return make_int(e.dtype(), 1);
    if (e->kind != ExprKind::Mul) return PrimExpr();
    auto* mul = static_cast<const BinaryExpr*>(e.get());
    if (structural_equal(mul->b, d)) return mul->a;
    if (structural_equal(mul->a, d)) return mul->b;
    return PrimExpr();
}

bool Analyzer::can_prove(const PrimExpr& cond) {
    ANVIL_CHECK(cond.dtype().element_of().is_bool()) << "can_prove of a " << cond.dtype().str();
    PrimExpr s = simplify(cond);
    if (auto* b = s.as<Broadcast>()) s = b->value;
    return is_one(s);
}

bool Analyzer::can_prove_equal(const PrimExpr& a, const PrimExpr& b) {
    if (a.dtype() != b.dtype()) return false;
    if (a.dtype().is_integer() && a.dtype().is_scalar()) {
        return is_zero(simplify(make_binary(ExprKind::Sub, a, b)));
    }
    return structural_equal(simplify(a), simplify(b));
}

ConstraintScope::ConstraintScope(Analyzer& analyzer, const PrimExpr& cond) : analyzer_(analyzer) {
    learn(cond);
}

ConstraintScope::~ConstraintScope() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
        if (it->second) {
            analyzer_.var_bounds_[it->first] = *it->second;
        } else {
            analyzer_.var_bounds_.erase(it->first);
        }
    }
}

void ConstraintScope::learn(const PrimExpr& cond) {
    PrimExpr c = cond;
    if (auto* call = c.as<Call>(); call && call->name == "likely" && call->args.size() == 1) {
        c = call->args[0];
    }
    if (c->kind == ExprKind::And) {
        auto* op = static_cast<const BinaryExpr*>(c.get());
        learn(op->a);
        learn(op->b);
        return;
    }
    bool flip = false;
    switch (c->kind) {
        case ExprKind::LT:
        case ExprKind::LE:
        case ExprKind::GT:
        case ExprKind::GE:
            break;
        default:
            return;
    }
    auto* op = static_cast<const BinaryExpr*>(c.get());
    const Var* v = op->a.as<Var>();
    const int64_t* k = as_const_int(op->b);
    if (!v || !k) {  // constant on the left: c < v is v > c
        v = op->b.as<Var>();
        k = as_const_int(op->a);
        flip = true;
    }
    if (!v || !k || !v->dtype.is_integer() || !v->dtype.is_scalar()) return;
    ExprKind kind = c->kind;
    if (flip) {
        kind = kind == ExprKind::LT   ? ExprKind::GT
               : kind == ExprKind::LE ? ExprKind::GE
               : kind == ExprKind::GT ? ExprKind::LT
                                      : ExprKind::LE;
    }
    // v < k and v > k need k -/+ 1, which must not overflow.
    if (kind == ExprKind::LT && *k == ConstIntBound::kNegInf) return;
    if (kind == ExprKind::GT && *k == ConstIntBound::kPosInf) return;
    switch (kind) {
        case ExprKind::LT:
            return narrow(v, ConstIntBound::kNegInf, *k - 1);
        case ExprKind::LE:
            return narrow(v, ConstIntBound::kNegInf, *k);
        case ExprKind::GT:
            return narrow(v, *k + 1, ConstIntBound::kPosInf);
        default:
            return narrow(v, *k, ConstIntBound::kPosInf);
    }
}

void ConstraintScope::narrow(const Var* v, int64_t lo, int64_t hi) {
    // A variable bound to a value (a let) is not narrowed: simplify substitutes the value.
    if (analyzer_.var_values_.count(v)) return;
    auto it = analyzer_.var_bounds_.find(v);
    std::optional<ConstIntBound> before;
    ConstIntBound now{ConstIntBound::kNegInf, ConstIntBound::kPosInf};
    if (it != analyzer_.var_bounds_.end()) before = now = it->second;
    now = {std::max(now.min, lo), std::min(now.max, hi)};
    if (now.min > now.max) return;  // contradicts what is known: code that never runs
    // The ends of int64's range stand for "unbounded" in a ConstIntBound.
    if (now.min == ConstIntBound::kPosInf || now.max == ConstIntBound::kNegInf) return;
    saved_.emplace_back(v, before);
    analyzer_.var_bounds_[v] = now;
}

}  // namespace anvil
