// Import-time evaluation of integer shape arithmetic (internal to frontend/onnx).
//
// PyTorch exports compute reshape targets from tensor shapes: Shape → Gather → Unsqueeze →
// Concat → Reshape, with Add/Mul/Div/Mod/Slice/Cast/Equal/Where in between; F.pad reorders its
// pad list by Reshape → Slice → Transpose → Reshape. When the shapes are static, every input of
// those nodes is an integer constant, and the importer evaluates them here so that the graph
// receives constants. This is deliberately not a kernel interpreter: only
// integer and bool tensors of modest size, only the ops shape code uses.
#pragma once

#include <optional>
#include <vector>

#include "frontend/onnx/converter.h"

namespace anvil::frontend {

// The node's outputs as constants when the node is shape arithmetic on integer constants;
// nullopt when it is not (the importer then runs the node's converter).
std::optional<std::vector<graph::Expr>> fold_shape_node(ConvertContext& ctx);

}  // namespace anvil::frontend
