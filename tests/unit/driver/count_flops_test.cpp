// The floating-point operation count of loop-IR kernels (driver/count_flops.h): the counting
// rule, loops whose iterations differ (tails, triangular nests) enumerated exactly, unknown
// counts, and counts that the loop-IR pipeline leaves unchanged.
#include "driver/count_flops.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/pipeline.h"
#include "tir/parser.h"

namespace anvil::driver {
namespace {

int64_t flops_of(const std::string& text) {
    return count_flops(*tir::parse_prim_func(text));
}

TEST(CountFlops, MultiplyAccumulateIsTwoPerIteration) {
    EXPECT_EQ(flops_of(R"(prim_func mm(A: float32[4, 8], B: float32[8, 6], C: float32[4, 6]) {
  for i in [0, 4) {
    for j in [0, 6) {
      C[i, j] = 0.0f
      for k in [0, 8) { C[i, j] = C[i, j] + A[i, k] * B[k, j] }
    }
  }
})"),
              4 * 6 * 8 * 2);
}

TEST(CountFlops, AmxTileProductsCountTheirWordProducts) {
    // Per task: one configuration (C 14 rows x 16 columns, A rows of 8 words), 3 products of
    // bfloat16 (4 per word product) and 2 of uint8 (8); 5 tasks.
    EXPECT_EQ(flops_of(R"(prim_func t(A: bfloat16[1024], B: int32[1024], C: float32[1024]) {
  for p in [0, 5) parallel {
    evaluate(call<int32>("amx_tile_config", 14, 64, 14, 32, 8, 64))
    for r in [0, 3) {
      evaluate(call<int32>("amx_tile_load", 1, A[r * 32], 32))
      evaluate(call<int32>("amx_tile_load", 2, B[r * 128], 64))
      evaluate(call<int32>("amx_tile_dot_bf16", 0, 1, 2))
    }
    for r2 in [0, 2) {
      evaluate(call<int32>("amx_tile_dot_u8s8", 0, 1, 2))
    }
    evaluate(call<int32>("amx_tile_store", 0, C[0], 64))
  }
})"),
              5 * 14 * 16 * 8 * (3 * 4 + 2 * 8));
    // A product without a configuration before it: unknown.
    EXPECT_EQ(flops_of(R"(prim_func t(C: float32[16]) {
  evaluate(call<int32>("amx_tile_dot_bf16", 0, 1, 2))
})"),
              -1);
}

TEST(CountFlops, VectorOperationsCountEveryLane) {
    // 16-lane multiply-add (32) and a scalar add (1) broadcast to the lanes, 3 times.
    EXPECT_EQ(flops_of(R"(prim_func v(A: float32[48], B: float32[2], C: float32[48]) {
  for i in [0, 3) {
    C[ramp(i * 16, 1, 16)] = C[ramp(i * 16, 1, 16)] + A[ramp(i * 16, 1, 16)] * broadcast(B[0] + B[1], 16)
  }
})"),
              3 * (32 + 1));
}

TEST(CountFlops, OnlyFloatingPointArithmeticCounts) {
    // Index arithmetic, integer values, comparisons, casts and selects' conditions count
    // nothing; min and max on floats count 1, divide 1, fma 2, exp 1; both sides of a select.
    EXPECT_EQ(flops_of(R"(prim_func f(A: float32[10], I: int32[10], C: float32[10], D: int32[10]) {
  for i in [0, 10) {
    D[i] = I[i] * 3 + I[floordiv(i, 2)] - 1
    C[i] = cast<float32>(I[i])
    C[i] = min(max(A[i], 0.0f), 6.0f)
    C[i] = A[i] / 7.0f
    C[i] = fma(A[i], A[i], 1.0f)
    C[i] = exp(A[i])
    C[i] = select(A[i] > 0.0f, A[i] * 2.0f, A[i] * 3.0f + 1.0f)
  }
})"),
              10 * (0 + 0 + 2 + 1 + 2 + 1 + 3));
}

TEST(CountFlops, TailGuardsCountTheIterationsThatRun) {
    // 37 elements in 5 vectors of 8: the guard holds for 37 of the 40 iterations.
    EXPECT_EQ(flops_of(R"(prim_func partition(A: float32[37], B: float32[37]) {
  for io in [0, 5) {
    for ii in [0, 8) {
      if likely(io * 8 + ii < 37) { B[io * 8 + ii] = A[io * 8 + ii] * 2.0f }
    }
  }
})"),
              37);
    // An else branch counts where the condition fails; a guard whose sides cost the same is
    // not evaluated.
    EXPECT_EQ(flops_of(R"(prim_func g(A: float32[10], B: float32[10]) {
  for i in [0, 10) {
    if i < 3 { B[i] = A[i] + A[i] } else { B[i] = A[i] * A[i] * A[i] }
    if i < 5 { B[i] = A[i] } else { B[i] = 0.0f }
  }
})"),
              3 * 1 + 7 * 2);
}

