// Gradient (ai.onnx.preview.training) beyond the suite's scalar Add/Mul cases: broadcasting,
// every unary rule, a value used twice, an x that y does not depend on, and the error for an op
// without a gradient rule.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "conformance/node_model.h"
#include "driver/evaluate.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::ModelBuilder;
using testing::array;

// Inputs x [2, 3], w [3], u [3]; `forward` adds the nodes computing "y"; then the gradients of
// y with respect to x, w and u.
ModelBuilder gradient_model(const std::function<void(ModelBuilder&)>& forward) {
    ModelBuilder b(13);
    auto* o = b.model.add_opset_import();
    o->set_domain("ai.onnx.preview.training");
    o->set_version(1);
    b.input("x", {2, 3}).input("w", {3}).input("u", {3});
    forward(b);
    auto* g = b.node("Gradient", {"x", "w", "u"}, {"dx", "dw", "du"}, "grad");
    g->set_domain("ai.onnx.preview.training");
    auto* xs = g->add_attribute();
    xs->set_name("xs");
    xs->set_type(::onnx::AttributeProto::STRINGS);
    for (const char* n : {"x", "w", "u"}) xs->add_strings(n);
    ModelBuilder::attr_string(g, "y", "y");
    b.output("dx").output("dw").output("du");
    return b;
}

// y = relu(x) * w + exp(x) / w - sqrt(w), w broadcast over the rows of x.
TEST(Gradient, BroadcastingAndUnaryRules) {
    ModelBuilder b = gradient_model([](ModelBuilder& f) {
        f.node("Relu", {"x"}, {"r"});
        f.node("Mul", {"r", "w"}, {"rw"});
        f.node("Exp", {"x"}, {"e"});
        f.node("Div", {"e", "w"}, {"ew"});
        f.node("Add", {"rw", "ew"}, {"s"});
        f.node("Sqrt", {"w"}, {"q"});
        f.node("Sub", {"s", "q"}, {"y"});
    });
    driver::CompiledModel m = driver::compile_model(b.import(), "llvm");
    std::vector<float> x = {-1.0f, 0.5f, 2.0f, 1.5f, -0.25f, 0.75f}, w = {0.5f, 2.0f, 4.0f};
    std::vector<float> u = {1, 2, 3};
    auto out =
        driver::run_in_process(m.module, m.kernels,
                               {array<float>({2, 3}, x, "float32"), array<float>({3}, w, "float32"),
                                array<float>({3}, u, "float32")});
    std::vector<float> dx = out[0].to_vector<float>(), dw = out[1].to_vector<float>();
    for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 3; ++j) {
            float xv = x[i * 3 + j];
            float want = (xv > 0 ? w[j] : 0.0f) + std::exp(xv) / w[j];
            EXPECT_NEAR(dx[i * 3 + j], want, 1e-5f) << i << "," << j;
        }
    }
    for (int j = 0; j < 3; ++j) {
        float want = 0;
        for (int i = 0; i < 2; ++i) {
            float xv = x[i * 3 + j];
            want += std::max(xv, 0.0f) - std::exp(xv) / (w[j] * w[j]) - 0.5f / std::sqrt(w[j]);
        }
        EXPECT_NEAR(dw[j], want, 1e-4f) << j;
    }
    EXPECT_EQ(out[2].to_vector<float>(), (std::vector<float>{0, 0, 0}));  // y ignores u
}

// y = -tanh(x) + sigmoid(x) * log(w): the remaining unary rules.
TEST(Gradient, TanhSigmoidLogNegRules) {
    ModelBuilder b = gradient_model([](ModelBuilder& f) {
        f.node("Tanh", {"x"}, {"t"});
        f.node("Neg", {"t"}, {"nt"});
        f.node("Sigmoid", {"x"}, {"s"});
        f.node("Log", {"w"}, {"l"});
        f.node("Mul", {"s", "l"}, {"sl"});
        f.node("Add", {"nt", "sl"}, {"y"});
    });
    driver::CompiledModel m = driver::compile_model(b.import(), "llvm");
    std::vector<float> x = {-1.0f, 0.5f, 2.0f, 1.5f, -0.25f, 0.75f}, w = {0.5f, 2.0f, 4.0f};
    auto out =
        driver::run_in_process(m.module, m.kernels,
                               {array<float>({2, 3}, x, "float32"), array<float>({3}, w, "float32"),
                                array<float>({3}, {1, 2, 3}, "float32")});
    std::vector<float> dx = out[0].to_vector<float>(), dw = out[1].to_vector<float>();
    for (int j = 0; j < 3; ++j) {
        float want_w = 0;
        for (int i = 0; i < 2; ++i) {
            float xv = x[i * 3 + j], t = std::tanh(xv), sg = 1 / (1 + std::exp(-xv));
            EXPECT_NEAR(dx[i * 3 + j], -(1 - t * t) + sg * (1 - sg) * std::log(w[j]), 1e-5f);
            want_w += sg / w[j];
        }
        EXPECT_NEAR(dw[j], want_w, 1e-5f) << j;
    }
}

TEST(Gradient, AnOpWithoutARuleIsNamed) {
    ModelBuilder b =
        gradient_model([](ModelBuilder& f) { f.node("Floor", {"x"}, {"y"}, "rounding"); });
    std::string message;
    try {
        driver::compile_model(b.import(), "llvm");
    } catch (const UserError& e) {
        message = e.what();
    }
    EXPECT_NE(message.find("node 'grad' (Gradient"), std::string::npos) << message;
    EXPECT_NE(message.find("floor (node 'rounding'), which has no gradient rule"),
              std::string::npos)
        << message;
}

}  // namespace
}  // namespace anvil
