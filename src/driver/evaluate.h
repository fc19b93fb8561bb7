// Running a lowered module's "main" in this process, kernel by kernel, allocating each result.
// Constant folding evaluates subgraphs with it, and tests check whole models with it; deployed
// models run on the runtime's graph executor or VM instead (planned memory, no compiler).
#pragma once

#include <vector>

#include "graph/module.h"
#include "runtime/module.h"
#include "runtime/ndarray.h"
#include "runtime/vm.h"

namespace anvil::driver {

// `m` must be lowered (main calls kernels through call_tir only); `kernels` holds the compiled
// kernels. Returns main's result flattened (a tuple gives several arrays).
std::vector<runtime::NDArray> evaluate_lowered(const graph::IRModule& m,
                                               const runtime::Module& kernels,
                                               const std::vector<runtime::NDArray>& inputs);

// Runs a compiled model's main in this process with the executor its artifact would use: the VM
// when the model needs it (driver::needs_vm: run-time shapes, control flow, registry calls),
// otherwise evaluate_lowered.
std::vector<runtime::NDArray> run_in_process(const graph::IRModule& m,
                                             const runtime::Module& kernels,
                                             const std::vector<runtime::NDArray>& inputs);

// Runs a compiled model's main on the VM with values that may be sequences (tuples) or empty
// optionals; returns main's result as the VM gives it (a tuple when main returns several values).
runtime::VMValue run_values_in_process(const graph::IRModule& m, const runtime::Module& kernels,
                                       std::vector<runtime::VMValue> inputs);

}  // namespace anvil::driver
