// Shapes for op type rules and computes: numpy broadcasting, and graph shapes (int64
// dimensions) as tensor-expression shapes (int32 loop extents).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "graph/type.h"
#include "te/tensor.h"

namespace anvil::ops {

// The numpy-broadcast shape of the operands; UserError at `loc` naming `op` when two dimensions
// are neither equal nor 1. With `at_run_time`, two dimensions that are not both constants and
// not provably equal broadcast by their run-time values: the result's dimension is
// select(a == b || b == 1, a, select(a == 1, b, -1)), so shapes that do not fit make a negative
// dimension the executor refuses before any kernel runs. Such an op must read its operands with
// broadcast_index(..., out_shape).
std::vector<PrimExpr> broadcast_shape(const std::vector<std::vector<PrimExpr>>& shapes,
                                      const SourceLoc& loc, const std::string& op,
                                      bool at_run_time = false);
// The index into an operand of `operand_shape` for output index `out` (right-aligned; size-1
// dimensions read element 0). With the output's shape, a dimension that differs from the
// output's and is not a constant (broadcast at run time) reads min(i, dim - 1): i when it is the
// output's size, 0 when it is 1.
std::vector<PrimExpr> broadcast_index(const std::vector<PrimExpr>& operand_shape,
                                      std::span<const PrimExpr> out,
                                      std::span<const PrimExpr> out_shape = {});

// The index a te::compute body receives, as a vector to index a tensor with.
std::vector<PrimExpr> to_vector(std::span<const PrimExpr> index);

// A tensor type's shape with int32 dimensions, for te::compute / te::placeholder.
std::vector<PrimExpr> te_shape(const graph::Type& t);
// A te tensor's type as a graph type.
graph::Type graph_type(const te::Tensor& t);

}  // namespace anvil::ops
