// partition_loops: a loop whose body is guarded by `if (likely(cond))`, cond (or one of its `&&`
// terms) linear in the loop variable, is split where that term stops (or starts) holding for
// every iteration of the loops inside it: the part where it provably holds loses the term (the
// guard, when no term is left), the rest keeps it.
//
//   for io in [0, 5) { for ii in [0, 8) vectorized { if likely(io*8 + ii < 37) { S } } }
//   => for io in [0, 4) { for ii ... { S } }  for io in [4, 5) { for ii ... { if ... { S } } }
//
// Only Serial and Parallel loops are split (Vectorized and Unrolled loops need a constant
// extent; a Vectorized loop whose whole body a constant bound guards is narrowed to it instead,
// see shrink_vector_loop); loops are visited outermost first, so the guard of a split inner loop is
// removed at the outer level, where the split point does not depend on outer loop variables.
// Whenever the condition is not of a recognised form, the loop is left as it is.
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/analyzer.h"
#include "ir/intrinsics.h"
#include "ir/linear_form.h"
#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

// The guards in a loop body, with the loops and lets the body binds.
struct GuardCollector : StmtVisitor {
    std::vector<const IfThenElse*> guards;
    std::unordered_map<const Var*, Interval> relax;  // inner loop var -> its inclusive range
    std::unordered_set<const Var*> bound;            // every variable bound inside the body

    void visit_stmt_(const For* op) override {
        Interval range{op->min, op->min + op->extent - make_int(op->extent.dtype(), 1)};
        // Sibling copies of a loop may bind one Var over different ranges: take the hull.
        if (auto it = relax.find(op->var.get()); it != relax.end()) {
            range = {min(it->second.min, range.min), max(it->second.max, range.max)};
        }
        relax[op->var.get()] = range;
        bound.insert(op->var.get());
        StmtVisitor::visit_stmt_(op);
    }
    void visit_stmt_(const LetStmt* op) override {
        bound.insert(op->var.get());
        StmtVisitor::visit_stmt_(op);
    }
    void visit_stmt_(const IfThenElse* op) override {
        if (auto* c = op->cond.as<Call>(); c && c->name == intrin::kLikely) guards.push_back(op);
        StmtVisitor::visit_stmt_(op);
    }
    void visit_expr(const PrimExpr&) override {}
};

// The guard holds for every inner iteration when v < k (safe_below) or when v >= k.
struct Split {
    PrimExpr k;
    bool safe_below;
};

bool mentions(const PrimExpr& e, const std::function<bool(const Var*)>& pred) {
    bool found = false;
    pre_order_visit(e, [&](const PrimExpr& x) {
        if (auto* v = x.as<Var>()) found |= pred(v);
    });
    return found;
}

class Partitioner : public StmtMutator {
protected:
    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        analyzer_.bind(op->var, Range::from_min_extent(op->min, op->extent));
        if (op->for_kind == ForKind::Vectorized) {
            if (Stmt shrunk = shrink_vector_loop(op); shrunk.defined()) return shrunk;
        }
        bool splittable = op->for_kind == ForKind::Serial || op->for_kind == ForKind::Parallel;
        if (!splittable) return StmtMutator::mutate_stmt_(op, self);

        GuardCollector guards;
        guards.visit_stmt(op->body);
        // Per guard, per conjunct of its condition: where that conjunct holds.
        std::vector<std::vector<std::optional<Split>>> splits;
        std::optional<Split> split;
        for (const IfThenElse* g : guards.guards) {
            splits.emplace_back();
            for (const PrimExpr& c : conjuncts(g)) {
                splits.back().push_back(analyze(c, op->var, guards));
                if (!split && splits.back().back()) split = splits.back().back();
            }
        }
        if (!split) return StmtMutator::mutate_stmt_(op, self);

