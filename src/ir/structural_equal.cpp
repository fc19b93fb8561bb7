#include "ir/structural_equal.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "support/error.h"

namespace anvil {

namespace {

template <typename T>
using Map = std::unordered_map<const T*, const T*>;

template <typename T>
const T* lookup(const Map<T>& m, const T* key) {
    auto it = m.find(key);
    return it == m.end() ? nullptr : it->second;
}

// Maps key to value, or unmaps key where value is null (it was unmapped before a scope).
template <typename T>
void put(Map<T>& m, const T* key, const T* value) {
    if (value) {
        m[key] = value;
    } else {
        m.erase(key);
    }
}

// Records a <-> b unless either already corresponds to something else.
template <typename T>
bool bind_pair(Map<T>& a_to_b, Map<T>& b_to_a, const T* a, const T* b) {
    const T* old_b = lookup(a_to_b, a);
    const T* old_a = lookup(b_to_a, b);
    if (old_b || old_a) return old_b == b && old_a == a;
    a_to_b[a] = b;
    b_to_a[b] = a;
    return true;
}

// Undoes a Scope's bindings, latest first, so that a shadowed binding comes back.
template <typename T, typename Saved>
void restore(Map<T>& a_to_b, Map<T>& b_to_a, const std::vector<Saved>& saved) {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        put(a_to_b, it->a, it->old_a_to_b);
        put(b_to_a, it->b, it->old_b_to_a);
    }
}

}  // namespace

StructuralEqualizer::Scope::~Scope() {
    restore(eq_.var_a_to_b_, eq_.var_b_to_a_, vars_);
    restore(eq_.buf_a_to_b_, eq_.buf_b_to_a_, buffers_);
}

bool StructuralEqualizer::Scope::bind_var(const Var* a, const Var* b) {
    if (a->dtype != b->dtype) return false;
    vars_.push_back({a, b, lookup(eq_.var_a_to_b_, a), lookup(eq_.var_b_to_a_, b)});
    eq_.var_a_to_b_[a] = b;
    eq_.var_b_to_a_[b] = a;
    return true;
}

void StructuralEqualizer::Scope::bind_buffer(const Buffer* a, const Buffer* b) {
    buffers_.push_back({a, b, lookup(eq_.buf_a_to_b_, a), lookup(eq_.buf_b_to_a_, b)});
    eq_.buf_a_to_b_[a] = b;
    eq_.buf_b_to_a_[b] = a;
}

bool StructuralEqualizer::bind_var(const Var* a, const Var* b) {
    return a->dtype == b->dtype && bind_pair(var_a_to_b_, var_b_to_a_, a, b);
}

bool StructuralEqualizer::equal_var(const Var* a, const Var* b) {
    auto ia = var_a_to_b_.find(a);
    if (ia != var_a_to_b_.end()) return ia->second == b;
    if (var_b_to_a_.count(b)) return false;  // b corresponds to another variable
    if (!options_.map_free_vars) return a == b;
    return bind_var(a, b);
}

bool StructuralEqualizer::bind_buffer(const Buffer* a, const Buffer* b) {
    return bind_pair(buf_a_to_b_, buf_b_to_a_, a, b);
}

bool StructuralEqualizer::equal_buffer(const Buffer* a, const Buffer* b) {
    auto ia = buf_a_to_b_.find(a);
    if (ia != buf_a_to_b_.end()) return ia->second == b;
    if (buf_b_to_a_.count(b)) return false;
    if (a == b) return true;
    if (!options_.map_free_vars) return false;
    if (a->name != b->name || a->dtype != b->dtype || a->scope != b->scope ||
        a->shape.size() != b->shape.size()) {
        return false;
    }
    return equal(a->shape, b->shape) && bind_buffer(a, b);
}

bool StructuralEqualizer::equal_reduce(const Reduce* a, const Reduce* b) {
    const CommReducer* ca = a->combiner.get();
    const CommReducer* cb = b->combiner.get();
    if (ca != cb) {
        if (ca->name != cb->name || !bind_var(ca->lhs.get(), cb->lhs.get()) ||
            !bind_var(ca->rhs.get(), cb->rhs.get()) || !equal(ca->result, cb->result) ||
            !equal(ca->identity, cb->identity)) {
            return false;
        }
    }
    if (a->axis.size() != b->axis.size()) return false;
    for (size_t i = 0; i < a->axis.size(); ++i) {
        const IterVar* x = a->axis[i].get();
        const IterVar* y = b->axis[i].get();
        if (x->kind != y->kind || x->thread_tag != y->thread_tag) return false;
        if (!equal(x->dom.min, y->dom.min) || !equal(x->dom.extent, y->dom.extent)) return false;
        if (!bind_var(x->var.get(), y->var.get())) return false;
    }
    return equal(a->source, b->source) && equal(a->condition, b->condition);
}

