// Lowering a scheduled tensor-expression graph to a loop-IR function.
//
// For every stage, in order: bound inference gives each axis its extent (a producer computed at
// a consumer's loop covers exactly the region that the loops inside that point read), the
// relations give each original axis as an expression of the loops, and guards keep
// non-divisible splits and over-approximated regions inside the tensor's domain. Inlined stages
// are substituted into their readers; attached stages are emitted, with their allocation, inside
// the consumer loop they are attached to; root stages at the top of the function.
#pragma once

#include <string>
#include <vector>

#include "te/schedule.h"
#include "tir/stmt.h"

namespace anvil::te {

// `args` are the function's parameters in order: placeholders and outputs (every input the
// outputs depend on, and every output, must be among them). Symbolic shape variables that no
// argument's dimension binds (n in a [n * 2, 16] buffer) become scalar parameters after them
// (scalar_params), and so do variables the computation itself uses (a slice's start known only
// at run time). Raises UserError for schedules that cannot be lowered, naming the stage
// and axis.
Ref<tir::PrimFunc> schedule_to_loops(const Schedule& schedule, const std::vector<Tensor>& args,
                                     const std::string& name);

// The variables in the buffers' shapes that no dimension binds (see dimension_var), in order of
// first appearance: a kernel's scalar parameters.
std::vector<Ref<Var>> unbound_shape_vars(const std::vector<Ref<Buffer>>& params);
// Those, then the variables `body` uses that neither a dimension nor a loop or let binds.
std::vector<Ref<Var>> scalar_params(const std::vector<Ref<Buffer>>& params, const tir::Stmt& body);

}  // namespace anvil::te
