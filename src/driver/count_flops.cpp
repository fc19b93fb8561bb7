#include "driver/count_flops.h"

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "ir/intrinsics.h"

namespace anvil::driver {

namespace {

using namespace tir;

// A count, or why there is none: `need` is an enclosing loop variable whose value the count
// depends on (the loop that defines it enumerates its values), `unknown` a dependence on
// something no loop defines (a symbolic size, loaded data).
struct Count {
    int64_t flops = 0;
    const Var* need = nullptr;
    bool unknown = false;

    bool ok() const { return !need && !unknown; }
    static Count needs(const Var* v) { return {.need = v}; }
    static Count none() { return {.unknown = true}; }
};

// An integer value, or why it cannot be computed (as for Count).
struct Value {
    int64_t v = 0;
    const Var* need = nullptr;
    bool unknown = false;

    bool ok() const { return !need && !unknown; }
};

Count failure_of(const Value& v) {
    return v.need ? Count::needs(v.need) : Count::none();
}

// Adds b to a; a failure wins, an enclosing loop's variable before unknown.
Count plus(const Count& a, const Count& b) {
    if (a.need) return a;
    if (b.need) return b;
    if (a.unknown || b.unknown) return Count::none();
    Count c;
    if (__builtin_add_overflow(a.flops, b.flops, &c.flops)) return Count::none();
    return c;
}

class FlopCounter {
public:
    Count count(const Stmt& s) {
        if (!s.defined()) return {};
        if (--budget_ < 0) return Count::none();
        switch (s->kind) {
            case StmtKind::LetStmt: {
                auto* op = static_cast<const LetStmt*>(s.get());
                lets_[op->var.get()] = op->value;
                Count c = plus(flops(op->value), count(op->body));
                lets_.erase(op->var.get());
                return c;
            }
            case StmtKind::For:
                return count_for(static_cast<const For*>(s.get()));
            case StmtKind::Store: {
                auto* op = static_cast<const Store*>(s.get());
                Count c = flops(op->value);
                for (const auto& i : op->indices) c = plus(c, flops(i));
                return c;
            }
            case StmtKind::Allocate:
                return count(static_cast<const Allocate*>(s.get())->body);
            case StmtKind::IfThenElse: {
                auto* op = static_cast<const IfThenElse*>(s.get());
                return choose(op->cond, count(op->then_case), count(op->else_case));
            }
            case StmtKind::Evaluate:
                return flops(static_cast<const Evaluate*>(s.get())->value);
            case StmtKind::SeqStmt: {
                Count c;
                for (const auto& x : static_cast<const SeqStmt*>(s.get())->seq) {
                    c = plus(c, count(x));
                    if (!c.ok()) return c;
                }
                return c;
            }
            case StmtKind::AssertStmt: {
                auto* op = static_cast<const AssertStmt*>(s.get());
                return plus(flops(op->cond), count(op->body));
            }
            default:
                return Count::none();  // a call out of the kernel: its work is not known here
        }
    }

private:
    Count count_for(const For* op) {
        Value mn = eval(op->min), ext = eval(op->extent);
        if (!mn.ok()) return failure_of(mn);
        if (!ext.ok()) return failure_of(ext);
        if (ext.v <= 0) return {};
        const Var* v = op->var.get();
        loop_vars_.insert(v);
        Count body = count(op->body);
        Count c;
        if (body.need == v) {
            // Iterations differ (a tail guard, an inner extent): count each one.
            for (int64_t i = 0; i < ext.v && c.ok(); ++i) {
                env_[v] = mn.v + i;
                c = plus(c, count(op->body));
            }
            env_.erase(v);
        } else if (!body.ok()) {
            c = body;
        } else if (__builtin_mul_overflow(body.flops, ext.v, &c.flops)) {
            c = Count::none();
        }
        loop_vars_.erase(v);
        if (c.need == v) c = Count::none();  // cannot happen; never report our own variable
        return c;
    }

    // The cost of a branch: when both sides cost the same the condition does not matter.
    Count choose(const PrimExpr& cond, const Count& then_c, const Count& else_c) {
        Count cond_flops = flops(cond);
        if (then_c.ok() && else_c.ok() && then_c.flops == else_c.flops) {
            return plus(cond_flops, then_c);
        }
        if (then_c.need) return then_c;
        if (else_c.need) return else_c;
        Value c = eval(cond);
        if (!c.ok()) return failure_of(c);
        return plus(cond_flops, c.v ? then_c : else_c);
    }

