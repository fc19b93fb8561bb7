// Activations (ops/activation.cpp) against the C++ standard library, at an odd size that
// exercises the vector loop and its tail, including the special points and large magnitudes;
// plus type-rule errors.
#include "ops/activation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "op_runner.h"

namespace anvil::op_testing {
namespace {

using ops::ClipAttrs;

void check_activation(const std::string& op, Ref<graph::Attrs> attrs,
                      const std::function<double(double)>& reference, float lo = -6, float hi = 6,
                      float tolerance = 2e-6f) {
    constexpr int64_t n = 1003;
    auto x = random_tensor({n}, 100, lo, hi);
    float* p = x.data<float>();
    p[0] = 0.0f;
    p[1] = lo;
    p[2] = hi;
    p[3] = -30.0f;  // far tails: no overflow in the branch not taken
    p[4] = 30.0f;
    auto r = run_op(op, {x}, attrs);
    std::vector<float> expected;
    for (int64_t i = 0; i < n; ++i) expected.push_back(static_cast<float>(reference(p[i])));
    expect_close(r.outputs[0], expected, tolerance, tolerance, op);
}

double softplus(double x) {
    return std::log1p(std::exp(-std::abs(x))) + std::max(x, 0.0);
}

TEST(Activation, ClipIsRelu6) {
    check_activation(
        "clip", make_attrs<ClipAttrs>([](auto& a) {
            a.a_min = 0;
            a.a_max = 6;
        }),
        [](double x) { return std::min(std::max(x, 0.0), 6.0); }, -10, 10, 0);
    check_activation(
        "clip", make_attrs<ClipAttrs>([](auto& a) { a.a_max = 1.5; }),
        [](double x) { return std::min(x, 1.5); }, -10, 10, 0);
}

TEST(Activation, ClipOfIntegers) {
    auto x = tensor_from<int32_t>({6}, {-300, -5, 0, 7, 200, 1 << 30}, "int32");
    auto r = run_op("clip", {x}, make_attrs<ClipAttrs>([](auto& a) {
                        a.a_min = -10;
                        a.a_max = 1e12;  // beyond int32: no upper bound
                    }));
    std::vector<int32_t> expected = {-10, -5, 0, 7, 200, 1 << 30};
    for (int i = 0; i < 6; ++i) EXPECT_EQ(r.outputs[0].data<int32_t>()[i], expected[i]);
}

TEST(Activation, LeakyReluEluSelu) {
    check_activation("nn.leaky_relu",
                     make_attrs<ops::LeakyReluAttrs>([](auto& a) { a.alpha = 0.1; }),
                     [](double x) { return x > 0 ? x : 0.1 * x; });
    check_activation("nn.elu", make_attrs<ops::EluAttrs>([](auto& a) { a.alpha = 0.7; }),
                     [](double x) { return x > 0 ? x : 0.7 * std::expm1(x); });
    ops::SeluAttrs selu;
    check_activation("nn.selu", nullptr, [&](double x) {
        return selu.gamma * (x > 0 ? x : selu.alpha * std::expm1(x));
    });
}

TEST(Activation, GeluExactAndTanh) {
    check_activation("nn.gelu", nullptr,
                     [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
    check_activation("nn.gelu", make_attrs<ops::GeluAttrs>([](auto& a) { a.approximate = "tanh"; }),
                     [](double x) {
                         double k = std::sqrt(2 / M_PI);
                         return 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)));
                     });
}

TEST(Activation, HardFunctions) {
    check_activation("nn.hardswish", nullptr,
                     [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); });
    check_activation("nn.hardsigmoid", nullptr,
                     [](double x) { return std::max(0.0, std::min(1.0, 0.2 * x + 0.5)); });
    check_activation("nn.hardsigmoid", make_attrs<ops::HardSigmoidAttrs>([](auto& a) {
                         a.alpha = 1.0 / 6;
                         a.beta = 0.5;
                     }),
                     [](double x) { return std::max(0.0, std::min(1.0, x / 6 + 0.5)); });
}

TEST(Activation, Softplus) {
    check_activation("nn.softplus", nullptr, softplus, -20, 20);
}

TEST(Activation, Mish) {
    check_activation(
        "nn.mish", nullptr, [](double x) { return x * std::tanh(softplus(x)); }, -20, 20);
}

TEST(Activation, PReluPerChannelAndBroadcast) {
    auto x = random_tensor({2, 3, 5, 7}, 110);
    auto slope = random_tensor({3}, 111);
    auto r = run_op("nn.prelu", {x, slope});  // axis 1
    std::vector<float> expected(x.num_elements());
    for_each_index({2, 3, 5, 7}, [&](const Shape& i) {
        float v = x.data<float>()[offset_of(i, {2, 3, 5, 7})];
        expected[offset_of(i, {2, 3, 5, 7})] = v > 0 ? v : v * slope.data<float>()[i[1]];
    });
    expect_close(r.outputs[0], expected, 0, 0, "per channel");
    // ONNX PRelu from PyTorch: slope (C, 1, 1), numpy-broadcast.
    auto slope3 = random_tensor({3, 1, 1}, 112);
    r = run_op("nn.prelu", {x, slope3});
    expect_close(r.outputs[0], expected, 1, 2, "broadcast shape check only");
    for_each_index({2, 3, 5, 7}, [&](const Shape& i) {
        float v = x.data<float>()[offset_of(i, {2, 3, 5, 7})];
        expected[offset_of(i, {2, 3, 5, 7})] = v > 0 ? v : v * slope3.data<float>()[i[1]];
    });
    expect_close(r.outputs[0], expected, 0, 0, "broadcast");
    auto bad = random_tensor({4}, 113);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("nn.prelu", {x, bad}, nullptr);
                       }),
                       "nn.prelu", "the slope has 4 elements", "axis 1", "has 3");
}

TEST(Activation, Errors) {
    auto i = tensor_of({3}, "int32");
    EXPECT_MESSAGE_HAS(user_error_of([&] { infer_op_type("nn.gelu", {i}, nullptr); }),
                       "node 'node_0'", "nn.gelu", "floating-point", "int32");
    auto x = random_tensor({3}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("clip", {x}, make_attrs<ClipAttrs>([](auto& a) {
                                             a.a_min = 2;
                                             a.a_max = 1;
                                         }));
                       }),
                       "clip", "a_min 2 is not <= a_max 1");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("nn.gelu", {x}, make_attrs<ops::GeluAttrs>([](auto& a) {
                                             a.approximate = "fast";
                                         }));
                       }),
                       "nn.gelu", "\"fast\"");
}

}  // namespace
}  // namespace anvil::op_testing
