#include "tir/structural_equal.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

namespace anvil::tir {

namespace {

// A one-to-one correspondence between objects bound on the left and on the right. Both
// directions are kept so that a left variable that is free cannot equal a right variable that is
// bound (and the other way round) just because they happen to be the same object.
template <typename T>
class Binding {
public:
    // Binds a to b for the lifetime of the returned token's scope (see Equalizer::scoped).
    struct Saved {
        const T* a;
        const T* b;
        const T* old_fwd;
        const T* old_back;
    };
    Saved bind(const T* a, const T* b) {
        Saved s{a, b, lookup(fwd_, a), lookup(back_, b)};
        fwd_[a] = b;
        back_[b] = a;
        return s;
    }
    void restore(const Saved& s) {
        put(fwd_, s.a, s.old_fwd);
        put(back_, s.b, s.old_back);
    }
    bool same(const T* a, const T* b) const {
        const T* fa = lookup(fwd_, a);
        if (fa) return fa == b;
        return a == b && !lookup(back_, b);
    }

private:
    using Map = std::unordered_map<const T*, const T*>;
    static const T* lookup(const Map& m, const T* k) {
        auto it = m.find(k);
        return it == m.end() ? nullptr : it->second;
    }
    static void put(Map& m, const T* k, const T* v) {
        if (v) {
            m[k] = v;
        } else {
            m.erase(k);
        }
    }
    Map fwd_, back_;
};

bool same_float(double a, double b) {
    if (std::isnan(a) && std::isnan(b)) return true;
    // Bitwise, so that -0.0 and 0.0 differ (they print differently and divide differently).
    return std::memcmp(&a, &b, sizeof a) == 0;
}

class Equalizer {
public:
    bool func(const PrimFunc& a, const PrimFunc& b) {
        if (a.name != b.name || a.params.size() != b.params.size() ||
            a.scalar_params.size() != b.scalar_params.size()) {
            return false;
        }
        // Scalars first: buffer shapes may refer to them (`A: float32[n]`).
        for (size_t i = 0; i < a.scalar_params.size(); ++i) {
            if (!bind_var(a.scalar_params[i], b.scalar_params[i])) return false;
        }
        for (size_t i = 0; i < a.params.size(); ++i) {
            if (!bind_buffer(a.params[i], b.params[i])) return false;
        }
        return stmt(a.body, b.body);
    }

    bool stmt(const Stmt& a, const Stmt& b) {
        if (a.same_as(b) && free_of_bindings_) return true;
        if (!a.defined() || !b.defined()) return a.defined() == b.defined();
        if (a->kind != b->kind) return false;
        switch (a->kind) {
            case StmtKind::LetStmt: {
                auto *x = a.as<LetStmt>(), *y = b.as<LetStmt>();
                if (!expr(x->value, y->value)) return false;
                return scoped_var(x->var, y->var, [&] { return stmt(x->body, y->body); });
            }
            case StmtKind::For: {
                auto *x = a.as<For>(), *y = b.as<For>();
                if (x->for_kind != y->for_kind || x->thread_tag != y->thread_tag) return false;
                if (!expr(x->min, y->min) || !expr(x->extent, y->extent)) return false;
                return scoped_var(x->var, y->var, [&] { return stmt(x->body, y->body); });
            }
            case StmtKind::Store: {
                auto *x = a.as<Store>(), *y = b.as<Store>();
                return buffers_.same(x->buffer.get(), y->buffer.get()) &&
                       expr(x->value, y->value) && exprs(x->indices, y->indices);
            }
            case StmtKind::Allocate: {
                auto *x = a.as<Allocate>(), *y = b.as<Allocate>();
                auto saved_free = free_of_bindings_;
                auto sb = buffers_.bind(x->buffer.get(), y->buffer.get());
                free_of_bindings_ = false;
                bool ok = buffer_fields(x->buffer, y->buffer) && stmt(x->body, y->body);
                buffers_.restore(sb);
                free_of_bindings_ = saved_free;
                return ok;
            }
            case StmtKind::IfThenElse: {
                auto *x = a.as<IfThenElse>(), *y = b.as<IfThenElse>();
                return expr(x->cond, y->cond) && stmt(x->then_case, y->then_case) &&
                       stmt(x->else_case, y->else_case);
            }
            case StmtKind::Evaluate:
                return expr(a.as<Evaluate>()->value, b.as<Evaluate>()->value);
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
                return x->message == y->message && expr(x->cond, y->cond) && stmt(x->body, y->body);
            }
        }
        return false;
    }

