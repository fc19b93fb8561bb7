// The rewrite simplifier behind Analyzer::simplify (internal to ir/).
//
// It rebuilds an expression bottom-up; at each node the operands are already simplified and the
// rules of that node's family apply once. Analyzer::simplify repeats the walk until nothing
// changes (at most a few rounds): every rule makes the expression smaller or moves it towards the
// canonical linear form, so the repetition terminates.
//
// Rule families and where they live:
//   rewrite_simplify.cpp   dispatch, constant folding, linear forms for + - *, float identities,
//                          vectors (broadcast/ramp), logic, select, cast, variables
//   rewrite_div_cmp.cpp    div/mod by constants, min/max and comparisons decided by bounds
#pragma once

#include "ir/analyzer.h"
#include "ir/expr_functor.h"
#include "ir/linear_form.h"

namespace anvil {

class RewriteSimplifier : public ExprMutator {
public:
    explicit RewriteSimplifier(Analyzer* analyzer) : analyzer_(analyzer) {}

    // The simplified form of `kind(a, b)` for already simplified operands.
    PrimExpr rewrite_binary(ExprKind kind, const PrimExpr& a, const PrimExpr& b);

protected:
    PrimExpr mutate_(const Var* op, const PrimExpr& self) override;
#define ANVIL_X(name) PrimExpr mutate_(const name* op, const PrimExpr& self) override;
    ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X
    PrimExpr mutate_(const Not* op, const PrimExpr& self) override;
    PrimExpr mutate_(const Select* op, const PrimExpr& self) override;
    PrimExpr mutate_(const Cast* op, const PrimExpr& self) override;
    PrimExpr mutate_(const Ramp* op, const PrimExpr& self) override;
    PrimExpr mutate_(const Broadcast* op, const PrimExpr& self) override;

private:
    ConstIntBound bound(const PrimExpr& e) {
        return analyzer_->const_int_bound(e);
    }
    // Bound of a linear sum from the bounds of its atoms.
    ConstIntBound bound(const LinearSum& s);

    PrimExpr rewrite_linear(ExprKind kind, const PrimExpr& a, const PrimExpr& b);
    PrimExpr rewrite_float_arith(ExprKind kind, const PrimExpr& a, const PrimExpr& b);
    PrimExpr rewrite_vector(ExprKind kind, const PrimExpr& a, const PrimExpr& b);
    PrimExpr rewrite_logic(ExprKind kind, const PrimExpr& a, const PrimExpr& b);
    PrimExpr rewrite_not(const PrimExpr& a);
    PrimExpr make_ramp_or_broadcast(const PrimExpr& base, const PrimExpr& stride, int lanes);

    // rewrite_div_cmp.cpp
    PrimExpr rewrite_div(ExprKind kind, const PrimExpr& a, const PrimExpr& b);
    PrimExpr rewrite_div_by_extent(ExprKind kind, const PrimExpr& a, const PrimExpr& b);
    PrimExpr rewrite_floordiv(const PrimExpr& a, int64_t c);
    PrimExpr rewrite_floormod(const PrimExpr& a, int64_t c);
    PrimExpr rewrite_vector_div(ExprKind kind, const Ramp* ramp, int64_t c);
    PrimExpr rewrite_min_max(ExprKind kind, const PrimExpr& a, const PrimExpr& b);
    PrimExpr rewrite_compare(ExprKind kind, const PrimExpr& a, const PrimExpr& b);

    Analyzer* analyzer_;
    int substitution_depth_ = 0;
};

}  // namespace anvil
