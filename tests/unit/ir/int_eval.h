// Test support: a reference evaluator for scalar integer and bool expressions over variable
// assignments, in 64-bit arithmetic (callers keep values far from the int32 limits). Returns
// nothing for a division by zero or an expression kind it does not evaluate.
#pragma once

#include <algorithm>
#include <map>
#include <optional>

#include "ir/expr.h"

namespace anvil::testing {

using Env = std::map<const Var*, int64_t>;

// How Select is evaluated: the taken branch only, or both (then a division by zero in either
// branch makes the whole expression undefined, a stricter check).
enum class SelectEval { TakenBranch, BothBranches };

inline int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline std::optional<int64_t> eval(const PrimExpr& e, const Env& env,
                                   SelectEval select = SelectEval::TakenBranch) {
    if (auto* imm = e.as<IntImm>()) return imm->value;
    if (auto* v = e.as<Var>()) return env.at(v);
    if (auto* n = e.as<Not>()) {
        auto a = eval(n->a, env, select);
        return a ? std::optional<int64_t>(!*a) : std::nullopt;
    }
    if (auto* s = e.as<Select>()) {
        auto c = eval(s->cond, env, select);
        if (!c) return std::nullopt;
        if (select == SelectEval::TakenBranch) {
            return eval(*c ? s->true_value : s->false_value, env, select);
        }
        auto t = eval(s->true_value, env, select), f = eval(s->false_value, env, select);
        if (!t || !f) return std::nullopt;
        return *c ? t : f;
    }
    switch (e->kind) {
#define ANVIL_X(name) case ExprKind::name:
        ANVIL_FOR_EACH_BINARY_EXPR(ANVIL_X)
#undef ANVIL_X
        break;
        default:
            return std::nullopt;
    }
    auto* bin = static_cast<const BinaryExpr*>(e.get());
    auto oa = eval(bin->a, env, select), ob = eval(bin->b, env, select);
    if (!oa || !ob) return std::nullopt;
    int64_t a = *oa, b = *ob;
    bool div = e->kind == ExprKind::Div || e->kind == ExprKind::Mod ||
               e->kind == ExprKind::FloorDiv || e->kind == ExprKind::FloorMod;
    if (div && b == 0) return std::nullopt;
    switch (e->kind) {
        case ExprKind::Add:
            return a + b;
        case ExprKind::Sub:
            return a - b;
        case ExprKind::Mul:
            return a * b;
        case ExprKind::Div:
            return a / b;
        case ExprKind::Mod:
            return a % b;
        case ExprKind::FloorDiv:
            return floor_div(a, b);
        case ExprKind::FloorMod:
            return a - floor_div(a, b) * b;
        case ExprKind::Min:
            return std::min(a, b);
        case ExprKind::Max:
            return std::max(a, b);
        case ExprKind::EQ:
            return a == b;
        case ExprKind::NE:
            return a != b;
        case ExprKind::LT:
            return a < b;
        case ExprKind::LE:
            return a <= b;
        case ExprKind::GT:
            return a > b;
        case ExprKind::GE:
            return a >= b;
        case ExprKind::And:
            return a && b;
        case ExprKind::Or:
            return a || b;
        default:
            return std::nullopt;
    }
}

}  // namespace anvil::testing
