#include "ir/expr_functor.h"

#include "support/error.h"

namespace anvil {

void ExprVisitor::visit(const PrimExpr& e) {
    switch (e->kind) {
#define ANVIL_X(name)                              \
    case ExprKind::name:                           \
        visit_(static_cast<const name*>(e.get())); \
        return;
        ANVIL_FOR_EACH_EXPR(ANVIL_X)
#undef ANVIL_X
    }
}

void ExprVisitor::visit_(const IntImm*) {}
void ExprVisitor::visit_(const FloatImm*) {}
void ExprVisitor::visit_(const Var*) {}
#define ANVIL_X(name)                          \
    void ExprVisitor::visit_(const name* op) { \
        visit(op->a);                          \
        visit(op->b);                          \
    }
ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X
void ExprVisitor::visit_(const Not* op) {
    visit(op->a);
}
void ExprVisitor::visit_(const Select* op) {
    visit(op->cond);
    visit(op->true_value);
    visit(op->false_value);
}
void ExprVisitor::visit_(const Cast* op) {
    visit(op->value);
}
void ExprVisitor::visit_(const Call* op) {
    for (const auto& a : op->args) visit(a);
}
void ExprVisitor::visit_(const Load* op) {
    visit_buffer(op->buffer);
    for (const auto& i : op->indices) visit(i);
}
void ExprVisitor::visit_(const Ramp* op) {
    visit(op->base);
    visit(op->stride);
}
void ExprVisitor::visit_(const Broadcast* op) {
    visit(op->value);
}
void ExprVisitor::visit_(const Reduce* op) {
    visit(op->source);
    if (op->condition.defined()) visit(op->condition);
}

PrimExpr ExprMutator::mutate(const PrimExpr& e) {
    switch (e->kind) {
#define ANVIL_X(name)    \
    case ExprKind::name: \
        return mutate_(static_cast<const name*>(e.get()), e);
        ANVIL_FOR_EACH_EXPR(ANVIL_X)
#undef ANVIL_X
    }
    ANVIL_UNREACHABLE();
}

bool ExprMutator::mutate_all(const std::vector<PrimExpr>& in, std::vector<PrimExpr>* out) {
    bool changed = false;
    out->clear();
    out->reserve(in.size());
    for (const auto& e : in) {
        out->push_back(mutate(e));
        changed |= !out->back().same_as(e);
    }
    return changed;
}

PrimExpr ExprMutator::mutate_(const IntImm*, const PrimExpr& self) {
    return self;
}
PrimExpr ExprMutator::mutate_(const FloatImm*, const PrimExpr& self) {
    return self;
}
PrimExpr ExprMutator::mutate_(const Var*, const PrimExpr& self) {
    return self;
}
#define ANVIL_X(name)                                                     \
    PrimExpr ExprMutator::mutate_(const name* op, const PrimExpr& self) { \
        PrimExpr a = mutate(op->a);                                       \
        PrimExpr b = mutate(op->b);                                       \
        if (a.same_as(op->a) && b.same_as(op->b)) return self;            \
        return make_binary(ExprKind::name, a, b);                         \
    }
ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X

PrimExpr ExprMutator::mutate_(const Not* op, const PrimExpr& self) {
    PrimExpr a = mutate(op->a);
    return a.same_as(op->a) ? self : make_not(a);
}
PrimExpr ExprMutator::mutate_(const Select* op, const PrimExpr& self) {
    PrimExpr c = mutate(op->cond), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    return make_select(c, t, f);
}
PrimExpr ExprMutator::mutate_(const Cast* op, const PrimExpr& self) {
    PrimExpr v = mutate(op->value);
    return v.same_as(op->value) ? self : make_cast(op->dtype.with_lanes(v.dtype().lanes()), v);
}
PrimExpr ExprMutator::mutate_(const Call* op, const PrimExpr& self) {
    std::vector<PrimExpr> args;
    if (!mutate_all(op->args, &args)) return self;
    int lanes = 1;
    for (const auto& a : args) lanes = std::max(lanes, a.dtype().lanes());
    return make_call(op->dtype.with_lanes(lanes), op->name, std::move(args));
}
PrimExpr ExprMutator::mutate_(const Load* op, const PrimExpr& self) {
    Ref<Buffer> buffer = mutate_buffer(op->buffer);
    std::vector<PrimExpr> idx;
    bool changed = mutate_all(op->indices, &idx);
    if (!changed && buffer.same_as(op->buffer)) return self;
    return make_load(buffer, std::move(idx));
}
PrimExpr ExprMutator::mutate_(const Ramp* op, const PrimExpr& self) {
    PrimExpr b = mutate(op->base), s = mutate(op->stride);
    if (b.same_as(op->base) && s.same_as(op->stride)) return self;
    return make_ramp(b, s, op->lanes);
}
PrimExpr ExprMutator::mutate_(const Broadcast* op, const PrimExpr& self) {
    PrimExpr v = mutate(op->value);
    return v.same_as(op->value) ? self : make_broadcast(v, op->lanes);
}
PrimExpr ExprMutator::mutate_(const Reduce* op, const PrimExpr& self) {
    PrimExpr s = mutate(op->source);
    PrimExpr c = op->condition.defined() ? mutate(op->condition) : op->condition;
    if (s.same_as(op->source) && c.same_as(op->condition)) return self;
    return PrimExpr(new Reduce(s.dtype(), op->combiner, s, op->axis, c));
}

void pre_order_visit(const PrimExpr& e, const std::function<void(const PrimExpr&)>& f) {
    class Walker : public ExprVisitor {
    public:
        explicit Walker(const std::function<void(const PrimExpr&)>& f) : f_(f) {}
        void visit(const PrimExpr& e) override {
            f_(e);
            ExprVisitor::visit(e);
        }

    private:
        const std::function<void(const PrimExpr&)>& f_;
    };
    Walker(f).visit(e);
}

bool uses_var(const PrimExpr& e, const Var* v) {
    bool found = false;
    pre_order_visit(e, [&](const PrimExpr& x) { found = found || x.get() == v; });
    return found;
}

}  // namespace anvil
