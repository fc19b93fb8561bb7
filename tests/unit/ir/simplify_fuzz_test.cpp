// Random integer expressions checked by evaluation: simplify must not change any value at points
// that satisfy the facts. Complements the table, whose rows were written by hand.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <random>

#include "int_eval.h"
#include "ir/analyzer.h"
#include "ir/expr_functor.h"
#include "ir/structural_equal.h"

namespace anvil {
namespace {

using testing::Env;
using testing::SelectEval;

class Generator {
public:
    Generator(unsigned seed, std::vector<PrimExpr> vars) : rng_(seed), vars_(std::move(vars)) {}

    PrimExpr index(int depth) {
        if (depth == 0 || pick(4) == 0) {
            return pick(3) == 0 ? PrimExpr(static_cast<int>(pick(17)) - 8)
                                : vars_[pick(vars_.size())];
        }
        PrimExpr a = index(depth - 1);
        int c = static_cast<int>(pick(9)) + 1;  // divisors and factors 1..9
        switch (pick(11)) {
            case 0:
                return a + index(depth - 1);
            case 1:
                return a - index(depth - 1);
            case 2:
                return a * c;
            case 3:
                return a * -c;
            case 4:
                return floordiv(a, c);
            case 5:
                return floormod(a, c);
            case 6:
                return a / (pick(2) ? c : -c);
            case 7:
                return a % (pick(2) ? c : -c);
            case 8:
                return min(a, index(depth - 1));
            case 9:
                return max(a, index(depth - 1));
            default:
                return select(condition(depth - 1), a, index(depth - 1));
        }
    }

    PrimExpr condition(int depth) {
        PrimExpr a = index(depth), b = index(depth);
        switch (pick(8)) {
            case 0:
                return a < b;
            case 1:
                return a <= b;
            case 2:
                return a > b;
            case 3:
                return a >= b;
            case 4:
                return eq(a, b);
            case 5:
                return ne(a, b);
            case 6:
                return !(a < b);
            default:
                return (a < b) && (b < 100);
        }
    }

    size_t pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
    std::mt19937& rng() { return rng_; }

private:
    std::mt19937 rng_;
    std::vector<PrimExpr> vars_;
};

TEST(SimplifyFuzz, RandomIndexExpressionsKeepTheirValues) {
    Ref<Var> i = make_var("i"), j = make_var("j"), k = make_var("k"), x = make_var("x");
    Generator gen(1234, {i, j, k, x});
    int checked = 0;
    for (int trial = 0; trial < 1500; ++trial) {
        // Facts: i in [0, 16), j in [0, 8), k in [-5, 5); x is free.
        Analyzer analyzer;
        analyzer.bind(i, Range{0, 16});
        analyzer.bind(j, Range{0, 8});
        analyzer.bind(k, Range{-5, 10});
        PrimExpr e = trial % 4 == 0 ? gen.condition(3) : gen.index(4);
        PrimExpr s = analyzer.simplify(e);
        for (int point = 0; point < 40; ++point) {
            Env env{{i.get(), static_cast<int64_t>(gen.pick(16))},
                    {j.get(), static_cast<int64_t>(gen.pick(8))},
                    {k.get(), static_cast<int64_t>(gen.pick(10)) - 5},
                    {x.get(), static_cast<int64_t>(gen.pick(2001)) - 1000}};
            auto want = testing::eval(e, env, SelectEval::BothBranches);
            if (!want) continue;
            auto have = testing::eval(s, env, SelectEval::BothBranches);
            ASSERT_TRUE(have.has_value()) << e << "\n  simplified to " << s;
            ASSERT_EQ(*want, *have)
                << e << "\n  simplified to " << s << "\n  at i=" << env[i.get()]
                << " j=" << env[j.get()] << " k=" << env[k.get()] << " x=" << env[x.get()];
            ++checked;
        }
    }
    EXPECT_GT(checked, 10000);
}

TEST(SimplifyFuzz, LongSumsStayFast) {
    // Unrolled loops produce long sums; the linear form must not blow up on them.
    Ref<Buffer> a = make_buffer("A", DataType::int32(), {1024});
    Ref<Var> i = make_var("i");
    PrimExpr sum = 0;
    for (int t = 0; t < 300; ++t) sum = sum + make_load(a, {PrimExpr(i) * 4 + t}) * 2 + i;
    auto start = std::chrono::steady_clock::now();
    PrimExpr s = simplify(sum - PrimExpr(i) * 300);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 5.0);
    // No i term is left outside the loads.
    EXPECT_EQ(to_string(s).find("- i"), std::string::npos);
}

}  // namespace
}  // namespace anvil
