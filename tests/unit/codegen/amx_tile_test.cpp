// The AMX tile calls (ir/intrinsics.h, codegen_amx.cpp): a tile accumulator kept across a loop
// of tile products, as tensorize_amx makes them. Compiled for an AMX CPU on every machine (the
// instructions and the permission request are in the code), and run against a reference where
// this machine has AMX.
#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "codegen_test_util.h"
#include "ir/intrinsics.h"
#include "runtime/module.h"
#include "support/error.h"

namespace anvil {
namespace {

using namespace codegen_test;

constexpr int kRows = 11;  // odd: a tile of fewer than 16 rows
constexpr int kSteps = 2;  // products accumulated in the tile

tir::Stmt call(const char* name, std::vector<PrimExpr> args) {
    return tir::make_evaluate(make_call(DataType::int32(), name, std::move(args)));
}

// C[m, n] = sum over r, k of word products of A[r, m, k] and B[r, k, n] (16 words each way):
// A [kSteps, kRows, 64 bytes] of uint8 or bfloat16, B [kSteps, 16, 16] int32 words, C [kRows, 16]
// int32 or float32.
Ref<tir::PrimFunc> tile_product(bool bf16) {
    const DataType elem = bf16 ? DataType::bfloat16() : DataType::uint(8);
    const int per_row = bf16 ? 32 : 64;
    auto A = make_buffer("A", elem, {i32(kSteps * kRows * per_row)});
    auto B = make_buffer("B", DataType::int32(), {i32(kSteps * 256)});
    auto C = make_buffer("C", bf16 ? DataType::float32() : DataType::int32(), {i32(kRows * 16)});
    auto r = make_var("r");
    tir::Stmt step = tir::make_seq(
        {call(intrin::kAmxTileLoad,
              {i32(1), make_load(A, {PrimExpr(r) * (kRows * per_row)}), i32(64)}),
         call(intrin::kAmxTileLoad, {i32(2), make_load(B, {PrimExpr(r) * 256}), i32(64)}),
         call(bf16 ? intrin::kAmxTileDotBF16 : intrin::kAmxTileDotU8S8, {i32(0), i32(1), i32(2)})});
    tir::Stmt body = tir::make_seq(
        {call(intrin::kAmxTileConfig, {i32(kRows), i32(64), i32(kRows), i32(64), i32(16), i32(64)}),
         call(intrin::kAmxTileZero, {i32(0)}),
         tir::make_for(r, i32(0), i32(kSteps), tir::ForKind::Serial, step),
         call(intrin::kAmxTileStore, {i32(0), make_load(C, {i32(0)}), i32(64)}),
         call(intrin::kAmxTileRelease, {})});
    return tir::make_prim_func(bf16 ? "tile_bf16" : "tile_u8s8", {A, B, C}, body);
}

const Target& amx_cpu() {
    static const Target t = Target::parse("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=sapphirerapids");
    return t;
}

bool host_has_amx() {
    const Target& h = host_target();
    return h.has_feature("amx-tile") && h.has_feature("amx-int8") && h.has_feature("amx-bf16");
}

// The 64-byte configuration as LLVM prints the constant: palette 1 in byte 0, tile t's row
// bytes (16-bit) at 16 + 2t, its rows at 48 + t.
std::string printed_config() {
    unsigned char cfg[64] = {};
    cfg[0] = 1;
    const int rows[3] = {kRows, kRows, 16};
    for (int t = 0; t < 3; ++t) {
        cfg[16 + 2 * t] = 64;
        cfg[48 + t] = static_cast<unsigned char>(rows[t]);
    }
    std::string s = "c\"";
    for (unsigned char b : cfg) {
        if (b >= 0x20 && b < 0x7f && b != '"' && b != '\\') {
            s += static_cast<char>(b);
        } else {
            static const char* hex = "0123456789ABCDEF";
            s += {'\\', hex[b >> 4], hex[b & 15]};
        }
    }
    return s + "\"";
}

TEST(AmxTile, CompiledToTileInstructionsAfterThePermissionRequest) {
    for (bool bf16 : {false, true}) {
        runtime::Module m = codegen::build_llvm({tile_product(bf16)}, amx_cpu());
        const std::string text = codegen::get_source(m, "asm");
        size_t last = 0;
        // In this order: permission, configuration, the product, the store, the release.
        for (const char* want : {"anvil_request_amx", "ldtilecfg", "tilezero", "tileloadd",
                                 bf16 ? "tdpbf16ps" : "tdpbusd", "tilestored", "tilerelease"}) {
            const size_t at = text.find(want, last);
            EXPECT_NE(at, std::string::npos) << want << " after offset " << last << " in\n" << text;
            if (at != std::string::npos) last = at;
        }
        const std::string ir = codegen::get_source(m, "ll");
        EXPECT_NE(ir.find(printed_config()), std::string::npos) << printed_config() << "\n" << ir;
    }
}

TEST(AmxTile, TileCallsNeedAnAmxTarget) {
    Target plain = Target::parse("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=icelake-server");
    try {
        codegen::build_llvm({tile_product(false)}, plain);
        FAIL() << "expected an error";
    } catch (const InternalError& e) {
        EXPECT_NE(std::string(e.what()).find("without amx-tile"), std::string::npos) << e.what();
    }
}

TEST(AmxTile, PermissionIsGrantedExactlyWhereTheCpuHasAmx) {
    // Asked twice: the answer is kept.
    for (int i = 0; i < 2; ++i) {
        const int status = anvil_request_amx();
        EXPECT_EQ(status == 0, host_has_amx());
        if (status != 0) {
            EXPECT_NE(std::string(anvil_get_last_error()).find("AMX"), std::string::npos);
        }
    }
}

TEST(AmxTile, SumsMatchTheReferenceOnAnAmxHost) {
    if (!host_has_amx()) {
        // The instructions cannot run here; their code is checked above.
        EXPECT_NE(anvil_request_amx(), 0);
        return;
    }
    std::mt19937 rng(5);
    // uint8 x int8 into int32, exact.
    {
        std::vector<uint8_t> a(kSteps * kRows * 64);
        std::vector<int32_t> b(kSteps * 256);
        for (auto& x : a) x = static_cast<uint8_t>(rng());
        for (auto& w : b) w = static_cast<int32_t>(rng());
        runtime::NDArray An = make_array(a, DataType::uint(8)),
                         Bn = make_array(b, DataType::int32()),
                         Cn = make_empty(DataType::int32(), {kRows * 16});
        runtime::Module m = codegen::build_llvm({tile_product(false)}, host_target());
        m.get_function("tile_u8s8")(An, Bn, Cn);
        std::vector<int32_t> c = Cn.to_vector<int32_t>();
        for (int mm = 0; mm < kRows; ++mm) {
            for (int n = 0; n < 16; ++n) {
                int64_t want = 0;
                for (int r = 0; r < kSteps; ++r) {
                    for (int k = 0; k < 16; ++k) {
                        const uint32_t w = static_cast<uint32_t>(b[r * 256 + k * 16 + n]);
                        for (int j = 0; j < 4; ++j) {
                            want += int64_t{a[(r * kRows + mm) * 64 + 4 * k + j]} *
                                    static_cast<int8_t>(w >> (8 * j));
                        }
                    }
                }
                EXPECT_EQ(c[mm * 16 + n], want) << mm << ", " << n;
            }
        }
    }
    // bfloat16 into float32, within float32 rounding of the exact sum.
    {
        auto bf16_bits = [&] {
            std::uniform_real_distribution<float> d(-2.0f, 2.0f);
            return static_cast<uint16_t>(std::bit_cast<uint32_t>(d(rng)) >> 16);
        };
        auto value = [](uint32_t bits) { return double(std::bit_cast<float>(bits << 16)); };
        std::vector<uint16_t> a(kSteps * kRows * 32);
        std::vector<int32_t> b(kSteps * 256);
        for (auto& x : a) x = bf16_bits();
        for (auto& w : b) w = static_cast<int32_t>(bf16_bits() | (uint32_t{bf16_bits()} << 16));
        runtime::NDArray An = make_array(a, DataType::bfloat16()),
                         Bn = make_array(b, DataType::int32()),
                         Cn = make_empty(DataType::float32(), {kRows * 16});
        runtime::Module m = codegen::build_llvm({tile_product(true)}, host_target());
        m.get_function("tile_bf16")(An, Bn, Cn);
        std::vector<float> c = Cn.to_vector<float>();
        for (int mm = 0; mm < kRows; ++mm) {
            for (int n = 0; n < 16; ++n) {
                double want = 0, scale = 0;
                for (int r = 0; r < kSteps; ++r) {
                    for (int k = 0; k < 16; ++k) {
                        const uint32_t w = static_cast<uint32_t>(b[r * 256 + k * 16 + n]);
                        for (int j = 0; j < 2; ++j) {
                            const double p = value(a[(r * kRows + mm) * 32 + 2 * k + j]) *
                                             value((w >> (16 * j)) & 0xffff);
                            want += p;
                            scale += std::fabs(p);
                        }
                    }
                }
                EXPECT_NEAR(c[mm * 16 + n], want, 1e-5 * scale) << mm << ", " << n;
            }
        }
    }
}

}  // namespace
}  // namespace anvil
