// Graph compositions the shape, index and creation converters share (convert_shape.cpp,
// convert_index.cpp, convert_create.cpp): PyTorch's view, slice and concatenation semantics over
// shapes that may be symbolic (an input dimension declared as a name or -1), and the operand
// readings those converters have in common.
#pragma once

#include <optional>
#include <vector>

#include "frontend/pytorch/converter.h"
#include "frontend/shape_values.h"

namespace anvil::frontend::pytorch {

// A list of sizes (`x.view(a, b)`, `torch.zeros(a, b)`): numbers known at import time (possibly
// symbolic) and numbers known only at run time (`int(t.sum())`), which become dimension
// variables the executor binds from their tensors (`bindings`, to bind before the sizes are
// used).
struct Sizes {
    std::vector<PrimExpr> dims;
    std::vector<ShapeValues> bindings;
};
Sizes sizes_operand(const PtContext& ctx, size_t i);

// The dimensions of `x` as int64 expressions (constants or symbolic).
std::vector<PrimExpr> dims_of(const PtContext& ctx, const graph::Expr& x);

// `x` with its axes permuted (output axis i is input axis perm[i]); `x` for the identity.
graph::Expr permute_axes(const PtContext& ctx, const graph::Expr& x,
                         const std::vector<int64_t>& perm);

// `x` viewed with the sizes `dims` (PyTorch's view/reshape: one -1 is inferred, 0 is a size).
// Sizes may be symbolic: when the element counts are provably equal the result keeps them as its
// shape; otherwise the executor checks the count and infers the -1 at run time.
graph::Expr view_dims(const PtContext& ctx, const graph::Expr& x, std::vector<PrimExpr> dims);
// The same for sizes that may be known only at run time: the executor binds and checks them.
graph::Expr view_sizes(const PtContext& ctx, const graph::Expr& x, const Sizes& sizes);

// x[begin:end:step] along `axis` with PyTorch's clamping (a missing begin is 0, a missing end the
// axis's size; negative values count from the end). `step` must be positive. Symbolic sizes and
// bounds give a slice whose length the executor computes; the whole axis is `x` itself.
graph::Expr slice_axis(const PtContext& ctx, const graph::Expr& x, int64_t axis,
                       std::optional<PrimExpr> begin, std::optional<PrimExpr> end,
                       const PrimExpr& step);

// x[index] along `axis` (the axis removed); a negative index counts from the end.
graph::Expr select_axis(const PtContext& ctx, const graph::Expr& x, int64_t axis,
                        const PrimExpr& index);

// The tensors joined along `axis` (normalized already), after PyTorch's type promotion (to the
// node's recorded output type when there is one).
graph::Expr concat(const PtContext& ctx, std::vector<graph::Expr> xs, int64_t axis);

// `x` broadcast to `dims` (numpy's rules; symbolic target sizes are checked at run time where the
// importer cannot prove them).
graph::Expr broadcast_dims(const PtContext& ctx, const graph::Expr& x,
                           const std::vector<PrimExpr>& dims);

// The element type for a creation op: the `dtype=` operand `i` when given, else the node's
// recorded output type, else `fallback`.
DataType creation_dtype(const PtContext& ctx, size_t i, DataType fallback);

// A tensor of `dtype` and sizes `dims` (possibly symbolic) filled with `value`: a number known at
// import time (possibly a symbolic size), a number known only at run time, or a one-element
// tensor.
graph::Expr filled(const PtContext& ctx, const std::vector<PrimExpr>& dims, const PtValue& value,
                   DataType dtype);
// The same for sizes that may be known only at run time (checked not to be negative).
graph::Expr filled_sizes(const PtContext& ctx, const Sizes& sizes, const PtValue& value,
                         DataType dtype);

}  // namespace anvil::frontend::pytorch
