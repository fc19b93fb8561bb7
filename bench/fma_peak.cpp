// Measures the CPU's fp32 fused multiply-add peak: every thread runs independent chains of vector
// FMAs (enough of them to hide the FMA latency on every x86 core we know, so the FMA ports are
// the limit), with AVX-512 where the CPU has it and AVX2 otherwise.
//
//   fma_peak [THREADS]     prints: fma_peak threads=T isa=avx512 gflops=G per_thread=P
//
// gflops is all threads together (2 FLOPs per lane per FMA), the best of several timed rounds.
// bench/models/compare.py reads it as the peak that model throughput is a fraction of.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kChains = 16;  // independent accumulators: latency 4 x 2 ports, with room to spare

// `iterations` x kChains FMAs of 16 lanes; returns something of the result so it is kept.
__attribute__((target("avx512f"))) float chains_avx512(long iterations) {
    __m512 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + 0.01f * i);
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
    for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 16
        for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
    }
    __m512 sum = acc[0];
    for (int i = 1; i < kChains; ++i) sum = _mm512_add_ps(sum, acc[i]);
    float lanes[16];
    _mm512_storeu_ps(lanes, sum);
    float total = 0;
    for (float x : lanes) total += x;
    return total;
}

__attribute__((target("avx2,fma"))) float chains_avx2(long iterations) {
    __m256 acc[kChains];
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(1.0f + 0.01f * i);
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
    for (long n = 0; n < iterations; ++n) {
#pragma GCC unroll 16
        for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
    }
    __m256 sum = acc[0];
    for (int i = 1; i < kChains; ++i) sum = _mm256_add_ps(sum, acc[i]);
    float lanes[8];
    _mm256_storeu_ps(lanes, sum);
    float total = 0;
    for (float x : lanes) total += x;
    return total;
}

// GFLOP/s of `threads` threads each running `iterations` of `kernel` at once.
double measure(int threads, long iterations, float (*kernel)(long), int lanes) {
    std::vector<float> sink(threads);
    auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] { sink[t] = kernel(iterations); });
    }
    for (auto& th : pool) th.join();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    float keep = 0;
    for (float s : sink) keep += s;
    if (keep == 12345.0f) std::printf(" ");  // never; keeps the results alive
    double flops = 2.0 * lanes * kChains * static_cast<double>(iterations) * threads;
    return flops / seconds / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    if (threads < 1) {
        std::fprintf(stderr, "usage: fma_peak [THREADS]\n");
        return 2;
    }
    __builtin_cpu_init();
    const bool avx512 = __builtin_cpu_supports("avx512f");
    if (!avx512 && !__builtin_cpu_supports("fma")) {
        std::fprintf(stderr, "fma_peak: the CPU has neither AVX-512 nor FMA3\n");
        return 1;
    }
    auto kernel = avx512 ? chains_avx512 : chains_avx2;
    const int lanes = avx512 ? 16 : 8;
    // About 0.2 s per round at 100 GFLOP/s per thread; the first round warms the clocks up.
    const long iterations = 20'000'000L * 16 / lanes;
    double best = 0;
    for (int round = 0; round < 6; ++round) {
        best = std::max(best, measure(threads, iterations, kernel, lanes));
    }
    // AVX-512 may run at half rate (two 256-bit halves) or lower clocks; AVX2 can then match it.
    std::string isa = avx512 ? "avx512" : "avx2";
    if (avx512) {
        double ymm = 0;
        for (int round = 0; round < 3; ++round) {
            ymm = std::max(ymm, measure(threads, iterations * 2, chains_avx2, 8));
        }
        if (ymm > best) {
            best = ymm;
            isa = "avx2";
        }
    }
    std::printf("fma_peak threads=%d isa=%s gflops=%.1f per_thread=%.1f\n", threads, isa.c_str(),
                best, best / threads);
    return 0;
}
