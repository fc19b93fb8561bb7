// Partitioning a graph by a dataflow pattern, TVM's pattern.partition(expr, attrs, check): each
// disjoint match (match_groups.h) becomes a call of a new function that computes the matched
// region.
//
//   %1 = nn.relu(nn.conv2d(%x, meta[Constant][0]))
// with is_op("nn.relu")({is_op("nn.conv2d")({wildcard(), is_constant()})}) becomes
//   %1 = fn (%p0: Tensor[...], Composite="conv_relu",
//            PartitionedFromPattern="nn.conv2d_nn.relu_") {
//     nn.relu(nn.conv2d(%p0, meta[Constant][0]))
//   }(%x)
// The function's parameters are the values the region reads (the operands of its expressions
// that are not in it: what the wildcards, is_var and is_expr matched outside a dominates() path,
// any variable, operands no pattern describes), in the order the region first reads them; constants
// the pattern matches stay inside. Its attributes are `attrs` plus PartitionedFromPattern, the
// region's op names in order, each followed by "_" (a tuple is "Tuple_", a tuple item
// "TupleGetItem<i>_").
#pragma once

#include <functional>

#include "graph/module.h"
#include "graph/pattern/pattern.h"

namespace anvil::graph {

// A Function is partitioned in its body. `check`, when given, must accept a match's root.
Expr partition(const DFPattern& pattern, const Expr& expr, const FunctionAttrs& attrs = {},
               const std::function<bool(const Expr&)>& check = nullptr);

}  // namespace anvil::graph
