// Dead code elimination. A dataflow graph holds only what its result reaches, so the dead code
// left is let bindings whose variable is unused. A chain of lets is handled backwards: a binding
// is live when the body or a live later binding uses its variable.
#include <unordered_set>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"

namespace anvil::graph {

namespace {

// The variables `e` uses (a nested function's own variables are other objects, so counting
// them is harmless).
void collect_vars(const Expr& e, std::unordered_set<const ExprNode*>* out) {
    post_order_visit(e, [&](const Expr& x) {
        if (x.is<Var>()) out->insert(x.get());
    });
}

class DeadCodeEliminator : public ExprMutator {
protected:
    Expr mutate_(const Let* op, const Expr& self) override {
        // The whole chain let x1 = v1; let x2 = v2; ...; body, without recursion per binding.
        std::vector<const Let*> chain;
        Expr body = self;
        while (auto* l = body.as<Let>()) {
            chain.push_back(l);
            body = l->body;
        }
        Expr new_body = mutate(body);
        std::unordered_set<const ExprNode*> used;
        collect_vars(new_body, &used);
        Expr result = new_body;
        bool changed = !new_body.same_as(body);
        for (size_t i = chain.size(); i-- > 0;) {
            const Let* l = chain[i];
            if (!used.count(l->var.get())) {
                changed = true;
                continue;
            }
            Expr value = mutate(l->value);
            collect_vars(value, &used);
            changed |= !value.same_as(l->value);
            result = make_let(l->var, value, result, l->loc);
        }
        return changed ? result : self;
    }
};

}  // namespace

IRModule dead_code_elimination(const IRModule& m, const PassContext&) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Expr body = DeadCodeEliminator().mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
