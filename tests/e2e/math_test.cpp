// Every tensor-expression math function and cast, compiled as a scalar loop and as a vectorized
// loop (where lower_intrinsics' polynomials replace libm), against the C++ standard library.
#include "te/math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "run_kernel.h"

namespace anvil {
namespace {

struct MathCase {
    const char* name;
    std::function<PrimExpr(PrimExpr)> te_fn;
    std::function<double(double)> reference;
    float lo, hi;      // input range
    double tolerance;  // max |error| / max(1, |reference|)
};

const std::vector<MathCase>& cases() {
    static const std::vector<MathCase> all = {
        {"exp", te::exp, [](double x) { return std::exp(x); }, -80, 80, 1e-6},
        {"log", te::log, [](double x) { return std::log(x); }, 1e-30f, 1e30f, 1e-6},
        {"sqrt", te::sqrt, [](double x) { return std::sqrt(x); }, 0, 1e6, 1e-6},
        {"rsqrt", te::rsqrt, [](double x) { return 1 / std::sqrt(x); }, 1e-3f, 1e6, 1e-6},
        {"tanh", te::tanh, [](double x) { return std::tanh(x); }, -12, 12, 1e-6},
        {"sigmoid", te::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, -30, 30, 1e-6},
        {"erf", te::erf, [](double x) { return std::erf(x); }, -5, 5, 1e-6},
        {"abs", te::abs, [](double x) { return std::fabs(x); }, -10, 10, 0},
        {"floor", te::floor, [](double x) { return std::floor(x); }, -10, 10, 0},
        {"ceil", te::ceil, [](double x) { return std::ceil(x); }, -10, 10, 0},
        {"round", te::round, [](double x) { return std::nearbyint(x); }, -10, 10, 0},
        {"pow", [](PrimExpr x) { return te::pow(x, 2.5f); },
         [](double x) { return std::pow(x, 2.5); }, 0, 50, 1e-6},
    };
    return all;
}

class MathFunctions : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(MathFunctions, MatchLibm) {
    const MathCase& mc = cases()[std::get<0>(GetParam())];
    bool vectorize = std::get<1>(GetParam());
    constexpr int n = 1003;  // not a multiple of the vector width
    te::Tensor X = te::placeholder({n}, DataType::float32(), "X");
    te::Tensor Y = te::compute(
        {n}, [&](PrimExpr i) { return mc.te_fn(X(i)); }, "Y");
    te::Schedule s = te::create_schedule({Y});
    if (vectorize) {
        auto [o, in] = s[Y].split(s[Y].op_axis()[0], 16);
        s[Y].vectorize(in);
    }
    auto x = testing::random_tensor({n}, 21, mc.lo, mc.hi), y = testing::zeros({n});
    // Special points at the ends of the range and 0 where it is inside.
    x.data<float>()[0] = mc.lo;
    x.data<float>()[1] = mc.hi;
    if (mc.lo < 0 && mc.hi > 0) x.data<float>()[2] = 0.0f;
    testing::build_and_run(s, {X, Y}, {x, y});
    for (int i = 0; i < n; ++i) {
        double in = x.data<float>()[i];
        double ref = static_cast<float>(mc.reference(in));
        double err = std::abs(y.data<float>()[i] - ref) / std::max(1.0, std::abs(ref));
        ASSERT_LE(err, mc.tolerance)
            << mc.name << "(" << in << ") = " << y.data<float>()[i] << ", expected " << ref;
    }
}

INSTANTIATE_TEST_SUITE_P(Scalar, MathFunctions,
                         ::testing::Combine(::testing::Range(0, 12), ::testing::Values(false)),
                         [](const auto& info) {
                             return std::string(cases()[std::get<0>(info.param)].name);
                         });
INSTANTIATE_TEST_SUITE_P(Vector, MathFunctions,
                         ::testing::Combine(::testing::Range(0, 12), ::testing::Values(true)),
                         [](const auto& info) {
                             return std::string(cases()[std::get<0>(info.param)].name);
                         });

TEST(Casts, BetweenFloatAndIntegerTypes) {
    constexpr int n = 37;
    te::Tensor X = te::placeholder({n}, DataType::float32(), "X");
    // float32 -> int32 (truncation) -> float64 -> float16 -> float32
    te::Tensor I = te::compute(
        {n}, [&](PrimExpr i) { return cast(DataType::int32(), X(i)); }, "I");
    te::Tensor D = te::compute(
        {n}, [&](PrimExpr i) { return cast(DataType::float64(), I(i)) * 0.5f; }, "D");
    te::Tensor Y = te::compute(
        {n}, [&](PrimExpr i) { return cast(DataType::float32(), cast(DataType::float16(), D(i))); },
        "Y");
    te::Schedule s = te::create_schedule({Y});
    s[I].compute_inline();
    s[D].compute_inline();
    auto x = testing::random_tensor({n}, 22, -100, 100), y = testing::zeros({n});
    testing::build_and_run(s, {X, Y}, {x, y});
    for (int i = 0; i < n; ++i) {
        float expected =
            static_cast<float>(static_cast<_Float16>(static_cast<int>(x.data<float>()[i]) * 0.5));
        EXPECT_EQ(y.data<float>()[i], expected) << x.data<float>()[i];
    }
}

}  // namespace
}  // namespace anvil
