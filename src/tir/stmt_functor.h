// Visitors and mutators over loop-IR statements, dispatched on StmtKind through the X-macro.
// Both also walk the expressions inside statements (through visit_expr / mutate_expr, which a
// pass can override to use its own ExprVisitor / ExprMutator).
#pragma once

#include <functional>

#include "ir/expr_functor.h"
#include "tir/stmt.h"

namespace anvil::tir {

class StmtVisitor : public ExprVisitor {
public:
    virtual void visit_stmt(const Stmt& s);
    using ExprVisitor::visit;

protected:
#define ANVIL_X(name) virtual void visit_stmt_(const name* op);
    ANVIL_FOR_EACH_STMT(ANVIL_X)
#undef ANVIL_X
    virtual void visit_expr(const PrimExpr& e) {
        visit(e);
    }
};

// Rebuilds statements bottom-up and returns the same node when nothing changed.
class StmtMutator : public ExprMutator {
public:
    virtual Stmt mutate_stmt(const Stmt& s);
    using ExprMutator::mutate;

protected:
#define ANVIL_X(name) virtual Stmt mutate_stmt_(const name* op, const Stmt& self);
    ANVIL_FOR_EACH_STMT(ANVIL_X)
#undef ANVIL_X
    virtual PrimExpr mutate_expr(const PrimExpr& e) {
        return mutate(e);
    }
};

// Calls `f` on every statement, parents before children.
void pre_order_visit(const Stmt& s, const std::function<void(const Stmt&)>& f);

// The variables `s` uses that no enclosing For or LetStmt defines, in order of first use.
std::vector<Ref<Var>> free_vars(const Stmt& s);

// Replaces variables (by identity) in every expression of a statement.
Stmt substitute(const Stmt& s, const std::vector<std::pair<Ref<Var>, PrimExpr>>& map);

}  // namespace anvil::tir
