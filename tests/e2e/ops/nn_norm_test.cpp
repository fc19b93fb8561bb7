// nn.batch_norm, nn.layer_norm and nn.instance_norm against double-precision references at odd
// shapes, with large offsets (a one-pass variance would cancel), a fused tail and type errors.
#include "nn_op_runner.h"
#include "ops/norm.h"

namespace anvil {
namespace {

using ops::BatchNormAttrs;
using ops::InstanceNormAttrs;
using ops::LayerNormAttrs;
using runtime::NDArray;
using testing::random_tensor;
using testing::run_op;
using Shape = std::vector<int64_t>;

// Normalizes x over [first, ndim) per leading index; `param(i, flat_trailing)` gives gamma/beta.
std::vector<double> normalize_reference(
    const NDArray& x, size_t first, double eps,
    const std::function<double(int64_t, int64_t, int64_t)>& affine) {
    Shape s(x.shape().begin(), x.shape().end());
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < first; ++d) outer *= s[d];
    for (size_t d = first; d < s.size(); ++d) inner *= s[d];
    std::vector<double> out(x.num_elements());
    const float* p = x.data<float>();
    for (int64_t o = 0; o < outer; ++o) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < inner; ++i) mean += p[o * inner + i];
        mean /= double(inner);
        for (int64_t i = 0; i < inner; ++i) var += std::pow(p[o * inner + i] - mean, 2);
        var /= double(inner);
        for (int64_t i = 0; i < inner; ++i) {
            double v = (p[o * inner + i] - mean) / std::sqrt(var + eps);
            out[o * inner + i] = affine(o, i, 0) * v + affine(o, i, 1);
        }
    }
    return out;
}

NDArray offset(NDArray t, float by) {
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] += by;
    return t;
}

TEST(BatchNorm, AlongEachAxis) {
    auto x = random_tensor({2, 5, 3, 7}, 1);
    Shape dims{2, 5, 3, 7};
    for (int64_t axis : {1, -1, 0}) {
        int64_t ax = axis < 0 ? axis + 4 : axis, c = dims[ax];
        auto gamma = random_tensor({c}, 2), beta = random_tensor({c}, 3),
             mean = random_tensor({c}, 4), var = random_tensor({c}, 5, 0.1f, 2.0f);
        BatchNormAttrs a;
        a.axis = axis;
        a.epsilon = 1e-3;
        NDArray y = run_op("nn.batch_norm", a, {x, gamma, beta, mean, var});
        std::vector<double> want(x.num_elements());
        for (int64_t i = 0; i < x.num_elements(); ++i) {
            int64_t r = i, ch = 0;
            for (int d = 3; d >= 0; --d) {
                if (d == ax) ch = r % dims[d];
                r /= dims[d];
            }
            double g = gamma.data<float>()[ch], b = beta.data<float>()[ch];
            double m = mean.data<float>()[ch], v = var.data<float>()[ch];
            want[i] = (x.data<float>()[i] - m) / std::sqrt(v + 1e-3) * g + b;
        }
        testing::expect_close(y, want, 1e-5, "batch_norm axis " + std::to_string(axis));
    }
}

TEST(BatchNorm, FusesAsATail) {
    auto x = random_tensor({1, 4, 5, 6}, 6);
    auto gamma = random_tensor({4}, 7), beta = random_tensor({4}, 8), mean = random_tensor({4}, 9),
         var = random_tensor({4}, 10, 0.5f, 1.5f);
    BatchNormAttrs a;
    NDArray y = run_op("nn.batch_norm", a, {x, gamma, beta, mean, var}, {{"nn.relu", {}}});
    std::vector<double> want(x.num_elements());
    for (int64_t i = 0; i < x.num_elements(); ++i) {
        int64_t c = (i / 30) % 4;
        want[i] =
            std::max(0.0, (x.data<float>()[i] - mean.data<float>()[c]) /
                                  std::sqrt(var.data<float>()[c] + 1e-5) * gamma.data<float>()[c] +
                              beta.data<float>()[c]);
    }
    testing::expect_close(y, want, 1e-5, "batch_norm+relu");
}

