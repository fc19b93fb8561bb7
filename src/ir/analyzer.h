// Arithmetic analysis of scalar expressions: constant integer bounds, symbolic intervals and the
// rewrite simplifier that lowering and the TIR passes use on index arithmetic.
//
// What the analyzer assumes:
// - Facts come from bind(): a variable lies in a range (a loop) or equals a value (a let), and
//   from a ConstraintScope: a condition that holds inside an `if`.
// - Signed integer index arithmetic does not overflow (as in TVM and Halide): rules such as
//   floordiv(i*8 + j, 8) -> i + floordiv(j, 8) are exact only then. Constant folding still wraps
//   at the type's width, and unsigned arithmetic is only rewritten by identities that also hold
//   modulo 2^bits.
// - Floating-point expressions are only constant-folded (in the type's own precision) and
//   rewritten by identities that hold bit for bit in IEEE arithmetic (x*1, x/1, x-0); never
//   reassociated.
// - Division by zero is never folded; it stays in the expression for the runtime to face.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/expr.h"

namespace anvil {

// Inclusive integer bounds; kNegInf / kPosInf mean unbounded on that side.
struct ConstIntBound {
    int64_t min;
    int64_t max;
    static constexpr int64_t kPosInf = INT64_MAX;
    static constexpr int64_t kNegInf = INT64_MIN;
    bool is_const() const { return min == max; }
    bool operator==(const ConstIntBound&) const = default;
};

// Inclusive symbolic interval [min, max]; an undefined side means unbounded.
struct Interval {
    PrimExpr min;
    PrimExpr max;
    // Both sides bounded and structurally equal: the expression takes a single value.
    bool is_point() const;
    static Interval point(PrimExpr e) { return {e, e}; }
    static Interval everything() { return {}; }
};

class Analyzer {
public:
    // Facts: v in [r.min, r.min + r.extent). Replaces an earlier fact about v.
    void bind(const Ref<Var>& v, const Range& r);
    // Fact: v == value (a let binding); simplify substitutes it.
    void bind(const Ref<Var>& v, const PrimExpr& value);
    // Drops every fact about v (a let whose value teaches nothing must not keep the facts of
    // an earlier copy of it).
    void forget(const Ref<Var>& v);
    // Facts a kernel's entry checks about its buffer parameters (codegen's argument checks):
    // each dimension variable (see dimension_var) is non-negative and fits the dimension's type,
    // so n in a dimension cast<int32>(n) lies in [0, 2^31 - 1].
    void bind_dimensions(const std::vector<Ref<Buffer>>& params);

    ConstIntBound const_int_bound(const PrimExpr& e);
    PrimExpr simplify(const PrimExpr& e);
    // True only when cond is provably true under the facts.
    bool can_prove(const PrimExpr& cond);
    bool can_prove_equal(const PrimExpr& a, const PrimExpr& b);
    // Range of e when the vars in `relax` range over their intervals (other vars stay symbolic).
    // Used for bound inference in lowering: e.g. i*8 + j with j in [0,7] -> [i*8, i*8+7].
    Interval eval_interval(const PrimExpr& e,
                           const std::unordered_map<const Var*, Interval>& relax);

private:
    friend class ConstIntBoundEvaluator;
    friend class ConstraintScope;
    friend class RewriteSimplifier;
    friend class IntervalEvaluator;

    // c with v's range [0, c * d): v is a loop over [0, d) (c = 1) or over [0, c * d) (a loop
    // fused from c outer iterations and an inner one of symbolic extent d), so v / d < c when
    // d >= 1. Undefined when v has no such extent.
    PrimExpr extent_cofactor(const Var* v, const PrimExpr& d) const;

    std::unordered_map<const Var*, ConstIntBound> var_bounds_;
    std::unordered_map<const Var*, PrimExpr> var_values_;
    // A loop variable's symbolic extent when its range is [0, extent) and the extent is not a
    // constant (var_bounds_ holds its constant hull).
    std::unordered_map<const Var*, PrimExpr> var_extents_;
    std::vector<Ref<Var>> bound_vars_;  // keeps the keys above alive
};

// The facts of a condition known to hold (inside `if (cond)`), for the scope's lifetime: each
// conjunct comparing a variable with a constant (n >= 1, i < 8, 4 > j) narrows that variable's
// bound; other conjuncts teach nothing. Scopes nest (destroy them in reverse order) and restore
// the bounds they narrowed.
class ConstraintScope {
public:
    ConstraintScope(Analyzer& analyzer, const PrimExpr& cond);
    ~ConstraintScope();
    ConstraintScope(const ConstraintScope&) = delete;
    ConstraintScope& operator=(const ConstraintScope&) = delete;

private:
    void learn(const PrimExpr& cond);
    void narrow(const Var* v, int64_t lo, int64_t hi);

    Analyzer& analyzer_;
    // Each narrowed variable with its bound before (nullopt: it had none).
    std::vector<std::pair<const Var*, std::optional<ConstIntBound>>> saved_;
};

// Simplifies without facts.
PrimExpr simplify(const PrimExpr& e);

}  // namespace anvil
