#include "tir/structural_equal.h"

#include "ir/structural_equal.h"

namespace anvil::tir {

namespace {

// The statements; every expression goes to the scalar equalizer, which holds the variable and
// buffer correspondences. Free objects must be identical (no map_free_vars), and NaNs compare
// as the text writes them.
class Equalizer {
public:
    bool func(const PrimFunc& a, const PrimFunc& b) {
        if (a.name != b.name || a.params.size() != b.params.size() ||
            a.scalar_params.size() != b.scalar_params.size()) {
            return false;
        }
        StructuralEqualizer::Scope params(eq_);
        // Scalars first: buffer shapes may refer to them (`A: float32[n]`).
        for (size_t i = 0; i < a.scalar_params.size(); ++i) {
            if (!params.bind_var(a.scalar_params[i].get(), b.scalar_params[i].get())) return false;
        }
        for (size_t i = 0; i < a.params.size(); ++i) {
            if (!buffer_fields(*a.params[i], *b.params[i])) return false;
            params.bind_buffer(a.params[i].get(), b.params[i].get());
        }
        return stmt(a.body, b.body);
    }

    bool stmt(const Stmt& a, const Stmt& b) {
        if (a.same_as(b) && eq_.renames_nothing()) return true;
        if (!a.defined() || !b.defined()) return a.defined() == b.defined();
        if (a->kind != b->kind) return false;
        switch (a->kind) {
            case StmtKind::LetStmt: {
                auto *x = a.as<LetStmt>(), *y = b.as<LetStmt>();
                if (!eq_.equal(x->value, y->value)) return false;
                StructuralEqualizer::Scope scope(eq_);
                return scope.bind_var(x->var.get(), y->var.get()) && stmt(x->body, y->body);
            }
            case StmtKind::For: {
                auto *x = a.as<For>(), *y = b.as<For>();
                if (x->for_kind != y->for_kind || x->thread_tag != y->thread_tag) return false;
                if (!eq_.equal(x->min, y->min) || !eq_.equal(x->extent, y->extent)) return false;
                StructuralEqualizer::Scope scope(eq_);
                return scope.bind_var(x->var.get(), y->var.get()) && stmt(x->body, y->body);
            }
            case StmtKind::Store: {
                auto *x = a.as<Store>(), *y = b.as<Store>();
                return eq_.equal_buffer(x->buffer.get(), y->buffer.get()) &&
                       eq_.equal(x->value, y->value) && eq_.equal(x->indices, y->indices);
            }
            case StmtKind::Allocate: {
                auto *x = a.as<Allocate>(), *y = b.as<Allocate>();
                StructuralEqualizer::Scope scope(eq_);
                scope.bind_buffer(x->buffer.get(), y->buffer.get());
                return buffer_fields(*x->buffer, *y->buffer) && stmt(x->body, y->body);
            }
            case StmtKind::IfThenElse: {
                auto *x = a.as<IfThenElse>(), *y = b.as<IfThenElse>();
                return eq_.equal(x->cond, y->cond) && stmt(x->then_case, y->then_case) &&
                       stmt(x->else_case, y->else_case);
            }
            case StmtKind::Evaluate:
                return eq_.equal(a.as<Evaluate>()->value, b.as<Evaluate>()->value);
            case StmtKind::SeqStmt: {
                auto *x = a.as<SeqStmt>(), *y = b.as<SeqStmt>();
                if (x->seq.size() != y->seq.size()) return false;
                for (size_t i = 0; i < x->seq.size(); ++i) {
                    if (!stmt(x->seq[i], y->seq[i])) return false;
                }
                return true;
            }
            case StmtKind::AssertStmt: {
                auto *x = a.as<AssertStmt>(), *y = b.as<AssertStmt>();
                if (x->message_args.size() != y->message_args.size()) return false;
                for (size_t i = 0; i < x->message_args.size(); ++i) {
                    if (!eq_.equal(x->message_args[i], y->message_args[i])) return false;
                }
                return x->message == y->message && eq_.equal(x->cond, y->cond) &&
                       stmt(x->body, y->body);
            }
            case StmtKind::CallPacked: {
                auto *x = a.as<CallPacked>(), *y = b.as<CallPacked>();
                if (x->func != y->func || x->args.size() != y->args.size()) return false;
                for (size_t i = 0; i < x->args.size(); ++i) {
                    const PackedArg &p = x->args[i], &q = y->args[i];
                    if (p.buffer.defined() != q.buffer.defined()) return false;
                    if (p.buffer.defined() && (!eq_.equal_buffer(p.buffer.get(), q.buffer.get()) ||
                                               !eq_.equal(p.shape, q.shape))) {
                        return false;
                    }
                    if (!p.buffer.defined() && !eq_.equal(p.value, q.value)) return false;
                }
                return true;
            }
        }
        return false;
    }

private:
    // Names are ignored, as for variables.
    bool buffer_fields(const Buffer& a, const Buffer& b) {
        return a.dtype == b.dtype && a.scope == b.scope && eq_.equal(a.shape, b.shape);
    }

    StructuralEqualizer eq_{StructuralEqualizer::Options{.ignore_nan_bits = true}};
};

}  // namespace

bool structural_equal(const Stmt& a, const Stmt& b) {
    return Equalizer().stmt(a, b);
}

bool structural_equal(const Ref<PrimFunc>& a, const Ref<PrimFunc>& b) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined();
    return Equalizer().func(*a, *b);
}

}  // namespace anvil::tir
