// Calls of nested functions that are not kernels (not primitive) and that no external code
// generator takes (no Compiler attribute) are inlined: their body, with the call's arguments in
// place of the parameters. Such functions come from partitioning by patterns
// (graph/pattern/partition.h: Composite="..." regions) that nothing offloaded; compiled
// natively, they compute what their ops compute. A function for an external code generator is
// left whole, the composites inside it too: they are what its code generator reads.
#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"

namespace anvil::graph {

namespace {

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
        return inline_call(*f, call->args);
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
