// Visitors and mutators over scalar expressions, dispatched on ExprKind through the X-macro.
//
//   ExprVisitor  walks every sub-expression (override visit_ for the kinds you care about and
//                call the base to keep walking).
//   ExprMutator  rebuilds bottom-up and returns the *same* node when no child changed, so
//                unchanged subtrees stay shared.
#pragma once

#include <functional>

#include "ir/expr.h"

namespace anvil {

class ExprVisitor {
public:
    virtual ~ExprVisitor() = default;
    virtual void visit(const PrimExpr& e);

protected:
#define ANVIL_X(name) virtual void visit_(const name* op);
    ANVIL_FOR_EACH_EXPR(ANVIL_X)
#undef ANVIL_X
    // Reached for Buffer shapes inside Load; default does nothing.
    virtual void visit_buffer(const Ref<Buffer>&) {}
};

class ExprMutator {
public:
    virtual ~ExprMutator() = default;
    virtual PrimExpr mutate(const PrimExpr& e);

protected:
#define ANVIL_X(name) virtual PrimExpr mutate_(const name* op, const PrimExpr& self);
    ANVIL_FOR_EACH_EXPR(ANVIL_X)
#undef ANVIL_X
    // Lets a pass replace the buffer of a Load (e.g. flatten_storage); default keeps it.
    virtual Ref<Buffer> mutate_buffer(const Ref<Buffer>& b) {
        return b;
    }
    // Mutates each element; returns true when any changed.
    bool mutate_all(const std::vector<PrimExpr>& in, std::vector<PrimExpr>* out);
};

// Calls `f` on every sub-expression, parents before children.
void pre_order_visit(const PrimExpr& e, const std::function<void(const PrimExpr&)>& f);
// Whether `e` reads the variable `v` (by identity).
bool uses_var(const PrimExpr& e, const Var* v);

}  // namespace anvil
