// Structural equality of loop-IR statements and functions.
//
// Two statements are equal when they have the same shape, kinds, dtypes, constants and names of
// calls, and their variables and buffers correspond. Variables and buffers *bound* inside the
// compared IR (loop variables, let variables, allocated buffers, and for functions the
// parameters) are matched by the position of their binding, not by identity or name: `for i
// {A[i]}` equals `for j {A[j]}`. Free variables and buffers (not bound in the compared IR) must
// be the same objects. Names of variables and buffers are ignored (they exist only for
// printing); a function's own name is compared, since it is the symbol callers link against.
// SourceLoc is ignored.
//
// This is what parse(print(x)) is checked against, and what tests use to compare the output of a
// pass with an expected IR. Expressions are compared by anvil::StructuralEqualizer
// (ir/structural_equal.h) with scoped bindings: a binding ends with its scope, so one Var bound
// by two sibling loops on one side (as unroll_loops and partition_loops leave it) equals two
// Vars on the other. Any NaN equals any NaN, as the text writes them all as `nan`.
#pragma once

#include "tir/stmt.h"

namespace anvil::tir {

bool structural_equal(const Stmt& a, const Stmt& b);
bool structural_equal(const Ref<PrimFunc>& a, const Ref<PrimFunc>& b);

}  // namespace anvil::tir
