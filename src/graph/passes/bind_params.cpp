// Binding weights as constants (TVM Relax's BindParams): the named parameters of one function
// become Constants, so that the pipeline can fold and pre-pack them like imported weights.
#include <set>

#include "graph/expr_functor.h"
#include "graph/passes/passes.h"
#include "support/error.h"

namespace anvil::graph {

namespace {

class ParamBinder : public ExprMutator {
public:
    std::unordered_map<const ExprNode*, Expr> values;

protected:
    Expr mutate_(const Var* op, const Expr& self) override {
        auto it = values.find(op);
        return it == values.end() ? self : it->second;
    }
};

}  // namespace

IRModule bind_params(const IRModule& m, const std::string& function,
                     const std::map<std::string, runtime::NDArray>& params) {
    auto fn = m.functions.find(function);
    if (fn == m.functions.end()) {
        user_error() << "bind_params: the module has no function @" << function;
    }
    const Function& f = *fn->second;
    ParamBinder binder;
    std::set<std::string> bound;
    std::vector<Ref<Var>> kept;
    for (const auto& p : f.params) {
        auto it = params.find(p->name);
        if (it == params.end()) {
            kept.push_back(p);
            continue;
        }
        Expr c = make_constant(it->second, p->loc);
        if (!type_equal(c->type, p->type)) {
            user_error(p->loc) << "bind_params: parameter %" << p->name << " of @" << function
                               << " has type " << type_str(p->type) << ", the value bound to it "
                               << type_str(c->type);
        }
        binder.values[p.get()] = c;
        bound.insert(p->name);
    }
    for (const auto& [name, value] : params) {
        if (bound.count(name)) continue;
        std::string names;
        for (const auto& p : f.params) names += (names.empty() ? "" : ", ") + ("%" + p->name);
        user_error() << "bind_params: @" << function << " has no parameter %" << name
                     << " (its parameters: " << (names.empty() ? "none" : names) << ")";
    }
    IRModule out = m;
    out.functions[function] =
        make_function(std::move(kept), binder.mutate(f.body), f.primitive, f.loc, f.attrs);
    return out;
}

}  // namespace anvil::graph