struct LayerNormCase {
    Shape x;
    int64_t axis;
    Shape gamma;  // empty: no beta either... see `with_beta`
    bool with_beta;
};

TEST(LayerNorm, AxesAndBroadcastParameters) {
    std::vector<LayerNormCase> cases = {
        {{3, 37}, -1, {37}, true},
        {{2, 5, 19}, -1, {19}, false},
        {{2, 5, 19}, 1, {5, 19}, true},
        {{2, 5, 19}, 1, {19}, true},  // gamma broadcast over axis 1
        {{2, 3, 4, 5}, -2, {1, 5}, true},
        {{7}, 0, {7}, true},
    };
    for (const auto& c : cases) {
        auto x = offset(random_tensor(c.x, 11), 100.0f);  // a large mean
        auto gamma = random_tensor(c.gamma, 12), beta = random_tensor(c.gamma, 13);
        size_t first = size_t(c.axis < 0 ? c.axis + int64_t(c.x.size()) : c.axis);
        int64_t inner = 1;
        for (size_t d = first; d < c.x.size(); ++d) inner *= c.x[d];
        int64_t plen = gamma.num_elements();
        auto want = normalize_reference(x, first, 1e-5, [&](int64_t, int64_t i, int64_t which) {
            // right-aligned broadcast of a parameter of plen elements (trailing dims equal,
            // leading size-1 dims): index by the last plen positions, or 0 for a [1, n] form.
            int64_t j = i % plen;
            if (which == 0) return double(gamma.data<float>()[j]);
            return c.with_beta ? double(beta.data<float>()[j]) : 0.0;
        });
        LayerNormAttrs a;
        a.axis = c.axis;
        for (bool generic : {false, true}) {
            std::vector<NDArray> in{x, gamma};
            if (c.with_beta) in.push_back(beta);
            NDArray y =
                run_op("nn.layer_norm", a, in, {}, generic ? ops::schedule_norm_generic : nullptr);
            testing::expect_close(y, want, 2e-4,
                                  "layer_norm rank " + std::to_string(c.x.size()) + " axis " +
                                      std::to_string(c.axis) + (generic ? " generic" : " x86"));
        }
    }
}

TEST(InstanceNorm, SpatialAxes) {
    for (const auto& shape : {Shape{2, 3, 5, 7}, Shape{1, 4, 33}}) {
        auto x = offset(random_tensor(shape, 14), -500.0f);
        auto gamma = random_tensor({shape[1]}, 15), beta = random_tensor({shape[1]}, 16);
        InstanceNormAttrs a;
        a.epsilon = 1e-4;
        auto want = normalize_reference(x, 2, 1e-4, [&](int64_t o, int64_t, int64_t which) {
            int64_t c = o % shape[1];
            return double((which == 0 ? gamma : beta).data<float>()[c]);
        });
        for (bool generic : {false, true}) {
            NDArray y = run_op("nn.instance_norm", a, {x, gamma, beta}, {},
                               generic ? ops::schedule_norm_generic : nullptr);
            testing::expect_close(y, want, 2e-4,
                                  generic ? "instance_norm generic" : "instance_norm");
        }
    }
}

TEST(LayerNorm, FusedTail) {
    auto x = random_tensor({4, 48}, 17);
    auto gamma = random_tensor({48}, 18), beta = random_tensor({48}, 19);
    LayerNormAttrs a;
    NDArray y = run_op("nn.layer_norm", a, {x, gamma, beta}, {{"nn.relu", {}}});
    auto want = normalize_reference(x, 1, 1e-5, [&](int64_t, int64_t i, int64_t which) {
        return double((which == 0 ? gamma : beta).data<float>()[i]);
    });
    for (auto& v : want) v = std::max(0.0, v);
    testing::expect_close(y, want, 1e-4, "layer_norm+relu");
}

