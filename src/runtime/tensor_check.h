// Checks a tensor that a caller hands to an executor (set_input, run_with, copy_output) before the
// executor reads or writes its memory: a wrong tensor is a UserError naming the input or output
// and saying what was expected and what was given, never a crash or a silent wrong answer.
//
// What is accepted: a CPU tensor of exactly the expected dtype and shape whose data is compact
// row-major (strides NULL, or the row-major strides; a dimension of extent 1 may have any stride).
// Any alignment is accepted: the executors copy such data into their own aligned storage.
#pragma once

#include <span>
#include <string>

#include "anvil/runtime.h"

namespace anvil::runtime {

// `where` names the tensor for messages, e.g. "graph executor: run_with: input 0 'x'".
void check_boundary_tensor(const std::string& where, const DLTensor* value,
                           std::span<const int64_t> shape, DLDataType dtype);

}  // namespace anvil::runtime
