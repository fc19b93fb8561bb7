// PyTorch's type promotion for operands of elementwise ops: tensors with dimensions decide the
// result type, then 0-d tensors, then Python numbers, and a lower-priority operand changes it
// only when it is of a higher category (bool < integer < floating), to the default type of that
// category for a number (int64, float32). https://pytorch.org/docs/stable/tensor_attributes.html
#pragma once

#include <utility>

#include "frontend/pytorch/converter.h"

namespace anvil::frontend::pytorch {

// The type operands `indices` of the node promote to.
DataType promoted_dtype(const PtContext& ctx, std::initializer_list<size_t> indices);
// Operands i and j as tensors of their promoted type.
std::pair<graph::Expr, graph::Expr> promote_operands(const PtContext& ctx, size_t i, size_t j);
// Operand i as a tensor of type `t`.
graph::Expr operand_as(const PtContext& ctx, size_t i, DataType t);

// What an elementwise op on the operands `indices` returns, given its result `r`: a tensor when
// any operand is a tensor; otherwise the operands were numbers, some known only at run time, and
// so is the result, a number of the kind the node's output type names (int, float, bool) held in
// a 0-d tensor of that kind's type (int64, float32, bool).
PtValue elementwise_result(const PtContext& ctx, graph::Expr r,
                           std::initializer_list<size_t> indices);

}  // namespace anvil::frontend::pytorch
