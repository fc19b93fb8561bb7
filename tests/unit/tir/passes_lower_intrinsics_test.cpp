// Accuracy of lower_intrinsics' float32 expansions, measured with the reference interpreter
// (which rounds every float32 operation to float32) against the double-precision libm result.
//
// Stated bounds, asserted below over ~1e5 points per function plus special values:
//   exp      relative error <= 3e-7 (about 2.5 ulp) for normal results; within one denormal
//            step for denormal results; exact 0 below -103.98, inf above 88.73
//   log      relative error <= 3e-7 on all positive floats, denormals included
//   tanh     absolute error <= 1e-6 (and relative <= 1e-6 for |x| < 0.625)
//   erf      absolute error <= 1e-6
//   sigmoid  absolute error <= 1e-6
// plus: exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN in
// gives NaN out, tanh(+-inf) = +-1, erf(+-inf) = +-1, sigmoid(-inf) = 0, sigmoid(inf) = 1.
#include <cmath>
#include <cstdio>
#include <limits>

#include "passes_programs.h"

namespace anvil::tir::testing {
namespace {

constexpr int kLanes = 1024;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Evaluates `name` lowered to float32 vector code at every point, kLanes at a time.
std::vector<double> eval_lowered(const std::string& name, const std::vector<float>& xs) {
    auto A = make_buffer("A", DataType::float32(), {kLanes});
    auto B = make_buffer("B", DataType::float32(), {kLanes});
    PrimExpr idx = make_ramp(0, 1, kLanes);
    PrimExpr call = make_call(DataType::float32().with_lanes(kLanes), name, {make_load(A, {idx})});
    Stmt s = lower_intrinsics(make_store(B, call, {idx}), LowerContext{});
    std::vector<double> out;
    std::vector<double> a(kLanes), b(kLanes);
    Interpreter in;
    in.bind_buffer(A, &a);
    in.bind_buffer(B, &b);
    for (size_t base = 0; base < xs.size(); base += kLanes) {
        for (int l = 0; l < kLanes; ++l) a[l] = base + l < xs.size() ? xs[base + l] : 1.0f;
        in.run(s);
        for (int l = 0; l < kLanes && base + l < xs.size(); ++l) out.push_back(b[l]);
    }
    return out;
}

std::vector<float> sweep(double lo, double hi, int n) {
    std::vector<float> xs;
    for (int k = 0; k < n; ++k) xs.push_back(static_cast<float>(lo + (hi - lo) * k / (n - 1)));
    return xs;
}

// Positive floats spread evenly over the exponent range.
std::vector<float> log_sweep(double lo, double hi, int n) {
    std::vector<float> xs;
    for (int k = 0; k < n; ++k) {
        xs.push_back(static_cast<float>(lo * std::pow(hi / lo, static_cast<double>(k) / (n - 1))));
    }
    return xs;
}

struct Errors {
    double max_rel = 0, max_abs = 0;
    float worst_x = 0;
};

Errors measure(const std::string& name, const std::vector<float>& xs, double (*ref)(double),
               double rel_floor) {
    std::vector<double> got = eval_lowered(name, xs);
    Errors e;
    for (size_t k = 0; k < xs.size(); ++k) {
        double r = ref(xs[k]);
        double g = got[k];
        if (std::isnan(r) || std::isinf(r)) continue;
        double abs_err = std::fabs(g - r);
        double rel_err = std::fabs(r) >= rel_floor ? abs_err / std::fabs(r) : 0.0;
        if (!(abs_err <= e.max_abs)) e.max_abs = abs_err;  // NaN propagates as a failure
        if (!(rel_err <= e.max_rel)) {
            e.max_rel = rel_err;
            e.worst_x = xs[k];
        }
    }
    std::printf("%-8s max rel %.3g  max abs %.3g  worst x %.9g  (%zu points)\n", name.c_str(),
                e.max_rel, e.max_abs, e.worst_x, xs.size());
    return e;
}

double sigmoid_ref(double x) {
    return 1.0 / (1.0 + std::exp(-x));
}
double exp_ref(double x) {
    return std::exp(x);
}
double log_ref(double x) {
    return std::log(x);
}
double tanh_ref(double x) {
    return std::tanh(x);
}
double erf_ref(double x) {
    return std::erf(x);
}

TEST(LowerIntrinsics, ExpAccuracy) {
    auto xs = sweep(-87.3, 88.72, 100000);
    auto e = measure("exp", xs, exp_ref, 1.17549435e-38);
    EXPECT_LE(e.max_rel, 3e-7);
    auto tiny = sweep(-103.9, -87.4, 20000);  // denormal results
    auto d = measure("exp", tiny, exp_ref, 1e300);
    EXPECT_LE(d.max_abs, 1.5e-45);
    auto s = eval_lowered(
        "exp", {-kInf, kInf, kNaN, 0.0f, -0.0f, 88.73f, 100.0f, -104.0f, -1000.0f, 1e-30f});
    EXPECT_EQ(s[0], 0.0);
    EXPECT_EQ(s[1], kInf);
    EXPECT_TRUE(std::isnan(s[2]));
    EXPECT_EQ(s[3], 1.0);
    EXPECT_EQ(s[4], 1.0);
    EXPECT_EQ(s[5], kInf);
    EXPECT_EQ(s[6], kInf);
    EXPECT_EQ(s[7], 0.0);
    EXPECT_EQ(s[8], 0.0);
    EXPECT_EQ(s[9], 1.0);
}

TEST(LowerIntrinsics, LogAccuracy) {
    auto xs = log_sweep(1e-45, 3.4e38, 100000);
    auto near_one = sweep(0.5, 2.0, 30000);
    xs.insert(xs.end(), near_one.begin(), near_one.end());
    auto e = measure("log", xs, log_ref, 1e-30);
    EXPECT_LE(e.max_rel, 3e-7);
    auto s = eval_lowered("log", {0.0f, -0.0f, -1.0f, -kInf, kInf, kNaN, 1.0f,
                                  std::numeric_limits<float>::denorm_min()});
    EXPECT_EQ(s[0], -kInf);
    EXPECT_EQ(s[1], -kInf);
    EXPECT_TRUE(std::isnan(s[2]));
    EXPECT_TRUE(std::isnan(s[3]));
    EXPECT_EQ(s[4], kInf);
    EXPECT_TRUE(std::isnan(s[5]));
    EXPECT_EQ(s[6], 0.0);
    EXPECT_NEAR(s[7], std::log(double(std::numeric_limits<float>::denorm_min())), 1e-5);
}

TEST(LowerIntrinsics, TanhAccuracy) {
    auto xs = sweep(-10, 10, 100000);
    auto small = log_sweep(1e-30, 0.62, 5000);
    for (float x : small) xs.push_back(-x);
    EXPECT_LE(measure("tanh", xs, tanh_ref, 1e300).max_abs, 1e-6);
    EXPECT_LE(measure("tanh", small, tanh_ref, 0).max_rel, 1e-6);
    auto s = eval_lowered("tanh", {kInf, -kInf, kNaN, 0.0f, 50.0f, -50.0f});
    EXPECT_EQ(s[0], 1.0);
    EXPECT_EQ(s[1], -1.0);
    EXPECT_TRUE(std::isnan(s[2]));
    EXPECT_EQ(s[3], 0.0);
    EXPECT_EQ(s[4], 1.0);
    EXPECT_EQ(s[5], -1.0);
}

TEST(LowerIntrinsics, ErfAccuracy) {
    auto xs = sweep(-6, 6, 100000);
    EXPECT_LE(measure("erf", xs, erf_ref, 1e300).max_abs, 1e-6);
    auto s = eval_lowered("erf", {kInf, -kInf, kNaN, 0.0f, -0.0f});
    EXPECT_EQ(s[0], 1.0);
    EXPECT_EQ(s[1], -1.0);
    EXPECT_TRUE(std::isnan(s[2]));
    EXPECT_EQ(s[3], 0.0);
    EXPECT_TRUE(s[4] == 0.0 && std::signbit(s[4]));  // erf(-0) = -0
}

// GELU's erf(x / sqrt(2)), the divisor a kernel parameter: lowered as erf(x * (1 / d)) under a
// branch on the scalar divisor (the quotient where 1 / d would not be a normal float), as
// accurate as erf of the float quotient for every divisor, zero, infinite, NaN, denormal and huge
// ones included; a divisor that differs per lane keeps its quotient.
TEST(LowerIntrinsics, ErfOfAQuotientMultipliesByTheReciprocal) {
    auto A = make_buffer("A", DataType::float32(), {kLanes});
    auto D = make_buffer("D", DataType::float32(), {kLanes});
    auto B = make_buffer("B", DataType::float32(), {kLanes});
    PrimExpr idx = make_ramp(0, 1, kLanes);
    DataType t = DataType::float32().with_lanes(kLanes);
    PrimExpr d = make_broadcast(make_load(D, {0}), kLanes);
    Stmt s = lower_intrinsics(
        make_store(B, make_call(t, intrin::kErf, {make_load(A, {idx}) / d}), {idx}),
        LowerContext{});
    const Call* branch = nullptr;
    visit_exprs(s, [&](const PrimExpr& e) {
        auto* c = e.as<Call>();
        if (c && c->name == intrin::kIfThenElse && c->args[0].dtype().is_scalar()) branch = c;
    });
    ASSERT_NE(branch, nullptr);
    // The product with the reciprocal, bound by a let around the statement (one multiply per
    // lane on either side of the branch).
    auto* product = branch->args[1].as<Mul>();
    ASSERT_TRUE(product && product->a.is<Load>()) << to_string(branch->args[1]);
    auto* reciprocal = product->b.as<Var>();
    ASSERT_NE(reciprocal, nullptr) << to_string(branch->args[1]);
    auto* let = s.as<LetStmt>();
    while (let && let->var.get() != reciprocal) let = let->body.as<LetStmt>();
    ASSERT_NE(let, nullptr);
    auto* one_over_d = let->value.as<Div>();
    ASSERT_TRUE(one_over_d && one_over_d->b.is<Broadcast>()) << to_string(let->value);
    EXPECT_TRUE(branch->args[2].is<Div>()) << to_string(branch->args[2]);

    std::vector<double> a(kLanes), b(kLanes), dv(kLanes);
    Interpreter in;
    in.bind_buffer(A, &a);
    in.bind_buffer(D, &dv);
    in.bind_buffer(B, &b);
    std::vector<float> xs = sweep(-8, 8, 20 * kLanes);
    xs.insert(xs.end(), {0.0f, -0.0f, 1e-39f, -1e-39f, 3e38f, kInf, -kInf, kNaN});
    xs.resize((xs.size() + kLanes - 1) / kLanes * kLanes, 1.0f);
    const float divisors[] = {
        static_cast<float>(std::sqrt(2.0)), -3.0f, 0.0f, -0.0f, kInf, kNaN, 1e-39f, 1e38f, 1e-30f};
    for (float divisor : divisors) {
        dv[0] = divisor;
        double worst = 0;
        for (size_t base = 0; base < xs.size(); base += kLanes) {
            for (int l = 0; l < kLanes; ++l) a[l] = xs[base + l];
            in.run(s);
            for (int l = 0; l < kLanes; ++l) {
                double want = std::erf(static_cast<double>(static_cast<float>(a[l]) / divisor));
                if (std::isnan(want)) {
                    EXPECT_TRUE(std::isnan(b[l])) << a[l] << " / " << divisor;
                } else if (!(std::fabs(b[l] - want) <= worst)) {
                    worst = std::fabs(b[l] - want);  // NaN fails below
                }
            }
        }
        EXPECT_LE(worst, 1e-6) << "divisor " << divisor;
    }

    // A divisor per lane: nothing to hoist, the quotient stays.
    Stmt per_lane = lower_intrinsics(
        make_store(B, make_call(t, intrin::kErf, {make_load(A, {idx}) / make_load(D, {idx})}),
                   {idx}),
        LowerContext{});
    bool divides_a = false;
    visit_exprs(per_lane, [&](const PrimExpr& e) {
        auto* div = e.as<Div>();
        divides_a |= div && div->a.is<Load>() && div->b.is<Load>();
    });
    EXPECT_TRUE(divides_a);
}

// A constant divisor is checked when lowering: sqrt(2) needs no branch, a denormal keeps its
// quotient.
TEST(LowerIntrinsics, ErfOfAQuotientByAConstant) {
    auto A = make_buffer("A", DataType::float32(), {16});
    auto B = make_buffer("B", DataType::float32(), {16});
    PrimExpr idx = make_ramp(0, 1, 16);
    DataType t = DataType::float32().with_lanes(16);
    auto lowered = [&](float divisor) {
        PrimExpr d = make_broadcast(make_const(DataType::float32(), divisor), 16);
        return lower_intrinsics(
            make_store(B, make_call(t, intrin::kErf, {make_load(A, {idx}) / d}), {idx}),
            LowerContext{});
    };
    auto shape_of = [](const Stmt& s) {
        bool branch = false, divides_a = false;
        visit_exprs(s, [&](const PrimExpr& e) {
            auto* c = e.as<Call>();
            branch |= c && c->name == intrin::kIfThenElse;
            auto* div = e.as<Div>();
            divides_a |= div && div->a.is<Load>();
        });
        return std::pair{branch, divides_a};
    };
    EXPECT_EQ(shape_of(lowered(static_cast<float>(std::sqrt(2.0)))), std::pair(false, false));
    EXPECT_EQ(shape_of(lowered(1e-39f)), std::pair(false, true));
}

TEST(LowerIntrinsics, SigmoidAccuracy) {
    auto xs = sweep(-30, 30, 100000);
    auto far = sweep(-120, 120, 10000);
    xs.insert(xs.end(), far.begin(), far.end());
    EXPECT_LE(measure("sigmoid", xs, sigmoid_ref, 1e300).max_abs, 1e-6);
    auto s = eval_lowered("sigmoid", {kInf, -kInf, kNaN, 0.0f});
    EXPECT_EQ(s[0], 1.0);
    EXPECT_EQ(s[1], 0.0);
    EXPECT_TRUE(std::isnan(s[2]));
    EXPECT_EQ(s[3], 0.5);
}

// The expansion uses only arithmetic, select, cast and the floor/reinterpret intrinsics.
TEST(LowerIntrinsics, OnlyVectorizableOperationsRemain) {
    auto A = make_buffer("A", DataType::float32(), {8});
    auto x = make_load(A, {make_ramp(0, 1, 8)});
    DataType t = x.dtype();
    PrimExpr v = make_call(t, intrin::kExp, {x}) + make_call(t, intrin::kLog, {x}) +
                 make_call(t, intrin::kTanh, {x}) + make_call(t, intrin::kErf, {x}) +
                 make_call(t, intrin::kSigmoid, {make_call(t, intrin::kTanh, {x})});
    Stmt s = lower_intrinsics(make_store(A, v, {make_ramp(0, 1, 8)}), LowerContext{});
    int nodes = 0;
    visit_exprs(s, [&](const PrimExpr& e) {
        ++nodes;
        if (auto* c = e.as<Call>()) {
            EXPECT_TRUE(c->name == intrin::kFloor || c->name == intrin::kReinterpret) << c->name;
        }
        EXPECT_NE(e->kind, ExprKind::Mod);
        // Scalars only as the constants inside broadcasts and ramps: the code is all vector.
        if (e.dtype().is_scalar()) {
            EXPECT_TRUE(e.is<IntImm>() || e.is<FloatImm>()) << to_string(e);
        }
    });
    EXPECT_GT(nodes, 100);
}

TEST(LowerIntrinsics, ScalarMatchesVectorAndOtherTypesStay) {
    auto A = make_buffer("A", DataType::float32(), {64});
    auto B = make_buffer("B", DataType::float32(), {64});
    auto i = make_var("i");
    for (const char* name :
         {intrin::kExp, intrin::kLog, intrin::kTanh, intrin::kErf, intrin::kSigmoid}) {
        Stmt scalar = make_for(
            i, 0, 64, ForKind::Serial,
            make_store(B, make_call(DataType::float32(), name, {make_load(A, {i}) * 3.0f}), {i}));
        std::vector<double> a(64), b(64);
        for (int k = 0; k < 64; ++k) a[k] = static_cast<float>(0.37 * k - 11.3);
        Interpreter in;
        in.bind_buffer(A, &a);
        in.bind_buffer(B, &b);
        in.run(lower_intrinsics(scalar, LowerContext{}));
        std::vector<float> xs;
        for (double v : a) xs.push_back(static_cast<float>(v * 3.0f));
        std::vector<double> want = eval_lowered(name, xs);
        for (int k = 0; k < 64; ++k) {
            if (!std::isnan(want[k])) EXPECT_EQ(b[k], want[k]) << name << " at " << xs[k];
        }
    }
    auto C = make_buffer("C", DataType::float64(), {4});
    Stmt f64 =
        make_store(C, make_call(DataType::float64(), intrin::kExp, {make_load(C, {0})}), {1});
    EXPECT_TRUE(lower_intrinsics(f64, LowerContext{}).same_as(f64));
    Stmt sq =
        make_store(A, make_call(DataType::float32(), intrin::kSqrt, {make_load(A, {0})}), {1});
    EXPECT_TRUE(lower_intrinsics(sq, LowerContext{}).same_as(sq));
}

}  // namespace
}  // namespace anvil::tir::testing