    // Floating-point operations of one evaluation of `e`.
    Count flops(const PrimExpr& e) {
        if (!e.defined()) return {};
        const DataType t = e.dtype();
        const int64_t lanes = t.lanes();
        switch (e->kind) {
            case ExprKind::Add:
            case ExprKind::Sub:
            case ExprKind::Mul:
            case ExprKind::Div:
            case ExprKind::Mod:
            case ExprKind::FloorDiv:
            case ExprKind::FloorMod:
            case ExprKind::Min:
            case ExprKind::Max: {
                auto* op = static_cast<const BinaryExpr*>(e.get());
                Count own{.flops = t.is_floating() ? lanes : 0};
                return plus(own, plus(flops(op->a), flops(op->b)));
            }
            case ExprKind::EQ:
            case ExprKind::NE:
            case ExprKind::LT:
            case ExprKind::LE:
            case ExprKind::GT:
            case ExprKind::GE:
            case ExprKind::And:
            case ExprKind::Or: {
                auto* op = static_cast<const BinaryExpr*>(e.get());
                return plus(flops(op->a), flops(op->b));
            }
            case ExprKind::Not:
                return flops(static_cast<const Not*>(e.get())->a);
            case ExprKind::Select: {
                auto* op = static_cast<const Select*>(e.get());
                return plus(flops(op->cond), plus(flops(op->true_value), flops(op->false_value)));
            }
            case ExprKind::Cast:
                return flops(static_cast<const Cast*>(e.get())->value);
            case ExprKind::Call:
                return call_flops(static_cast<const Call*>(e.get()));
            case ExprKind::Load: {
                Count c;
                for (const auto& i : static_cast<const Load*>(e.get())->indices) {
                    c = plus(c, flops(i));
                }
                return c;
            }
            case ExprKind::Ramp: {
                auto* op = static_cast<const Ramp*>(e.get());
                return plus(flops(op->base), flops(op->stride));
            }
            case ExprKind::Broadcast:
                // The scalar is computed once, then copied to every lane.
                return flops(static_cast<const Broadcast*>(e.get())->value);
            case ExprKind::Reduce:
                return Count::none();  // not in lowered loop IR
            case ExprKind::IntImm:
            case ExprKind::FloatImm:
            case ExprKind::Var:
                return {};
        }
        return Count::none();
    }

    Count call_flops(const Call* op) {
        if (op->name == intrin::kIfThenElse && op->args.size() == 3) {
            if (op->args[0].dtype().lanes() > 1) {
                // A vector condition picks per lane; count the dearer side.
                Count a = flops(op->args[1]), b = flops(op->args[2]);
                if (!a.ok() || !b.ok()) return plus(a, b);
                return plus(flops(op->args[0]), a.flops >= b.flops ? a : b);
            }
            return choose(op->args[0], flops(op->args[1]), flops(op->args[2]));
        }
        Count c;
        if (op->name == intrin::kFma) {
            c.flops = 2 * op->dtype.lanes();
        } else if (op->name == intrin::kDotU8S8) {
            // Four integer multiply-adds per lane: counted as operations, as int8 throughput is.
            c.flops = 8 * op->dtype.lanes();
        } else if (op->name == intrin::kDotBF16) {
            c.flops = 4 * op->dtype.lanes();  // two multiply-adds per lane
        } else if (intrin::is_math(op->name) && op->dtype.is_floating()) {
            c.flops = op->dtype.lanes();
        } else if (op->name == intrin::kAmxTileConfig && op->args.size() == 6) {
            // The shapes of the products that follow it (they run after it in the order
            // counted): C's rows and row bytes, A's row bytes.
            const int64_t* rows = as_const_int(op->args[0]);
            const int64_t* c_bytes = as_const_int(op->args[1]);
            const int64_t* a_bytes = as_const_int(op->args[3]);
            tile_words_ = rows && c_bytes && a_bytes ? *rows * (*c_bytes / 4) * (*a_bytes / 4) : -1;
        } else if (op->name == intrin::kAmxTileDotBF16 || op->name == intrin::kAmxTileDotU8S8) {
            // Per word product, as dot_bf16 / dot_u8s8 count per lane.
            if (tile_words_ < 0) return Count::none();
            c.flops = tile_words_ * (op->name == intrin::kAmxTileDotBF16 ? 4 : 8);
        }
        for (const auto& a : op->args) c = plus(c, flops(a));
        return c;
    }

