// The type checks QNN ops share (ops/qnn.cpp, ops/qnn_conv.cpp): quantized element types and
// scale / zero-point operands.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/type.h"
#include "support/source_loc.h"

namespace anvil::ops {

// `t` must be int8, uint8, int16 or int32 (what quantized values are stored as).
void check_quantized_dtype(const std::string& op, const std::string& what, DataType t,
                           const SourceLoc& loc);

// `params` are a scale (float32) and a zero point (int32) of the tensor `x`, each a scalar, a
// one-element tensor or, where the op has an `axis` for them, a 1-D tensor of x's length along
// it. `prefix` names them in messages ("input ", "lhs ", ...).
void check_qparams(const std::string& op, const std::vector<graph::Type>& params,
                   const std::string& prefix, const graph::TensorType& x,
                   std::optional<int64_t> axis, const SourceLoc& loc);

}  // namespace anvil::ops
