#include "graph/verifier.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "graph/expr_functor.h"
#include "support/error.h"
#include "tir/verifier.h"

namespace anvil::graph {

namespace {

using VarSet = std::vector<const Var*>;  // sorted, unique

VarSet set_union(const VarSet& a, const VarSet& b) {
    VarSet out;
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

VarSet set_minus(VarSet a, const std::vector<Ref<Var>>& remove) {
    std::erase_if(a, [&](const Var* v) {
        return std::any_of(remove.begin(), remove.end(),
                           [&](const Ref<Var>& r) { return r.get() == v; });
    });
    return a;
}

std::string what(const Expr& e) {
    if (auto* call = e.as<Call>()) {
        return call->op.defined() ? "call of " + call->op->name : std::string("call of a function");
    }
    if (auto* v = e.as<Var>()) return "%" + v->name;
    if (auto* let = e.as<Let>()) return "let %" + let->var->name;
    if (auto* f = e.as<Function>()) return f->primitive ? "primitive function" : "function";
    return expr_kind_name(e->kind);
}

// Records every binding site of the module (a shared node once), so that a variable bound twice
// is found and a free variable can be told apart from one used outside its scope.
class BindingCollector : public ExprVisitor {
public:
    std::string where;
    std::unordered_map<const Var*, std::string> bound_at;
    std::vector<std::string>* problems = nullptr;

protected:
    void visit_(const Function* op) override {
        for (const auto& p : op->params) bind(p.get(), "a parameter of a function in " + where);
        ExprVisitor::visit_(op);
    }
    void visit_(const Let* op) override {
        bind(op->var.get(), "a let in " + where);
        ExprVisitor::visit_(op);
    }

private:
    void bind(const Var* v, const std::string& site) {
        auto [it, added] = bound_at.emplace(v, site);
        if (!added) {
            problems->push_back(where + ": %" + v->name + " is bound twice: as " + it->second +
                                " and as " + site);
        }
    }
};

class Verifier {
public:
    std::vector<std::string> run(const IRModule& m) {
        bindings_.problems = &problems_;
        for (const auto& [name, f] : m.functions) {
            bindings_.where = "@" + name;
            bindings_.visit(Expr(f));
        }
        for (const auto& [name, f] : m.functions) {
            where_ = "@" + name;
            free_vars(Expr(f));
        }
        for (const auto& [name, k] : m.kernels) {
            if (k->name != name) {
                add("kernel '" + name + "' is stored under a name that is not its own ('" +
                    k->name + "')");
            }
            try {
                tir::verify(k);
            } catch (const Error& e) {
                add("kernel '" + name + "': " + e.what());
            }
        }
        return std::move(problems_);
    }

private:
    void add(const std::string& message) { problems_.push_back(message); }
    void add(const Expr& e, const std::string& message) {
        problems_.push_back(where_ + ": " + what(e) + ": " + message);
    }

    // The free variables of `e`; checks each node the first time it is reached.
    const VarSet& free_vars(const Expr& e) {
        auto it = free_.find(e.get());
        if (it != free_.end()) return it->second;
        VarSet out;
        switch (e->kind) {
            case ExprKind::Var:
                out.push_back(e.as<Var>());
                break;
            case ExprKind::Constant:
                break;
            case ExprKind::Call: {
                auto* call = e.as<Call>();
                if (call->callee.defined()) out = free_vars(call->callee);
                for (const auto& a : call->args) out = set_union(out, free_vars(a));
                check_call(e, call);
                break;
            }
            case ExprKind::Tuple: {
                std::vector<Type> types;
                for (const auto& f : e.as<Tuple>()->fields) {
                    out = set_union(out, free_vars(f));
                    types.push_back(f->type);
                }
                check_type(e, make_tuple_type(std::move(types)));
                break;
            }
            case ExprKind::TupleGetItem: {
                auto* get = e.as<TupleGetItem>();
                out = free_vars(get->tuple);
                auto* tt = get->tuple->type.as<TupleType>();
                if (!tt || get->index < 0 || get->index >= static_cast<int>(tt->fields.size())) {
                    add(e, "item " + std::to_string(get->index) + " of a " +
                               type_str(get->tuple->type));
                } else {
                    check_type(e, tt->fields[get->index]);
                }
                break;
            }
            case ExprKind::Function: {
                auto* f = e.as<Function>();
                out = set_minus(free_vars(f->body), f->params);
                std::vector<Type> params;
                for (const auto& p : f->params) params.push_back(p->type);
                check_type(e, make_func_type(std::move(params), f->body->type));
                if (f->primitive) check_no_nested_primitive(e, f);
                // Reported here, at the innermost function; the enclosing ones need not repeat it.
                for (const Var* v : out) report_unbound(e, v);
                out.clear();
                break;
            }
            case ExprKind::Let: {
                auto* let = e.as<Let>();
                const VarSet& value = free_vars(let->value);
                if (std::binary_search(value.begin(), value.end(), let->var.get())) {
                    add(e, "%" + let->var->name + " is used in its own value, outside the let " +
                               "that binds it");
                }
                out = set_union(value, set_minus(free_vars(let->body), {let->var}));
                if (!type_equal(let->var->type, let->value->type)) {
                    add(e, "the variable has type " + type_str(let->var->type) +
                               " but its value has type " + type_str(let->value->type));
                }
                check_type(e, let->body->type);
                break;
            }
        }
        return free_.emplace(e.get(), std::move(out)).first->second;
    }

    void report_unbound(const Expr& fn, const Var* v) {
        auto it = bindings_.bound_at.find(v);
        if (it == bindings_.bound_at.end()) {
            add(fn, "free variable %" + v->name + " (bound nowhere in the module)");
        } else {
            add(fn, "%" + v->name + " is used outside the scope that binds it (it is " +
                        it->second + ")");
        }
    }

    void check_type(const Expr& e, const Type& expected) {
        if (!type_equal(e->type, expected)) {
            add(e,
                "stored type " + type_str(e->type) + " but its parts give " + type_str(expected));
        }
    }

    void check_call(const Expr& e, const Call* call) {
        if (call->op.defined() == call->callee.defined()) {
            add(e, "a call must name exactly one of an op and a function");
            return;
        }
        if (call->op.defined()) {
            const Op& op = *call->op;
            if (op.num_inputs >= 0 && static_cast<int>(call->args.size()) != op.num_inputs) {
                add(e, std::to_string(call->args.size()) + " argument(s), the op takes " +
                           std::to_string(op.num_inputs));
                return;
            }
            Ref<Attrs> defaults = op.make_default_attrs();
            if (!call->attrs.defined() ||
                std::string(call->attrs->type_name()) != defaults->type_name()) {
                add(e, std::string("attributes of type ") +
                           (call->attrs.defined() ? call->attrs->type_name() : "(none)") +
                           ", the op takes " + defaults->type_name());
                return;
            }
            std::vector<Type> arg_types;
            for (const auto& a : call->args) arg_types.push_back(a->type);
            try {
                Type now = op.infer_type(op, arg_types, *call->attrs, call->loc);
                if (!type_equal(now, e->type)) {
                    add(e, "stored type " + type_str(e->type) + " but the type rule now gives " +
                               type_str(now));
                }
            } catch (const Error& err) {
                add(e, std::string("the type rule rejects the call: ") + err.what());
            }
            return;
        }
        auto* f = call->callee.as<Function>();
        if (!f) {
            add(e, std::string("the callee is a ") + expr_kind_name(call->callee->kind) +
                       ", not a function");
            return;
        }
        if (call->args.size() != f->params.size()) {
            add(e, std::to_string(call->args.size()) + " argument(s) for a function of " +
                       std::to_string(f->params.size()) + " parameter(s)");
            return;
        }
        for (size_t i = 0; i < call->args.size(); ++i) {
            if (!type_equal(call->args[i]->type, f->params[i]->type)) {
                add(e, "argument " + std::to_string(i) + " has type " +
                           type_str(call->args[i]->type) + ", the parameter %" +
                           f->params[i]->name + " has " + type_str(f->params[i]->type));
            }
        }
        check_type(e, f->body->type);
    }

    void check_no_nested_primitive(const Expr& e, const Function* f) {
        post_order_visit(f->body, [&](const Expr& inner) {
            auto* g = inner.as<Function>();
            if (g && g->primitive) add(e, "contains another primitive function");
        });
    }

    std::vector<std::string> problems_;
    std::string where_;
    BindingCollector bindings_;
    std::unordered_map<const ExprNode*, VarSet> free_;
};

}  // namespace

std::vector<std::string> find_problems(const IRModule& m) {
    return Verifier().run(m);
}

void verify(const IRModule& m) {
    std::vector<std::string> problems = find_problems(m);
    if (problems.empty()) return;
    std::ostringstream os;
    os << "the graph verifier found " << problems.size() << " problem(s):";
    for (const auto& p : problems) os << "\n  " << p;
    internal_error() << os.str();
}

}  // namespace anvil::graph
