// nn.softmax and nn.log_softmax on every axis of odd shapes against a double-precision
// reference, with large inputs that overflow exp without the max subtraction, a fused tail and
// the type errors.
#include <cmath>
#include <limits>

#include "nn_op_runner.h"
#include "ops/softmax.h"

namespace anvil {
namespace {

using ops::SoftmaxAttrs;
using runtime::NDArray;
using testing::random_tensor;
using testing::run_op;

std::vector<double> softmax_reference(const NDArray& x, int64_t axis, bool log) {
    std::vector<int64_t> s(x.shape().begin(), x.shape().end());
    int64_t ax = axis < 0 ? axis + int64_t(s.size()) : axis;
    int64_t outer = 1, inner = 1, n = s[ax];
    for (int64_t d = 0; d < ax; ++d) outer *= s[d];
    for (size_t d = ax + 1; d < s.size(); ++d) inner *= s[d];
    std::vector<double> out(x.num_elements());
    const float* p = x.data<float>();
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            auto at = [&](int64_t k) { return (o * n + k) * inner + i; };
            double mx = -1e300, sum = 0;
            for (int64_t k = 0; k < n; ++k) mx = std::max(mx, double(p[at(k)]));
            for (int64_t k = 0; k < n; ++k) sum += std::exp(p[at(k)] - mx);
            for (int64_t k = 0; k < n; ++k) {
                out[at(k)] = log ? p[at(k)] - mx - std::log(sum) : std::exp(p[at(k)] - mx) / sum;
            }
        }
    return out;
}

TEST(Softmax, EveryAxisOfOddShapes) {
    for (const auto& shape : {std::vector<int64_t>{2, 3, 5, 7}, {37}, {3, 35}, {4, 19, 33}}) {
        // Values up to 100: exp would overflow float32 without subtracting the maximum.
        auto x = random_tensor(shape, 1, -100.0f, 100.0f);
        for (int64_t axis = -1; axis < int64_t(shape.size()); ++axis) {
            for (bool log : {false, true}) {
                for (bool generic : {false, true}) {
                    SoftmaxAttrs a;
                    a.axis = axis;
                    NDArray y = run_op(log ? "nn.log_softmax" : "nn.softmax", a, {x}, {},
                                       generic ? ops::schedule_softmax_generic : nullptr);
                    testing::expect_close(y, softmax_reference(x, axis, log), 1e-5,
                                          std::string(log ? "log_softmax" : "softmax") + " rank " +
                                              std::to_string(shape.size()) + " axis " +
                                              std::to_string(axis) +
                                              (generic ? " generic" : " x86"));
                }
            }
        }
    }
}

// Attention's rows: 197 scores (vector partial max and sum, with a tail of 5), a third of them
// masked to -inf (exp gives exactly 0 there).
TEST(Softmax, LongMaskedRows) {
    auto x = random_tensor({3, 7, 197}, 4, -30.0f, 30.0f);
    float* p = x.data<float>();
    for (int64_t i = 0; i < x.num_elements(); ++i) {
        if (i % 3 == 1) p[i] = -std::numeric_limits<float>::infinity();
    }
    for (bool log : {false, true}) {
        SoftmaxAttrs a;
        NDArray y = run_op(log ? "nn.log_softmax" : "nn.softmax", a, {x});
        auto want = softmax_reference(x, -1, log);
        if (!log) {
            testing::expect_close(y, want, 1e-5, "masked softmax");
            continue;
        }
        // log_softmax of a masked score is -inf itself.
        for (int64_t i = 0; i < x.num_elements(); ++i) {
            if (i % 3 == 1) {
                EXPECT_EQ(y.data<float>()[i], -std::numeric_limits<float>::infinity()) << i;
            } else {
                EXPECT_NEAR(y.data<float>()[i], want[i], 1e-4 * std::max(1.0, std::fabs(want[i])))
                    << i;
            }
        }
    }
}

TEST(Softmax, FusedTail) {
    auto x = random_tensor({3, 40}, 2, -5.0f, 5.0f);
    auto scale = random_tensor({40}, 3);
    SoftmaxAttrs a;
    NDArray y = run_op("nn.softmax", a, {x}, {{"multiply", {scale}}});
    auto want = softmax_reference(x, -1, false);
    for (size_t i = 0; i < want.size(); ++i) want[i] *= scale.data<float>()[i % 40];
    testing::expect_close(y, want, 1e-5, "softmax * scale");
}

TEST(SoftmaxErrors, TypeRulesNameTheOpAndTheProblem) {
    SoftmaxAttrs a;
    a.axis = 2;
    std::string e = testing::type_error("nn.softmax", a, {{3, 4}});
    EXPECT_NE(e.find("node 'node_7'"), std::string::npos) << e;
    EXPECT_NE(e.find("nn.softmax: axis 2 is out of range for a 2-D input"), std::string::npos) << e;
    a.axis = -3;
    e = testing::type_error("nn.log_softmax", a, {{3, 4}});
    EXPECT_NE(e.find("nn.log_softmax: axis -3 is out of range"), std::string::npos) << e;
}

}  // namespace
}  // namespace anvil
