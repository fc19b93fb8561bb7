// simplify: every expression simplified under the facts of its context (loop ranges, lets),
// then the statements those facts make trivial removed.
//
// Facts are keyed by Var object and a Var is bound in one place (or in sibling copies, which
// rebind it), so one Analyzer serves the whole walk: a fact outlives its scope only where the
// variable cannot appear.
#include <optional>

#include "ir/analyzer.h"
#include "ir/intrinsics.h"
#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

Stmt no_op() {
    return make_seq({});
}

bool is_no_op(const Stmt& s) {
    if (auto* seq = s.as<SeqStmt>()) return seq->seq.empty();
    if (auto* ev = s.as<Evaluate>()) return ev->value.is<IntImm>() || ev->value.is<FloatImm>();
    return false;
}

// Index arithmetic is cheap to recompute, so a let of it may be inlined; a let of a load or a
// call stays, since its value is the point of binding it once.
bool is_inlinable(const PrimExpr& e) {
    if (!e.dtype().is_integer() || !e.dtype().is_scalar()) return false;
    bool ok = true;
    pre_order_visit(e, [&](const PrimExpr& x) { ok &= !x.is<Load>() && !x.is<Call>(); });
    return ok;
}

bool uses_var(const Stmt& s, const Var* v) {
    struct Finder : StmtVisitor {
        const Var* target;
        bool found = false;
        void visit_(const Var* op) override { found |= op == target; }
        void visit_buffer(const Ref<Buffer>& b) override {
            for (const auto& d : b->shape) visit(d);
        }
    } f;
    f.target = v;
    f.visit_stmt(s);
    return f.found;
}

class Simplifier : public StmtMutator {
public:
    explicit Simplifier(const std::vector<Ref<Buffer>>& params) {
        analyzer_.bind_dimensions(params);
    }

protected:
    PrimExpr mutate_expr(const PrimExpr& e) override { return analyzer_.simplify(e); }

    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        PrimExpr mn = mutate_expr(op->min), ext = mutate_expr(op->extent);
        if (const int64_t* n = as_const_int(ext); n && *n <= 0) return no_op();
        if (is_one(ext) && op->for_kind != ForKind::ThreadBinding) {
            // One iteration: the body with var := min (facts about min already apply).
            return mutate_stmt(substitute(op->body, {{op->var, mn}}));
        }
        analyzer_.bind(op->var, Range::from_min_extent(mn, ext));
        Stmt body = mutate_stmt(op->body);
        if (is_no_op(body)) return no_op();
        if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
        return make_for(op->var, mn, ext, op->for_kind, body, op->thread_tag, op->loc);
    }

    Stmt mutate_stmt_(const LetStmt* op, const Stmt& self) override {
        PrimExpr value = mutate_expr(op->value);
        if (is_inlinable(value)) {
            analyzer_.bind(op->var, value);
        } else if (std::optional<Range> r = finite_range(value)) {
            analyzer_.bind(op->var, *r);
        } else {
            analyzer_.forget(op->var);  // nothing known: no fact of an earlier copy either
        }
        Stmt body = mutate_stmt(op->body);
        if (is_no_op(body) || !uses_var(body, op->var.get())) return body;
        if (value.same_as(op->value) && body.same_as(op->body)) return self;
        return make_let(op->var, value, body, op->loc);
    }

    Stmt mutate_stmt_(const IfThenElse* op, const Stmt& self) override {
        PrimExpr cond = mutate_expr(op->cond);
        // `likely` is a hint: the proof is about the condition it wraps.
        PrimExpr plain = cond;
        if (auto* c = cond.as<Call>(); c && c->name == intrin::kLikely) plain = c->args[0];
        if (analyzer_.can_prove(plain)) return mutate_stmt(op->then_case);
        if (analyzer_.can_prove(make_not(plain))) {
            return op->else_case.defined() ? mutate_stmt(op->else_case) : no_op();
        }
        Stmt then_case;
        {
            ConstraintScope holds(analyzer_, plain);
            then_case = mutate_stmt(op->then_case);
        }
        Stmt else_case = op->else_case.defined() ? mutate_stmt(op->else_case) : Stmt();
        if (else_case.defined() && is_no_op(else_case)) else_case = Stmt();
        if (is_no_op(then_case)) {
            if (!else_case.defined()) return no_op();
            return make_if(make_not(cond), else_case, Stmt(), op->loc);
        }
        if (cond.same_as(op->cond) && then_case.same_as(op->then_case) &&
            else_case.same_as(op->else_case)) {
            return self;
        }
        return make_if(cond, then_case, else_case, op->loc);
    }

    Stmt mutate_stmt_(const AssertStmt* op, const Stmt& self) override {
        PrimExpr cond = mutate_expr(op->cond);
        if (analyzer_.can_prove(cond)) return op->body.defined() ? mutate_stmt(op->body) : no_op();
        return StmtMutator::mutate_stmt_(op, self);
    }

    Stmt mutate_stmt_(const Allocate* op, const Stmt& self) override {
        Stmt body = mutate_stmt(op->body);
        if (is_no_op(body)) return no_op();
        return body.same_as(op->body) ? self : make_allocate(op->buffer, body, op->loc);
    }

    Stmt mutate_stmt_(const Evaluate* op, const Stmt& self) override {
        PrimExpr v = mutate_expr(op->value);
        // Only calls have effects; anything else evaluated for nothing is dropped.
        bool effect = false;
        pre_order_visit(v, [&](const PrimExpr& x) { effect |= x.is<Call>(); });
        if (!effect) return no_op();
        return v.same_as(op->value) ? self : make_evaluate(v, op->loc);
    }

    Stmt mutate_stmt_(const SeqStmt* op, const Stmt& self) override {
        std::vector<Stmt> seq;
        bool changed = false;
        for (const auto& s : op->seq) {
            Stmt m = mutate_stmt(s);
            changed |= !m.same_as(s);
            if (is_no_op(m)) {
                changed = true;
                continue;
            }
            seq.push_back(m);
        }
        return changed ? make_seq(std::move(seq), op->loc) : self;
    }

private:
    // The constant range of an integer scalar value, when it is finite and not too wide.
    std::optional<Range> finite_range(const PrimExpr& value) {
        if (!value.dtype().is_integer() || !value.dtype().is_scalar()) return std::nullopt;
        ConstIntBound b = analyzer_.const_int_bound(value);
        if (b.min == ConstIntBound::kNegInf || b.max == ConstIntBound::kPosInf ||
            b.max - b.min >= INT32_MAX) {
            return std::nullopt;
        }
        DataType t = value.dtype();
        return Range::from_min_extent(make_int(t, b.min), make_int(t, b.max - b.min + 1));
    }

    Analyzer analyzer_;
};

}  // namespace

Stmt simplify(const Stmt& s, const LowerContext& ctx) {
    return Simplifier(ctx.params).mutate_stmt(s);
}

}  // namespace anvil::tir
