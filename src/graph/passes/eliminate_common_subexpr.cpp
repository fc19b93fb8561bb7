// Common subexpression elimination. Operands are rewritten first, so two calls that compute the
// same value have identical operands by the time they are compared; the first one seen (in
// operand-first order) replaces the others.
#include <unordered_map>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"

namespace anvil::graph {

namespace {

class CommonSubexprEliminator : public ExprMutator {
protected:
    Expr mutate_(const Call* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        auto* call = e.as<Call>();
        size_t h = std::hash<const void*>()(call->op.defined() ? (const void*)call->op.get()
                                                               : call->callee.get());
        h = h * 31 + attrs_hash(*call->attrs);
        for (const auto& a : call->args) h = h * 31 + std::hash<const void*>()(a.get());
        for (const Expr& seen : by_hash_[h]) {
            if (same_call(*seen.as<Call>(), *call)) return seen;
        }
        by_hash_[h].push_back(e);
        return e;
    }
    Expr mutate_(const TupleGetItem* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        auto* item = e.as<TupleGetItem>();
        if (!item) return e;
        auto key = std::make_pair(item->tuple.get(), item->index);
        auto [it, inserted] = items_.emplace(key, e);
        return it->second;
    }

private:
    static bool same_call(const Call& a, const Call& b) {
        if (!a.op.same_as(b.op) || !a.callee.same_as(b.callee)) return false;
        if (a.args.size() != b.args.size() || !attrs_equal(*a.attrs, *b.attrs)) return false;
        for (size_t i = 0; i < a.args.size(); ++i) {
            if (!a.args[i].same_as(b.args[i])) return false;
        }
        return true;
    }

    struct PairHash {
        size_t operator()(const std::pair<const ExprNode*, int>& p) const {
            return std::hash<const void*>()(p.first) * 31 + std::hash<int>()(p.second);
        }
    };
    std::unordered_map<size_t, std::vector<Expr>> by_hash_;
    std::unordered_map<std::pair<const ExprNode*, int>, Expr, PairHash> items_;
};

}  // namespace

IRModule eliminate_common_subexpr(const IRModule& m, const PassContext&) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Expr body = CommonSubexprEliminator().mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
