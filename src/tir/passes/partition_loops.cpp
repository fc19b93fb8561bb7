// partition_loops: a loop whose body is guarded by `likely(cond)`, cond (or one of its `&&`
// terms) linear in the loop variable, is split where that term stops (or starts) holding for
// every iteration of the loops inside it: the part where it provably holds loses the term (the
// guard, when no term is left), the rest keeps it.
//
//   for io in [0, 5) { for ii in [0, 8) vectorized { if likely(io*8 + ii < 37) { S } } }
//   => for io in [0, 4) { for ii ... { S } }  for io in [4, 5) { for ii ... { if ... { S } } }
//
// A guard is a statement `if (likely(c)) S` (a split that does not divide) or an expression
// `if_then_else(likely(c), a, b)` (a zero-padded read inlined into its consumer: the interior
// of the convolution reads its input without a test, only the border keeps it). A loop is split
// again in its pieces, so a window's two borders (c >= 0 and c < H) both go: up to
// kMaxSplitDepth times per loop and kMaxSplitsPerNest times per loop nest.
//
// Only Serial and Parallel loops are split (Vectorized and Unrolled loops need a constant
// extent; a Vectorized loop whose whole body a constant bound guards is narrowed to it instead,
// see shrink_vector_loop); loops are visited outermost first, so the guard of a split inner loop is
// removed at the outer level, where the split point does not depend on outer loop variables.
//
// A term that depends on the loop variable but not linearly (a row tile's test
// floormod(fused, tiles) * 8 + i < M in a loop fused from column panels and row tiles) cannot be
// split on; when the body repeats it in inner loops, the body is unswitched instead (see
// unswitch): a test per iteration chooses between the body without the term and the body as it
// was. Whenever the condition is of neither form, the loop is left as it is.
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

// Splits of one loop, nested: 3 gives up to 8 pieces (two borders of a window need 2).
constexpr int kMaxSplitDepth = 3;
// Splits in one loop nest (an outermost loop and everything inside it): each piece partitions
// its own inner loops again, so without a bound the copies of a deep body would multiply per
// level. A depthwise convolution with its padding inlined takes about 25.
constexpr int kMaxSplitsPerNest = 64;

// The condition `likely(c)` wraps, or undefined when `cond` is not a likely call.
PrimExpr likely_condition(const PrimExpr& cond) {
    auto* c = cond.as<Call>();
    return c && c->name == intrin::kLikely && c->args.size() == 1 ? c->args[0] : PrimExpr();
}

// A statement guard (IfThenElse) or an expression guard (if_then_else Call) and the condition
// its likely(...) wraps.
struct Guard {
    const Object* node;
    PrimExpr cond;
};

// The guards in a loop body, with the loops and lets the body binds.
struct GuardCollector : StmtVisitor {
    std::vector<Guard> guards;
    std::unordered_set<const Object*> seen;          // a shared expression node counts once
    std::unordered_map<const Var*, Interval> relax;  // inner loop var -> its inclusive range
    std::vector<Ref<Var>> loop_vars;                 // the inner loops' variables
    std::unordered_set<const Var*> bound;            // every variable bound inside the body

    void visit_stmt_(const For* op) override {
        Interval range{op->min, op->min + op->extent - make_int(op->extent.dtype(), 1)};
        // Sibling copies of a loop may bind one Var over different ranges: take the hull.
        if (auto it = relax.find(op->var.get()); it != relax.end()) {
            range = {min(it->second.min, range.min), max(it->second.max, range.max)};
        }
        relax[op->var.get()] = range;
        loop_vars.push_back(op->var);
        bound.insert(op->var.get());
        StmtVisitor::visit_stmt_(op);
    }
    void visit_stmt_(const LetStmt* op) override {
        bound.insert(op->var.get());
        StmtVisitor::visit_stmt_(op);
    }
    void visit_stmt_(const IfThenElse* op) override {
        if (PrimExpr c = likely_condition(op->cond); c.defined()) add(op, c);
        StmtVisitor::visit_stmt_(op);
    }
    void visit_expr(const PrimExpr& e) override {
        pre_order_visit(e, [&](const PrimExpr& x) {
            auto* call = x.as<Call>();
            if (!call || call->name != intrin::kIfThenElse || call->args.size() != 3) return;
            if (PrimExpr c = likely_condition(call->args[0]); c.defined()) add(call, c);
        });
    }
    void add(const Object* node, const PrimExpr& cond) {
        if (seen.insert(node).second) guards.push_back({node, cond});
    }
};