TEST(CountFlops, ExtentsThatDependOnOuterLoopsAreSummed) {
    // A triangular nest: sum over i of i iterations; the extent goes through a let.
    EXPECT_EQ(flops_of(R"(prim_func tri(A: float32[8], B: float32[8]) {
  for i in [0, 8) {
    let n = i * 2 {
      for j in [0, n) { B[i] = B[i] + A[j % 8] }
    }
  }
})"),
              2 * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7));
}

TEST(CountFlops, IfThenElseCountsTheBranchTaken) {
    // Padding: the loaded side costs nothing either way; the arithmetic side only inside.
    EXPECT_EQ(flops_of(R"(prim_func pad(A: float32[8], B: float32[10]) {
  for i in [0, 10) {
    B[i] = call<float32>("if_then_else", 1 <= i && i < 9, A[i - 1] * 2.0f, 0.0f)
  }
})"),
              8);
}

TEST(CountFlops, RunTimeDependentCountsAreUnknown) {
    // A symbolic extent.
    EXPECT_EQ(flops_of(R"(prim_func sym(A: float32[n], B: float32[n]) {
  for i in [0, n) { B[i] = A[i] + 1.0f }
})"),
              -1);
    // A branch on data whose sides cost differently.
    EXPECT_EQ(flops_of(R"(prim_func data(A: float32[4], B: float32[4]) {
  for i in [0, 4) {
    if A[i] > 0.0f { B[i] = A[i] * 2.0f }
  }
})"),
              -1);
    // A branch on data whose sides cost the same is known.
    EXPECT_EQ(flops_of(R"(prim_func same(A: float32[4], B: float32[4]) {
  for i in [0, 4) {
    if A[i] > 0.0f { B[i] = A[i] * 2.0f } else { B[i] = A[i] * 3.0f }
  }
})"),
              4);
    // Nothing to compute at all is zero, not unknown.
    EXPECT_EQ(flops_of(R"(prim_func copy(A: float32[4], B: float32[4]) {
  for i in [0, 4) { B[i] = A[i] }
})"),
              0);
}

TEST(CountFlops, EnumerationHasABudget) {
    // Each of 10^8 iterations differs from the next (the guard): too many to enumerate.
    EXPECT_EQ(flops_of(R"(prim_func big(A: float32[1], B: float32[1]) {
  for i in [0, 100000000) {
    if i % 3 == 0 { B[0] = A[0] * 2.0f }
  }
})"),
              -1);
}

// The loop-IR pipeline changes loops (partitions tails, vectorizes, unrolls, simplifies) but not
// the arithmetic they perform: counting before and after agrees on programs without
// transcendental functions (lower_intrinsics expands those into their arithmetic).
TEST(CountFlops, ThePipelineKeepsTheCount) {
    const char* programs[] = {
        R"(prim_func partition(A: float32[37], B: float32[37]) {
  for io in [0, 5) {
    for ii in [0, 8) vectorized {
      if likely(io * 8 + ii < 37) { B[io * 8 + ii] = A[io * 8 + ii] * 2.0f + 1.0f }
    }
  }
})",
        R"(prim_func mm(A: float32[5, 7], B: float32[7, 19], C: float32[5, 19]) {
  for i in [0, 5) {
    for jo in [0, 2) {
      for k in [0, 7) {
        for ji in [0, 16) vectorized {
          if likely(jo * 16 + ji < 19) {
            C[i, jo * 16 + ji] = C[i, jo * 16 + ji] + A[i, k] * B[k, jo * 16 + ji]
          }
        }
      }
    }
  }
})",
        R"(prim_func unroll(A: float32[12], B: float32[12]) {
  for i in [0, 3) {
    for j in [0, 4) unrolled { B[i * 4 + j] = max(A[i * 4 + j], 0.0f) * 0.5f }
  }
})",
    };
    tir::LowerContext ctx{.vector_bits = 512};
    for (const char* text : programs) {
        Ref<tir::PrimFunc> f = tir::parse_prim_func(text);
        int64_t before = count_flops(*f);
        EXPECT_GT(before, 0) << text;
        Ref<tir::PrimFunc> lowered = run_tir_pipeline(f, ctx, {});
        EXPECT_EQ(count_flops(*lowered), before) << text;
    }
}

// GELU's erf(x / c) with c a kernel parameter: lowered as erf(x * (1 / c)) under a branch on c,
// whose sides cost the same, so the kernel still has a count (the profile's GFLOP/s).
TEST(CountFlops, ErfOfAQuotientByAParameterIsCounted) {
    Ref<tir::PrimFunc> f =
        tir::parse_prim_func(R"(prim_func gelu(A: float32[64], C: float32[1], B: float32[64]) {
  for i in [0, 64) { B[i] = A[i] * erf(A[i] / C[0]) }
})");
    Ref<tir::PrimFunc> lowered = run_tir_pipeline(f, tir::LowerContext{.vector_bits = 512}, {});
    EXPECT_GT(count_flops(*lowered), 64 * 10);  // the expansion's arithmetic, per element
}

}  // namespace
}  // namespace anvil::driver
