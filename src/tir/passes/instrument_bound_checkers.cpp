// instrument_bound_checkers: the checked mode. Every Load and Store is preceded by an assert that
// its index lies inside its buffer, so that an access out of bounds in generated code makes the
// kernel fail with a message naming the kernel, the buffer, the index and the extent instead of
// reading or corrupting memory (TVM's tir.instrument_bound_checkers). The sanitizers cannot see
// inside generated kernels; this can.
//
// A check must hold exactly where the code generator touches memory, or it would flag accesses
// that never happen (the padding reads of a convolution, x[i - 1] only when i >= 1):
// - the branches of an if_then_else with a scalar condition are evaluated only when chosen, so
//   their checks sit under `if cond` / `if !cond` (nested: a condition may itself read memory
//   that is valid only under the enclosing one);
// - an if_then_else with a vector condition whose then-branch is a vector load is a masked load:
//   only the lanes where the condition holds are read, and a load (or such a guarded
//   if_then_else) in the else-branch reads the other lanes only; those checks are per lane,
//   `!mask || in bounds`. Any other vector if_then_else is a select and reads every lane, as
//   Select does (vectorize_loops clamps such loads into their buffers);
// - an index is computed for every lane, so the loads inside an index are checked unmasked.
// A contiguous or strided vector access without a mask is checked once, at its lowest and
// highest lane. The final simplify removes the checks it can prove; what stays costs a compare
// and a branch.
#include <climits>
#include <optional>

#include "ir/intrinsics.h"
#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

// A check and where it applies: inside `if` statements on `guards` (outermost first).
struct Check {
    std::vector<PrimExpr> guards;
    PrimExpr cond;
    std::string message;
    std::vector<PrimExpr> args;
};

// The number of elements of a buffer (or of one of its dimensions) as an expression the index
// can be compared with: in the index's type when it is a constant that fits, otherwise in int64.
struct Extent {
    PrimExpr value;
    std::optional<int64_t> constant;
};

Extent extent_of(const std::vector<PrimExpr>& dims, DataType index_type) {
    int64_t product = 1;
    bool constant = true;
    for (const auto& d : dims) {
        const int64_t* c = as_const_int(d);
        if (!c || __builtin_mul_overflow(product, *c, &product)) constant = false;
        if (!constant) break;
    }
    const int64_t max =
        index_type.bits() >= 64 ? INT64_MAX : (int64_t{1} << (index_type.bits() - 1)) - 1;
    if (constant && product <= max) return {make_int(index_type, product), product};
    if (constant) return {make_int(DataType::int64(), product), product};
    PrimExpr e;
    for (const auto& d : dims) {
        PrimExpr d64 = d.dtype() == DataType::int64() ? d : cast(DataType::int64(), d);
        e = e.defined() ? e * d64 : d64;
    }
    return {e, std::nullopt};
}

PrimExpr in_range(const PrimExpr& lo, const PrimExpr& hi, const PrimExpr& extent) {
    return make_binary(ExprKind::And, make_binary(ExprKind::GE, lo, make_int(lo.dtype(), 0)),
                       make_binary(ExprKind::LT, hi, extent));
}

PrimExpr to_type(const PrimExpr& e, DataType t) {
    return e.dtype() == t ? e : make_cast(t, e);
}

// Collects the checks of an expression's accesses in evaluation order (an index's loads before
// the load they index, so a check never reads memory an earlier check has not vouched for).
class CheckCollector : public ExprVisitor {
public:
    explicit CheckCollector(std::string kernel) : kernel_(std::move(kernel)) {}

    std::vector<Check> checks;

    void collect(const PrimExpr& e) { visit(e); }

    void collect_store(const Store* op) {
        for (const auto& i : op->indices) visit(i);
        add(op->buffer, op->indices, "store");
    }

protected:
    void visit_(const Load* op) override {
        PrimExpr mask = mask_;
        mask_ = PrimExpr();
        for (const auto& i : op->indices) visit(i);
        mask_ = mask;
        add(op->buffer, op->indices, "load");
    }

