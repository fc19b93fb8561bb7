// vectorize_loops: a Vectorized loop `for v in [min, min + L)` becomes one copy of its body in
// which v is the vector ramp(min, 1, L) and every expression that depends on v is an L-lane
// vector.
//
// Executing the body once with vectors equals executing it L times only when nothing in it
// happens "once per iteration" in a way vectors cannot express. Whenever the rewrite meets such
// a construct (a vector condition on a branch, a store to a loop-invariant address, a
// side-effecting call, an allocation, a vector let used as an index, ...) it gives up on the
// whole loop and emits a Serial loop instead, which is always correct. An if_then_else with a
// vector condition stays one when its chosen branch is a contiguous or strided load (the code
// generator masks it), and otherwise becomes a select over branches whose loads are clamped in
// bounds (see vector_if_then_else), when its branches cannot trap.
#include <unordered_set>

#include "ir/intrinsics.h"
#include "support/error.h"
#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

// Thrown inside the rewrite of one loop; caught where that loop is handled.
struct CannotVectorize {};

PrimExpr widen(const PrimExpr& e, int lanes) {
    if (e.dtype().lanes() == lanes) return e;
    ANVIL_CHECK(e.dtype().is_scalar()) << "widen " << e.dtype().str() << " to " << lanes;
    return make_broadcast(e, lanes);
}

// The scalar a uniform vector repeats, or the expression itself when it is scalar.
PrimExpr scalar_of(const PrimExpr& e) {
    if (e.dtype().is_scalar()) return e;
    if (auto* b = e.as<Broadcast>()) return b->value;
    return PrimExpr();
}

PrimExpr fold(ExprKind kind, const PrimExpr& a, const PrimExpr& b) {
    const int64_t* x = as_const_int(a);
    const int64_t* y = as_const_int(b);
    if (x && y) {
        if (kind == ExprKind::Add) return make_int(a.dtype(), *x + *y);
        if (kind == ExprKind::Sub) return make_int(a.dtype(), *x - *y);
        if (kind == ExprKind::Mul) return make_int(a.dtype(), *x * *y);
    }
    if (kind != ExprKind::Mul && y && *y == 0) return a;
    if (kind == ExprKind::Add && x && *x == 0) return b;
    if (kind == ExprKind::Mul && y && *y == 1) return a;
    if (kind == ExprKind::Mul && x && *x == 1) return b;
    return make_binary(kind, a, b);
}

// True when evaluating `e` (scalar, before vectorizing) where its guard is false cannot trap
// once its loads are clamped (clamp_loads): no integer division by a non-constant, no call but
// the pure elementwise intrinsics and if_then_else, loads only of buffers of static shape.
bool is_speculable(const PrimExpr& e) {
    bool ok = true;
    pre_order_visit(e, [&](const PrimExpr& x) {
        switch (x->kind) {
            case ExprKind::Div:
            case ExprKind::Mod:
            case ExprKind::FloorDiv:
            case ExprKind::FloorMod: {
                const auto* b = static_cast<const BinaryExpr*>(x.get());
                const int64_t* d = as_const_int(b->b);
                if (!x.dtype().is_floating() && (!d || *d == 0)) ok = false;
                break;
            }
            case ExprKind::Call: {
                const std::string& n = x.as<Call>()->name;
                if (!intrin::is_math(n) && !intrin::is_integer_elementwise(n) &&
                    !intrin::is_dot(n) && n != intrin::kReinterpret && n != intrin::kLikely &&
                    n != intrin::kIfThenElse) {
                    ok = false;
                }
                break;
            }
            case ExprKind::Load: {
                const Load* l = x.as<Load>();
                for (const auto& d : l->buffer->shape) {
                    if (!as_const_int(d)) ok = false;
                }
                if (l->indices.size() != 1 && l->indices.size() != l->buffer->shape.size()) {
                    ok = false;
                }
                break;
            }
            case ExprKind::Reduce:
                ok = false;
                break;
            default:
                break;
        }
    });
    return ok;
}

