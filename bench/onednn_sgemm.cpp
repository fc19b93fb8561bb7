// oneDNN's sgemm at the dense-layer shapes of BERT-base (128 tokens) and ViT-B/16 (197 tokens),
// with the weights hot (one weight matrix, in the caches after the first call) and cold (a new
// copy each call, from enough copies to exceed the last-level cache, as a model's weights come
// from memory once per inference). The peer for the "large GEMM kernels at N % of the FMA peak"
// figures of bench/README.md: `anvil run --profile` on the models prints Anvil's in-model kernels
// at the same shapes, to be run in the same session (timings on a shared machine drift by 5-10 %
// between minutes).
//
//   onednn_sgemm [--threads T] [--peak GFLOPS]
//
// C[M, N] = A[M, K] · W[N, K]ᵀ (a dense layer, weights as ONNX and PyTorch store them), oneDNN's
// dnnl_sgemm on T OpenMP threads (default 1); median of the timed calls, GFLOP/s, and % of
// --peak when given (e.g. fma_peak's figure).
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Shape {
    long m, k, n;
    const char* layer;
};

// Copies of the weights a cold run cycles through: at least this many bytes in all.
constexpr size_t kColdBytes = size_t{512} << 20;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median seconds of `calls` sgemm calls, each on the next of `copies` weight matrices.
double time_sgemm(const Shape& s, int copies, int calls) {
    const size_t w_elems = static_cast<size_t>(s.n) * s.k;
    std::vector<float> a(static_cast<size_t>(s.m) * s.k, 0.01f), c(static_cast<size_t>(s.m) * s.n);
    std::vector<float> w(w_elems * copies, 0.001f);
    std::vector<double> times;
    for (int i = 0; i < calls + 1; ++i) {
        const float* wi = w.data() + w_elems * (i % copies);
        auto start = std::chrono::steady_clock::now();
        dnnl_status_t st =
            dnnl_sgemm('N', 'T', s.m, s.n, s.k, 1.0f, a.data(), s.k, wi, s.k, 0.0f, c.data(), s.n);
        double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (st != dnnl_success) {
            std::fprintf(stderr, "onednn_sgemm: dnnl_sgemm failed (status %d)\n", st);
            std::exit(1);
        }
        if (i > 0) times.push_back(t);  // the first call warms oneDNN up
    }
    return median(times);
}

}  // namespace

int main(int argc, char** argv) {
    int threads = 1;
    double peak = 0;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--threads" && i + 1 < argc) {
            threads = std::atoi(argv[++i]);
        } else if (arg == "--peak" && i + 1 < argc) {
            peak = std::atof(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: onednn_sgemm [--threads T] [--peak GFLOPS]\n");
            return 2;
        }
    }
    if (threads < 1) {
        std::fprintf(stderr, "onednn_sgemm: --threads must be at least 1\n");
        return 2;
    }
    omp_set_num_threads(threads);
    const std::vector<Shape> shapes = {
        {128, 768, 2304, "BERT QKV"}, {128, 768, 768, "BERT out"}, {128, 768, 3072, "BERT FC1"},
        {128, 3072, 768, "BERT FC2"}, {197, 768, 2304, "ViT QKV"}, {197, 768, 3072, "ViT FC1"},
        {197, 3072, 768, "ViT FC2"},
    };
    std::printf("%-10s %5s %5s %5s %7s %6s %9s %9s%s\n", "layer", "M", "K", "N", "threads",
                "weights", "ms", "GFLOP/s", peak > 0 ? "  % peak" : "");
    for (const Shape& s : shapes) {
        const size_t w_bytes = static_cast<size_t>(s.n) * s.k * sizeof(float);
        const int cold_copies = static_cast<int>((kColdBytes + w_bytes - 1) / w_bytes);
        for (bool cold : {false, true}) {
            double t = time_sgemm(s, cold ? cold_copies : 1, cold ? 2 * cold_copies : 30);
            double gflops = 2.0 * s.m * s.n * s.k / t / 1e9;
            std::printf("%-10s %5ld %5ld %5ld %7d %6s %9.3f %9.1f", s.layer, s.m, s.k, s.n, threads,
                        cold ? "cold" : "hot", t * 1e3, gflops);
            if (peak > 0) std::printf("  %6.1f", 100.0 * gflops / peak);
            std::printf("\n");
        }
    }
    return 0;
}
