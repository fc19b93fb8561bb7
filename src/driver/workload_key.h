// Workload keys: the canonical, versioned description of what a fused kernel computes, which
// identifies its tuning task and its tuning records.
//
//   anvil-workload v1 | param Tensor[(1, 64, 56, 56), float32]; param Tensor[(64, 64, 3, 3),
//   float32]; nn.conv2d(strides=[1, 1], padding=[1, 1, 1, 1], ...) %0 %1:Tensor[...]; ...
//
// The key lists the function's parameters' types, then each op call in post-order with its
// attributes (as the graph printer writes them), its operands and its result type. Constants
// count by type only (they become kernel arguments), names of variables and of the model's
// nodes do not appear: two models that share a conv2d shape share its key, and so its records.
// The target is not part of the key; records store it beside the key (tune/record.h).
// The version changes whenever the key's spelling or the meaning of the ops' attributes does,
// so that records made for another meaning are not applied.
#pragma once

#include <string>

#include "graph/expr.h"

namespace anvil::driver {

inline constexpr const char* kWorkloadKeyVersion = "anvil-workload v1";

std::string workload_key(const graph::Function& f);

}  // namespace anvil::driver