    void visit_(const Call* op) override {
        if (op->name != intrin::kIfThenElse || op->args.size() != 3) {
            ExprVisitor::visit_(op);
            return;
        }
        const PrimExpr& cond = op->args[0];
        visit_unmasked(cond);
        if (cond.dtype().is_scalar()) {
            guards_.push_back(cond);
            visit(op->args[1]);
            guards_.back() = make_not(cond);
            visit(op->args[2]);
            guards_.pop_back();
            return;
        }
        if (!is_vector_load(op->args[1])) {  // a select: both branches in every lane
            visit_unmasked(op->args[1]);
            visit_unmasked(op->args[2]);
            return;
        }
        visit_masked(op->args[1], and_mask(cond));
        const PrimExpr& other = op->args[2];
        const Call* nested = other.as<Call>();
        bool guarded_nest = nested && nested->name == intrin::kIfThenElse &&
                            nested->args.size() == 3 && nested->args[0].dtype().is_vector() &&
                            is_vector_load(nested->args[1]);
        if (is_vector_load(other) || guarded_nest) {
            visit_masked(other, and_mask(make_not(cond)));
        } else {
            visit_unmasked(other);
        }
    }

private:
    static bool is_vector_load(const PrimExpr& e) {
        const Load* l = e.as<Load>();
        return l && l->dtype.is_vector();
    }

    PrimExpr and_mask(const PrimExpr& lanes) const {
        return mask_.defined() ? make_binary(ExprKind::And, mask_, lanes) : lanes;
    }

    void visit_masked(const PrimExpr& e, const PrimExpr& mask) {
        PrimExpr saved = mask_;
        mask_ = mask;
        visit(e);
        mask_ = saved;
    }

    void visit_unmasked(const PrimExpr& e) { visit_masked(e, PrimExpr()); }

    void add(const Ref<Buffer>& buffer, const std::vector<PrimExpr>& indices, const char* kind) {
        if (indices.empty()) return;  // a zero-dimensional buffer's only element
        // One index is a row-major offset into the whole buffer (flattened storage); several
        // are checked each against its dimension.
        const bool per_dim = indices.size() > 1 && indices.size() == buffer->shape.size();
        for (size_t k = 0; k < indices.size(); ++k) {
            std::vector<PrimExpr> dims = buffer->shape;
            if (per_dim) dims = {buffer->shape[k]};
            std::string where = per_dim ? " in dimension " + std::to_string(k) : "";
            add_index(buffer, indices[k], dims, std::string(" (") + kind + where + ")");
        }
    }

    void add_index(const Ref<Buffer>& buffer, const PrimExpr& index,
                   const std::vector<PrimExpr>& dims, const std::string& suffix) {
        const DataType it = index.dtype().element_of();
        Extent extent = extent_of(dims, it);
        DataType ct = extent.value.dtype();  // the type of the comparison
        Check c{guards_,
                PrimExpr(),
                "kernel " + kernel_ + ": buffer '" + buffer->name + "' index {} out of bounds [0, ",
                {}};
        if (extent.constant) {
            c.message += std::to_string(*extent.constant) + ")" + suffix;
        } else {
            c.message += "{})" + suffix;
        }
        PrimExpr scalar = index;
        if (auto* b = index.as<Broadcast>()) scalar = b->value;
        const Ramp* ramp = index.as<Ramp>();
        if (!mask_.defined() && (scalar.dtype().is_scalar() || ramp)) {
            // Every lane is accessed: check the lowest and the highest.
            PrimExpr lo = scalar, hi = scalar;
            if (ramp) {
                PrimExpr last = ramp->base + ramp->stride * (ramp->lanes - 1);
                const int64_t* stride = as_const_int(ramp->stride);
                if (stride && *stride >= 0) {
                    lo = ramp->base, hi = last;
                } else if (stride) {
                    lo = last, hi = ramp->base;
                } else {
                    lo = min(ramp->base, last), hi = max(ramp->base, last);
                }
            }
            const bool single = lo.same_as(hi);
            lo = to_type(lo, ct);
            hi = single ? lo : to_type(hi, ct);
            c.cond = in_range(lo, hi, extent.value);
            // The reported index is one that is out: the lowest when it is, else the highest.
            c.args.push_back(single ? lo : select(lo < make_int(ct, 0), lo, hi));
        } else {
            // Per lane; a scalar index under a mask (a leading index of a multi-dimensional
            // access) is checked for the lanes that read.
            const int lanes = index.dtype().lanes();
            PrimExpr idx = to_type(index, ct.with_lanes(lanes));
            auto widen = [&](const PrimExpr& e) {
                return lanes > 1 ? make_broadcast(e, lanes) : e;
            };
            PrimExpr cond =
                make_binary(ExprKind::And, make_binary(ExprKind::GE, idx, widen(make_int(ct, 0))),
                            make_binary(ExprKind::LT, idx, widen(extent.value)));
            if (mask_.defined()) {
                const int mask_lanes = mask_.dtype().lanes();
                if (lanes != mask_lanes) cond = make_broadcast(cond, mask_lanes);
                cond = make_binary(ExprKind::Or, make_not(mask_), cond);
            }
            c.cond = cond;
            c.args.push_back(idx);
        }
        if (!extent.constant) c.args.push_back(extent.value);
        checks.push_back(std::move(c));
    }

