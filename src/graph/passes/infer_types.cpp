// Type inference. Nodes derive their types when built, so inferring types means rebuilding:
// every node is made again from its (rebuilt) operands, which runs each op's type rule on the
// current parameter types. The rebuild also checks scoping: a function may use only variables
// it binds (its parameters and its lets).
#include <unordered_map>
#include <unordered_set>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "support/error.h"

namespace anvil::graph {

namespace {

class Retyper : public ExprMutator {
public:
    // Variables to replace, by identity; every other bound variable maps to itself.
    std::unordered_map<const ExprNode*, Expr> subst;

    Ref<Function> retype(const Ref<Function>& f, const std::vector<Ref<Var>>& params) {
        for (size_t i = 0; i < params.size(); ++i) {
            subst[f->params[i].get()] = Expr(params[i]);
            bound_.insert(params[i].get());
        }
        Expr body = mutate(f->body);
        return make_function(params, body, f->primitive, f->loc, f->attrs);
    }

protected:
    Expr mutate_(const Var* op, const Expr& self) override {
        auto it = subst.find(op);
        Expr v = it == subst.end() ? self : it->second;
        if (!bound_.count(v.get())) {
            user_error(op->loc) << "variable %" << op->name
                                << " is used where it is not bound (not a parameter of the "
                                   "function, nor let-bound around the use)";
        }
        return v;
    }
    Expr mutate_(const Call* op, const Expr& self) override {
        std::vector<Expr> args;
        mutate_all(op->args, &args);
        if (op->op.defined()) return make_call(op->op, std::move(args), op->attrs, op->loc);
        Expr callee = mutate(op->callee);
        ANVIL_CHECK(callee.is<Function>()) << "call of a " << expr_kind_name(callee->kind);
        return make_call_function(callee.cast<Function>(), std::move(args), op->loc);
    }
    Expr mutate_(const Tuple* op, const Expr&) override {
        std::vector<Expr> fields;
        mutate_all(op->fields, &fields);
        return make_tuple(std::move(fields), op->loc);
    }
    Expr mutate_(const TupleGetItem* op, const Expr&) override {
        return make_tuple_get_item(mutate(op->tuple), op->index, op->loc);
    }
    Expr mutate_(const Function* op, const Expr&) override {
        // A nested function (a fused group) has its own scope; its parameters keep their types,
        // which the call checks against its arguments.
        Retyper inner;
        Ref<Function> f(op);
        return Expr(inner.retype(f, f->params));
    }
    Expr mutate_(const Let* op, const Expr&) override {
        Expr value = mutate(op->value);
        Ref<Var> var = op->var;
        if (!type_equal(var->type, value->type)) {
            // The value's type changed with the parameters: the variable follows it.
            var = make_var(var->name, value->type, var->loc);
            subst[op->var.get()] = Expr(var);
        }
        bound_.insert(var.get());
        return make_let(var, value, mutate(op->body), op->loc);
    }

private:
    std::unordered_set<const ExprNode*> bound_;
};

}  // namespace

Ref<Function> rebind_params(const Ref<Function>& f, const std::vector<Ref<Var>>& params) {
    ANVIL_CHECK(params.size() == f->params.size())
        << "rebind_params: " << params.size() << " parameters for a function of "
        << f->params.size();
    return Retyper().retype(f, params);
}

IRModule infer_types(const IRModule& m, const PassContext&) {
    IRModule out = m;
    for (auto& [name, f] : out.functions) f = rebind_params(f, f->params);
    return out;
}

}  // namespace anvil::graph