    bool expr(const PrimExpr& a, const PrimExpr& b) {
        if (a.same_as(b) && free_of_bindings_) return true;
        if (!a.defined() || !b.defined()) return a.defined() == b.defined();
        if (a->kind != b->kind || a.dtype() != b.dtype()) return false;
        switch (a->kind) {
            case ExprKind::IntImm:
                return a.as<IntImm>()->value == b.as<IntImm>()->value;
            case ExprKind::FloatImm:
                return same_float(a.as<FloatImm>()->value, b.as<FloatImm>()->value);
            case ExprKind::Var:
                return vars_.same(a.as<Var>(), b.as<Var>());
#define ANVIL_X(name) case ExprKind::name:
                ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X
                {
                    auto* x = static_cast<const BinaryExpr*>(a.get());
                    auto* y = static_cast<const BinaryExpr*>(b.get());
                    return expr(x->a, y->a) && expr(x->b, y->b);
                }
            case ExprKind::Not:
                return expr(a.as<Not>()->a, b.as<Not>()->a);
            case ExprKind::Select: {
                auto *x = a.as<Select>(), *y = b.as<Select>();
                return expr(x->cond, y->cond) && expr(x->true_value, y->true_value) &&
                       expr(x->false_value, y->false_value);
            }
            case ExprKind::Cast:
                return expr(a.as<Cast>()->value, b.as<Cast>()->value);
            case ExprKind::Call: {
                auto *x = a.as<Call>(), *y = b.as<Call>();
                return x->name == y->name && exprs(x->args, y->args);
            }
            case ExprKind::Load: {
                auto *x = a.as<Load>(), *y = b.as<Load>();
                return buffers_.same(x->buffer.get(), y->buffer.get()) &&
                       exprs(x->indices, y->indices);
            }
            case ExprKind::Ramp: {
                auto *x = a.as<Ramp>(), *y = b.as<Ramp>();
                return x->lanes == y->lanes && expr(x->base, y->base) && expr(x->stride, y->stride);
            }
            case ExprKind::Broadcast: {
                auto *x = a.as<Broadcast>(), *y = b.as<Broadcast>();
                return x->lanes == y->lanes && expr(x->value, y->value);
            }
            case ExprKind::Reduce:
                return reduce(*a.as<Reduce>(), *b.as<Reduce>());
        }
        return false;
    }

private:
    bool exprs(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            if (!expr(a[i], b[i])) return false;
        }
        return true;
    }

    // Reduce appears only in tensor expressions, but comparing it keeps the equalizer total.
    bool reduce(const Reduce& x, const Reduce& y) {
        const CommReducer &p = *x.combiner, &q = *y.combiner;
        if (p.name != q.name || x.axis.size() != y.axis.size()) return false;
        bool ok = scoped_var(p.lhs, q.lhs, [&] {
            return scoped_var(p.rhs, q.rhs, [&] { return expr(p.result, q.result); });
        });
        if (!ok || !expr(p.identity, q.identity)) return false;
        std::vector<Binding<Var>::Saved> saved;
        auto saved_free = free_of_bindings_;
        free_of_bindings_ = false;
        for (size_t i = 0; i < x.axis.size() && ok; ++i) {
            const IterVar &u = *x.axis[i], &v = *y.axis[i];
            ok = u.kind == v.kind && u.thread_tag == v.thread_tag && u.var->dtype == v.var->dtype &&
                 expr(u.dom.min, v.dom.min) && expr(u.dom.extent, v.dom.extent);
            saved.push_back(vars_.bind(u.var.get(), v.var.get()));
        }
        ok = ok && expr(x.source, y.source) && expr(x.condition, y.condition);
        for (auto it = saved.rbegin(); it != saved.rend(); ++it) vars_.restore(*it);
        free_of_bindings_ = saved_free;
        return ok;
    }

    template <typename F>
    bool scoped_var(const Ref<Var>& a, const Ref<Var>& b, F&& body) {
        if (a->dtype != b->dtype) return false;
        auto saved_free = free_of_bindings_;
        auto s = vars_.bind(a.get(), b.get());
        free_of_bindings_ = false;
        bool ok = body();
        vars_.restore(s);
        free_of_bindings_ = saved_free;
        return ok;
    }

    // Function parameters stay bound for the whole comparison.
    bool bind_var(const Ref<Var>& a, const Ref<Var>& b) {
        if (a->dtype != b->dtype) return false;
        vars_.bind(a.get(), b.get());
        free_of_bindings_ = false;
        return true;
    }
    bool bind_buffer(const Ref<Buffer>& a, const Ref<Buffer>& b) {
        if (!buffer_fields(a, b)) return false;
        buffers_.bind(a.get(), b.get());
        free_of_bindings_ = false;
        return true;
    }
    bool buffer_fields(const Ref<Buffer>& a, const Ref<Buffer>& b) {
        return a->dtype == b->dtype && a->scope == b->scope && exprs(a->shape, b->shape);
    }

    Binding<Var> vars_;
    Binding<Buffer> buffers_;
    // While nothing is bound, identical subtrees are equal without looking inside; once
    // something is bound a shared subtree may still refer to it differently on the two sides
    // (a bound object reused as free on the other side), so it is compared in full.
    bool free_of_bindings_ = true;
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