namespace anvil::tir::testing {
namespace {

// Nested transcendentals (mish is x * tanh(log(1 + exp(x)))) expand with their intermediate
// values bound to lets, so the IR grows linearly with nesting. Shared subexpressions would make
// every later tree walk exponential (a 3-deep chain once took minutes to compile).
TEST(LowerIntrinsics, NestedCallsGrowLinearly) {
    auto A = make_buffer("A", DataType::float32(), {8});
    auto index = make_ramp(0, 1, 8);
    auto size_of_depth = [&](int depth) {
        PrimExpr v = make_load(A, {index});
        for (int d = 0; d < depth; ++d) {
            const char* fn = d % 3 == 0 ? intrin::kExp : d % 3 == 1 ? intrin::kLog : intrin::kTanh;
            v = make_call(v.dtype(), fn, {v});
        }
        Stmt s = lower_intrinsics(make_store(A, v, {index}), LowerContext{});
        size_t nodes = 0;
        visit_exprs(s, [&](const PrimExpr&) { ++nodes; });
        return nodes;
    };
    size_t three = size_of_depth(3), six = size_of_depth(6), twelve = size_of_depth(12);
    EXPECT_LT(six, 3 * three) << "twice as deep should be about twice as large";
    EXPECT_LT(twelve, 3 * six);
}

}  // namespace
}  // namespace anvil::tir::testing
