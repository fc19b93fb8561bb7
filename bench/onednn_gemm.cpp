// oneDNN at the dense-layer shapes of BERT-base (128 tokens) and ViT-B/16 (197 tokens), the peer
// of the in-model dense kernels that `anvil run --profile` reports (bench/README.md). Two forms:
// `dnnl_sgemm` (packs its operands on every call, as a framework without prepacking does) and
// the matmul primitive with the weights reordered once into the layout it chooses (as a compiled
// model, Anvil's included, packs them once at compile time). Each with the weights hot (one
// weight matrix, in the caches after the first call) and cold (the next of enough copies to
// exceed the last-level cache each call, as a model's weights come from memory once per
// inference). Timings on a shared machine drift by 5-20 % between minutes: run the models'
// profiles in the same session.
//
//   onednn_gemm [--threads T] [--peak GFLOPS]
//
// C[M, N] = A[M, K] · W[N, K]ᵀ (a dense layer, weights as ONNX and PyTorch store them) on T
// OpenMP threads (default 1); median of the timed calls after one untimed call, GFLOP/s, and %
// of --peak when given (e.g. fma_peak's figure).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

namespace {

struct Shape {
    long m, k, n;
    const char* layer;
};

// The weights a cold run cycles through: at least this many bytes in all.
constexpr size_t kColdBytes = size_t{512} << 20;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median seconds of `calls` calls of `run(i)` (call i uses weight copy i % copies), after one
// untimed call.
double median_seconds(int calls, const std::function<void(int)>& run) {
    std::vector<double> times;
    for (int i = 0; i <= calls; ++i) {
        auto start = std::chrono::steady_clock::now();
        run(i);
        double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (i > 0) times.push_back(t);
    }
    return median(times);
}

double time_sgemm(const Shape& s, int copies, int calls) {
    const size_t w_elems = static_cast<size_t>(s.n) * s.k;
    std::vector<float> a(static_cast<size_t>(s.m) * s.k, 0.01f), c(static_cast<size_t>(s.m) * s.n);
    std::vector<float> w(w_elems * copies, 0.001f);
    return median_seconds(calls, [&](int i) {
        const float* wi = w.data() + w_elems * (i % copies);
        if (dnnl_sgemm('N', 'T', s.m, s.n, s.k, 1.0f, a.data(), s.k, wi, s.k, 0.0f, c.data(),
                       s.n) != dnnl_success) {
            std::fprintf(stderr, "onednn_gemm: dnnl_sgemm failed\n");
            std::exit(1);
        }
    });
}

double time_matmul(const Shape& s, int copies, int calls) {
    using dnnl::memory;
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    memory::desc a_md({s.m, s.k}, f32, tag::ab), c_md({s.m, s.n}, f32, tag::ab);
    // Wᵀ as a K x N matrix is W's row-major bytes read column-major ("ba").
    memory::desc w_user_md({s.k, s.n}, f32, tag::ba), w_any_md({s.k, s.n}, f32, tag::any);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, w_any_md, c_md), engine);
    dnnl::matmul matmul(pd);
    std::vector<float> a(static_cast<size_t>(s.m) * s.k, 0.01f), c(static_cast<size_t>(s.m) * s.n);
    std::vector<float> w(static_cast<size_t>(s.n) * s.k, 0.001f);
    memory a_mem(a_md, engine, a.data()), c_mem(c_md, engine, c.data());
    memory w_user(w_user_md, engine, w.data());
    std::vector<memory> packed;
    for (int i = 0; i < copies; ++i) {
        packed.emplace_back(pd.weights_desc(), engine);
        dnnl::reorder(w_user, packed.back()).execute(stream, w_user, packed.back());
    }
    stream.wait();
    return median_seconds(calls, [&](int i) {
        matmul.execute(
            stream,
            {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, packed[i % copies]}, {DNNL_ARG_DST, c_mem}});
        stream.wait();
    });
}

// The two forms timed, by the name the table prints.
struct Form {
    const char* name;
    double (*time)(const Shape&, int copies, int calls);
};
constexpr Form kForms[] = {{"sgemm", time_sgemm}, {"matmul", time_matmul}};

bool parse_number(const char* text, double* value) {
    char* end = nullptr;
    *value = std::strtod(text, &end);
    return end != text && *end == '\0';
}

bool parse_int(const char* text, long* value) {
    char* end = nullptr;
    *value = std::strtol(text, &end, 10);
    return end != text && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
    long threads = 1;
    double peak = 0;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        bool ok = i + 1 < argc;
        if (ok && arg == "--threads") {
            ok = parse_int(argv[++i], &threads) && threads >= 1 && threads <= 1024;
        } else if (ok && arg == "--peak") {
            ok = parse_number(argv[++i], &peak) && peak > 0;
        } else {
            ok = false;
        }
        if (!ok) {
            std::fprintf(stderr, "usage: onednn_gemm [--threads T (1-1024)] [--peak GFLOPS]\n");
            return 2;
        }
    }
    omp_set_num_threads(static_cast<int>(threads));
    const std::vector<Shape> shapes = {
        {128, 768, 2304, "BERT QKV"}, {128, 768, 768, "BERT out"}, {128, 768, 3072, "BERT FC1"},
        {128, 3072, 768, "BERT FC2"}, {197, 768, 2304, "ViT QKV"}, {197, 768, 3072, "ViT FC1"},
        {197, 3072, 768, "ViT FC2"},
    };
    std::printf("%-9s %4s %5s %5s %7s %-7s %-5s %8s %8s%s\n", "layer", "M", "K", "N", "threads",
                "form", "wts", "ms", "GFLOP/s", peak > 0 ? "  % peak" : "");
    for (const Shape& s : shapes) {
        const size_t w_bytes = static_cast<size_t>(s.n) * s.k * sizeof(float);
        const int cold_copies = static_cast<int>((kColdBytes + w_bytes - 1) / w_bytes);
        for (const Form& form : kForms) {
            for (bool cold : {false, true}) {
                const int copies = cold ? cold_copies : 1, calls = cold ? 2 * cold_copies : 30;
                double t = form.time(s, copies, calls);
                double gflops = 2.0 * s.m * s.n * s.k / t / 1e9;
                std::printf("%-9s %4ld %5ld %5ld %7ld %-7s %-5s %8.3f %8.1f", s.layer, s.m, s.k,
                            s.n, threads, form.name, cold ? "cold" : "hot", t * 1e3, gflops);
                if (peak > 0) std::printf("  %6.1f", 100.0 * gflops / peak);
                std::printf("\n");
            }
        }
    }
    return 0;
}