// Every load index clamped into its dimension (a single index into a buffer of several
// dimensions, as flatten_storage leaves parameters, into the whole buffer): the access is in
// bounds whatever the lane, and unchanged where it was in bounds already.
class LoadClamper : public ExprMutator {
protected:
    PrimExpr mutate_(const Load* op, const PrimExpr& self) override {
        std::vector<PrimExpr> idx;
        const auto& shape = op->buffer->shape;  // static: is_speculable
        for (size_t k = 0; k < op->indices.size(); ++k) {
            PrimExpr i = mutate(op->indices[k]);
            DataType t = i.dtype().element_of();
            int64_t extent = 1;
            if (op->indices.size() == shape.size()) {
                extent = *as_const_int(shape[k]);
            } else {
                for (const auto& d : shape) extent *= *as_const_int(d);
            }
            int lanes = i.dtype().lanes();
            PrimExpr hi = make_int(t, extent - 1), lo = make_int(t, 0);
            if (lanes > 1) {
                hi = make_broadcast(hi, lanes);
                lo = make_broadcast(lo, lanes);
            }
            idx.push_back(make_binary(ExprKind::Max, make_binary(ExprKind::Min, i, hi), lo));
        }
        return make_load(op->buffer, std::move(idx));
    }
};

// Rewrites the body of one Vectorized loop.
class Vectorizer : public StmtMutator {
public:
    Vectorizer(const Ref<Var>& var, const PrimExpr& min, int lanes)
        : var_(var), ramp_(make_ramp(min, make_int(min.dtype(), 1), lanes)), lanes_(lanes) {}

    PrimExpr mutate(const PrimExpr& e) override {
        // A vector already present means a nested vectorization we do not attempt.
        if (e.dtype().is_vector()) throw CannotVectorize{};
        return ExprMutator::mutate(e);
    }

protected:
    PrimExpr mutate_(const Var* op, const PrimExpr& self) override {
        if (op == var_.get()) return ramp_;
        for (const auto& [from, to] : lets_) {
            if (from.get() == op) return to;
        }
        return self;
    }

#define ANVIL_X(name)                                                 \
    PrimExpr mutate_(const name* op, const PrimExpr& self) override { \
        return binary(ExprKind::name, op, self);                      \
    }
    ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X

    PrimExpr mutate_(const Select* op, const PrimExpr& self) override {
        PrimExpr c = mutate(op->cond), t = mutate(op->true_value), f = mutate(op->false_value);
        if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) {
            return self;
        }
        int lanes = std::max({c.dtype().lanes(), t.dtype().lanes(), f.dtype().lanes()});
        if (lanes == 1) return make_select(c, t, f);
        if (PrimExpr sc = scalar_of(c); sc.defined()) c = sc;
        return make_select(c, widen(t, lanes), widen(f, lanes));
    }

    PrimExpr mutate_(const Call* op, const PrimExpr& self) override {
        std::vector<PrimExpr> args;
        if (!mutate_all(op->args, &args)) return self;
        int lanes = 1;
        for (const auto& a : args) lanes = std::max(lanes, a.dtype().lanes());
        if (lanes == 1) return make_call(op->dtype, op->name, std::move(args));
        if (op->name == intrin::kIfThenElse) return vector_if_then_else(op, std::move(args), lanes);
        // Only pure elementwise intrinsics have an obvious lane-wise meaning.
        bool elementwise = intrin::is_math(op->name) || intrin::is_integer_elementwise(op->name) ||
                           intrin::is_dot(op->name) || op->name == intrin::kReinterpret ||
                           op->name == intrin::kLikely;
        if (!elementwise) throw CannotVectorize{};
        for (auto& a : args) a = widen(a, lanes);
        return make_call(op->dtype.with_lanes(lanes), op->name, std::move(args));
    }

    PrimExpr mutate_(const Load* op, const PrimExpr& self) override {
        std::vector<PrimExpr> idx;
        if (!mutate_all(op->indices, &idx)) return self;
        vectorize_indices(&idx);
        return make_load(op->buffer, std::move(idx));
    }

    Stmt mutate_stmt_(const Store* op, const Stmt& self) override {
        PrimExpr value = mutate_expr(op->value);
        std::vector<PrimExpr> idx;
        mutate_all(op->indices, &idx);
        // Every lane must write its own element; a loop-invariant address would be written
        // once instead of L times (or, for a vector value, by all lanes at once).
        if (!vectorize_indices(&idx)) throw CannotVectorize{};
        return make_store(op->buffer, widen(value, lanes_), std::move(idx), op->loc);
    }

    Stmt mutate_stmt_(const LetStmt* op, const Stmt& self) override {
        PrimExpr value = mutate_expr(op->value);
        if (value.dtype().is_scalar()) {
            Stmt body = mutate_stmt(op->body);
            if (value.same_as(op->value) && body.same_as(op->body)) return self;
            return make_let(op->var, value, body, op->loc);
        }
        Ref<Var> vec = make_var(op->var->name, value.dtype());
        lets_.emplace_back(op->var, vec);
        vector_lets_.insert(vec.get());
        Stmt body = mutate_stmt(op->body);
        lets_.pop_back();
        return make_let(vec, value, body, op->loc);
    }

    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        PrimExpr mn = mutate_expr(op->min), ext = mutate_expr(op->extent);
        if (mn.dtype().is_vector() || ext.dtype().is_vector()) throw CannotVectorize{};
        return StmtMutator::mutate_stmt_(op, self);
    }

    Stmt mutate_stmt_(const IfThenElse* op, const Stmt& self) override {
        if (mutate_expr(op->cond).dtype().is_vector()) throw CannotVectorize{};
        return StmtMutator::mutate_stmt_(op, self);
    }

    Stmt mutate_stmt_(const AssertStmt* op, const Stmt& self) override {
        if (mutate_expr(op->cond).dtype().is_vector()) throw CannotVectorize{};
        return StmtMutator::mutate_stmt_(op, self);
    }

    // Runs once per iteration in the source; once in total after vectorization.
    Stmt mutate_stmt_(const Evaluate*, const Stmt&) override {
        throw CannotVectorize{};
    }
    Stmt mutate_stmt_(const CallPacked*, const Stmt&) override {
        throw CannotVectorize{};
    }
    // Each iteration owns its buffer; sharing one across lanes would need it widened.
    Stmt mutate_stmt_(const Allocate*, const Stmt&) override {
        throw CannotVectorize{};
    }

