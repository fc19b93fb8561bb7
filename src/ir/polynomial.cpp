#include "ir/polynomial.h"

#include <algorithm>

#include "ir/analyzer.h"

namespace anvil {

namespace {

void add_into(Polynomial& p, const Polynomial& q, int64_t sign) {
    for (const auto& [m, c] : q) {
        int64_t& slot = p[m];
        slot += sign * c;
        if (slot == 0) p.erase(m);
    }
}

Polynomial multiply(const Polynomial& p, const Polynomial& q) {
    Polynomial out;
    for (const auto& [ma, ca] : p) {
        for (const auto& [mb, cb] : q) {
            std::vector<const Var*> m = ma;
            m.insert(m.end(), mb.begin(), mb.end());
            std::sort(m.begin(), m.end());
            int64_t& slot = out[m];
            slot += ca * cb;
            if (slot == 0) out.erase(m);
        }
    }
    return out;
}

}  // namespace

std::optional<Polynomial> as_polynomial(const PrimExpr& e) {
    if (!e.defined() || !e.dtype().is_integer()) return std::nullopt;
    if (const int64_t* v = as_const_int(e)) {
        Polynomial p;
        if (*v != 0) p[{}] = *v;
        return p;
    }
    if (auto* v = e.as<Var>()) return Polynomial{{{v}, 1}};
    if (auto* c = e.as<Cast>()) return as_polynomial(c->value);
    if (e->kind == ExprKind::Add || e->kind == ExprKind::Sub || e->kind == ExprKind::Mul) {
        const auto* b = static_cast<const BinaryExpr*>(e.get());
        auto pa = as_polynomial(b->a), pb = as_polynomial(b->b);
        if (!pa || !pb) return std::nullopt;
        if (e->kind == ExprKind::Mul) return multiply(*pa, *pb);
        add_into(*pa, *pb, e->kind == ExprKind::Add ? 1 : -1);
        return pa;
    }
    return std::nullopt;
}

bool provably_equal(const PrimExpr& a, const PrimExpr& b) {
    if (is_zero(simplify(a - b))) return true;
    auto pa = as_polynomial(a), pb = as_polynomial(b);
    return pa && pb && *pa == *pb;
}

}  // namespace anvil
