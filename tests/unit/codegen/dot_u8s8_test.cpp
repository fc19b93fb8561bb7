// Intrinsic dot_u8s8 (ir/intrinsics.h): four unsigned x signed byte products per int32 lane,
// summed, with an accumulator added. Exact at every lane count, as VNNI's vpdpbusd where the
// target has it (and the accumulator folded into it), as two pmaddwd on x86 without it, and in
// the portable form elsewhere.
#include <gtest/gtest.h>

#include <random>

#include "codegen_test_util.h"
#include "ir/intrinsics.h"

namespace anvil {
namespace {

using namespace codegen_test;

const DataType i32t = DataType::int32();

// C[k] = dot_u8s8(A[k], B[k]) over 48 int32 lanes, `lanes` at a time.
Ref<tir::PrimFunc> accumulate(int lanes) {
    return elementwise2("dot", i32t, i32t, i32t, 48, lanes, [](PrimExpr a, PrimExpr b) {
        return make_call(a.dtype(), intrin::kDotU8S8, {a, b});
    });
}

int32_t reference(int32_t a, int32_t b) {
    int32_t sum = 0;
    for (int k = 0; k < 4; ++k) {
        sum += int32_t(uint8_t(uint32_t(a) >> (8 * k))) * int32_t(int8_t(uint32_t(b) >> (8 * k)));
    }
    return sum;
}

// What the x86 code should be: vpdpbusd, or (pmaddwd) vpmaddwd and no vpdpbusd.
enum class Form { vnni, pmaddwd, any };

void check(const Target& target, int lanes, Form form) {
    SCOPED_TRACE(target.str() + ", " + std::to_string(lanes) + " lanes");
    std::mt19937 rng(lanes);
    std::vector<int32_t> a(48), b(48);
    for (int k = 0; k < 48; ++k) {
        a[k] = int32_t(rng());
        b[k] = int32_t(rng());
    }
    // Extremes: 255 x -128 in every byte.
    a[0] = int32_t(0xffffffffu);
    b[0] = int32_t(0x80808080u);
    auto f = accumulate(lanes);
    runtime::Module m = codegen::build_llvm({f}, target);
    runtime::NDArray An = make_array(a, i32t), Bn = make_array(b, i32t),
                     Cn = make_empty(i32t, {48});
    m.get_function("dot")(An, Bn, Cn);
    std::vector<int32_t> c = Cn.to_vector<int32_t>();
    for (int k = 0; k < 48; ++k) EXPECT_EQ(c[k], reference(a[k], b[k])) << k;
    // (The portable scalar form LLVM may itself turn into vpdpbusd: not checked.)
    if (lanes == 1) return;
    std::string asm_text = codegen::get_source(m, "asm");
    const bool vnni = asm_text.find("vpdpbusd") != std::string::npos;
    const bool madd = asm_text.find("pmaddwd") != std::string::npos;
    if (form == Form::vnni) EXPECT_TRUE(vnni) << asm_text;
    if (form == Form::pmaddwd) {
        EXPECT_FALSE(vnni) << asm_text;
        EXPECT_TRUE(madd) << asm_text;
    }
}

TEST(DotU8S8, ExactWithVnniAndWithout) {
    const Target& host = host_target();
    bool vnni = host.has_feature("avx512vnni");
    check(host, 1, Form::any);
    check(host, 16, vnni ? Form::vnni : Form::any);
    check(host, 8, vnni && host.has_feature("avx512vl") ? Form::vnni : Form::any);
    // CPUs without VNNI (ones this machine can run): pmaddwd at the widths they have (AVX2:
    // 8 lanes, 16 in two; AVX-512BW: 16); exact in every form, the extreme bytes (255 x -128
    // in a pair, where vpmaddubsw would saturate) included.
    if (host.has_feature("avx2")) {
        Target haswell = Target::parse("llvm -mtriple=" + host.mtriple + " -mcpu=haswell");
        check(haswell, 8, Form::pmaddwd);
        check(haswell, 4, Form::pmaddwd);
        check(haswell, 16, Form::pmaddwd);
    }
    if (host.has_feature("avx512bw")) {
        Target skylake = Target::parse("llvm -mtriple=" + host.mtriple + " -mcpu=skylake-avx512");
        check(skylake, 16, Form::pmaddwd);
        check(skylake, 8, Form::pmaddwd);
    }
}

TEST(DotU8S8, AccumulatorFoldsIntoOneInstruction) {
    const Target& host = host_target();
    const bool vnni = host.has_feature("avx512vnni");
    // C = C + dot(A, B): with VNNI one vpdpbusd with C as its accumulator, no separate vpaddd.
    auto A = make_buffer("A", i32t, {i32(16)}), B = make_buffer("B", i32t, {i32(16)});
    auto C = make_buffer("C", i32t, {i32(16)});
    PrimExpr r = make_ramp(i32(0), i32(1), 16);
    PrimExpr sum = make_load(C, {r}) + make_call(i32t.with_lanes(16), intrin::kDotU8S8,
                                                 {make_load(A, {r}), make_load(B, {r})});
    auto f = tir::make_prim_func("acc", {A, B, C}, tir::make_store(C, sum, {r}));
    runtime::Module m = codegen::build_llvm({f}, host);
    std::vector<int32_t> a(16, 0x01020304), b(16, 0x01ff0102), c(16, 7);
    runtime::NDArray An = make_array(a, i32t), Bn = make_array(b, i32t), Cn = make_array(c, i32t);
    m.get_function("acc")(An, Bn, Cn);
    for (int32_t v : Cn.to_vector<int32_t>()) EXPECT_EQ(v, 7 + reference(0x01020304, 0x01ff0102));
    std::string asm_text = codegen::get_source(m, "asm");
    EXPECT_EQ(asm_text.find("vpdpbusd") != std::string::npos, vnni) << asm_text;
    if (vnni) EXPECT_EQ(asm_text.find("vpaddd"), std::string::npos) << asm_text;
}

TEST(DotU8S8, OneWidenedProductIsExactWithVnniAndWithout) {
    // dot_u8s8(cast(uint8 a), cast(int8 b)) (the depthwise form: one byte per word, the others
    // zero) is a * b: one vpdpbusd with VNNI; without it, LLVM sees the zero bytes through the
    // pmaddwd sequence.
    const Target& host = host_target();
    auto A = make_buffer("A", DataType::uint(8), {i32(16)});
    auto B = make_buffer("B", DataType::int_(8), {i32(16)});
    auto C = make_buffer("C", i32t, {i32(16)});
    PrimExpr r = make_ramp(i32(0), i32(1), 16);
    const DataType v = i32t.with_lanes(16);
    PrimExpr sum = make_load(C, {r}) +
                   make_call(v, intrin::kDotU8S8,
                             {make_cast(v, make_load(A, {r})), make_cast(v, make_load(B, {r}))});
    auto f = tir::make_prim_func("product", {A, B, C}, tir::make_store(C, sum, {r}));
    std::vector<Target> targets{host};
    if (host.has_feature("avx512bw")) {
        targets.push_back(Target::parse("llvm -mtriple=" + host.mtriple + " -mcpu=skylake-avx512"));
    }
    for (const Target& target : targets) {
        SCOPED_TRACE(target.str());
        runtime::Module m = codegen::build_llvm({f}, target);
        std::vector<uint8_t> a(16);
        std::vector<int8_t> b(16);
        std::vector<int32_t> c(16, 5);
        for (int k = 0; k < 16; ++k) {
            a[k] = uint8_t(255 - 7 * k);
            b[k] = int8_t(-128 + 13 * k);
        }
        runtime::NDArray An = make_array(a, DataType::uint(8)),
                         Bn = make_array(b, DataType::int_(8)), Cn = make_array(c, i32t);
        m.get_function("product")(An, Bn, Cn);
        std::vector<int32_t> got = Cn.to_vector<int32_t>();
        for (int k = 0; k < 16; ++k) EXPECT_EQ(got[k], 5 + int32_t(a[k]) * int32_t(b[k])) << k;
        std::string asm_text = codegen::get_source(m, "asm");
        EXPECT_EQ(asm_text.find("vpdpbusd") != std::string::npos, target.has_feature("avx512vnni"))
            << asm_text;
    }
}

}  // namespace
}  // namespace anvil
