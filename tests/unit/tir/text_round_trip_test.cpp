// Random functions through print -> parse -> print: the parse must be structurally equal to the
// original, the second print identical to the first, and the verifier must accept both (the
// generator only builds valid IR).
#include <gtest/gtest.h>

#include <random>

#include "ir/intrinsics.h"
#include "tir/parser.h"
#include "tir/printer.h"
#include "tir/structural_equal.h"
#include "tir/verifier.h"

namespace anvil::tir {
namespace {

class RandomIR {
public:
    explicit RandomIR(unsigned seed) : rng_(seed) {}

    Ref<PrimFunc> func() {
        auto n = make_var("n");
        A_ = make_buffer("A", DataType::int32(), {64});
        F_ = make_buffer("F", DataType::float32(), {8, n});
        vars_ = {n};
        buffers_ = {A_};
        Stmt body = stmt(4, false);
        return make_prim_func("random", {A_, F_}, body, {n});
    }

private:
    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

    PrimExpr index() { return floormod(int_expr(1), 64); }

    PrimExpr int_expr(int depth) {
        int choice = depth <= 0 ? pick(3) : pick(11);
        switch (choice) {
            case 0:
                return vars_[pick(static_cast<int>(vars_.size()))];
            case 1:
                return make_int(DataType::int32(), pick(41) - 20);
            case 2:
                return depth > 0 ? make_load(A_, {index()}) : PrimExpr(7);
            case 3:
                return int_expr(depth - 1) + int_expr(depth - 1);
            case 4:
                return int_expr(depth - 1) - int_expr(depth - 1);
            case 5:
                return int_expr(depth - 1) * int_expr(depth - 1);
            case 6: {
                static const ExprKind kinds[] = {ExprKind::Div,      ExprKind::Mod,
                                                 ExprKind::FloorDiv, ExprKind::FloorMod,
                                                 ExprKind::Min,      ExprKind::Max};
                return make_binary(kinds[pick(6)], int_expr(depth - 1), int_expr(depth - 1));
            }
            case 7:
                return select(bool_expr(depth - 1), int_expr(depth - 1), int_expr(depth - 1));
            case 8:
                return make_cast(DataType::int32(), float_expr(depth - 1));
            case 9:
                return make_cast(DataType::int32(), make_int(DataType::int64(), pick(9) - 4));
            default:
                return make_call(DataType::int32(), "ext", {int_expr(depth - 1)});
        }
    }

    PrimExpr float_expr(int depth) {
        int choice = depth <= 0 ? pick(2) : pick(7);
        switch (choice) {
            case 0:
                return make_float(DataType::float32(), (pick(81) - 40) / 8.0);
            case 1:
                return make_cast(DataType::float32(), vars_[pick(static_cast<int>(vars_.size()))]);
            case 2:
                return float_expr(depth - 1) * float_expr(depth - 1);
            case 3:
                return float_expr(depth - 1) / float_expr(depth - 1) - float_expr(depth - 1);
            case 4:
                return make_call(DataType::float32(), intrin::kTanh, {float_expr(depth - 1)});
            case 5:
                return make_load(F_, {floormod(int_expr(0), 8), floormod(int_expr(0), 4)});
            default:
                return make_cast(DataType::float32(), int_expr(depth - 1));
        }
    }

    PrimExpr bool_expr(int depth) {
        int choice = depth <= 0 ? pick(2) : pick(6);
        switch (choice) {
            case 0:
                return make_bool(pick(2) == 1);
            case 1: {
                static const ExprKind kinds[] = {ExprKind::EQ, ExprKind::NE, ExprKind::LT,
                                                 ExprKind::LE, ExprKind::GT, ExprKind::GE};
                return make_binary(kinds[pick(6)], int_expr(depth), int_expr(depth));
            }
            case 2:
                return bool_expr(depth - 1) && bool_expr(depth - 1);
            case 3:
                return bool_expr(depth - 1) || bool_expr(depth - 1);
            case 4:
                return !bool_expr(depth - 1);
            default:
                return float_expr(depth - 1) < float_expr(depth - 1);
        }
    }

