// Walkers over the graph IR, dispatched on ExprKind through the X-macro. Both memoize by node:
// a dataflow graph shares nodes, and each shared node is visited (or rewritten) once.
#pragma once

#include <functional>
#include <unordered_map>

#include "graph/expr.h"

namespace anvil::graph {

class ExprVisitor {
public:
    virtual ~ExprVisitor() = default;
    virtual void visit(const Expr& e);

protected:
#define ANVIL_X(name) virtual void visit_(const name* op);
    ANVIL_FOR_EACH_GRAPH_EXPR(ANVIL_X)
#undef ANVIL_X

private:
    std::unordered_map<const ExprNode*, bool> visited_;
};

// Rebuilds bottom-up; returns the same node when no child changed. A function for an external
// code generator (a Compiler attribute, graph/passes/partition_graph.cpp) is not entered: its
// region is what that code generator reads, and graph passes leave it as partitioned.
class ExprMutator {
public:
    virtual ~ExprMutator() = default;
    virtual Expr mutate(const Expr& e);

protected:
#define ANVIL_X(name) virtual Expr mutate_(const name* op, const Expr& self);
    ANVIL_FOR_EACH_GRAPH_EXPR(ANVIL_X)
#undef ANVIL_X
    bool mutate_all(const std::vector<Expr>& in, std::vector<Expr>* out);

private:
    std::unordered_map<const ExprNode*, Expr> memo_;
};

// Calls `f` once on every node reachable from `e`, operands before users.
void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& f);

}  // namespace anvil::graph
