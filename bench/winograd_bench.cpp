// Winograd against direct convolution on ResNet-18's 3x3 stride-1 layers: nn.conv2d_nchwc and
// nn.conv2d_winograd_nchwc with F(2,3) and F(4,3) on NCHW16c data (the layout alter_op_layout
// gives them on AVX-512), each with its op's default host schedule (tests/e2e/ops/op_kernel.h,
// as the op tests compile them), timed interleaved (best of N rounds, one warm-up call each).
// Reported: ms, the direct convolution's FLOPs per second of each (2 * O * C * 9 * OH * OW per
// run, so that a faster algorithm shows as more GFLOP/s), and the time relative to the direct
// one. The weight transform is not timed: it is folded at compile time. Correctness at these
// shapes: tests/e2e/ops/nn_conv_winograd_test.cpp.
//
//   winograd_bench [--repeat N] [--threads T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "op_kernel.h"  // tests/e2e/ops: the kernel the op tests check
#include "ops/conv.h"
#include "runtime/thread_pool.h"

using namespace anvil;

namespace {

testing::OpKernel compile(const std::string& op_name, const graph::Attrs& attrs,
                          const std::vector<std::vector<int64_t>>& shapes) {
    std::vector<runtime::NDArray> inputs;
    for (size_t i = 0; i < shapes.size(); ++i) {
        inputs.push_back(testing::random_tensor(shapes[i], 12 + static_cast<uint32_t>(i)));
    }
    return testing::compile_op(op_name, attrs, inputs);
}

double seconds(const testing::OpKernel& k) {
    auto t0 = std::chrono::steady_clock::now();
    k.call();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
    int repeat = 20, threads = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--repeat") == 0) {
            repeat = std::max(1, std::atoi(argv[i + 1]));
        } else if (std::strcmp(argv[i], "--threads") == 0) {
            threads = std::max(1, std::atoi(argv[i + 1]));
        } else {
            std::fprintf(stderr, "usage: winograd_bench [--repeat N] [--threads T]\n");
            return 2;
        }
    }
    runtime::set_num_threads(threads);
    const int64_t b = 16;  // channel block
    struct Layer {
        int64_t c, hw;
    };
    const Layer layers[] = {{64, 56}, {128, 28}, {256, 14}, {512, 7}};
    std::printf("%-22s %-14s %7s %9s %9s %9s\n", "layer", "algorithm", "threads", "ms", "GFLOP/s",
                "vs direct");
    for (const Layer& l : layers) {
        ops::Conv2DNCHWcAttrs direct;
        direct.padding = {1, 1, 1, 1};
        std::vector<testing::OpKernel> kernels;
        kernels.push_back(compile("nn.conv2d_nchwc", direct,
                                  {{1, l.c / b, l.hw, l.hw, b}, {l.c / b, l.c / b, 3, 3, b, b}}));
        for (int64_t m : {2, 4}) {
            ops::Conv2DWinogradAttrs a;
            a.padding = {1, 1, 1, 1};
            a.tile_size = m;
            kernels.push_back(
                compile("nn.conv2d_winograd_nchwc", a,
                        {{1, l.c / b, l.hw, l.hw, b}, {m + 2, m + 2, l.c / b, l.c, b}}));
        }
        std::vector<double> best(kernels.size(), 1e30);
        for (const auto& k : kernels) k.call();
        for (int r = 0; r < repeat; ++r) {
            for (size_t k = 0; k < kernels.size(); ++k)
                best[k] = std::min(best[k], seconds(kernels[k]));
        }
        const double flops = 2.0 * l.c * l.c * 9 * l.hw * l.hw;
        const char* names[] = {"conv2d_nchwc", "winograd F(2,3)", "winograd F(4,3)"};
        std::string name = "3x3 " + std::to_string(l.c) + " @" + std::to_string(l.hw);
        for (size_t k = 0; k < kernels.size(); ++k) {
            std::printf("%-22s %-14s %7d %9.3f %9.1f %9.2f\n", name.c_str(), names[k], threads,
                        best[k] * 1e3, flops / best[k] * 1e-9, best[k] / best[0]);
        }
    }
    return 0;
}
