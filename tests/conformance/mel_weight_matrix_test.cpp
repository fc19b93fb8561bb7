// MelWeightMatrix with every input known only at run time: the suite's model compiled once and
// run with other sizes, rates and edges than its test, against a direct evaluation of ONNX's
// reference (float32 edge mels, float64 triangles).
#include <gtest/gtest.h>

#include <cmath>

#include "conformance/node_model.h"

namespace anvil {
namespace {

using runtime::NDArray;
using testing::array;
using testing::CompiledNodeModel;
using testing::shape_of;

using MelWeightMatrix = testing::NodeModelTest;

std::vector<float> reference(int m, int dft, int rate, float low_hz, float high_hz) {
    int rows = dft / 2 + 1;
    float low = 2595.0f * std::log10(1.0f + low_hz / 700.0f);
    float high = 2595.0f * std::log10(1.0f + high_hz / 700.0f);
    double step = (static_cast<double>(high) - low) / (m + 2);
    std::vector<int64_t> b;
    for (int k = 0; k < m + 2; ++k) {
        double hz = 700.0 * (std::pow(10.0, (k * step + low) / 2595.0) - 1.0);
        b.push_back(static_cast<int64_t>(std::floor((dft + 1) * hz / rate)));
    }
    std::vector<float> out(static_cast<size_t>(rows * m), 0.0f);
    auto at = [&](int64_t j, int i) -> float& { return out[static_cast<size_t>(j * m + i)]; };
    for (int i = 0; i < m; ++i) {
        int64_t l = b[i], c = b[i + 1], h = b[i + 2];
        if (c == l) {
            at(c, i) = 1;
        } else {
            for (int64_t j = l; j <= c; ++j) at(j, i) = static_cast<float>(double(j - l) / (c - l));
        }
        for (int64_t j = c; j < h; ++j) at(j, i) = static_cast<float>(double(h - j) / (h - c));
    }
    return out;
}

TEST_F(MelWeightMatrix, OtherSizesRatesAndEdgesAtRunTime) {
    CompiledNodeModel model("test_melweightmatrix");
    struct Case {
        int m, dft, rate;
        float low, high;
    };
    for (const Case& c : std::vector<Case>{{8, 16, 8192, 0, 4096},
                                           {5, 64, 16000, 100, 7000},
                                           {12, 256, 22050, 20, 11025},
                                           {1, 8, 8000, 0, 4000}}) {
        NDArray y =
            model.run({array<int32_t>({}, {c.m}, "int32"), array<int32_t>({}, {c.dft}, "int32"),
                       array<int32_t>({}, {c.rate}, "int32"), array<float>({}, {c.low}, "float32"),
                       array<float>({}, {c.high}, "float32")})[0];
        EXPECT_EQ(shape_of(y), (std::vector<int64_t>{c.dft / 2 + 1, c.m}));
        std::vector<float> got = y.to_vector<float>(),
                           want = reference(c.m, c.dft, c.rate, c.low, c.high);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) {
            EXPECT_NEAR(got[i], want[i], 1e-6) << "element " << i << " of case m=" << c.m;
        }
    }
}

}  // namespace
}  // namespace anvil
