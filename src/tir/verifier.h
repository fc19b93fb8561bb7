// Checks the invariants every loop-IR function must hold between passes (the pass runner calls
// verify after each pass in debug builds and tests). A violation is Anvil's bug, so it raises
// anvil::InternalError listing every problem found, each with the statement it is in.
//
// Checked:
// - scoping: every variable is a scalar parameter or bound by an enclosing loop or let; every
//   buffer is a parameter or allocated by an enclosing Allocate (buffer shapes included);
// - a Var (or Buffer) is not bound again while its binding is in scope. Binding the same object
//   in *sibling* scopes is allowed: unroll_loops and partition_loops copy bodies, and a
//   variable is identified by object, so the copies do not interfere;
// - Load/Store: as many indices as the buffer has dimensions, or exactly one (a row-major
//   offset, as flatten_storage leaves accesses to parameters whose shape stays multi-
//   dimensional); integer indices; the stored value's element type is the buffer's; the last
//   index has the value's lanes and every other index is scalar or has those lanes;
// - types: let/loop variables match their values/bounds, loop variables are scalar integers,
//   conditions are bool, binary operands and select branches agree;
// - loops: no Parallel loop inside another Parallel loop, Vectorized and Unrolled loops have a
//   constant extent, ThreadBinding loops name their thread;
// - no Reduce (tensor-expression only) and no undefined statement or expression.
#pragma once

#include "tir/stmt.h"

namespace anvil::tir {

void verify(const Ref<PrimFunc>& f);
// The same checks on a function the user wrote (a prim_func in module text): its problems are
// the user's, so they raise UserError at `loc`.
void check_user_function(const Ref<PrimFunc>& f, const SourceLoc& loc = {});

}  // namespace anvil::tir
