// Picking elements by their values, for every importer (ONNX TopK, NonZero, Compress; PyTorch
// topk, sort, nonzero, boolean-mask indexing). None sorts or scans sequentially; they rank and
// count instead, so each step is an elementwise op, a sum or a cumsum and the kernels come from
// the ordinary ops.
//
// top_k: along the axis, element i's rank is the number of elements that come before it
// (greater, for the largest; ties by lower index); the k results are the elements of ranks
// 0..k-1 (O(n^2) comparisons per row, fused into the sum). k may be known only at run time.
// selected_positions: the positions of the true elements of a mask, a count the executor binds
// at run time, so the result's size comes from the data.
#pragma once

#include <utility>
#include <vector>

#include "frontend/node_builder.h"
#include "frontend/shape_values.h"

namespace anvil::frontend {

// The positions (int64, ascending) of the true elements of the 1-D bool `mask`; their count, the
// result's length, is bound at run time.
graph::Expr selected_positions(const NodeBuilder& ctx, const graph::Expr& mask);

// The coordinates of the non-zero elements of `x` (static shape, rank >= 1) in row-major order:
// one int64 tensor [count] per dimension of `x`.
std::vector<graph::Expr> nonzero_coordinates(const NodeBuilder& ctx, const graph::Expr& x);

// The k largest (or smallest) elements along `axis` (normalized) and their int64 indices, in
// order (ties: the lower index first, as a stable sort). `k` holds one value, checked at run time
// to be in [0, n].
std::pair<graph::Expr, graph::Expr> top_k(const NodeBuilder& ctx, graph::Expr x, int64_t axis,
                                          const ShapeValues& k, bool largest);

}  // namespace anvil::frontend
