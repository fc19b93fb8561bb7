// Single-op benchmark: the convolution layers of ResNet-18 and MobileNetV2 and a transformer's
// feed-forward dense layer, each compiled alone with its op's default host schedule (as the graph
// lowering schedules a group with that op as anchor), timed on one thread (best of N runs) and
// reported in GFLOP/s. Their correctness at the same shapes is checked by the op tests
// (tests/e2e/ops/nn_conv_test.cpp, nn_dense_test.cpp), which compile each op with the same code
// (tests/e2e/ops/op_kernel.h); this only times them.
//
//   op_layers_bench [--repeat N] [--threads T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "op_kernel.h"  // tests/e2e/ops: the kernel the op tests check
#include "ops/conv.h"
#include "ops/dense.h"
#include "runtime/thread_pool.h"

using namespace anvil;

namespace {

// Best wall time of `repeat` calls of `op_name` on random float32 inputs of `shapes`, after one
// warm-up call; `out_elements` receives the result's element count.
double time_op(const std::string& op_name, const graph::Attrs& attrs,
               const std::vector<std::vector<int64_t>>& shapes, int repeat, int64_t* out_elements) {
    std::vector<runtime::NDArray> inputs;
    for (size_t i = 0; i < shapes.size(); ++i) {
        inputs.push_back(testing::random_tensor(shapes[i], 12 + static_cast<uint32_t>(i)));
    }
    testing::OpKernel kernel = testing::compile_op(op_name, attrs, inputs);
    *out_elements = kernel.output().num_elements();
    kernel.call();
    double best = 1e30;
    for (int r = 0; r < repeat; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        kernel.call();
        best = std::min(
            best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

ops::Conv2DAttrs conv(int64_t stride, int64_t pad, int64_t groups) {
    ops::Conv2DAttrs a;
    a.strides = {stride, stride};
    a.padding = {pad, pad, pad, pad};
    a.dilation = {1, 1};
    a.groups = groups;
    return a;
}

struct ConvLayer {
    const char* name;
    std::vector<int64_t> x, w;
    ops::Conv2DAttrs attrs;
};

}  // namespace

int main(int argc, char** argv) {
    int repeat = 10, threads = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::strcmp(argv[i], "--repeat") == 0) {
            repeat = std::max(1, std::atoi(argv[i + 1]));
        } else if (std::strcmp(argv[i], "--threads") == 0) {
            threads = std::max(1, std::atoi(argv[i + 1]));
        } else {
            std::fprintf(stderr, "usage: op_layers_bench [--repeat N] [--threads T]\n");
            return 2;
        }
    }
    runtime::set_num_threads(threads);
    ops::Conv2DAttrs dw_s2 = conv(2, 0, 96);
    dw_s2.padding = {0, 0, 1, 1};
    const std::vector<ConvLayer> layers = {
        {"resnet conv1 7x7/2", {1, 3, 224, 224}, {64, 3, 7, 7}, conv(2, 3, 1)},
        {"resnet 3x3 64 @56", {1, 64, 56, 56}, {64, 64, 3, 3}, conv(1, 1, 1)},
        {"resnet 3x3/2 64->128", {1, 64, 56, 56}, {128, 64, 3, 3}, conv(2, 1, 1)},
        {"resnet 1x1/2 64->128", {1, 64, 56, 56}, {128, 64, 1, 1}, conv(2, 0, 1)},
        {"resnet 3x3 128 @28", {1, 128, 28, 28}, {128, 128, 3, 3}, conv(1, 1, 1)},
        {"resnet 3x3 256 @14", {1, 256, 14, 14}, {256, 256, 3, 3}, conv(1, 1, 1)},
        {"resnet 3x3 512 @7", {1, 512, 7, 7}, {512, 512, 3, 3}, conv(1, 1, 1)},
        {"mobilenet dw 3x3 32 @112", {1, 32, 112, 112}, {32, 1, 3, 3}, conv(1, 1, 32)},
        {"mobilenet dw 3x3/2 96 @112", {1, 96, 112, 112}, {96, 1, 3, 3}, dw_s2},
        {"mobilenet 1x1 32->16 @112", {1, 32, 112, 112}, {16, 32, 1, 1}, conv(1, 0, 1)},
        {"mobilenet 1x1 16->96 @112", {1, 16, 112, 112}, {96, 16, 1, 1}, conv(1, 0, 1)},
        {"mobilenet 1x1 144->24 @56", {1, 144, 56, 56}, {24, 144, 1, 1}, conv(1, 0, 1)},
        {"mobilenet 1x1 320->1280 @7", {1, 320, 7, 7}, {1280, 320, 1, 1}, conv(1, 0, 1)},
    };
    std::printf("%-40s %7s %10s %9s\n", "layer", "threads", "ms", "GFLOP/s");
    for (const auto& l : layers) {
        int64_t out_elements = 0;
        double s = time_op("nn.conv2d", l.attrs, {l.x, l.w}, repeat, &out_elements);
        // 2 FLOPs per multiply-accumulate: each output sums in-channels-per-group x kh x kw.
        double flops = 2.0 * out_elements * l.w[1] * l.w[2] * l.w[3];
        std::printf("%-40s %7d %10.3f %9.1f\n", ("nn.conv2d " + std::string(l.name)).c_str(),
                    threads, s * 1e3, flops / s * 1e-9);
    }
    int64_t out_elements = 0;
    double s =
        time_op("nn.dense", ops::DenseAttrs(), {{128, 768}, {768, 768}}, repeat, &out_elements);
    std::printf("%-40s %7d %10.3f %9.1f\n", "nn.dense 128x768 . (768x768)^T", threads, s * 1e3,
                2.0 * 128 * 768 * 768 / s * 1e-9);
    return 0;
}
