// float32 exp generated inline (codegen_exp.cpp): within 2 ulp of the correctly rounded result
// over the whole range, scalar and vector alike, with IEEE results at the edges.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <regex>

#include "codegen/llvm/llvm_module.h"
#include "codegen/target.h"
#include "codegen_test_util.h"
#include "ir/intrinsics.h"

namespace anvil {
namespace {

using codegen_test::elementwise2;
using codegen_test::make_empty;

// Distance in units of the last place between two floats of the same sign (or zero).
int64_t ulps(float a, float b) {
    int32_t ia, ib;
    std::memcpy(&ia, &a, 4);
    std::memcpy(&ib, &b, 4);
    return std::abs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

std::vector<float> exp_of(const std::vector<float>& xs, int lanes) {
    const DataType f32 = DataType::float32();
    const int64_t n = static_cast<int64_t>(xs.size());
    auto f =
        elementwise2("exp_" + std::to_string(lanes), f32, f32, f32, n, lanes,
                     [](PrimExpr x, PrimExpr) { return make_call(x.dtype(), intrin::kExp, {x}); });
    runtime::NDArray X = make_empty(f32, {n}), Y = make_empty(f32, {n}), Z = make_empty(f32, {n});
    std::memcpy(X.raw_data(), xs.data(), 4 * xs.size());
    codegen_test::jit(f)(X, Y, Z);
    const float* z = Z.data<float>();
    return std::vector<float>(z, z + n);
}

TEST(Exp, WithinTwoUlpOverTheWholeRange) {
    std::vector<float> xs;
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> wide(-104.f, 89.f), narrow(-2.f, 2.f);
    for (int i = 0; i < 4096; ++i) xs.push_back(i % 2 ? wide(rng) : narrow(rng));
    // Near the ends of the normal range, around 0 and at multiples of ln 2 / 2 (where the
    // reduction switches n).
    for (float x : {88.72f, 88.7228f, -87.33f, -87.34f, -100.f, -103.9f, 0.f, -0.f, 1e-8f, -1e-8f,
                    0.34657359f, -0.34657359f, 0.6931472f, 1.f, -1.f, 10.f}) {
        xs.push_back(x);
    }
    while (xs.size() % 16) xs.push_back(0.5f);
    for (int lanes : {1, 16}) {
        std::vector<float> got = exp_of(xs, lanes);
        for (size_t i = 0; i < xs.size(); ++i) {
            const float want = static_cast<float>(std::exp(static_cast<double>(xs[i])));
            EXPECT_LE(ulps(got[i], want), 2)
                << "exp(" << xs[i] << ") = " << got[i] << ", want " << want << ", lanes " << lanes;
        }
    }
}

TEST(Exp, EdgesAreIeee) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> xs{nan,   inf,   -inf,   89.f,  1000.f, -104.f, -1000.f, 0.f,
                          88.7f, -87.f, -103.f, -90.f, 20.f,   -20.f,  3.f,     -3.f};
    for (int lanes : {1, 16}) {
        std::vector<float> got = exp_of(xs, lanes);
        EXPECT_TRUE(std::isnan(got[0])) << lanes;
        EXPECT_EQ(got[1], inf);
        EXPECT_EQ(got[2], 0.f);
        EXPECT_EQ(got[3], inf);  // e^89 > FLT_MAX
        EXPECT_EQ(got[4], inf);
        EXPECT_EQ(got[5], 0.f);  // below half the smallest subnormal
        EXPECT_EQ(got[6], 0.f);
        EXPECT_EQ(got[7], 1.f);
        for (size_t i = 8; i < xs.size(); ++i) {
            const float want = static_cast<float>(std::exp(static_cast<double>(xs[i])));
            EXPECT_LE(ulps(got[i], want), 2) << "exp(" << xs[i] << ") = " << got[i];
            EXPECT_GT(got[i], 0.f) << xs[i];  // subnormal, not flushed
        }
    }
}

// On an x86-64 without SSE4.1 or FMA (the generic target), the same arithmetic and no library
// calls: llvm.roundeven and llvm.fma would be one libm call per lane there.
TEST(Exp, NoLibraryCallsOnBaselineX86) {
    const DataType f32 = DataType::float32();
    auto f = elementwise2("exp_generic", f32, f32, f32, 64, 16, [](PrimExpr x, PrimExpr) {
        return make_call(x.dtype(), intrin::kExp, {x});
    });
    // The assembly, whatever the host.
    runtime::Module cross =
        codegen::build_llvm({f}, Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64"));
    std::string asm_text = codegen::get_source(cross, "asm");
    for (const char* fn : {"expf", "roundevenf", "fmaf", "exp2f"}) {
        // "callq\texpf@PLT" and the like.
        const std::regex call(std::string("call[a-z]*\\s+") + fn + "(@|\\s|$)");
        EXPECT_FALSE(std::regex_search(asm_text, call)) << "a call of " << fn;
    }
    // And, on an x86-64 host (CI's), the values the baseline code computes.
    if (codegen_test::host_target().mtriple.rfind("x86_64", 0) != 0) return;
    runtime::Module m = codegen::build_llvm({f}, Target::parse("llvm -mcpu=x86-64"));
    std::vector<float> xs;
    for (int i = 0; i < 64; ++i) xs.push_back(-20.f + 0.7f * static_cast<float>(i));
    runtime::NDArray X = make_empty(f32, {64}), Y = make_empty(f32, {64}),
                     Z = make_empty(f32, {64});
    std::memcpy(X.raw_data(), xs.data(), 4 * xs.size());
    m.get_function("exp_generic")(X, Y, Z);
    for (int i = 0; i < 64; ++i) {
        const float want = static_cast<float>(std::exp(static_cast<double>(xs[i])));
        EXPECT_LE(ulps(Z.data<float>()[i], want), 2) << "exp(" << xs[i] << ")";
    }
}

}  // namespace
}  // namespace anvil
