// Checks the invariants every graph module must hold between passes (the pass runner calls
// verify after each pass in debug builds and tests). A violation is Anvil's bug, so it raises
// anvil::InternalError listing every problem found, each naming the function it is in.
//
// Checked:
// - scoping: every Var is bound by an enclosing function (its parameters) or let; functions are
//   closed (no free variables, nested functions included); a let's value does not use its own
//   variable;
// - a Var object is bound at most once in the whole module (each binding makes a new Var);
// - types are current: a call's stored type is what its op's type rule gives for the current
//   argument types and attributes (the rule is run again); a call of a function has as many
//   arguments as the function has parameters, of the parameters' types, and the function's
//   result type; tuples, projections, functions and lets have the types their parts give;
// - a call names an op or a function (never both, never neither), with attributes of the op's
//   attribute type;
// - no primitive function inside a primitive function (a fused group is one kernel);
// - kernels: stored under their own name and valid loop IR (tir::verify).
#pragma once

#include <string>
#include <vector>

#include "graph/module.h"

namespace anvil::graph {

void verify(const IRModule& m);
// The problems verify would list; empty when the module is valid.
std::vector<std::string> find_problems(const IRModule& m);

}  // namespace anvil::graph