// nn.lrn against the ONNX formula, with even and odd window sizes (the window is not centred
// for even sizes) and a fused tail.
TEST(LRN, AcrossChannels) {
    NDArray x = random_tensor({2, 5, 3, 4}, 31, -2, 2);
    for (int64_t size : {1, 2, 3, 4}) {
        ops::LRNAttrs a;
        a.size = size;
        a.alpha = 0.5;
        a.beta = 0.8;
        a.bias = 1.5;
        NDArray y = run_op("nn.lrn", a, {x}, {{"nn.relu", {}}});
        Shape s{2, 5, 3, 4};
        const float* p = x.data<float>();
        for (int64_t i = 0; i < x.num_elements(); ++i) {
            int64_t c = (i / 12) % 5;
            double sq = 0;
            for (int64_t cc = c - (size - 1) / 2; cc <= c + size / 2; ++cc) {
                if (cc < 0 || cc >= 5) continue;
                double v = p[i + (cc - c) * 12];
                sq += v * v;
            }
            double ref = std::max(0.0, p[i] / std::pow(1.5 + 0.5 / double(size) * sq, 0.8));
            ASSERT_NEAR(y.data<float>()[i], ref, 1e-5 * std::max(1.0, std::abs(ref)))
                << "size " << size << " element " << i;
        }
    }
}

TEST(NormErrors, TypeRulesNameTheOpAndTheProblem) {
    BatchNormAttrs bn;
    std::string e = testing::type_error("nn.batch_norm", bn, {{1, 4, 5, 5}, {4}, {4}, {3}, {4}});
    EXPECT_NE(e.find("node 'node_7'"), std::string::npos) << e;
    EXPECT_NE(e.find("nn.batch_norm: moving_mean is Tensor[(3,), float32]; it must be 1-D with "
                     "the Tensor[(1, 4, 5, 5), float32] data's axis-1 length"),
              std::string::npos)
        << e;
    bn.axis = 4;
    e = testing::type_error("nn.batch_norm", bn, {{1, 4, 5, 5}, {4}, {4}, {4}, {4}});
    EXPECT_NE(e.find("nn.batch_norm: axis 4 is out of range for a 4-D input"), std::string::npos)
        << e;
    LayerNormAttrs ln;
    e = testing::type_error("nn.layer_norm", ln, {{2, 5, 19}, {5}});
    EXPECT_NE(e.find("nn.layer_norm: gamma Tensor[(5,), float32] does not broadcast to the "
                     "normalized axes 2.. of Tensor[(2, 5, 19), float32]"),
              std::string::npos)
        << e;
    e = testing::type_error("nn.layer_norm", ln, {{2, 5, 19}});
    EXPECT_NE(e.find("nn.layer_norm takes (data, gamma) or (data, gamma, beta), got 1 inputs"),
              std::string::npos)
        << e;
    InstanceNormAttrs in;
    e = testing::type_error("nn.instance_norm", in, {{2, 5}, {5}, {5}});
    EXPECT_NE(e.find("nn.instance_norm: the data must be [N, C, spatial...]"), std::string::npos)
        << e;
    ops::LRNAttrs lrn;
    e = testing::type_error("nn.lrn", lrn, {{2, 5}});
    EXPECT_NE(e.find("node 'node_7'"), std::string::npos) << e;
    EXPECT_NE(e.find("nn.lrn needs data of rank 3 or more [N, C, ...]"), std::string::npos) << e;
    lrn.size = 0;
    e = testing::type_error("nn.lrn", lrn, {{2, 5, 3}});
    EXPECT_NE(e.find("nn.lrn: size must be positive, got 0"), std::string::npos) << e;
}

}  // namespace
}  // namespace anvil