private:
    // A vector if_then_else (or one with vector branches) evaluates both branches for every
    // lane: a select. Exact when the branches cannot trap: their loads are clamped into their
    // buffers, so a lane whose guard is false reads some element (the select drops it) instead
    // of out of bounds, while a lane whose guard holds reads what it did (that access was in
    // bounds). Padding stages (if_then_else(inside, x[i - p], 0)) vectorize this way.
    PrimExpr vector_if_then_else(const Call* op, std::vector<PrimExpr> args, int lanes) {
        // The same choice for every lane (a padded row's top and bottom): the code generator
        // branches, and the chosen branch runs for every lane as the scalar loop ran it, so
        // nothing is evaluated that was not before and nothing needs clamping.
        if (PrimExpr uniform = scalar_of(args[0]); uniform.defined()) {
            return make_call(op->dtype.with_lanes(lanes), intrin::kIfThenElse,
                             {uniform, widen(args[1], lanes), widen(args[2], lanes)});
        }
        // A guarded vector load stays guarded: the code generator reads only the lanes whose
        // condition holds (a masked load), so nothing is clamped and a contiguous load stays
        // contiguous. Padding stages (if_then_else(inside, x[i - p], 0)) take this path.
        // The other branch, when it is such a load too (concatenate's inputs), is masked by the
        // negated guard; a guarded if_then_else made here already is safe in every lane.
        if (is_maskable_load(args[1]) && args[0].dtype().is_vector()) {
            PrimExpr otherwise = args[2];
            if (!is_maskable_load(otherwise) && !is_guarded_vector(otherwise)) {
                if (!is_speculable(op->args[2])) throw CannotVectorize{};
                otherwise = widen(LoadClamper().mutate(args[2]), lanes);
            }
            return make_call(op->dtype.with_lanes(lanes), intrin::kIfThenElse,
                             {args[0], args[1], otherwise});
        }
        for (int k = 1; k < 3; ++k) {
            if (!is_speculable(op->args[k])) throw CannotVectorize{};
            args[k] = widen(LoadClamper().mutate(args[k]), lanes);
        }
        return make_select(args[0], args[1], args[2]);
    }

    // A vector load of one ramp index whose index arithmetic cannot trap: the code generator
    // can read just the lanes a guard selects.
    static bool is_maskable_load(const PrimExpr& e) {
        const Load* l = e.as<Load>();
        return l && l->dtype.is_vector() && l->indices.size() == 1 && l->indices[0].is<Ramp>() &&
               is_speculable(l->indices[0]);
    }
    static bool is_guarded_vector(const PrimExpr& e) {
        const Call* c = e.as<Call>();
        return c && c->name == intrin::kIfThenElse && c->args[0].dtype().is_vector();
    }

    PrimExpr binary(ExprKind kind, const BinaryExpr* op, const PrimExpr& self) {
        PrimExpr a = mutate(op->a), b = mutate(op->b);
        if (a.same_as(op->a) && b.same_as(op->b)) return self;
        int lanes = std::max(a.dtype().lanes(), b.dtype().lanes());
        if (lanes == 1) return make_binary(kind, a, b);
        PrimExpr sa = scalar_of(a), sb = scalar_of(b);
        if (sa.defined() && sb.defined()) return make_broadcast(make_binary(kind, sa, sb), lanes);
        // Keep affine index arithmetic in ramp form: the code generator turns ramp(base, 1, L)
        // indices into contiguous vector loads and stores.
        auto* ra = a.as<Ramp>();
        auto* rb = b.as<Ramp>();
        if (kind == ExprKind::Add || kind == ExprKind::Sub) {
            if (ra && rb) {
                return make_ramp(fold(kind, ra->base, rb->base), fold(kind, ra->stride, rb->stride),
                                 lanes);
            }
            if (ra && sb.defined()) return make_ramp(fold(kind, ra->base, sb), ra->stride, lanes);
            if (rb && sa.defined()) {
                PrimExpr stride = rb->stride;
                if (kind == ExprKind::Sub) stride = fold(kind, make_int(stride.dtype(), 0), stride);
                return make_ramp(fold(kind, sa, rb->base), stride, lanes);
            }
        }
        if (kind == ExprKind::Mul) {
            if (ra && sb.defined()) {
                return make_ramp(fold(kind, ra->base, sb), fold(kind, ra->stride, sb), lanes);
            }
            if (rb && sa.defined()) {
                return make_ramp(fold(kind, sa, rb->base), fold(kind, sa, rb->stride), lanes);
            }
        }
        return make_binary(kind, widen(a, lanes), widen(b, lanes));
    }

    // Returns false when the access is scalar; otherwise makes the last index carry the lanes.
    // Vector let variables are not allowed in indices: the code generator recognises contiguous
    // and strided accesses from the index expression itself.
    bool vectorize_indices(std::vector<PrimExpr>* idx) {
        bool vector = false;
        for (const auto& i : *idx) {
            vector |= i.dtype().is_vector();
            pre_order_visit(i, [&](const PrimExpr& e) {
                if (vector_lets_.count(e.get())) throw CannotVectorize{};
            });
        }
        if (vector && !idx->empty()) idx->back() = widen(idx->back(), lanes_);
        return vector;
    }

    Ref<Var> var_;
    PrimExpr ramp_;
    int lanes_;
    std::vector<std::pair<Ref<Var>, PrimExpr>> lets_;
    std::unordered_set<const PrimExprNode*> vector_lets_;
};

class LoopVectorizer : public StmtMutator {
protected:
    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        // Inner loops first, so that a vectorized loop nested in this one is already rewritten.
        Stmt s = StmtMutator::mutate_stmt_(op, self);
        auto* loop = s.as<For>();
        if (loop->for_kind != ForKind::Vectorized) return s;
        const int64_t* extent = as_const_int(loop->extent);
        if (extent && *extent == 1) return substitute(loop->body, {{loop->var, loop->min}});
        if (extent && *extent > 1 && *extent <= 0xFFFF) {
            try {
                Vectorizer v(loop->var, loop->min, static_cast<int>(*extent));
                return v.mutate_stmt(loop->body);
            } catch (const CannotVectorize&) {
                // Fall through to the serial loop.
            }
        }
        return make_for(loop->var, loop->min, loop->extent, ForKind::Serial, loop->body,
                        loop->thread_tag, loop->loc);
    }
};

}  // namespace

Stmt vectorize_loops(const Stmt& s, const LowerContext& ctx) {
    return LoopVectorizer().mutate_stmt(s);
}

}  // namespace anvil::tir
