// Reductions for tensor-expression bodies: sum, max, min and user-defined commutative reducers.
//
//   auto k = te::reduce_axis(K, "k");
//   auto C = te::compute({M, N}, [&](PrimExpr i, PrimExpr j) {
//       return te::sum(A(i, k->var) * B(k->var, j), {k});
//   });
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace anvil::te {

using Axes = std::vector<Ref<IterVar>>;

PrimExpr sum(PrimExpr source, const Axes& axis, PrimExpr where = PrimExpr());
PrimExpr max(PrimExpr source, const Axes& axis, PrimExpr where = PrimExpr());
PrimExpr min(PrimExpr source, const Axes& axis, PrimExpr where = PrimExpr());

// A user-defined reducer: `combine(x, y)` must be commutative and associative, `identity(t)`
// its identity element for dtype t. Returns a function usable like sum().
using Reducer = std::function<PrimExpr(PrimExpr source, const Axes& axis, PrimExpr where)>;
Reducer comm_reducer(const std::function<PrimExpr(PrimExpr, PrimExpr)>& combine,
                     const std::function<PrimExpr(DataType)>& identity, const std::string& name);

}  // namespace anvil::te
