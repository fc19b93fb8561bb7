// Integer polynomials over variables, for proving two shape expressions equal when the linear
// simplifier cannot: seq * n * 32 and seq * (n * 2) * 16 are the same polynomial. Only +, -, *,
// constants, variables and integer casts are understood; anything else is not a polynomial.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "ir/expr.h"

namespace anvil {

// Monomial (variables in a canonical order, repeated for powers) → coefficient.
using Polynomial = std::map<std::vector<const Var*>, int64_t>;

std::optional<Polynomial> as_polynomial(const PrimExpr& e);

// True when `a` and `b` are provably equal for every value of their variables: simplify proves
// it, or both are polynomials with the same terms. False means "not proven", not "different".
bool provably_equal(const PrimExpr& a, const PrimExpr& b);

}  // namespace anvil
