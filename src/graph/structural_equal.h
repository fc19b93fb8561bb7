// Structural equality of graph expressions and modules.
//
// Two expressions are equal when they have the same node kinds, types, op names, attributes
// (attrs_equal), tuple indices and primitive flags, constants with the same dtype, shape and
// bytes (bitwise, so NaN payloads count), and equal operands. Variables bound inside the
// compared IR (function parameters, let variables) are matched by the position of their
// binding, not by identity or name; free variables must be the same objects. Symbolic
// dimensions in types correspond one-to-one by first appearance (the parser makes one variable
// per name). Sharing is not compared: a DAG equals the tree that repeats its shared nodes.
// SourceLocs are ignored.
//
// Modules are equal when they have the same function names with equal functions and the same
// kernel names with structurally equal kernels (tir::structural_equal).
#pragma once

#include "graph/expr.h"
#include "graph/module.h"

namespace anvil::graph {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const IRModule& a, const IRModule& b);

}  // namespace anvil::graph
