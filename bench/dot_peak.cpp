// Measures one core's multiply-add throughput of the three AVX-512 instructions Anvil's
// convolutions are built on, the way fma_peak measures the FMA: independent chains, enough to
// hide each instruction's latency, so its ports are the limit.
//
//   dot_peak      prints: dot_peak fma_gflops=F bf16_gflops=B int8_gops=I
//
// fma: vfmadd231ps (16 float32 multiply-adds); bf16: vdpbf16ps (32 bfloat16 multiply-adds,
// float32 sums; 0 without AVX-512 BF16); int8: vpdpbusd (64 uint8 x int8 multiply-adds, int32
// sums; 0 without AVX-512 VNNI). Two operations per multiply-add. How fast a bfloat16 or int8
// model can be next to its float32 form is bounded by these ratios (bench/models/bf16_compare.py
// prints them beside its table).
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace {

constexpr int kChains = 24;  // latency x ports of each instruction on the x86 cores we know
constexpr long kIterations = 10'000'000;

template <class Step>
double best_gops(Step step, double ops_per_instruction) {
    double best = 0;
    for (int round = 0; round < 4; ++round) {  // the first warms the clocks up
        auto start = std::chrono::steady_clock::now();
        float keep = step(kIterations);
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (keep == 12345.0f) std::printf(" ");  // never; keeps the result alive
        best = std::max(best, ops_per_instruction * kChains * double(kIterations) / s / 1e9);
    }
    return best;
}

__attribute__((target("avx512f"))) float fma_chains(long iterations) {
    __m512 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.01f * i);
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
    for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 24
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    }
    float total = 0;
    for (int i = 0; i < kChains; ++i) total += _mm512_reduce_add_ps(acc[i]);
    return total;
}

__attribute__((target("avx512f,avx512bf16"))) float bf16_chains(long iterations) {
    __m512 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(0.01f * i);
    const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3400);
    for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 24
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
    }
    float total = 0;
    for (int i = 0; i < kChains; ++i) total += _mm512_reduce_add_ps(acc[i]);
    return total;
}

__attribute__((target("avx512f,avx512vnni"))) float int8_chains(long iterations) {
    __m512i acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_epi32(i);
    const __m512i a = _mm512_set1_epi8(1), b = _mm512_set1_epi8(-1);
    for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 24
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
    }
    int total = 0;
    for (int i = 0; i < kChains; ++i) total += _mm512_reduce_add_epi32(acc[i]);
    return float(total);
}

}  // namespace

int main() {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f")) {
        std::fprintf(stderr, "dot_peak: the CPU has no AVX-512\n");
        return 1;
    }
    double fma = best_gops(fma_chains, 32);
    double bf16 = __builtin_cpu_supports("avx512bf16") ? best_gops(bf16_chains, 64) : 0;
    double int8 = __builtin_cpu_supports("avx512vnni") ? best_gops(int8_chains, 128) : 0;
    std::printf("dot_peak fma_gflops=%.1f bf16_gflops=%.1f int8_gops=%.1f\n", fma, bf16, int8);
    return 0;
}
