// Operands that give sizes (a shape, repeats, axes, split sizes, pads), whatever an importer knows
// of them: constants, a shape_tensor of symbolic dimensions, or a tensor known only at run time,
// whose values become new dimension variables the executor binds (NodeBuilder::bind_values).
// ONNX's Reshape/Expand/Squeeze/Split and PyTorch's view/expand/split take sizes in all three
// forms, so the machinery that turns them into graph calls is shared here.
#pragma once

#include <string>
#include <vector>

#include "frontend/node_builder.h"

namespace anvil::frontend {

struct ShapeValues {
    std::vector<PrimExpr> values;    // int64
    std::vector<int64_t> constants;  // when all_constant
    bool all_constant = false;
    graph::Expr bound_from;  // the run-time tensor `values` are bound to, if any
};

// The values of the int tensor `t` (`what` names it in errors): its constants, its shape_tensor's
// expressions, or one new dimension variable per element (bound_from = t).
ShapeValues shape_values(const NodeBuilder& ctx, const graph::Expr& t, const std::string& what);
// `x`, after the executor has bound `v`'s variables (when run-time) and verified `checks`.
graph::Expr bind_shape_values(const NodeBuilder& ctx, graph::Expr x, const ShapeValues& v,
                              std::vector<PrimExpr> checks);
// The same for every run-time operand in `values` at once.
graph::Expr bind_all_shape_values(const NodeBuilder& ctx, graph::Expr x,
                                  const std::vector<ShapeValues>& values,
                                  std::vector<PrimExpr> checks);
// `x` (bound as `values` and `checks` say) viewed with the shape `dims`, int64 expressions the
// executor computes: a dynamic_reshape to a shape_tensor of them (allowzero: a 0 is a size; one
// -1 is inferred, as in PyTorch's view(x.size(0), -1); the executor checks the element count).
graph::Expr reshape_to_values(const NodeBuilder& ctx, const graph::Expr& x,
                              const std::vector<ShapeValues>& values, std::vector<PrimExpr> checks,
                              std::vector<PrimExpr> dims);
// Squeeze of the axes `v` (a run-time operand or expressions): the executor checks them and
// views `x` in the shape it computes.
graph::Expr squeeze_values(const NodeBuilder& ctx, const graph::Expr& x, const ShapeValues& v);
// Unsqueeze (size-1 axes inserted) at the axes `v`, normalized against the output rank.
graph::Expr unsqueeze_values(const NodeBuilder& ctx, const graph::Expr& x, const ShapeValues& v);
// broadcast_to of `x` to a non-constant target (numpy's rules: the shapes align on the right, and
// each pair of dimensions is equal or has a 1), with run-time checks of what is not provable.
graph::Expr broadcast_to_values(const NodeBuilder& ctx, graph::Expr x, const ShapeValues& target);
// Split of `x` along `axis` into sizes known only at run time: one dynamic strided_slice per
// part, after checking that the sizes are not negative and add up to the axis; `outputs` is the
// number of parts the model expects.
std::vector<graph::Expr> split_dynamic(const NodeBuilder& ctx, const graph::Expr& x, int64_t axis,
                                       const ShapeValues& sizes, int outputs);

}  // namespace anvil::frontend
