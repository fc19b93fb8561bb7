// The one table of every op (ops.def), built explicitly on first use.
#pragma once

#include <string>

#include "graph/op.h"

namespace anvil::ops {

const graph::OpTable& op_table();
// The op named `name`; InternalError when there is none (front ends name ops they know).
const graph::Op& get_op(const std::string& name);

}  // namespace anvil::ops
