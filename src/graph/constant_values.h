// The numbers a constant holds, for passes and code generators that read scales, zero points
// and bounds at compile time.
#pragma once

#include <optional>
#include <vector>

#include "graph/expr.h"

namespace anvil::graph {

// The elements of a float32/float64/int32/int64 constant as doubles; nullopt for other
// expressions and dtypes.
std::optional<std::vector<double>> constant_values(const Expr& e);
// The value all elements of a constant share; nullopt when they differ or `e` is no constant.
std::optional<double> uniform_value(const Expr& e);

}  // namespace anvil::graph
