// unroll_loops: an Unrolled loop of constant extent becomes one copy of its body per iteration.
//
// Variables and buffers are identified by object and each may be bound once, so every copy gets
// fresh objects for whatever its body binds (lets, loops, allocations); otherwise later passes
// and the code generator would see one variable bound in several places.
#include <unordered_map>

#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

// Copies a statement with `var` replaced by `value` and every binder renewed.
class BodyCopier : public StmtMutator {
public:
    BodyCopier(const Ref<Var>& var, const PrimExpr& value) { vars_[var.get()] = value; }

protected:
    PrimExpr mutate_(const Var* op, const PrimExpr& self) override {
        auto it = vars_.find(op);
        return it == vars_.end() ? self : it->second;
    }

    Ref<Buffer> mutate_buffer(const Ref<Buffer>& b) override {
        auto it = buffers_.find(b.get());
        return it == buffers_.end() ? b : it->second;
    }

    Stmt mutate_stmt_(const LetStmt* op, const Stmt& self) override {
        PrimExpr value = mutate_expr(op->value);
        Ref<Var> fresh = renew(op->var);
        return make_let(fresh, value, mutate_stmt(op->body), op->loc);
    }

    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        PrimExpr mn = mutate_expr(op->min), ext = mutate_expr(op->extent);
        Ref<Var> fresh = renew(op->var);
        return make_for(fresh, mn, ext, op->for_kind, mutate_stmt(op->body), op->thread_tag,
                        op->loc);
    }

    Stmt mutate_stmt_(const Allocate* op, const Stmt& self) override {
        std::vector<PrimExpr> shape;
        mutate_all(op->buffer->shape, &shape);
        Ref<Buffer> fresh =
            make_buffer(op->buffer->name, op->buffer->dtype, std::move(shape), op->buffer->scope);
        buffers_[op->buffer.get()] = fresh;
        return make_allocate(fresh, mutate_stmt(op->body), op->loc);
    }

private:
    Ref<Var> renew(const Ref<Var>& v) {
        Ref<Var> fresh = make_var(v->name, v->dtype);
        vars_[v.get()] = fresh;
        return fresh;
    }

    std::unordered_map<const Var*, PrimExpr> vars_;
    std::unordered_map<const Buffer*, Ref<Buffer>> buffers_;
};

class Unroller : public StmtMutator {
public:
    explicit Unroller(int max_extent) : max_extent_(max_extent) {}

protected:
    Stmt mutate_stmt_(const For* op, const Stmt& self) override {
        // Inner loops first: an unrolled nest becomes one flat sequence.
        Stmt s = StmtMutator::mutate_stmt_(op, self);
        auto* loop = s.as<For>();
        if (loop->for_kind != ForKind::Unrolled) return s;
        const int64_t* extent = as_const_int(loop->extent);
        if (!extent || *extent > max_extent_) {
            return make_for(loop->var, loop->min, loop->extent, ForKind::Serial, loop->body,
                            loop->thread_tag, loop->loc);
        }
        std::vector<Stmt> copies;
        for (int64_t k = 0; k < *extent; ++k) {
            PrimExpr value = make_int(loop->var->dtype, k);
            if (const int64_t* mn = as_const_int(loop->min)) {
                value = make_int(loop->var->dtype, *mn + k);
            } else if (k != 0) {
                value = loop->min + value;
            } else {
                value = loop->min;
            }
            // The first copy may keep the original binders: nothing else binds them.
            copies.push_back(k == 0 ? substitute(loop->body, {{loop->var, value}})
                                    : BodyCopier(loop->var, value).mutate_stmt(loop->body));
        }
        return make_seq(std::move(copies), loop->loc);
    }

private:
    int max_extent_;
};

}  // namespace

Stmt unroll_loops(const Stmt& s, const LowerContext& ctx) {
    return Unroller(ctx.max_unroll_extent).mutate_stmt(s);
}

}  // namespace anvil::tir
