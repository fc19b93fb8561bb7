// Det beyond the suite's two 2x2 cases: 1x1 to 6x6 matrices in batches of any rank against the
// Leibniz sum over permutations (in double), a 12x12 batch against double-precision elimination,
// float64, singular matrices (exactly 0, never NaN), rows that need swapping, and the errors for
// matrices that are not square or not floating-point.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "conformance/node_model.h"
#include "driver/evaluate.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::contains;
using frontend::testing::ModelBuilder;
using frontend::testing::user_error_of;
using testing::array;

// det(m) of the n x n row-major m as the sum over permutations of signed products.
double leibniz(const double* m, int64_t n) {
    std::vector<int64_t> perm(static_cast<size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    double total = 0;
    do {
        int64_t inversions = 0;
        for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = i + 1; j < n; ++j) inversions += perm[i] > perm[j];
        }
        double product = inversions % 2 ? -1.0 : 1.0;
        for (int64_t i = 0; i < n; ++i) product *= m[i * n + perm[i]];
        total += product;
    } while (std::next_permutation(perm.begin(), perm.end()));
    return total;
}

// The same by elimination with partial pivoting in double, for matrices too large for leibniz.
double eliminate(std::vector<double> m, int64_t n) {
    double det = 1;
    for (int64_t p = 0; p < n; ++p) {
        int64_t best = p;
        for (int64_t i = p + 1; i < n; ++i) {
            if (std::abs(m[i * n + p]) > std::abs(m[best * n + p])) best = i;
        }
        if (m[best * n + p] == 0) return 0;
        if (best != p) {
            for (int64_t j = 0; j < n; ++j) std::swap(m[p * n + j], m[best * n + j]);
            det = -det;
        }
        det *= m[p * n + p];
        for (int64_t i = p + 1; i < n; ++i) {
            double f = m[i * n + p] / m[p * n + p];
            for (int64_t j = p; j < n; ++j) m[i * n + j] -= f * m[p * n + j];
        }
    }
    return det;
}

ModelBuilder det_model(const std::vector<int64_t>& shape, int elem_type) {
    ModelBuilder b(11);
    b.input("x", shape, elem_type);
    b.node("Det", {"x"}, {"y"}, "det");
    b.output("y");
    return b;
}

std::vector<double> random_values(size_t count, uint32_t seed) {
    std::vector<double> v(count);
    for (auto& x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = static_cast<double>(seed >> 8) / static_cast<double>(1u << 23) - 1.0;  // [-1, 1)
    }
    return v;
}

// Runs Det on `values` (shape [..., n, n]) as `dtype`; returns the determinants as doubles.
std::vector<double> run_det(const std::vector<int64_t>& shape, const std::vector<double>& values,
                            bool float64) {
    driver::CompiledModel m = driver::compile_model(
        det_model(shape, float64 ? ::onnx::TensorProto::DOUBLE : ::onnx::TensorProto::FLOAT)
            .import(),
        "llvm");
    runtime::NDArray x =
        float64 ? array<double>(shape, values, "float64")
                : array<float>(shape, std::vector<float>(values.begin(), values.end()), "float32");
    runtime::NDArray y = driver::run_in_process(m.module, m.kernels, {x})[0];
    std::vector<int64_t> batch(shape.begin(), shape.end() - 2);
    EXPECT_EQ(testing::shape_of(y), batch);
    if (float64) return y.to_vector<double>();
    std::vector<float> f = y.to_vector<float>();
    return {f.begin(), f.end()};
}

TEST(Det, SmallMatricesInBatchesOfAnyRank) {
    struct Case {
        std::vector<int64_t> shape;
        bool float64;
    };
    std::vector<Case> cases = {{{1, 1}, false},   {{3, 3}, false},       {{4, 2, 4, 4}, false},
                               {{2, 5, 5}, true}, {{2, 1, 6, 6}, false}, {{3, 2, 2}, true}};
    uint32_t seed = 3;
    for (const auto& c : cases) {
        int64_t n = c.shape.back(), count = 1;
        for (int64_t d : c.shape) count *= d;
        std::vector<double> x = random_values(static_cast<size_t>(count), seed++);
        if (!c.float64) {  // the reference sees the values the model does
            for (auto& v : x) v = static_cast<float>(v);
        }
        std::vector<double> got = run_det(c.shape, x, c.float64);
        ASSERT_EQ(static_cast<int64_t>(got.size()), count / (n * n));
        for (size_t b = 0; b < got.size(); ++b) {
            double want = leibniz(&x[b * n * n], n);
            double tol = (c.float64 ? 1e-12 : 1e-5) * std::max(1.0, std::abs(want));
            EXPECT_NEAR(got[b], want, tol)
                << "shape " << c.shape.size() << "-D, n " << n << ", matrix " << b;
        }
    }
}

TEST(Det, LargerMatrices) {
    const int64_t n = 12, batch = 3;
    std::vector<double> x = random_values(static_cast<size_t>(batch * n * n), 77);
    std::vector<double> got = run_det({batch, n, n}, x, true);
    for (int64_t b = 0; b < batch; ++b) {
        std::vector<double> m(x.begin() + b * n * n, x.begin() + (b + 1) * n * n);
        double want = eliminate(m, n);
        EXPECT_NEAR(got[b], want, 1e-12 * std::max(1.0, std::abs(want))) << "matrix " << b;
    }
}

TEST(Det, SingularMatricesGiveZeroAndPivotingSwapsRows) {
    std::vector<double> x = {
        // two equal rows
        1, 2, 3, 4, 5, 6, 1, 2, 3,
        // a zero column
        0, 1, 2, 0, 3, 4, 0, 5, 6,
        // all zero
        0, 0, 0, 0, 0, 0, 0, 0, 0,
        // zero diagonals: 2 times an even, then an odd permutation matrix (rows must swap)
        0, 2, 0, 0, 0, 2, 2, 0, 0, 0, 2, 0, 2, 0, 0, 0, 0, 2,
        // rank 2 with a zero pivot left after elimination
        1, 2, 3, 2, 4, 7, 3, 6, 10};
    std::vector<double> got = run_det({6, 3, 3}, x, false);
    std::vector<double> want = {0, 0, 0, 8, -8, 0};
    ASSERT_EQ(got.size(), want.size());
    for (size_t b = 0; b < want.size(); ++b) {
        EXPECT_FALSE(std::isnan(got[b])) << "matrix " << b;
        EXPECT_NEAR(got[b], want[b], 1e-5) << "matrix " << b;
    }
}

TEST(Det, ErrorsNameTheNode) {
    std::string e = user_error_of([] {
        det_model({2, 3, 4}, ::onnx::TensorProto::FLOAT).import();
    });
    EXPECT_TRUE(contains(e, "node 'det' (Det, opset 11)")) << e;
    EXPECT_TRUE(contains(e,
                         "the input must be square matrices [..., n, n], got "
                         "Tensor[(2, 3, 4), float32]"))
        << e;
    e = user_error_of([] { det_model({3}, ::onnx::TensorProto::FLOAT).import(); });
    EXPECT_TRUE(contains(e, "the input must be square matrices")) << e;
    e = user_error_of([] { det_model({2, 2}, ::onnx::TensorProto::INT32).import(); });
    EXPECT_TRUE(contains(e,
                         "node 'det' (Det, opset 11): the input must be floating-point, got "
                         "int32"))
        << e;
}

}  // namespace
}  // namespace anvil