    // The value of a scalar integer or boolean expression under the loop variables bound so far.
    Value eval(const PrimExpr& e) {
        if (!e.defined() || e.dtype().lanes() != 1) return {.unknown = true};
        auto both = [&](const PrimExpr& a, const PrimExpr& b, auto f) -> Value {
            Value x = eval(a);
            if (!x.ok()) return x;
            Value y = eval(b);
            if (!y.ok()) return y;
            std::optional<int64_t> r = f(x.v, y.v);
            if (!r) return {.unknown = true};
            return {.v = *r};
        };
        auto binary = [&](auto f) {
            auto* op = static_cast<const BinaryExpr*>(e.get());
            return both(op->a, op->b, f);
        };
        using R = std::optional<int64_t>;
        switch (e->kind) {
            case ExprKind::IntImm:
                return {.v = static_cast<const IntImm*>(e.get())->value};
            case ExprKind::Var: {
                const Var* v = static_cast<const Var*>(e.get());
                if (auto it = env_.find(v); it != env_.end()) return {.v = it->second};
                if (loop_vars_.count(v)) return {.need = v};
                if (auto it = lets_.find(v); it != lets_.end()) return eval(it->second);
                return {.unknown = true};
            }
            case ExprKind::Add:
                return binary([](int64_t a, int64_t b) { return R(a + b); });
            case ExprKind::Sub:
                return binary([](int64_t a, int64_t b) { return R(a - b); });
            case ExprKind::Mul:
                return binary([](int64_t a, int64_t b) { return R(a * b); });
            case ExprKind::Div:
                return binary([](int64_t a, int64_t b) { return b ? R(a / b) : R(); });
            case ExprKind::Mod:
                return binary([](int64_t a, int64_t b) { return b ? R(a % b) : R(); });
            case ExprKind::FloorDiv:
                return binary([](int64_t a, int64_t b) {
                    if (!b) return R();
                    int64_t q = a / b;
                    return R((a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q);
                });
            case ExprKind::FloorMod:
                return binary([](int64_t a, int64_t b) {
                    if (!b) return R();
                    int64_t m = a % b;
                    return R((m != 0 && ((m < 0) != (b < 0))) ? m + b : m);
                });
            case ExprKind::Min:
                return binary([](int64_t a, int64_t b) { return R(std::min(a, b)); });
            case ExprKind::Max:
                return binary([](int64_t a, int64_t b) { return R(std::max(a, b)); });
            case ExprKind::EQ:
                return binary([](int64_t a, int64_t b) { return R(a == b); });
            case ExprKind::NE:
                return binary([](int64_t a, int64_t b) { return R(a != b); });
            case ExprKind::LT:
                return binary([](int64_t a, int64_t b) { return R(a < b); });
            case ExprKind::LE:
                return binary([](int64_t a, int64_t b) { return R(a <= b); });
            case ExprKind::GT:
                return binary([](int64_t a, int64_t b) { return R(a > b); });
            case ExprKind::GE:
                return binary([](int64_t a, int64_t b) { return R(a >= b); });
            case ExprKind::And:
                return binary([](int64_t a, int64_t b) { return R(a && b); });
            case ExprKind::Or:
                return binary([](int64_t a, int64_t b) { return R(a || b); });
            case ExprKind::Not: {
                Value x = eval(static_cast<const Not*>(e.get())->a);
                if (x.ok()) x.v = !x.v;
                return x;
            }
            case ExprKind::Select: {
                auto* op = static_cast<const Select*>(e.get());
                Value c = eval(op->cond);
                if (!c.ok()) return c;
                return eval(c.v ? op->true_value : op->false_value);
            }
            case ExprKind::Cast: {
                auto* op = static_cast<const Cast*>(e.get());
                if (!op->value.dtype().is_integer() && !op->value.dtype().is_bool()) {
                    return {.unknown = true};
                }
                return eval(op->value);
            }
            case ExprKind::Call: {
                auto* op = static_cast<const Call*>(e.get());
                if (op->name == intrin::kLikely && op->args.size() == 1) return eval(op->args[0]);
                return {.unknown = true};
            }
            default:
                return {.unknown = true};  // floats, loads, vectors
        }
    }

    std::unordered_map<const Var*, int64_t> env_;    // enumerated loop variables
    std::unordered_set<const Var*> loop_vars_;       // loops around the statement counted
    std::unordered_map<const Var*, PrimExpr> lets_;  // let variables in scope
    int64_t budget_ = 2'000'000;                     // statement visits left
    int64_t tile_words_ = -1;  // word products per AMX tile product (the last configuration)
};

}  // namespace

int64_t count_flops(const tir::Stmt& s) {
    FlopCounter counter;
    Count c = counter.count(s);
    return c.ok() ? c.flops : -1;
}

int64_t count_flops(const tir::PrimFunc& f) {
    return count_flops(f.body);
}

}  // namespace anvil::driver