        PrimExpr end = analyzer_.simplify(op->min + op->extent);
        PrimExpr cut = analyzer_.simplify(min(max(split->k, op->min), end));
        Stmt unguarded = drop(op->body, guards, splits, *split);
        // The cut at the far end of the guarded part means the guard always holds; at the far
        // end of the safe part, it never provably does and splitting buys nothing.
        if (analyzer_.can_prove_equal(cut, split->safe_below ? end : op->min)) {
            return rebuild(op, op->min, end, unguarded);
        }
        if (analyzer_.can_prove_equal(cut, split->safe_below ? op->min : end)) {
            return StmtMutator::mutate_stmt_(op, self);
        }
        if (split->safe_below) {
            return make_seq({rebuild(op, op->min, cut, unguarded), rebuild(op, cut, end, op->body)},
                            op->loc);
        }
        return make_seq({rebuild(op, op->min, cut, op->body), rebuild(op, cut, end, unguarded)},
                        op->loc);
    }

private:
    // A vectorized loop whose whole body is `if (likely(v < k && ...)) S` with a constant k
    // inside its range (the tail of a split that does not divide: 13 of 16 lanes) does nothing
    // from k on: it becomes the vectorized loop [min, k) of S without that term, a narrower
    // vector instead of a serial loop testing the guard per lane. Undefined when not that form.
    Stmt shrink_vector_loop(const For* op) {
        auto* guard = op->body.as<IfThenElse>();
        if (!guard || guard->else_case.defined()) return Stmt();
        auto* likely = guard->cond.as<Call>();
        if (!likely || likely->name != intrin::kLikely) return Stmt();
        GuardCollector guards;
        guards.visit_stmt(op->body);
        if (!guards.relax.empty() || guards.guards.empty() || guards.guards[0] != guard) {
            return Stmt();  // loops inside: the term's value is not exact
        }
        const int64_t* min = as_const_int(op->min);
        const int64_t* extent = as_const_int(op->extent);
        if (!min || !extent) return Stmt();
        std::vector<std::vector<std::optional<Split>>> splits(guards.guards.size());
        for (size_t g = 0; g < guards.guards.size(); ++g) {
            for (const PrimExpr& c : conjuncts(guards.guards[g])) {
                splits[g].push_back(analyze(c, op->var, guards));
            }
        }
        for (const auto& sp : splits[0]) {
            if (!sp || !sp->safe_below) continue;
            const int64_t* k = as_const_int(sp->k);
            if (!k || *k <= *min || *k >= *min + *extent) continue;
            Stmt body = drop(op->body, guards, splits, *sp);
            return make_for(op->var, op->min, make_int(op->extent.dtype(), *k - *min), op->for_kind,
                            mutate_stmt(body), op->thread_tag, op->loc);
        }
        return Stmt();
    }

    // for v in [lo, hi) with `body`, whose own loops are partitioned in turn.
    Stmt rebuild(const For* op, const PrimExpr& lo, const PrimExpr& hi, const Stmt& body) {
        PrimExpr extent = analyzer_.simplify(hi - lo);
        analyzer_.bind(op->var, Range::from_min_extent(lo, extent));
        Stmt b = mutate_stmt(body);
        return make_for(op->var, lo, extent, op->for_kind, b, op->thread_tag, op->loc);
    }

    // Normalizes cond to `d < 0` with d = coef * v + rest, and finds where it holds for all
    // values of the inner loop variables in rest.
    std::optional<Split> analyze(const PrimExpr& cond, const Ref<Var>& v, const GuardCollector& c) {
        PrimExpr d;
        auto* cmp = static_cast<const BinaryExpr*>(cond.get());  // read only for comparisons
        switch (cond->kind) {
            case ExprKind::LT:
                d = cmp->a - cmp->b;
                break;
            case ExprKind::LE:
                d = cmp->a - cmp->b - 1;
                break;
            case ExprKind::GT:
                d = cmp->b - cmp->a;
                break;
            case ExprKind::GE:
                d = cmp->b - cmp->a - 1;
                break;
            default:
                return std::nullopt;
        }
        if (!d.dtype().is_int() || d.dtype().is_vector()) return std::nullopt;
        LinearSum sum = to_linear(analyzer_.simplify(d));
        int64_t coef = 0;
        LinearSum rest(sum.dtype);
        rest.constant = sum.constant;
        for (const auto& t : sum.terms) {
            if (t.atom.same_as(v)) {
                coef = sum.signed_value(t.coeff);
            } else if (mentions(t.atom, [&](const Var* x) { return x == v.get(); })) {
                return std::nullopt;  // v inside a non-linear atom
            } else {
                rest.add_term(t.atom, t.coeff);
            }
        }
        if (coef == 0) return std::nullopt;
        Interval range = analyzer_.eval_interval(from_linear(rest), c.relax);
        PrimExpr worst = range.max;
        if (!worst.defined() ||
            mentions(worst, [&](const Var* x) { return x == v.get() || c.bound.count(x) > 0; })) {
            return std::nullopt;
        }
        DataType t = worst.dtype();
        if (coef > 0) {
            // coef*v + worst < 0  <=>  v < floordiv(coef - 1 - worst, coef)
            PrimExpr k = floordiv(make_int(t, coef - 1) - worst, make_int(t, coef));
            return Split{analyzer_.simplify(k), true};
        }
        // -c*v + worst < 0  <=>  v >= floordiv(worst + c, c)
        PrimExpr k = floordiv(worst + make_int(t, -coef), make_int(t, -coef));
        return Split{analyzer_.simplify(k), false};
    }

    // The terms of a guard's condition `likely(c1 && c2 && ...)`.
    static std::vector<PrimExpr> conjuncts(const IfThenElse* g) {
        std::vector<PrimExpr> out;
        std::vector<PrimExpr> todo = {g->cond.as<Call>()->args[0]};
        while (!todo.empty()) {
            PrimExpr c = todo.back();
            todo.pop_back();
            if (auto* a = c.as<And>()) {
                todo.push_back(a->b);
                todo.push_back(a->a);
            } else {
                out.push_back(c);
            }
        }
        return out;
    }

    // The body without the guard terms that hold wherever `chosen` holds; a guard left with
    // no terms goes, leaving its then-branch.
    Stmt drop(const Stmt& body, const GuardCollector& c,
              const std::vector<std::vector<std::optional<Split>>>& s, const Split& chosen) {
        std::unordered_map<const IfThenElse*, PrimExpr> rewrite;  // undefined: remove the guard
        for (size_t g = 0; g < c.guards.size(); ++g) {
            std::vector<PrimExpr> terms = conjuncts(c.guards[g]);
            PrimExpr kept;
            bool dropped = false;
            for (size_t t = 0; t < terms.size(); ++t) {
                const std::optional<Split>& sp = s[g][t];
                bool covered = false;
                if (sp && sp->safe_below == chosen.safe_below) {
                    PrimExpr covers = chosen.safe_below ? sp->k >= chosen.k : sp->k <= chosen.k;
                    covered = sp->k.same_as(chosen.k) || analyzer_.can_prove(covers);
                }
                dropped |= covered;
                if (!covered) kept = kept.defined() ? (kept && terms[t]) : terms[t];
            }
            if (!dropped) continue;
            rewrite[c.guards[g]] =
                kept.defined() ? make_call(DataType::bool_(), intrin::kLikely, {kept}) : kept;
        }
        struct Remover : StmtMutator {
            std::unordered_map<const IfThenElse*, PrimExpr>* rewrite;
            Stmt mutate_stmt_(const IfThenElse* op, const Stmt& self) override {
                auto it = rewrite->find(op);
                if (it == rewrite->end()) return StmtMutator::mutate_stmt_(op, self);
                Stmt then_case = mutate_stmt(op->then_case);
                if (!it->second.defined()) return then_case;
                Stmt else_case = op->else_case.defined() ? mutate_stmt(op->else_case) : Stmt();
                return make_if(it->second, then_case, else_case, op->loc);
            }
            PrimExpr mutate_expr(const PrimExpr& e) override { return e; }
        } r;
        r.rewrite = &rewrite;
        return r.mutate_stmt(body);
    }

    Analyzer analyzer_;
};

}  // namespace

Stmt partition_loops(const Stmt& s, const LowerContext& ctx) {
    return Partitioner().mutate_stmt(s);
}

}  // namespace anvil::tir