bool StructuralEqualizer::equal(const PrimExpr& a, const PrimExpr& b) {
    // With map_free_vars a shared subtree's vars must still be recorded as mapped to themselves.
    if (a.same_as(b) && (!a.defined() || renames_nothing())) return true;
    if (!a.defined() || !b.defined()) return false;
    if (a->kind != b->kind || a.dtype() != b.dtype()) return false;
    switch (a->kind) {
        case ExprKind::IntImm:
            return a.as<IntImm>()->value == b.as<IntImm>()->value;
        case ExprKind::FloatImm: {
            // Bitwise, so that NaN equals NaN and 0.0 differs from -0.0.
            double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
            if (options_.ignore_nan_bits && std::isnan(x) && std::isnan(y)) return true;
            return std::memcmp(&x, &y, sizeof(double)) == 0;
        }
        case ExprKind::Var:
            return equal_var(a.as<Var>(), b.as<Var>());
#define ANVIL_X(name) case ExprKind::name:
            ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X
            {
                auto* x = static_cast<const BinaryExpr*>(a.get());
                auto* y = static_cast<const BinaryExpr*>(b.get());
                return equal(x->a, y->a) && equal(x->b, y->b);
            }
        case ExprKind::Not:
            return equal(a.as<Not>()->a, b.as<Not>()->a);
        case ExprKind::Select: {
            auto *x = a.as<Select>(), *y = b.as<Select>();
            return equal(x->cond, y->cond) && equal(x->true_value, y->true_value) &&
                   equal(x->false_value, y->false_value);
        }
        case ExprKind::Cast:
            return equal(a.as<Cast>()->value, b.as<Cast>()->value);
        case ExprKind::Call: {
            auto *x = a.as<Call>(), *y = b.as<Call>();
            return x->name == y->name && equal(x->args, y->args);
        }
        case ExprKind::Load: {
            auto *x = a.as<Load>(), *y = b.as<Load>();
            return equal_buffer(x->buffer.get(), y->buffer.get()) && equal(x->indices, y->indices);
        }
        case ExprKind::Ramp: {
            auto *x = a.as<Ramp>(), *y = b.as<Ramp>();
            return x->lanes == y->lanes && equal(x->base, y->base) && equal(x->stride, y->stride);
        }
        case ExprKind::Broadcast: {
            auto *x = a.as<Broadcast>(), *y = b.as<Broadcast>();
            return x->lanes == y->lanes && equal(x->value, y->value);
        }
        case ExprKind::Reduce:
            return equal_reduce(a.as<Reduce>(), b.as<Reduce>());
    }
    ANVIL_UNREACHABLE();
}

bool StructuralEqualizer::equal(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!equal(a[i], b[i])) return false;
    }
    return true;
}

bool structural_equal(const PrimExpr& a, const PrimExpr& b, bool map_free_vars) {
    return StructuralEqualizer(map_free_vars).equal(a, b);
}

namespace {

size_t hash_dtype(DataType t) {
    return (static_cast<size_t>(t.code()) << 32) ^ (static_cast<size_t>(t.bits()) << 16) ^
           static_cast<size_t>(t.lanes());
}

size_t hash_string(const std::string& s) {
    return std::hash<std::string>()(s);
}

size_t hash_expr(const PrimExpr& e) {
    if (!e.defined()) return 0x5bd1e995;
    size_t h = hash_combine(static_cast<size_t>(e->kind) + 1, hash_dtype(e.dtype()));
    switch (e->kind) {
        case ExprKind::IntImm:
            return hash_combine(h, std::hash<int64_t>()(e.as<IntImm>()->value));
        case ExprKind::FloatImm:
            return hash_combine(
                h, std::hash<uint64_t>()(std::bit_cast<uint64_t>(e.as<FloatImm>()->value)));
        case ExprKind::Var:
            return hash_combine(h, hash_string(e.as<Var>()->name));
#define ANVIL_X(name) case ExprKind::name:
            ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X
            {
                auto* b = static_cast<const BinaryExpr*>(e.get());
                return hash_combine(hash_combine(h, hash_expr(b->a)), hash_expr(b->b));
            }
        case ExprKind::Not:
            return hash_combine(h, hash_expr(e.as<Not>()->a));
        case ExprKind::Select: {
            auto* s = e.as<Select>();
            h = hash_combine(h, hash_expr(s->cond));
            h = hash_combine(h, hash_expr(s->true_value));
            return hash_combine(h, hash_expr(s->false_value));
        }
        case ExprKind::Cast:
            return hash_combine(h, hash_expr(e.as<Cast>()->value));
        case ExprKind::Call: {
            auto* c = e.as<Call>();
            h = hash_combine(h, hash_string(c->name));
            for (const auto& a : c->args) h = hash_combine(h, hash_expr(a));
            return h;
        }
        case ExprKind::Load: {
            auto* l = e.as<Load>();
            h = hash_combine(h, hash_string(l->buffer->name));
            for (const auto& i : l->indices) h = hash_combine(h, hash_expr(i));
            return h;
        }
        case ExprKind::Ramp: {
            auto* r = e.as<Ramp>();
            h = hash_combine(h, hash_expr(r->base));
            return hash_combine(hash_combine(h, hash_expr(r->stride)), r->lanes);
        }
        case ExprKind::Broadcast: {
            auto* b = e.as<Broadcast>();
            return hash_combine(hash_combine(h, hash_expr(b->value)), b->lanes);
        }
        case ExprKind::Reduce: {
            auto* r = e.as<Reduce>();
            h = hash_combine(h, hash_string(r->combiner->name));
            h = hash_combine(h, r->axis.size());
            h = hash_combine(h, hash_expr(r->source));
            return hash_combine(h, hash_expr(r->condition));
        }
    }
    ANVIL_UNREACHABLE();
}

}  // namespace

size_t structural_hash(const PrimExpr& e) {
    return hash_expr(e);
}

}  // namespace anvil
