#include "graph/expr_functor.h"

#include "support/error.h"

namespace anvil::graph {

void ExprVisitor::visit(const Expr& e) {
    if (!visited_.emplace(e.get(), true).second) return;
    switch (e->kind) {
#define ANVIL_X(name)                              \
    case ExprKind::name:                           \
        visit_(static_cast<const name*>(e.get())); \
        return;
        ANVIL_FOR_EACH_GRAPH_EXPR(ANVIL_X)
#undef ANVIL_X
    }
}

void ExprVisitor::visit_(const Var*) {}
void ExprVisitor::visit_(const Constant*) {}
void ExprVisitor::visit_(const Call* op) {
    if (op->callee.defined()) visit(op->callee);
    for (const auto& a : op->args) visit(a);
}
void ExprVisitor::visit_(const Tuple* op) {
    for (const auto& f : op->fields) visit(f);
}
void ExprVisitor::visit_(const TupleGetItem* op) {
    visit(op->tuple);
}
void ExprVisitor::visit_(const Function* op) {
    for (const auto& p : op->params) visit(Expr(p));
    visit(op->body);
}
void ExprVisitor::visit_(const Let* op) {
    visit(Expr(op->var));
    visit(op->value);
    visit(op->body);
}

Expr ExprMutator::mutate(const Expr& e) {
    auto it = memo_.find(e.get());
    if (it != memo_.end()) return it->second;
    Expr result;
    switch (e->kind) {
#define ANVIL_X(name)                                           \
    case ExprKind::name:                                        \
        result = mutate_(static_cast<const name*>(e.get()), e); \
        break;
        ANVIL_FOR_EACH_GRAPH_EXPR(ANVIL_X)
#undef ANVIL_X
    }
    memo_.emplace(e.get(), result);
    return result;
}

bool ExprMutator::mutate_all(const std::vector<Expr>& in, std::vector<Expr>* out) {
    bool changed = false;
    out->clear();
    for (const auto& e : in) {
        out->push_back(mutate(e));
        changed |= !out->back().same_as(e);
    }
    return changed;
}

Expr ExprMutator::mutate_(const Var*, const Expr& self) {
    return self;
}
Expr ExprMutator::mutate_(const Constant*, const Expr& self) {
    return self;
}

Expr ExprMutator::mutate_(const Call* op, const Expr& self) {
    std::vector<Expr> args;
    bool changed = mutate_all(op->args, &args);
    Expr callee = op->callee.defined() ? mutate(op->callee) : op->callee;
    if (!changed && callee.same_as(op->callee)) return self;
    if (op->op.defined()) return make_call(op->op, std::move(args), op->attrs, op->loc);
    ANVIL_CHECK(callee.is<Function>()) << "call of a " << expr_kind_name(callee->kind);
    return make_call_function(callee.cast<Function>(), std::move(args), op->loc);
}

Expr ExprMutator::mutate_(const Tuple* op, const Expr& self) {
    std::vector<Expr> fields;
    if (!mutate_all(op->fields, &fields)) return self;
    return make_tuple(std::move(fields), op->loc);
}

Expr ExprMutator::mutate_(const TupleGetItem* op, const Expr& self) {
    Expr t = mutate(op->tuple);
    return t.same_as(op->tuple) ? self : make_tuple_get_item(t, op->index, op->loc);
}

Expr ExprMutator::mutate_(const Function* op, const Expr& self) {
    if (op->attrs.count("Compiler")) return self;
    std::vector<Ref<Var>> params;
    bool changed = false;
    for (const auto& p : op->params) {
        Expr np = mutate(Expr(p));
        ANVIL_CHECK(np.is<Var>()) << "a parameter was rewritten into a "
                                  << expr_kind_name(np->kind);
        params.push_back(np.cast<Var>());
        changed |= !np.same_as(Expr(p));
    }
    Expr body = mutate(op->body);
    if (!changed && body.same_as(op->body)) return self;
    return Expr(make_function(std::move(params), body, op->primitive, op->loc, op->attrs));
}

Expr ExprMutator::mutate_(const Let* op, const Expr& self) {
    Expr v = mutate(Expr(op->var));
    Expr value = mutate(op->value);
    Expr body = mutate(op->body);
    if (v.same_as(Expr(op->var)) && value.same_as(op->value) && body.same_as(op->body)) return self;
    ANVIL_CHECK(v.is<Var>()) << "a let variable was rewritten into a " << expr_kind_name(v->kind);
    return make_let(v.cast<Var>(), value, body, op->loc);
}

void post_order_visit(const Expr& e, const std::function<void(const Expr&)>& f) {
    class Walker : public ExprVisitor {
    public:
        explicit Walker(const std::function<void(const Expr&)>& f) : f_(f) {}

    protected:
#define ANVIL_X(name)                      \
    void visit_(const name* op) override { \
        ExprVisitor::visit_(op);           \
        f_(Expr(op));                      \
    }
        ANVIL_FOR_EACH_GRAPH_EXPR(ANVIL_X)
#undef ANVIL_X
    private:
        const std::function<void(const Expr&)>& f_;
    };
    Walker(f).visit(e);
}

}  // namespace anvil::graph