// The guard holds for every inner iteration when v < k (safe_below) or when v >= k, or
// whatever v is (always: a term that does not depend on v and holds under the outer loops'
// ranges, e.g. in a piece of one iteration, where simplify reads v as a constant).
struct Split {
    PrimExpr k;
    bool safe_below;
    bool always = false;
};

bool mentions(const PrimExpr& e, const std::function<bool(const Var*)>& pred) {
    bool found = false;
    pre_order_visit(e, [&](const PrimExpr& x) {
        if (auto* v = x.as<Var>()) found |= pred(v);
    });
    return found;
}

// Whether `e` loads or calls anything: a bound hoisted to the loop would be read once, before
// the body could change what it reads.
bool reads_memory(const PrimExpr& e) {
    bool found = false;
    pre_order_visit(e, [&](const PrimExpr& x) { found |= x.is<Load>() || x.is<Call>(); });
    return found;
}

// The terms of a guard's condition `c1 && c2 && ...`.
std::vector<PrimExpr> conjuncts(const Guard& g) {
    std::vector<PrimExpr> out;
    std::vector<PrimExpr> todo = {g.cond};
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

// Per guard, per conjunct of its condition: where that conjunct holds (nullopt: unknown).
using GuardSplits = std::vector<std::vector<std::optional<Split>>>;

class Partitioner : public StmtMutator {
protected:
    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        analyzer_.bind(op->var, Range::from_min_extent(op->min, op->extent));
        if (op->for_kind == ForKind::Vectorized) {
            if (Stmt shrunk = shrink_vector_loop(op); shrunk.defined()) return shrunk;
        }
        if (nesting_ == 0) splits_left_ = kMaxSplitsPerNest;
        ++nesting_;
        struct Leave {
            int& nesting;
            ~Leave() { --nesting; }
        } leave{nesting_};
        bool splittable = op->for_kind == ForKind::Serial || op->for_kind == ForKind::Parallel;
        if (!splittable) return StmtMutator::mutate_stmt_(op, self);
        Stmt split = partition(op, op->min, analyzer_.simplify(op->min + op->extent), op->body,
                               kMaxSplitDepth, {});
        if (split.defined()) return split;
        if (Stmt body = unswitch(op, op->body); body.defined()) {
            return make_for(op->var, op->min, op->extent, op->for_kind, body, op->thread_tag,
                            op->loc);
        }
        return StmtMutator::mutate_stmt_(op, self);
    }

private:
    // Guard terms (by node) a piece keeps from the split that made it: splitting there again
    // would cut at the piece's own end, which a symbolic bound may not let the analyzer prove.
    using Settled = std::unordered_set<const Object*>;

    // `op`'s loop over [lo, hi) with `body`, split where a guard term starts or stops holding
    // (at most `depth` more times) and without the terms that hold throughout. Undefined when
    // no term does either.
    Stmt partition(const For* op, const PrimExpr& lo, const PrimExpr& hi, const Stmt& body,
                   int depth, const Settled& settled) {
        analyzer_.bind(op->var, Range::from_min_extent(lo, analyzer_.simplify(hi - lo)));
        GuardCollector guards;
        guards.visit_stmt(body);
        forget_inner_loops(guards);
        GuardSplits splits;
        std::vector<std::vector<PrimExpr>> terms;
        for (const Guard& g : guards.guards) {
            terms.push_back(conjuncts(g));
            splits.emplace_back();
            for (const PrimExpr& c : terms.back()) {
                splits.back().push_back(analyze(c, op->var, guards));
            }
        }
        for (size_t g = 0; g < splits.size(); ++g) {
            for (size_t t = 0; t < splits[g].size(); ++t) {
                const std::optional<Split>& split = splits[g][t];
                if (!split || settled.count(terms[g][t].get())) continue;
                if (split->always) {
                    return piece(op, lo, hi, drop(body, guards, splits, *split), depth, settled);
                }
                PrimExpr cut = analyzer_.simplify(min(max(split->k, lo), hi));
                if (analyzer_.can_prove_equal(cut, split->safe_below ? hi : lo)) {
                    // The term holds throughout: it goes, and the others are looked at again.
                    Stmt dropped = drop(body, guards, splits, *split);
                    return piece(op, lo, hi, dropped, depth, settled);
                }
                // At the far end of the safe part the term never provably holds: no split.
                if (depth == 0 || splits_left_ == 0 ||
                    analyzer_.can_prove_equal(cut, split->safe_below ? lo : hi)) {
                    continue;
                }
                --splits_left_;
                Stmt dropped = drop(body, guards, splits, *split);
                Settled kept = settled;
                kept.insert(terms[g][t].get());
                if (split->safe_below) {
                    return make_seq({piece(op, lo, cut, dropped, depth - 1, settled),
                                     piece(op, cut, hi, body, depth - 1, kept)},
                                    op->loc);
                }
                return make_seq({piece(op, lo, cut, body, depth - 1, kept),
                                 piece(op, cut, hi, dropped, depth - 1, settled)},
                                op->loc);
            }
        }
        return Stmt();
    }

    // The loop over [lo, hi) with `body`, partitioned again, its own loops in turn.
    Stmt piece(const For* op, const PrimExpr& lo, const PrimExpr& hi, const Stmt& body, int depth,
               const Settled& settled) {
        if (Stmt s = partition(op, lo, hi, body, depth, settled); s.defined()) return s;
        PrimExpr extent = analyzer_.simplify(hi - lo);
        analyzer_.bind(op->var, Range::from_min_extent(lo, extent));
        Stmt b = unswitch(op, body);
        if (!b.defined()) b = mutate_stmt(body);
        return make_for(op->var, lo, extent, op->for_kind, b, op->thread_tag, op->loc);
    }

    // Guard terms no split of `op` removes because they are not linear in its variable (a row
    // tile's test floormod(fused, tiles) * 8 + i < n in a loop fused from column panels and row
    // tiles) but that its loops inside repeat: the body is unswitched on them,
    //   if (likely(every such term holds for every inner iteration)) body without them
    //   else body
    // so a full tile runs its inner loops without tests and only a tail tile keeps them.
    // Undefined when the body repeats nothing or has no such term. `op`'s variable is bound.
    Stmt unswitch(const For* op, const Stmt& body) {
        if (splits_left_ == 0 || !has_loop(body)) return Stmt();
        GuardCollector guards;
        guards.visit_stmt(body);
        forget_inner_loops(guards);
        GuardSplits hoisted;
        PrimExpr all;
        for (const Guard& g : guards.guards) {
            hoisted.emplace_back();
            for (const PrimExpr& c : conjuncts(g)) {
                PrimExpr holds = holds_throughout(c, op->var, guards);
                if (holds.defined()) {
                    hoisted.back().push_back(Split{PrimExpr(), true, true});
                    all = all.defined() ? (all && holds) : holds;
                } else {
                    hoisted.back().push_back(std::nullopt);
                }
            }
        }
        if (!all.defined()) return Stmt();
        all = analyzer_.simplify(all);
        if (all.is<IntImm>()) return Stmt();  // never or always: nothing to gain
        --splits_left_;
        Stmt fast = drop(body, guards, hoisted, Split{PrimExpr(), true, true});
        fast = mutate_stmt(fast);
        forget_inner_loops(guards);
        Stmt slow = mutate_stmt(body);
        return make_if(make_call(DataType::bool_(), intrin::kLikely, {all}), fast, slow, op->loc);
    }

    // A condition, free of the body's variables, that implies the guard term `cond` for every
    // iteration of the body's loops; undefined unless `cond` depends on `v` and such a
    // condition can be stated.
    PrimExpr holds_throughout(const PrimExpr& cond, const Ref<Var>& v, const GuardCollector& c) {
        PrimExpr d = negative_form(cond);
        if (!d.defined() || !mentions(d, [&](const Var* x) { return x == v.get(); })) {
            return PrimExpr();
        }
        if (analyze(cond, v, c)) return PrimExpr();  // linear in v: splits handle it
        PrimExpr worst = analyzer_.eval_interval(analyzer_.simplify(d), c.relax).max;
        if (!worst.defined() || mentions(worst, [&](const Var* x) { return c.bound.count(x); }) ||
            reads_memory(worst)) {
            return PrimExpr();
        }
        return worst < make_int(worst.dtype(), 0);
    }

    // Whether `s` has a loop that repeats statements (a vectorized loop's guard on invariant
    // terms is tested once per vector).
    static bool has_loop(const Stmt& s) {
        struct Finder : StmtVisitor {
            bool found = false;
            void visit_stmt_(const For* op) override {
                found |= op->for_kind != ForKind::Vectorized;
                StmtVisitor::visit_stmt_(op);
            }
        } f;
        f.visit_stmt(s);
        return f.found;
    }

    // A vectorized loop whose whole body is `if (likely(v < k && ...)) S` with a constant k
    // inside its range (the tail of a split that does not divide: 13 of 16 lanes) does nothing
    // from k on: it becomes the vectorized loop [min, k) of S without that term, a narrower
    // vector instead of a serial loop testing the guard per lane. Undefined when not that form.
    Stmt shrink_vector_loop(const For* op) {
        auto* guard = op->body.as<IfThenElse>();
        if (!guard || guard->else_case.defined() || !likely_condition(guard->cond).defined()) {
            return Stmt();
        }
        GuardCollector guards;
        guards.visit_stmt(op->body);
        forget_inner_loops(guards);
        if (!guards.relax.empty() || guards.guards[0].node != guard) {
            return Stmt();  // loops inside: the term's value is not exact
        }
        const int64_t* min = as_const_int(op->min);
        const int64_t* extent = as_const_int(op->extent);
        if (!min || !extent) return Stmt();
        // Guarded reads inside (a padded row's tail) lose the terms the narrower range proves.
        GuardSplits splits;
        for (const Guard& g : guards.guards) {
            splits.emplace_back();
            for (const PrimExpr& c : conjuncts(g))
                splits.back().push_back(analyze(c, op->var, guards));
        }
        for (const auto& sp : splits[0]) {
            if (!sp || !sp->safe_below || sp->always) continue;
            const int64_t* k = as_const_int(sp->k);
            if (!k || *k <= *min || *k >= *min + *extent) continue;
            Stmt body = drop(op->body, guards, splits, *sp);
            return make_for(op->var, op->min, make_int(op->extent.dtype(), *k - *min), op->for_kind,
                            mutate_stmt(body), op->thread_tag, op->loc);
        }
        return Stmt();
    }

    // The analyzer still knows the inner loops' variables as they were bound in the last piece
    // it partitioned (a border tile, say): bind them to their whole ranges in this body instead,
    // so that the conditions are analysed for every iteration.
    void forget_inner_loops(const GuardCollector& c) {
        for (const Ref<Var>& v : c.loop_vars) {
            const Interval& r = c.relax.at(v.get());
            analyzer_.bind(
                v, Range::from_min_extent(r.min, r.max - r.min + make_int(r.max.dtype(), 1)));
        }
    }

    // d with `d < 0` equivalent to the comparison `cond` of scalar signed integers; undefined
    // for any other condition.
    static PrimExpr negative_form(const PrimExpr& cond) {
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
                return PrimExpr();
        }
        if (!d.dtype().is_int() || d.dtype().is_vector()) return PrimExpr();
        return d;
    }

    // Normalizes cond to `d < 0` with d = coef * v + rest, and finds where it holds for all
    // values of the inner loop variables in rest.
    std::optional<Split> analyze(const PrimExpr& cond, const Ref<Var>& v, const GuardCollector& c) {
        PrimExpr d = negative_form(cond);
        if (!d.defined()) return std::nullopt;
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
        Interval range = analyzer_.eval_interval(from_linear(rest), c.relax);
        PrimExpr worst = range.max;
        if (!worst.defined() ||
            mentions(worst, [&](const Var* x) { return x == v.get() || c.bound.count(x) > 0; }) ||
            reads_memory(worst)) {
            return std::nullopt;
        }
        if (coef == 0) {
            if (!analyzer_.can_prove(worst < make_int(worst.dtype(), 0))) return std::nullopt;
            return Split{PrimExpr(), true, true};
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

    // The body without the guard terms that hold wherever `chosen` holds; a guard left with
    // no terms goes, leaving its then-branch (statement) or its then-value (expression).
    Stmt drop(const Stmt& body, const GuardCollector& c, const GuardSplits& s,
              const Split& chosen) {
        std::unordered_map<const Object*, PrimExpr> rewrite;  // undefined: remove the guard
        for (size_t g = 0; g < c.guards.size(); ++g) {
            std::vector<PrimExpr> terms = conjuncts(c.guards[g]);
            PrimExpr kept;
            bool dropped = false;
            for (size_t t = 0; t < terms.size(); ++t) {
                const std::optional<Split>& sp = s[g][t];
                bool covered = sp && sp->always;
                if (!covered && sp && !chosen.always && sp->safe_below == chosen.safe_below) {
                    PrimExpr covers = chosen.safe_below ? sp->k >= chosen.k : sp->k <= chosen.k;
                    covered = sp->k.same_as(chosen.k) || analyzer_.can_prove(covers);
                }
                dropped |= covered;
                if (!covered) kept = kept.defined() ? (kept && terms[t]) : terms[t];
            }
            if (!dropped) continue;
            rewrite[c.guards[g].node] =
                kept.defined() ? make_call(DataType::bool_(), intrin::kLikely, {kept}) : kept;
        }
        struct Remover : StmtMutator {
            std::unordered_map<const Object*, PrimExpr>* rewrite;
            Stmt mutate_stmt_(const IfThenElse* op, const Stmt& self) override {
                auto it = rewrite->find(op);
                if (it == rewrite->end()) return StmtMutator::mutate_stmt_(op, self);
                Stmt then_case = mutate_stmt(op->then_case);
                if (!it->second.defined()) return then_case;
                Stmt else_case = op->else_case.defined() ? mutate_stmt(op->else_case) : Stmt();
                return make_if(it->second, then_case, else_case, op->loc);
            }
            PrimExpr mutate_(const Call* op, const PrimExpr& self) override {
                auto it = rewrite->find(op);
                if (it == rewrite->end()) return StmtMutator::mutate_(op, self);
                PrimExpr then_value = mutate(op->args[1]);
                if (!it->second.defined()) return then_value;
                return make_call(op->dtype, op->name,
                                 {it->second, then_value, mutate(op->args[2])});
            }
        } r;
        r.rewrite = &rewrite;
        return r.mutate_stmt(body);
    }

    Analyzer analyzer_;
    int nesting_ = 0;      // loops around the one being mutated
    int splits_left_ = 0;  // of the current loop nest's kMaxSplitsPerNest
};

}  // namespace

Stmt partition_loops(const Stmt& s, const LowerContext& ctx) {
    return Partitioner().mutate_stmt(s);
}

}  // namespace anvil::tir
