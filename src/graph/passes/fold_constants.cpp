// Constant folding: an expression that depends on no variable is computed at compile time.
// Folding whole maximal constant expressions at once (not call by call) keeps the number of
// evaluations, each a compilation by the driver, small.
#include <unordered_map>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "support/error.h"

namespace anvil::graph {

namespace {

// Ops the executor carries out (call_tir, shape_tensor) have no kernel to fold with. (No op is
// random: the importers make dropout the identity.)
bool is_foldable(const Op& op) {
    return !op.executor_op;
}

// A value whose shape depends on a symbolic dimension (arange of a run-time length) is known only
// at run time, even when no variable feeds it.
bool has_static_type(const Type& t) {
    if (auto* tt = t.as<TensorType>()) return tt->is_static();
    if (auto* tt = t.as<TupleType>()) {
        for (const auto& f : tt->fields) {
            if (!has_static_type(f)) return false;
        }
        return true;
    }
    return false;
}

class ConstantFolder : public ExprMutator {
public:
    explicit ConstantFolder(const PassContext& ctx) : ctx_(ctx) {}

protected:
    // Whether `e` is computable from constants alone.
    bool is_closed(const Expr& e) {
        auto it = closed_.find(e.get());
        if (it != closed_.end()) return it->second;
        bool closed = false;
        if (e.is<Constant>()) {
            closed = true;
        } else if (auto* c = e.as<Call>()) {
            closed = c->op.defined() && is_foldable(*c->op) && has_static_type(e->type);
            for (const auto& a : c->args) closed = closed && is_closed(a);
        } else if (auto* t = e.as<Tuple>()) {
            closed = true;
            for (const auto& f : t->fields) closed = closed && is_closed(f);
        } else if (auto* g = e.as<TupleGetItem>()) {
            closed = is_closed(g->tuple);
        }
        closed_[e.get()] = closed;
        return closed;
    }

    Expr fold(const Expr& e) {
        runtime::NDArray value = ctx_.evaluate(e);
        ANVIL_CHECK(value.defined()) << "fold_constants: evaluate returned no value";
        Expr c = make_constant(value, e->loc);
        ANVIL_CHECK(type_equal(c->type, e->type))
            << "fold_constants: evaluating a " << type_str(e->type) << " gave a "
            << type_str(c->type);
        return c;
    }

    Expr mutate_(const Call* op, const Expr& self) override {
        if (op->type.is<TensorType>() && is_closed(self)) return fold(self);
        return ExprMutator::mutate_(op, self);
    }
    Expr mutate_(const TupleGetItem* op, const Expr& self) override {
        Expr tuple = mutate(op->tuple);
        if (auto* t = tuple.as<Tuple>()) {
            if (t->fields[op->index].is<Constant>()) return t->fields[op->index];
        }
        if (op->type.is<TensorType>() && is_closed(self)) return fold(self);
        return tuple.same_as(op->tuple) ? self : make_tuple_get_item(tuple, op->index, op->loc);
    }
    Expr mutate_(const Function* op, const Expr& self) override {
        return self;  // nested functions are fused groups: folded before fusion or never
    }

private:
    const PassContext& ctx_;
    std::unordered_map<const ExprNode*, bool> closed_;
};

}  // namespace

IRModule fold_constants(const IRModule& m, const PassContext& ctx) {
    if (!ctx.evaluate) return m;
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Expr body = ConstantFolder(ctx).mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