    Stmt leaf() {
        switch (pick(3)) {
            case 0:
                return make_store(A_, int_expr(2), {index()});
            case 1:
                return make_store(F_, float_expr(2), {floormod(int_expr(1), 8), 0});
            default:
                return make_evaluate(make_call(DataType::int32(), "log_value", {int_expr(1)}));
        }
    }

    Stmt stmt(int depth, bool in_parallel) {
        if (depth <= 0) return leaf();
        switch (pick(8)) {
            case 0: {
                auto v = make_var(pick(2) ? "i" : "j");
                static const ForKind kinds[] = {ForKind::Serial, ForKind::Parallel,
                                                ForKind::Vectorized, ForKind::Unrolled};
                ForKind kind = kinds[pick(4)];
                if (kind == ForKind::Parallel && in_parallel) kind = ForKind::Serial;
                PrimExpr min = pick(2) ? PrimExpr(0) : int_expr(1);
                PrimExpr extent = kind == ForKind::Serial || kind == ForKind::Parallel
                                      ? int_expr(1)
                                      : PrimExpr(pick(8) + 1);
                Stmt body = scoped(
                    v, [&] { return stmt(depth - 1, in_parallel || kind == ForKind::Parallel); });
                return make_for(v, min, extent, kind, body);
            }
            case 1: {
                auto v = make_var(pick(2) ? "x" : "i");
                PrimExpr value = int_expr(2);
                return make_let(v, value, scoped(v, [&] { return stmt(depth - 1, in_parallel); }));
            }
            case 2: {
                Stmt t = stmt(depth - 1, in_parallel);
                return make_if(bool_expr(2), t, pick(2) ? stmt(depth - 1, in_parallel) : Stmt());
            }
            case 3: {
                std::vector<Stmt> seq;
                for (int k = pick(3) + 2; k > 0; --k) seq.push_back(stmt(depth - 1, in_parallel));
                return make_seq(seq);
            }
            case 4: {
                auto T = make_buffer(pick(2) ? "T" : "A", DataType::int32(), {pick(4) + 1},
                                     pick(2) ? "local" : "global");
                buffers_.push_back(T);
                Stmt body = make_seq({make_store(T, int_expr(1), {0}), stmt(depth - 1, in_parallel),
                                      make_store(A_, make_load(T, {0}), {index()})});
                buffers_.pop_back();
                return make_allocate(T, body);
            }
            case 5:
                return make_assert(bool_expr(1), "check " + std::to_string(pick(100)),
                                   stmt(depth - 1, in_parallel));
            default:
                return leaf();
        }
    }

    template <typename F>
    Stmt scoped(const Ref<Var>& v, F&& body) {
        vars_.push_back(v);
        Stmt s = body();
        vars_.pop_back();
        return s;
    }

    std::mt19937 rng_;
    Ref<Buffer> A_, F_;
    std::vector<Ref<Var>> vars_;
    std::vector<Ref<Buffer>> buffers_;
};

TEST(TirTextRoundTrip, RandomFunctions) {
    for (unsigned seed = 1; seed <= 300; ++seed) {
        Ref<PrimFunc> f = RandomIR(seed).func();
        ASSERT_NO_THROW(verify(f)) << "seed " << seed << "\n" << print(f);
        std::string text = print(f);
        Ref<PrimFunc> back;
        ASSERT_NO_THROW(back = parse_prim_func(text)) << "seed " << seed << "\n" << text;
        ASSERT_TRUE(structural_equal(back, f)) << "seed " << seed << "\n" << text;
        ASSERT_EQ(print(back), text) << "seed " << seed;
        ASSERT_NO_THROW(verify(back)) << "seed " << seed;
    }
}

}  // namespace
}  // namespace anvil::tir
