// Calls of nested functions that are not kernels (not primitive) and that no external code
// generator takes (no Compiler attribute) are inlined: their body, with the call's arguments in
// place of the parameters. Such functions come from partitioning by patterns
// (graph/pattern/partition.h: Composite="..." regions) that nothing offloaded; compiled
// natively, they compute what their ops compute. A function for an external code generator is
// left whole, the composites inside it too: they are what its code generator reads.
#include <unordered_map>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"

namespace anvil::graph {

namespace {

// The body of a function with its parameters replaced by values, and each variable it binds
// with a let replaced by a new one (a function called twice is inlined twice: a variable is
// bound once in a graph).
class Substituter : public ExprMutator {
public:
    explicit Substituter(std::unordered_map<const ExprNode*, Expr> values)
        : values_(std::move(values)) {}

    Expr mutate(const Expr& e) override {
        auto it = values_.find(e.get());
        return it != values_.end() ? it->second : ExprMutator::mutate(e);
    }

protected:
    // A nested function is closed: nothing of the inlined body's scope is in it.
    Expr mutate_(const Function*, const Expr& self) override { return self; }
    Expr mutate_(const Let* op, const Expr& self) override {
        Expr value = mutate(op->value);
        Ref<Var> fresh = make_var(op->var->name, op->var->type, op->var->loc);
        values_[op->var.get()] = Expr(fresh);
        return make_let(fresh, value, mutate(op->body), op->loc);
    }

private:
    std::unordered_map<const ExprNode*, Expr> values_;
};

class CompositeInliner : public ExprMutator {
protected:
    Expr mutate_(const Function* op, const Expr& self) override {
        return op->attrs.count("Compiler") ? self : ExprMutator::mutate_(op, self);
    }
    Expr mutate_(const Call* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        auto* call = e.as<Call>();
        auto* f = call && call->callee.defined() ? call->callee.as<Function>() : nullptr;
        if (!f || f->primitive || f->attrs.count("Compiler")) return e;
        std::unordered_map<const ExprNode*, Expr> values;
        for (size_t i = 0; i < f->params.size(); ++i) values[f->params[i].get()] = call->args[i];
        return Substituter(std::move(values)).mutate(f->body);
    }
};

}  // namespace

IRModule inline_composites(const IRModule& m, const PassContext&) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        if (f->attrs.count("Compiler")) return f;
        Expr body = CompositeInliner().mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
