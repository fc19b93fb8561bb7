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
    bound_vars_.push_back(v);
}

void Analyzer::bind(const Ref<Var>& v, const PrimExpr& value) {
    ANVIL_CHECK(v.defined() && value.defined()) << "bind of an undefined value";
    ANVIL_CHECK(v->dtype == value.dtype())
        << "bind of " << v->name << " (" << v->dtype.str() << ") to a " << value.dtype().str();
    var_bounds_.erase(v.get());
    var_values_[v.get()] = simplify(value);
    bound_vars_.push_back(v);
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

}  // namespace anvil
