// Calls of nested functions that are not kernels (not primitive) and that no external code
// generator takes (no Compiler attribute) are inlined: their body, with the call's arguments in
// place of the parameters. Such functions come from partitioning by patterns
// (graph/pattern/partition.h: Composite="..." regions) that nothing offloaded; compiled
// natively, they compute what their ops compute. (TVM's InlineComposites.)
#include <unordered_map>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"

namespace anvil::graph {

namespace {

// The body of a function with its parameters replaced by values.
class Substituter : public ExprMutator {
public:
    explicit Substituter(std::unordered_map<const ExprNode*, Expr> values)
        : values_(std::move(values)) {}

    Expr mutate(const Expr& e) override {
        auto it = values_.find(e.get());
        return it != values_.end() ? it->second : ExprMutator::mutate(e);
    }

private:
    std::unordered_map<const ExprNode*, Expr> values_;
};

class CompositeInliner : public ExprMutator {
protected:
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
        Expr body = CompositeInliner().mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
