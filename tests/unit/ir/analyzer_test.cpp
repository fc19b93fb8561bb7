// Bounds, intervals and proofs of the analyzer.
#include "ir/analyzer.h"

#include <gtest/gtest.h>

#include "ir/structural_equal.h"

namespace anvil {
namespace {

constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kPosInf = ConstIntBound::kPosInf;

class AnalyzerTest : public ::testing::Test {
protected:
    void SetUp() override {
        analyzer.bind(i_, Range{0, 16});
        analyzer.bind(j_, Range{0, 8});
        analyzer.bind(d_, Range{1, 3});  // [1, 3]
        analyzer.bind(s_, Range{-8, 16});
    }
    Analyzer analyzer;
    Ref<Var> i_ = make_var("i"), j_ = make_var("j"), d_ = make_var("d"), s_ = make_var("s");
    Ref<Var> x_ = make_var("x"), y_ = make_var("y");
    Ref<Var> n_ = make_var("n", DataType::int64());
    Ref<Var> u_ = make_var("u", DataType::uint(32));
    Ref<Var> b_ = make_var("b", DataType::uint(8));
    Ref<Var> f_ = make_var("f", DataType::float32());
    Ref<Var> p_ = make_var("p", DataType::bool_());
    PrimExpr i = i_, j = j_, d = d_, s = s_, x = x_, y = y_, n = n_, u = u_, b = b_, f = f_, p = p_;
};

TEST_F(AnalyzerTest, ConstIntBoundTable) {
    struct Row {
        int line;
        PrimExpr e;
        ConstIntBound want;
    };
    const Row rows[] = {
        {__LINE__, 5, {5, 5}},
        {__LINE__, i, {0, 15}},
        {__LINE__, i * 8 + j, {0, 127}},
        {__LINE__, i - j, {-7, 15}},
        {__LINE__, i * i, {0, 225}},
        {__LINE__, s * 2, {-16, 14}},
        {__LINE__, floordiv(i, 4), {0, 3}},
        {__LINE__, floordiv(s, 4), {-2, 1}},
        {__LINE__, s / 4, {-2, 1}},
        {__LINE__, floordiv(i, d), {0, 15}},
        {__LINE__, floormod(x, 8), {0, 7}},
        {__LINE__, floormod(i, 32), {0, 15}},
        {__LINE__, s % 4, {-3, 3}},
        {__LINE__, i % 4, {0, 3}},
        {__LINE__, min(i, 5), {0, 5}},
        {__LINE__, max(s, j), {0, 7}},
        {__LINE__, select(p, i, 100), {0, 100}},
        {__LINE__, x, {INT32_MIN, INT32_MAX}},
        {__LINE__, x / 2, {INT32_MIN / 2, INT32_MAX / 2}},
        {__LINE__, x + 1, {INT32_MIN + 1, INT32_MAX}},  // no overflow assumed, clamped
        {__LINE__, n, {kNegInf, kPosInf}},
        {__LINE__, b, {0, 255}},
        {__LINE__, u - make_int(DataType::uint(32), 1), {0, 4294967295}},  // may wrap
        {__LINE__, make_cast(DataType::int_(8), i), {0, 15}},
        {__LINE__, make_cast(DataType::int_(8), x), {-128, 127}},
        {__LINE__, make_cast(DataType::int64(), x), {INT32_MIN, INT32_MAX}},
        {__LINE__, make_cast(DataType::int32(), f), {INT32_MIN, INT32_MAX}},
        {__LINE__, i < j, {0, 1}},
        {__LINE__, f, {kNegInf, kPosInf}},
        {__LINE__, make_ramp(i, 2, 4), {0, 21}},
        {__LINE__, make_broadcast(j, 4), {0, 7}},
    };
    for (const Row& row : rows) {
        ConstIntBound got = analyzer.const_int_bound(row.e);
        EXPECT_EQ(got.min, row.want.min) << "line " << row.line << ": " << row.e;
        EXPECT_EQ(got.max, row.want.max) << "line " << row.line << ": " << row.e;
    }
}

TEST_F(AnalyzerTest, BindSymbolicRangeUsesKnownFacts) {
    Ref<Var> k = make_var("k");
    analyzer.bind(k, Range{i, 4});  // k in [i, i + 3] with i in [0, 15]
    EXPECT_EQ(analyzer.const_int_bound(k), (ConstIntBound{0, 18}));
    analyzer.bind(k, Range{0, 2});  // a later fact replaces the earlier one
    EXPECT_EQ(analyzer.const_int_bound(k), (ConstIntBound{0, 1}));
}

TEST_F(AnalyzerTest, BindValue) {
    analyzer.bind(x_, i * 2);
    EXPECT_EQ(analyzer.const_int_bound(x + 1), (ConstIntBound{1, 31}));
    EXPECT_TRUE(structural_equal(analyzer.simplify(x - i), i));
}

TEST_F(AnalyzerTest, CanProve) {
    EXPECT_TRUE(analyzer.can_prove(i < 16));
    EXPECT_TRUE(analyzer.can_prove(i * 8 + j < 128));
    EXPECT_FALSE(analyzer.can_prove(i * 8 + j < 127));
    EXPECT_FALSE(analyzer.can_prove(i < 15));
    EXPECT_FALSE(analyzer.can_prove(x < y));
    EXPECT_TRUE(analyzer.can_prove(x < x + 1));
    EXPECT_FALSE(analyzer.can_prove(i >= 16));  // false is not "provably true"
    EXPECT_TRUE(analyzer.can_prove(make_broadcast(i < 16, 4)));
}

TEST_F(AnalyzerTest, CanProveEqual) {
    EXPECT_TRUE(analyzer.can_prove_equal(i * 4 + j - j, i * 4));
    EXPECT_TRUE(analyzer.can_prove_equal(floordiv(i * 8 + j, 8), i));
    EXPECT_TRUE(analyzer.can_prove_equal(x + y, y + x));
    EXPECT_TRUE(analyzer.can_prove_equal(f * 2.0f, f * 2.0f));
    EXPECT_FALSE(analyzer.can_prove_equal(f + 1.0f - 1.0f, f));
    EXPECT_FALSE(analyzer.can_prove_equal(x, y));
    EXPECT_FALSE(analyzer.can_prove_equal(n, make_cast(DataType::int64(), x)));
}

TEST_F(AnalyzerTest, ConstraintScopeNarrowsUntilItEnds) {
    {
        ConstraintScope holds(analyzer, x >= 1 && 8 > x && i < 4 && x < y);
        EXPECT_EQ(analyzer.const_int_bound(x), (ConstIntBound{1, 7}));
        EXPECT_EQ(analyzer.const_int_bound(i), (ConstIntBound{0, 3}));
        EXPECT_EQ(analyzer.const_int_bound(y), (ConstIntBound{INT32_MIN, INT32_MAX}));
        {
            ConstraintScope inner(analyzer, make_call(DataType::bool_(), "likely", {x <= 2}));
            EXPECT_EQ(analyzer.const_int_bound(x), (ConstIntBound{1, 2}));
        }
        EXPECT_EQ(analyzer.const_int_bound(x), (ConstIntBound{1, 7}));
        EXPECT_TRUE(analyzer.can_prove(floordiv(x + 7, 8) >= 1));
    }
    EXPECT_EQ(analyzer.const_int_bound(x), (ConstIntBound{INT32_MIN, INT32_MAX}));
    EXPECT_EQ(analyzer.const_int_bound(i), (ConstIntBound{0, 15}));
    {
        ConstraintScope never(analyzer, i > 20);  // contradicts i < 16: learns nothing
        EXPECT_EQ(analyzer.const_int_bound(i), (ConstIntBound{0, 15}));
    }
}

TEST_F(AnalyzerTest, BindDimensionsKnowsShapesAreNonNegative) {
    Ref<Var> m = make_var("m", DataType::int64());
    auto buf = make_buffer("A", DataType::float32(), {make_cast(DataType::int32(), n), m, 4});
    analyzer.bind_dimensions({buf});
    EXPECT_EQ(analyzer.const_int_bound(n), (ConstIntBound{0, INT32_MAX}));
    EXPECT_EQ(analyzer.const_int_bound(make_cast(DataType::int32(), n)),
              (ConstIntBound{0, INT32_MAX}));
    EXPECT_EQ(analyzer.const_int_bound(m), (ConstIntBound{0, kPosInf}));
}

// A loop fused from 3 outer iterations and a symbolic inner count t: its variable divided by t
// is below 3 (what drops the guards of a column split fused with symbolic row tiles).
TEST_F(AnalyzerTest, QuotientOfALoopFusedWithASymbolicExtent) {
    Ref<Var> fused = make_var("fused");
    ConstraintScope positive(analyzer, y >= 1);
    PrimExpr t = floordiv(y + 7, 8);
    analyzer.bind(fused, Range{0, t * 3});
    EXPECT_EQ(analyzer.const_int_bound(floordiv(fused, t)), (ConstIntBound{0, 2}));
    EXPECT_TRUE(analyzer.can_prove(floordiv(fused, t) * 32 + j < 96));
    // Without a positive divisor, or with another one, nothing is known.
    EXPECT_GT(analyzer.const_int_bound(floordiv(fused, y + 1)).max, 2);
    analyzer.bind(fused, Range{0, 12});  // a constant extent replaces the symbolic one
    EXPECT_EQ(analyzer.const_int_bound(floordiv(fused, t)), (ConstIntBound{0, 11}));
}

// eval_interval rows: the relaxed vars with their intervals, the expression, the expected ends
// (undefined = unbounded).
TEST(EvalInterval, Table) {
    Ref<Var> i_ = make_var("i"), j_ = make_var("j"), k_ = make_var("k");
    Ref<Var> p_ = make_var("p", DataType::bool_());
    PrimExpr i = i_, j = j_, k = k_, p = p_;
    Ref<Buffer> a = make_buffer("A", DataType::float32(), {64});
    struct Row {
        int line;
        PrimExpr e;
        std::unordered_map<const Var*, Interval> relax;
        PrimExpr min, max;
    };
    auto j_in = [&](PrimExpr lo, PrimExpr hi) {
        return std::unordered_map<const Var*, Interval>{{j_.get(), Interval{lo, hi}}};
    };
    const Row rows[] = {
        {__LINE__, i * 8 + j, j_in(0, 7), i * 8, i * 8 + 7},
        {__LINE__, j * 8 + i, j_in(0, 7), i, i + 56},
        {__LINE__, floordiv(j, 4), j_in(0, 15), 0, 3},
        {__LINE__, floordiv(i * 8 + j, 8), j_in(0, 7), i, i},
        {__LINE__, floormod(i * 8 + j, 8), j_in(0, 7), 0, 7},
        {__LINE__, floormod(j, 8), j_in(0, 31), 0, 7},
        {__LINE__, floormod(j, 8), j_in(2, 5), 2, 5},
        {__LINE__, min(j, 5), j_in(0, 10), 0, 5},
        {__LINE__, max(j, 5), j_in(0, 10), 5, 10},
        {__LINE__, PrimExpr(10) - j, j_in(0, 7), 3, 10},
        {__LINE__, j * -2, j_in(0, 7), -14, 0},
        {__LINE__, j * 2, j_in(k, k + 3), k * 2, k * 2 + 6},
        {__LINE__, i + j, j_in(0, PrimExpr()), i, PrimExpr()},
        {__LINE__, j * j, j_in(0, 7), 0, 49},
        {__LINE__, select(p, j, 20), j_in(0, 7), 0, 20},
        {__LINE__, make_load(a, {j}), j_in(0, 7), PrimExpr(), PrimExpr()},
        {__LINE__, make_cast(DataType::int64(), j), j_in(0, 7), make_int(DataType::int64(), 0),
         make_int(DataType::int64(), 7)},
        {__LINE__, make_ramp(j * 4, 1, 4), j_in(0, 3), 0, 15},
    };
    for (const Row& row : rows) {
        Analyzer analyzer;
        Interval got = analyzer.eval_interval(row.e, row.relax);
        auto same = [](const PrimExpr& x, const PrimExpr& y) {
            return x.defined() == y.defined() && (!x.defined() || structural_equal(x, y));
        };
        EXPECT_TRUE(same(got.min, row.min)) << "line " << row.line << ": min of " << row.e << " is "
                                            << got.min << ", want " << row.min;
        EXPECT_TRUE(same(got.max, row.max)) << "line " << row.line << ": max of " << row.e << " is "
                                            << got.max << ", want " << row.max;
    }
}

TEST(EvalInterval, ExpressionWithoutRelaxedVarsIsAPoint) {
    Ref<Var> i = make_var("i"), j = make_var("j");
    Analyzer analyzer;
    Interval r = analyzer.eval_interval(PrimExpr(i) + 1 - 1, {{j.get(), Interval{0, 7}}});
    EXPECT_TRUE(r.is_point());
    EXPECT_TRUE(structural_equal(r.min, i));
}

TEST(EvalInterval, EqualEndsMakeAPoint) {
    Ref<Var> i = make_var("i"), j = make_var("j");
    Analyzer analyzer;
    Interval r =
        analyzer.eval_interval(floordiv(PrimExpr(i) * 8 + j, 8), {{j.get(), Interval{0, 7}}});
    EXPECT_TRUE(r.is_point()) << r.min << " .. " << r.max;
    EXPECT_FALSE((Interval{0, PrimExpr()}).is_point());
    EXPECT_FALSE((Interval{0, 1}).is_point());
}

TEST(EvalInterval, UsesFactsOfOtherVars) {
    Ref<Var> i = make_var("i"), j = make_var("j");
    Analyzer analyzer;
    analyzer.bind(i, Range{0, 4});
    // floormod(i*8 + j, 32) with j in [0, 7]: i*8 + j lies in [0, 31], so the mod is the identity.
    Interval r =
        analyzer.eval_interval(floormod(PrimExpr(i) * 8 + j, 32), {{j.get(), Interval{0, 7}}});
    EXPECT_TRUE(structural_equal(r.min, PrimExpr(i) * 8)) << r.min;
    EXPECT_TRUE(structural_equal(r.max, PrimExpr(i) * 8 + 7)) << r.max;
}

}  // namespace
}  // namespace anvil
