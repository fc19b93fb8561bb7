// nn.winograd_weight_transform and nn.conv2d_winograd_nchwc (ops/conv_winograd.cpp) against the
// float64 direct convolution: the data put into NCHW<ib>c by layout_transform, the weight
// transformed by the op, the result taken back to NCHW; with the x86 and the generic schedule,
// fused with a bias and relu; the stated error bound; the type errors.
#include <chrono>
#include <cmath>
#include <cstdio>

#include "conv_reference.h"
#include "nn_op_runner.h"

namespace anvil {
namespace {

using ops::Conv2DAttrs;
using ops::Conv2DWinogradAttrs;
using ops::Conv2DWinogradWeightAttrs;
using runtime::NDArray;
using testing::conv2d_reference;
using testing::random_tensor;
using testing::relayout;
using testing::run_op;

// The error bound of conv.h: |y - y_ref| <= c_m * sum(|x| |w|) over the output's receptive
// field. Measured (WinogradConv.MatchesReference prints the largest ratio of each case) on
// uniform data and weights in [-1, 1) with 8 to 64 input channels: 9.5e-8 for F(2,3), 1.3e-6
// for F(4,3) (whose transforms have entries up to 8 and 5); the constants leave about 4-5x.
double error_bound(int64_t m) {
    return m == 2 ? 5e-7 : 6e-6;
}

struct WinogradCase {
    const char* name;
    std::vector<int64_t> x;  // NCHW data
    int64_t out_channels;
    std::vector<int64_t> padding;
    int64_t m, ib, ob;
};

std::vector<WinogradCase> winograd_cases() {
    return {
        // H and W not multiples of m; batch 2; both blockings.
        {"f2_pad1", {2, 16, 9, 11}, 32, {1, 1, 1, 1}, 2, 8, 16},
        {"f4_pad1", {2, 16, 9, 11}, 32, {1, 1, 1, 1}, 4, 16, 8},
        {"f4_pad0", {2, 8, 13, 10}, 16, {0, 0, 0, 0}, 4, 8, 8},
        {"f2_pad0", {2, 32, 7, 12}, 16, {0, 0, 0, 0}, 2, 16, 16},
        // Asymmetric padding, output 15 x 13 (tails in both directions).
        {"f4_asym", {1, 16, 14, 12}, 32, {1, 0, 2, 1}, 4, 16, 16},
        {"f2_asym", {1, 8, 6, 5}, 8, {0, 2, 1, 0}, 2, 8, 8},
        // A ResNet-18 shape at the deepest stage (7 x 7 in 2 x 2 tiles of F(4,3)).
        {"f4_7x7", {1, 64, 7, 7}, 64, {1, 1, 1, 1}, 4, 16, 16},
    };
}

Conv2DWinogradAttrs conv_attrs(const WinogradCase& c) {
    Conv2DWinogradAttrs a;
    a.padding = c.padding;
    a.tile_size = c.m;
    return a;
}

Conv2DWinogradWeightAttrs weight_attrs(const WinogradCase& c) {
    Conv2DWinogradWeightAttrs a;
    a.tile_size = c.m;
    a.out_block = c.ob;
    return a;
}

Conv2DAttrs plain_attrs(const WinogradCase& c) {
    Conv2DAttrs a;
    a.padding = c.padding;
    return a;
}

std::string blocked(int64_t b) {
    return "NCHW" + std::to_string(b) + "c";
}

NDArray absolute(const NDArray& a) {
    NDArray r = NDArray::empty({a.shape().begin(), a.shape().end()}, a.dtype());
    for (int64_t i = 0; i < a.num_elements(); ++i)
        r.data<float>()[i] = std::fabs(a.data<float>()[i]);
    return r;
}

// Runs the case's two ops (the convolution then `tail`) and returns the result in NCHW.
NDArray run_winograd(const WinogradCase& c, const NDArray& x, const NDArray& w, bool generic,
                     const std::vector<testing::TailOp>& tail = {}) {
    NDArray u = run_op("nn.winograd_weight_transform", weight_attrs(c), {w});
    NDArray xb = relayout(x, "NCHW", blocked(c.ib));
    NDArray yb = run_op("nn.conv2d_winograd_nchwc", conv_attrs(c), {xb, u}, tail,
                        generic ? ops::schedule_conv2d_winograd_generic : nullptr);
    return relayout(yb, blocked(c.ob), "NCHW");
}

class WinogradConv : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(WinogradConv, MatchesReference) {
    const WinogradCase c = winograd_cases()[std::get<0>(GetParam())];
    const bool generic = std::get<1>(GetParam());
    NDArray x = random_tensor(c.x, 11), w = random_tensor({c.out_channels, c.x[1], 3, 3}, 12);
    NDArray y = run_winograd(c, x, w, generic);
    std::vector<double> want = conv2d_reference(x, w, plain_attrs(c));
    std::vector<double> scale = conv2d_reference(absolute(x), absolute(w), plain_attrs(c));
    ASSERT_EQ(static_cast<size_t>(y.num_elements()), want.size()) << c.name;
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        double err = std::fabs(y.data<float>()[i] - want[i]);
        ASSERT_LE(err, error_bound(c.m) * scale[i])
            << c.name << " element " << i << ": " << y.data<float>()[i] << ", want " << want[i];
        if (scale[i] > 0) worst = std::max(worst, err / scale[i]);
    }
    std::printf("[ winograd ] %s%s: max |y - y_ref| / sum(|x||w|) = %.3g (bound %.0e)\n", c.name,
                generic ? " generic" : "", worst, error_bound(c.m));
}

INSTANTIATE_TEST_SUITE_P(Cases, WinogradConv,
                         ::testing::Combine(::testing::Range(0, int(winograd_cases().size())),
                                            ::testing::Bool()),
                         [](const auto& info) {
                             return std::string(winograd_cases()[std::get<0>(info.param)].name) +
                                    (std::get<1>(info.param) ? "_generic" : "_x86");
                         });

// The epilogue alter_op_layout leaves in the group: a bias in the output's blocks, then relu.
TEST(WinogradConv, FusedBiasRelu) {
    for (int index : {0, 4}) {
        const WinogradCase c = winograd_cases()[index];
        NDArray x = random_tensor(c.x, 21), w = random_tensor({c.out_channels, c.x[1], 3, 3}, 22);
        NDArray bias = random_tensor({1, c.out_channels, 1, 1}, 23);
        NDArray y = run_winograd(
            c, x, w, false, {{"add", {relayout(bias, "NCHW", blocked(c.ob))}}, {"nn.relu", {}}});
        std::vector<double> want = conv2d_reference(x, w, plain_attrs(c));
        int64_t plane = static_cast<int64_t>(want.size()) / c.x[0] / c.out_channels;
        for (size_t i = 0; i < want.size(); ++i) {
            int64_t channel = static_cast<int64_t>(i) / plane % c.out_channels;
            want[i] = std::max(0.0, want[i] + bias.data<float>()[channel]);
        }
        testing::expect_close(y, want, 1e-4, std::string(c.name) + "+add+relu");
    }
}

// Constant data: every output pixel sees the same window sums, so rows and columns at tile
// boundaries and past the padding cannot hide a wrong index.
TEST(WinogradConv, BordersOfOnes) {
    WinogradCase c{"ones", {1, 8, 10, 9}, 8, {1, 1, 1, 1}, 4, 8, 8};
    NDArray x = random_tensor(c.x, 31), w = random_tensor({8, 8, 3, 3}, 32);
    for (NDArray* a : {&x, &w}) {
        for (int64_t i = 0; i < a->num_elements(); ++i) a->data<float>()[i] = 1.0f;
    }
    NDArray y = run_winograd(c, x, w, false);
    testing::expect_close(y, conv2d_reference(x, w, plain_attrs(c)), 1e-5, "ones");
}

TEST(WinogradErrors, WeightTransform) {
    Conv2DWinogradWeightAttrs a;
    std::string e = testing::type_error("nn.winograd_weight_transform", a, {{16, 8, 5, 5}});
    EXPECT_NE(e.find("nn.winograd_weight_transform"), std::string::npos) << e;
    EXPECT_NE(e.find("3x3 kernel"), std::string::npos) << e;
    EXPECT_NE(e.find("(16, 8, 5, 5)"), std::string::npos) << e;
    a.out_block = 12;
    e = testing::type_error("nn.winograd_weight_transform", a, {{16, 8, 3, 3}});
    EXPECT_NE(e.find("out_block=12 must divide the 16 output channels"), std::string::npos) << e;
    a.out_block = 16;
    a.tile_size = 3;
    e = testing::type_error("nn.winograd_weight_transform", a, {{16, 8, 3, 3}});
    EXPECT_NE(e.find("tile_size must be 2"), std::string::npos) << e;
}

TEST(WinogradErrors, Convolution) {
    Conv2DWinogradAttrs a;  // F(4,3): alpha 6
    const char* op = "nn.conv2d_winograd_nchwc";
    a.strides = {2, 2};
    std::string e = testing::type_error(op, a, {{1, 2, 8, 8, 8}, {6, 6, 2, 16, 8}});
    EXPECT_NE(e.find(op), std::string::npos) << e;
    EXPECT_NE(e.find("strides [1, 1] only, got [2, 2]"), std::string::npos) << e;
    a.strides = {1, 1};
    a.dilation = {1, 2};
    e = testing::type_error(op, a, {{1, 2, 8, 8, 8}, {6, 6, 2, 16, 8}});
    EXPECT_NE(e.find("dilation [1, 1] only"), std::string::npos) << e;
    a.dilation = {1, 1};
    // A weight transformed for F(2,3) used with tile_size 4.
    e = testing::type_error(op, a, {{1, 2, 8, 8, 8}, {4, 4, 2, 16, 8}});
    EXPECT_NE(e.find("[6, 6, O/ob, C, ob] for tile_size=4"), std::string::npos) << e;
    // 24 input channels in the weight, 16 in the data.
    e = testing::type_error(op, a, {{1, 2, 8, 8, 8}, {6, 6, 2, 24, 8}});
    EXPECT_NE(e.find("reads 24 input channels"), std::string::npos) << e;
    // Unblocked data.
    e = testing::type_error(op, a, {{1, 16, 8, 8}, {6, 6, 2, 16, 8}});
    EXPECT_NE(e.find("must be NCHW<b>c"), std::string::npos) << e;
    // Smaller than the kernel.
    e = testing::type_error(op, a, {{1, 2, 2, 8, 8}, {6, 6, 2, 16, 8}});
    EXPECT_NE(e.find("smaller than the 3x3 kernel"), std::string::npos) << e;
}

// Prints (never asserts: timings depend on the machine) the time of F(2,3) and F(4,3) against
// nn.conv2d_nchwc with its default schedule at two ResNet-18 layers, NCHW16c, one call each
// after a warm-up, best of 5 interleaved rounds. bench/winograd_bench.cpp times all four 3x3
// layers.
TEST(WinogradConv, PrintsTimingAgainstDirect) {
    const int64_t b = 16;
    for (int64_t c : {64, 256}) {
        const int64_t hw = c == 64 ? 56 : 14;
        auto input = [&](const std::vector<int64_t>& shape, uint32_t seed) {
            return random_tensor(shape, seed);
        };
        ops::Conv2DNCHWcAttrs direct;
        direct.padding = {1, 1, 1, 1};
        NDArray x = input({1, c / b, hw, hw, b}, 41);
        std::vector<testing::OpKernel> kernels;
        kernels.push_back(testing::compile_op("nn.conv2d_nchwc", direct,
                                              {x, input({c / b, c / b, 3, 3, b, b}, 42)}));
        for (int64_t m : {2, 4}) {
            Conv2DWinogradAttrs a;
            a.padding = {1, 1, 1, 1};
            a.tile_size = m;
            kernels.push_back(testing::compile_op("nn.conv2d_winograd_nchwc", a,
                                                  {x, input({m + 2, m + 2, c / b, c, b}, 43)}));
        }
        std::vector<double> best(kernels.size(), 1e30);
        for (const auto& k : kernels) k.call();
        for (int r = 0; r < 5; ++r) {
            for (size_t k = 0; k < kernels.size(); ++k) {
                auto t0 = std::chrono::steady_clock::now();
                kernels[k].call();
                std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
                best[k] = std::min(best[k], d.count());
            }
        }
        const double flops = 2.0 * c * c * 9 * hw * hw;
        const char* names[] = {"conv2d_nchwc", "winograd F(2,3)", "winograd F(4,3)"};
        for (size_t k = 0; k < kernels.size(); ++k) {
            std::printf("[ winograd ] 3x3 %lld @%lld %-16s %8.3f ms %7.1f GFLOP/s-equiv %5.2fx\n",
                        static_cast<long long>(c), static_cast<long long>(hw), names[k],
                        best[k] * 1e3, flops / best[k] * 1e-9, best[k] / best[0]);
        }
    }
}

}  // namespace
}  // namespace anvil