    std::string kernel_;
    std::vector<PrimExpr> guards_;  // scalar conditions of the enclosing if_then_else branches
    PrimExpr mask_;                 // the lanes a masked load reads (undefined: all)
};

bool same_guards(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k) {
        if (!a[k].same_as(b[k])) return false;
    }
    return true;
}

// The checks as statements: consecutive checks under the same guards share one `if` nest.
std::vector<Stmt> to_statements(const std::vector<Check>& checks, const SourceLoc& loc) {
    std::vector<Stmt> out;
    for (size_t k = 0; k < checks.size();) {
        std::vector<Stmt> group;
        size_t end = k;
        while (end < checks.size() && same_guards(checks[end].guards, checks[k].guards)) {
            const Check& c = checks[end++];
            group.push_back(make_assert(c.cond, c.message, Stmt(), loc, c.args));
        }
        Stmt s = make_seq(std::move(group), loc);
        for (auto g = checks[k].guards.rbegin(); g != checks[k].guards.rend(); ++g) {
            s = make_if(*g, s, Stmt(), loc);
        }
        out.push_back(s);
        k = end;
    }
    return out;
}

class Instrumenter : public StmtMutator {
public:
    explicit Instrumenter(std::string kernel) : kernel_(std::move(kernel)) {}

    Stmt mutate_stmt(const Stmt& s) override {
        std::vector<Check> checks = own_checks(s);
        Stmt body = StmtMutator::mutate_stmt(s);
        if (checks.empty()) return body;
        std::vector<Stmt> seq = to_statements(checks, s->loc);
        seq.push_back(body);
        return make_seq(std::move(seq), s->loc);
    }

private:
    // The checks of what a statement evaluates before (or instead of) its body.
    std::vector<Check> own_checks(const Stmt& s) {
        CheckCollector c(kernel_);
        switch (s->kind) {
            case StmtKind::LetStmt:
                c.collect(s.as<LetStmt>()->value);
                break;
            case StmtKind::For:
                c.collect(s.as<For>()->min);
                c.collect(s.as<For>()->extent);
                break;
            case StmtKind::Store:
                c.collect(s.as<Store>()->value);
                c.collect_store(s.as<Store>());
                break;
            case StmtKind::Allocate:
                for (const auto& d : s.as<Allocate>()->buffer->shape) c.collect(d);
                break;
            case StmtKind::IfThenElse:
                c.collect(s.as<IfThenElse>()->cond);
                break;
            case StmtKind::Evaluate: {
                // A prefetch's load is an address that may lie past the buffer (a hint that
                // never faults), not an access to check; what its index reads is.
                auto* call = s.as<Evaluate>()->value.as<Call>();
                auto* load = call && call->name == intrin::kPrefetch && call->args.size() == 1
                                 ? call->args[0].as<Load>()
                                 : nullptr;
                if (load) {
                    for (const auto& i : load->indices) c.collect(i);
                } else {
                    c.collect(s.as<Evaluate>()->value);
                }
                break;
            }
            case StmtKind::AssertStmt:
                // Its message arguments are evaluated only when it fails, and are ours.
                c.collect(s.as<AssertStmt>()->cond);
                break;
            case StmtKind::CallPacked:
                for (const auto& a : s.as<CallPacked>()->args) {
                    for (const auto& d : a.shape) c.collect(d);
                    if (a.value.defined()) c.collect(a.value);
                }
                break;
            case StmtKind::SeqStmt:
                break;
        }
        return std::move(c.checks);
    }

    std::string kernel_;
};

}  // namespace

Stmt instrument_bound_checkers(const Stmt& s, const LowerContext& ctx) {
    return Instrumenter(ctx.function_name.empty() ? "<unnamed>" : ctx.function_name).mutate_stmt(s);
}

}  // namespace anvil::tir
