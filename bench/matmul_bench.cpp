// GEMM benchmark: every schedule variant of examples/matmul against oneDNN's dnnl_sgemm, in the
// same run, interleaved (Anvil, oneDNN, Anvil, oneDNN, ...), at 1 and 2 threads, for 1024^3 and
// the ResNet-18 convolutions as GEMMs. Prints medians, GFLOP/s and the ratio Anvil / oneDNN.
//
//   matmul_bench [--quick]   (--quick: fewer repetitions, skips the naive variant)
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "driver/build.h"
#include "matmul_schedules.h"
#include "runtime/ndarray.h"

using namespace anvil;

namespace {

struct Shape {
    int64_t M, N, K;
    const char* label;
};

double seconds_of(const std::function<void()>& f) {
    auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    // Interleaved runs share the cores: libgomp's workers otherwise spin for a while after each
    // oneDNN call and take the second core from Anvil's pool (and Anvil's workers, which spin
    // 100 us, would do the same to oneDNN). Passive waiting costs each side microseconds.
    // libgomp reads its environment before main runs, so set it and start again.
    if (!std::getenv("OMP_WAIT_POLICY")) {
        setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
        execv("/proc/self/exe", argv);
        std::perror("matmul_bench: re-exec with OMP_WAIT_POLICY=PASSIVE failed");
        return 1;
    }
    std::printf("OMP_WAIT_POLICY=%s\n", std::getenv("OMP_WAIT_POLICY"));
    bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const std::vector<Shape> shapes = {{1024, 1024, 1024, "1024^3"},
                                       {3136, 64, 576, "resnet conv2_x"},
                                       {784, 128, 1152, "resnet conv3_x"},
                                       {196, 256, 2304, "resnet conv4_x"},
                                       {49, 512, 4608, "resnet conv5_x"}};
    auto f32 = runtime::dl_dtype_from_string("float32");
    std::printf("%-15s %-7s %-12s %10s %10s %10s %8s\n", "shape", "threads", "variant", "anvil ms",
                "GFLOP/s", "onednn GF", "ratio");
    for (const Shape& sh : shapes) {
        auto a = runtime::NDArray::empty({sh.M, sh.K}, f32);
        auto b = runtime::NDArray::empty({sh.K, sh.N}, f32);
        auto c = runtime::NDArray::empty({sh.M, sh.N}, f32);
        auto c_ref = runtime::NDArray::empty({sh.M, sh.N}, f32);
        std::mt19937 rng(1);
        std::uniform_real_distribution<float> dist(-1, 1);
        for (int64_t i = 0; i < sh.M * sh.K; ++i) a.data<float>()[i] = dist(rng);
        for (int64_t i = 0; i < sh.K * sh.N; ++i) b.data<float>()[i] = dist(rng);
        double flops = 2.0 * sh.M * sh.N * sh.K;
        // Compile every variant once; the thread count is a run-time setting.
        std::map<std::string, runtime::PackedFunc> kernels;
        for (const auto& v : examples::matmul_variants()) {
            if (quick && v == "naive") continue;
            examples::Matmul m = examples::make_matmul(v, sh.M, sh.N, sh.K);
            kernels[v] = driver::build(m.schedule, {m.A, m.B, m.C}, "llvm -mcpu=native", "mm")
                             .get_function("mm");
        }
        for (int threads : {1, 2}) {
            anvil_set_num_threads(threads);
            omp_set_num_threads(threads);
            auto onednn = [&] {
                dnnl_sgemm('N', 'N', sh.M, sh.N, sh.K, 1.0f, a.data<float>(), sh.K, b.data<float>(),
                           sh.N, 0.0f, c_ref.data<float>(), sh.N);
            };
            for (const auto& v : examples::matmul_variants()) {
                if (!kernels.count(v)) continue;
                const auto& f = kernels[v];
                auto anvil_call = [&] { f(a, b, c); };
                anvil_call();  // warm up both
                onednn();
                // Slow variants get few repetitions; fast ones enough for a stable median.
                double once = seconds_of(anvil_call);
                int reps =
                    quick ? 5 : std::clamp(static_cast<int>(0.6 / std::max(once, 1e-6)), 3, 100);
                std::vector<double> ta, tb;
                for (int r = 0; r < reps; ++r) {
                    ta.push_back(seconds_of(anvil_call));
                    tb.push_back(seconds_of(onednn));
                }
                double ma = median(ta), mb = median(tb);
                std::printf("%-15s %-7d %-12s %10.3f %10.1f %10.1f %8.2f\n", sh.label, threads,
                            v.c_str(), ma * 1e3, flops / ma * 1e-9, flops / mb * 1e-9, mb / ma);
                std::fflush(stdout);
            }
        }
    }
    std::printf("ratio = oneDNN time / Anvil time = Anvil GFLOP/s / oneDNN GFLOP/s\n");
    return 0;
}
