#include "tir/stmt_functor.h"

#include <unordered_set>

#include "support/error.h"

namespace anvil::tir {

void StmtVisitor::visit_stmt(const Stmt& s) {
    switch (s->kind) {
#define ANVIL_X(name)                                   \
    case StmtKind::name:                                \
        visit_stmt_(static_cast<const name*>(s.get())); \
        return;
        ANVIL_FOR_EACH_STMT(ANVIL_X)
#undef ANVIL_X
    }
}

void StmtVisitor::visit_stmt_(const LetStmt* op) {
    visit_expr(op->value);
    visit_stmt(op->body);
}
void StmtVisitor::visit_stmt_(const For* op) {
    visit_expr(op->min);
    visit_expr(op->extent);
    visit_stmt(op->body);
}
void StmtVisitor::visit_stmt_(const Store* op) {
    visit_buffer(op->buffer);
    visit_expr(op->value);
    for (const auto& i : op->indices) visit_expr(i);
}
void StmtVisitor::visit_stmt_(const Allocate* op) {
    visit_buffer(op->buffer);
    visit_stmt(op->body);
}
void StmtVisitor::visit_stmt_(const IfThenElse* op) {
    visit_expr(op->cond);
    visit_stmt(op->then_case);
    if (op->else_case.defined()) visit_stmt(op->else_case);
}
void StmtVisitor::visit_stmt_(const Evaluate* op) {
    visit_expr(op->value);
}
void StmtVisitor::visit_stmt_(const SeqStmt* op) {
    for (const auto& s : op->seq) visit_stmt(s);
}
void StmtVisitor::visit_stmt_(const AssertStmt* op) {
    visit_expr(op->cond);
    for (const auto& a : op->message_args) visit_expr(a);
    if (op->body.defined()) visit_stmt(op->body);
}

void StmtVisitor::visit_stmt_(const CallPacked* op) {
    for (const auto& a : op->args) {
        if (a.buffer.defined()) visit_buffer(a.buffer);
        for (const auto& d : a.shape) visit_expr(d);
        if (a.value.defined()) visit_expr(a.value);
    }
}

Stmt StmtMutator::mutate_stmt(const Stmt& s) {
    switch (s->kind) {
#define ANVIL_X(name)    \
    case StmtKind::name: \
        return mutate_stmt_(static_cast<const name*>(s.get()), s);
        ANVIL_FOR_EACH_STMT(ANVIL_X)
#undef ANVIL_X
    }
    ANVIL_UNREACHABLE();
}

Stmt StmtMutator::mutate_stmt_(const LetStmt* op, const Stmt& self) {
    PrimExpr v = mutate_expr(op->value);
    Stmt b = mutate_stmt(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return self;
    return make_let(op->var, v, b, op->loc);
}
Stmt StmtMutator::mutate_stmt_(const For* op, const Stmt& self) {
    PrimExpr mn = mutate_expr(op->min), ext = mutate_expr(op->extent);
    Stmt b = mutate_stmt(op->body);
    if (mn.same_as(op->min) && ext.same_as(op->extent) && b.same_as(op->body)) return self;
    return make_for(op->var, mn, ext, op->for_kind, b, op->thread_tag, op->loc);
}
Stmt StmtMutator::mutate_stmt_(const Store* op, const Stmt& self) {
    Ref<Buffer> buf = mutate_buffer(op->buffer);
    PrimExpr v = mutate_expr(op->value);
    std::vector<PrimExpr> idx;
    bool changed = false;
    for (const auto& i : op->indices) {
        idx.push_back(mutate_expr(i));
        changed |= !idx.back().same_as(i);
    }
    if (!changed && v.same_as(op->value) && buf.same_as(op->buffer)) return self;
    return make_store(buf, v, std::move(idx), op->loc);
}
Stmt StmtMutator::mutate_stmt_(const Allocate* op, const Stmt& self) {
    Ref<Buffer> buf = mutate_buffer(op->buffer);
    Stmt b = mutate_stmt(op->body);
    if (b.same_as(op->body) && buf.same_as(op->buffer)) return self;
    return make_allocate(buf, b, op->loc);
}
Stmt StmtMutator::mutate_stmt_(const IfThenElse* op, const Stmt& self) {
    PrimExpr c = mutate_expr(op->cond);
    Stmt t = mutate_stmt(op->then_case);
    Stmt e = op->else_case.defined() ? mutate_stmt(op->else_case) : op->else_case;
    if (c.same_as(op->cond) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    return make_if(c, t, e, op->loc);
}
Stmt StmtMutator::mutate_stmt_(const Evaluate* op, const Stmt& self) {
    PrimExpr v = mutate_expr(op->value);
    return v.same_as(op->value) ? self : make_evaluate(v, op->loc);
}
Stmt StmtMutator::mutate_stmt_(const SeqStmt* op, const Stmt& self) {
    std::vector<Stmt> seq;
    bool changed = false;
    for (const auto& s : op->seq) {
        seq.push_back(mutate_stmt(s));
        changed |= !seq.back().same_as(s);
    }
    return changed ? make_seq(std::move(seq), op->loc) : self;
}
Stmt StmtMutator::mutate_stmt_(const AssertStmt* op, const Stmt& self) {
    PrimExpr c = mutate_expr(op->cond);
    std::vector<PrimExpr> args;
    bool changed = !c.same_as(op->cond);
    for (const auto& a : op->message_args) {
        args.push_back(mutate_expr(a));
        changed |= !args.back().same_as(a);
    }
    Stmt b = op->body.defined() ? mutate_stmt(op->body) : op->body;
    if (!changed && b.same_as(op->body)) return self;
    return make_assert(c, op->message, b, op->loc, std::move(args));
}

Stmt StmtMutator::mutate_stmt_(const CallPacked* op, const Stmt& self) {
    std::vector<PackedArg> args;
    bool changed = false;
    for (const auto& a : op->args) {
        PackedArg m{a.buffer.defined() ? mutate_buffer(a.buffer) : a.buffer,
                    {},
                    a.value.defined() ? mutate_expr(a.value) : a.value};
        changed |= !m.buffer.same_as(a.buffer) || !m.value.same_as(a.value);
        for (const auto& d : a.shape) {
            m.shape.push_back(mutate_expr(d));
            changed |= !m.shape.back().same_as(d);
        }
        args.push_back(std::move(m));
    }
    return changed ? make_call_packed(op->func, std::move(args), op->loc) : self;
}

void pre_order_visit(const Stmt& s, const std::function<void(const Stmt&)>& f) {
    class Walker : public StmtVisitor {
    public:
        explicit Walker(const std::function<void(const Stmt&)>& f) : f_(f) {}
        void visit_stmt(const Stmt& s) override {
            f_(s);
            StmtVisitor::visit_stmt(s);
        }
        void visit_expr(const PrimExpr&) override {}

    private:
        const std::function<void(const Stmt&)>& f_;
    };
    Walker(f).visit_stmt(s);
}

std::vector<Ref<Var>> free_vars(const Stmt& s) {
    class Collector : public StmtVisitor {
    public:
        std::vector<Ref<Var>> free;

    protected:
        void visit_stmt_(const For* op) override {
            defined_.insert(op->var.get());
            StmtVisitor::visit_stmt_(op);
        }
        void visit_stmt_(const LetStmt* op) override {
            defined_.insert(op->var.get());
            StmtVisitor::visit_stmt_(op);
        }
        void visit_(const Var* op) override {
            if (!defined_.count(op) && seen_.insert(op).second) free.push_back(Ref<Var>(op));
        }

    private:
        std::unordered_set<const Var*> defined_, seen_;
    };
    Collector c;
    c.visit_stmt(s);
    return std::move(c.free);
}

Stmt substitute(const Stmt& s, const std::vector<std::pair<Ref<Var>, PrimExpr>>& map) {
    class Substituter : public StmtMutator {
    public:
        explicit Substituter(const std::vector<std::pair<Ref<Var>, PrimExpr>>& m) : map_(m) {}

    protected:
        PrimExpr mutate_expr(const PrimExpr& e) override { return anvil::substitute(e, map_); }

    private:
        const std::vector<std::pair<Ref<Var>, PrimExpr>>& map_;
    };
    if (map.empty()) return s;
    return Substituter(map).mutate_stmt(s);
}

}  // namespace anvil::tir
