// Small compositions of graph ops that importers share: casts, reshapes, reductions over one
// axis, ranges, bias addition, axis checks.
#pragma once

#include <utility>
#include <vector>

#include "frontend/node_builder.h"

namespace anvil::frontend {

// New attributes of type `A` and a pointer to fill them in before the call is made.
template <typename A>
std::pair<Ref<graph::Attrs>, A*> new_attrs() {
    auto attrs = make_ref<A>();
    return {attrs, const_cast<A*>(attrs.get())};
}
// `x` converted to `dtype` (x itself when it already has it).
graph::Expr cast_to(const NodeBuilder& ctx, const graph::Expr& x, DataType dtype);
// `x` with a new static shape of the same element count.
graph::Expr reshape_to(const NodeBuilder& ctx, const graph::Expr& x,
                       const std::vector<int64_t>& shape);
// `x` with a size-1 axis inserted at `axis`.
graph::Expr expand_dims(const NodeBuilder& ctx, const graph::Expr& x, int64_t axis);
// The reduction `op` ("sum", "min", ...) of `x` over `axis`, which is dropped.
graph::Expr reduce_over(const NodeBuilder& ctx, const char* op, const graph::Expr& x, int64_t axis);
// take(x, index) along `axis` (numpy's take; a scalar index drops the axis).
graph::Expr take_along(const NodeBuilder& ctx, const graph::Expr& x, const graph::Expr& index,
                       int64_t axis);
// `parts` concatenated along `axis`.
graph::Expr concatenate_along(const NodeBuilder& ctx, std::vector<graph::Expr> parts, int64_t axis);
// start, start + 1, ..., `length` values of start's dtype (arange).
graph::Expr iota(const NodeBuilder& ctx, const PrimExpr& length, graph::Expr start);
// Axes given as values possibly known only at run time, normalized against `rank` (int64
// expressions), with the checks that they are in range and distinct added to `checks`.
std::vector<PrimExpr> normalized_axes(const std::vector<PrimExpr>& axes, int64_t rank,
                                      std::vector<PrimExpr>* checks);
// y + bias along `axis` (nn.bias_add); y itself when bias is undefined.
graph::Expr add_bias(const NodeBuilder& ctx, const graph::Expr& y, const graph::Expr& bias,
                     int64_t axis);

}  // namespace anvil::frontend
