#include "graph/structural_equal.h"

#include <cstring>
#include <unordered_map>

#include "ir/structural_equal.h"
#include "tir/structural_equal.h"

namespace anvil::graph {

namespace {

struct PairHash {
    size_t operator()(const std::pair<const void*, const void*>& p) const {
        return hash_combine(std::hash<const void*>()(p.first), std::hash<const void*>()(p.second));
    }
};

class GraphEqualizer {
public:
    bool equal(const Expr& a, const Expr& b) {
        if (!a.defined() || !b.defined()) return a.defined() == b.defined();
        if (a->kind != b->kind) return false;
        // Operands of a DAG are reached along many paths; each pair is decided once.
        auto key =
            std::make_pair(static_cast<const void*>(a.get()), static_cast<const void*>(b.get()));
        auto it = memo_.find(key);
        if (it != memo_.end()) return it->second;
        bool result = type_equal(a->type, b->type) && equal_node(a, b);
        memo_.emplace(key, result);
        return result;
    }

private:
    bool equal_node(const Expr& a, const Expr& b) {
        switch (a->kind) {
            case ExprKind::Var:
                return equal_var(a.as<Var>(), b.as<Var>());
            case ExprKind::Constant:
                return equal_data(a.as<Constant>()->data, b.as<Constant>()->data);
            case ExprKind::Call: {
                auto *x = a.as<Call>(), *y = b.as<Call>();
                if (x->op.defined() != y->op.defined()) return false;
                if (x->op.defined() && x->op->name != y->op->name) return false;
                if (x->attrs.defined() != y->attrs.defined()) return false;
                if (x->attrs.defined() && !attrs_equal(*x->attrs, *y->attrs)) return false;
                return equal(x->callee, y->callee) && equal_all(x->args, y->args);
            }
            case ExprKind::Tuple:
                return equal_all(a.as<Tuple>()->fields, b.as<Tuple>()->fields);
            case ExprKind::TupleGetItem: {
                auto *x = a.as<TupleGetItem>(), *y = b.as<TupleGetItem>();
                return x->index == y->index && equal(x->tuple, y->tuple);
            }
            case ExprKind::Function: {
                auto *x = a.as<Function>(), *y = b.as<Function>();
                if (x->primitive != y->primitive || x->attrs != y->attrs ||
                    x->params.size() != y->params.size()) {
                    return false;
                }
                Bindings scope(*this);
                for (size_t i = 0; i < x->params.size(); ++i) {
                    if (!scope.bind(x->params[i].get(), y->params[i].get())) return false;
                }
                return equal(x->body, y->body);
            }
            case ExprKind::Let: {
                auto *x = a.as<Let>(), *y = b.as<Let>();
                if (!equal(x->value, y->value)) return false;
                Bindings scope(*this);
                return scope.bind(x->var.get(), y->var.get()) && equal(x->body, y->body);
            }
        }
        return false;
    }

    bool equal_all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            if (!equal(a[i], b[i])) return false;
        }
        return true;
    }

    // The variables a binding site binds stand for each other in its scope. Scoped, because
    // one side may repeat a node that the other shares: the text repeats a closed node used
    // inside and outside a function, so one Var object faces two.
    class Bindings {
    public:
        explicit Bindings(GraphEqualizer& eq) : eq_(eq) {}
        Bindings(const Bindings&) = delete;
        Bindings& operator=(const Bindings&) = delete;
        ~Bindings() {
            for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
                restore(eq_.a_to_b_, it->a, it->old_b);
                restore(eq_.b_to_a_, it->b, it->old_a);
            }
        }
        bool bind(const Var* a, const Var* b) {
            if (!eq_.type_equal(a->type, b->type)) return false;
            saved_.push_back({a, b, lookup(eq_.a_to_b_, a), lookup(eq_.b_to_a_, b)});
            eq_.a_to_b_[a] = b;
            eq_.b_to_a_[b] = a;
            return true;
        }

    private:
        using Map = std::unordered_map<const Var*, const Var*>;
        struct Saved {
            const Var* a;
            const Var* b;
            const Var* old_b;  // what a stood for before; null: nothing
            const Var* old_a;
        };
        static const Var* lookup(const Map& m, const Var* v) {
            auto it = m.find(v);
            return it == m.end() ? nullptr : it->second;
        }
        static void restore(Map& m, const Var* key, const Var* old) {
            if (old) {
                m[key] = old;
            } else {
                m.erase(key);
            }
        }
        GraphEqualizer& eq_;
        std::vector<Saved> saved_;
    };

    bool equal_var(const Var* a, const Var* b) {
        auto ia = a_to_b_.find(a);
        auto ib = b_to_a_.find(b);
        if (ia == a_to_b_.end() && ib == b_to_a_.end()) return a == b;  // both free
        return ia != a_to_b_.end() && ia->second == b;
    }

    static bool equal_data(const runtime::NDArray& a, const runtime::NDArray& b) {
        if (!runtime::dl_dtype_equal(a.dtype(), b.dtype()) || a.ndim() != b.ndim()) return false;
        for (int i = 0; i < a.ndim(); ++i) {
            if (a.shape()[i] != b.shape()[i]) return false;
        }
        return a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
    }

    // Types compare structurally, with symbolic dimensions mapped one-to-one.
    bool type_equal(const Type& a, const Type& b) {
        if (a.same_as(b) && dims_.renames_nothing()) return true;
        if (!a.defined() || !b.defined() || a->kind != b->kind) return false;
        switch (a->kind) {
            case TypeKind::TensorType: {
                auto *x = a.as<TensorType>(), *y = b.as<TensorType>();
                return x->dtype == y->dtype && dims_.equal(x->shape, y->shape);
            }
            case TypeKind::TupleType:
                return types_equal(a.as<TupleType>()->fields, b.as<TupleType>()->fields);
            case TypeKind::FuncType: {
                auto *x = a.as<FuncType>(), *y = b.as<FuncType>();
                return types_equal(x->params, y->params) && type_equal(x->ret, y->ret);
            }
            case TypeKind::SequenceType:
                return graph::type_equal(a, b);
            case TypeKind::OptionalType:
                return type_equal(a.as<OptionalType>()->elem, b.as<OptionalType>()->elem);
        }
        return false;
    }
    bool types_equal(const std::vector<Type>& a, const std::vector<Type>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            if (!type_equal(a[i], b[i])) return false;
        }
        return true;
    }

    std::unordered_map<std::pair<const void*, const void*>, bool, PairHash> memo_;
    std::unordered_map<const Var*, const Var*> a_to_b_;
    std::unordered_map<const Var*, const Var*> b_to_a_;
    StructuralEqualizer dims_{StructuralEqualizer::Options{.map_free_vars = true}};
};

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) {
    return GraphEqualizer().equal(a, b);
}

bool structural_equal(const IRModule& a, const IRModule& b) {
    if (a.functions.size() != b.functions.size() || a.kernels.size() != b.kernels.size()) {
        return false;
    }
    // One equalizer for the module: a symbolic dimension means the same in every function.
    GraphEqualizer eq;
    for (const auto& [name, f] : a.functions) {
        auto it = b.functions.find(name);
        if (it == b.functions.end() || !eq.equal(Expr(f), Expr(it->second))) return false;
    }
    for (const auto& [name, k] : a.kernels) {
        auto it = b.kernels.find(name);
        if (it == b.kernels.end() || !tir::structural_equal(k, it->second)) return false;
    }
    return true;
}

}  // namespace anvil::graph
