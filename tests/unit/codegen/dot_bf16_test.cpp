// Intrinsic dot_bf16 (ir/intrinsics.h): two bfloat16 products per float32 lane, summed, with an
// accumulator added. Within float32 rounding of the exact sum at every lane count, as AVX-512
// BF16's vdpbf16ps where the target has it (and the accumulator folded into it) and in the
// portable form elsewhere.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "codegen_test_util.h"
#include "ir/intrinsics.h"

namespace anvil {
namespace {

using namespace codegen_test;

const DataType i32t = DataType::int32();
const DataType f32t = DataType::float32();

// C[k] = dot_bf16(A[k], B[k]) over 48 lanes, `lanes` at a time.
Ref<tir::PrimFunc> accumulate(int lanes) {
    return elementwise2("dot", i32t, i32t, f32t, 48, lanes, [](PrimExpr a, PrimExpr b) {
        return make_call(f32t.with_lanes(a.dtype().lanes()), intrin::kDotBF16, {a, b});
    });
}

float half(int32_t word, int k) {
    return std::bit_cast<float>((uint32_t(word) >> (16 * k)) << 16);
}

double reference(int32_t a, int32_t b) {
    return double(half(a, 0)) * half(b, 0) + double(half(a, 1)) * half(b, 1);
}

// A word of two random bfloat16 in (-4, 4) (normal numbers: vdpbf16ps flushes subnormals).
int32_t random_word(std::mt19937& rng) {
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    uint32_t lo = std::bit_cast<uint32_t>(dist(rng)) >> 16;
    uint32_t hi = std::bit_cast<uint32_t>(dist(rng)) >> 16;
    return int32_t(lo | (hi << 16));
}

void check(const Target& target, int lanes, bool expect_bf16) {
    SCOPED_TRACE(target.str() + ", " + std::to_string(lanes) + " lanes");
    std::mt19937 rng(lanes);
    std::vector<int32_t> a(48), b(48);
    for (int k = 0; k < 48; ++k) {
        a[k] = random_word(rng);
        b[k] = random_word(rng);
    }
    auto f = accumulate(lanes);
    runtime::Module m = codegen::build_llvm({f}, target);
    runtime::NDArray An = make_array(a, i32t), Bn = make_array(b, i32t),
                     Cn = make_empty(f32t, {48});
    m.get_function("dot")(An, Bn, Cn);
    std::vector<float> c = Cn.to_vector<float>();
    for (int k = 0; k < 48; ++k) {
        double want = reference(a[k], b[k]);
        double scale =
            std::fabs(half(a[k], 0) * half(b[k], 0)) + std::fabs(half(a[k], 1) * half(b[k], 1));
        EXPECT_NEAR(c[k], want, 1e-6 * scale) << k;
    }
    if (lanes == 1) return;
    std::string asm_text = codegen::get_source(m, "asm");
    EXPECT_EQ(asm_text.find("vdpbf16ps") != std::string::npos, expect_bf16) << asm_text;
}

TEST(DotBF16, ProductsSummedWithAndWithoutAvx512Bf16) {
    const Target& host = host_target();
    bool bf16 = host.has_feature("avx512bf16");
    check(host, 1, false);
    check(host, 16, bf16);
    check(host, 8, bf16 && host.has_feature("avx512vl"));
    // The portable form on a CPU without it (one this machine can run).
    if (host.has_feature("avx2")) {
        Target plain = Target::parse("llvm -mtriple=" + host.mtriple + " -mcpu=haswell");
        check(plain, 16, false);
        check(plain, 4, false);
    }
}

TEST(DotBF16, AccumulatorFoldsIntoOneInstruction) {
    const Target& host = host_target();
    const bool bf16 = host.has_feature("avx512bf16");
    // C = C + dot(A, B): with avx512bf16 one vdpbf16ps with C as its accumulator, no vaddps.
    auto A = make_buffer("A", i32t, {i32(16)}), B = make_buffer("B", i32t, {i32(16)});
    auto C = make_buffer("C", f32t, {i32(16)});
    PrimExpr r = make_ramp(i32(0), i32(1), 16);
    PrimExpr sum = make_load(C, {r}) + make_call(f32t.with_lanes(16), intrin::kDotBF16,
                                                 {make_load(A, {r}), make_load(B, {r})});
    auto f = tir::make_prim_func("acc", {A, B, C}, tir::make_store(C, sum, {r}));
    runtime::Module m = codegen::build_llvm({f}, host);
    // 1.5 x 2 + (-0.5) x 3 = 1.5, plus 7.
    const int32_t a_word = int32_t(0x3fc0u | (0xbf00u << 16));
    const int32_t b_word = int32_t(0x4000u | (0x4040u << 16));
    std::vector<int32_t> a(16, a_word), b(16, b_word);
    std::vector<float> c(16, 7.0f);
    runtime::NDArray An = make_array(a, i32t), Bn = make_array(b, i32t), Cn = make_array(c, f32t);
    m.get_function("acc")(An, Bn, Cn);
    for (float v : Cn.to_vector<float>()) EXPECT_EQ(v, 8.5f);
    std::string asm_text = codegen::get_source(m, "asm");
    EXPECT_EQ(asm_text.find("vdpbf16ps") != std::string::npos, bf16) << asm_text;
    if (bf16) EXPECT_EQ(asm_text.find("vaddps"), std::string::npos) << asm_text;
}

}  // namespace
}  // namespace anvil
