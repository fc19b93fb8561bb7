// Resize's tf_crop_and_resize mode with regions of interest known only at run time, against a
// direct evaluation of ONNX's formula: crops inside the input, regions reaching outside it
// (extrapolation_value there), one-element outputs (the region's middle), and a region that
// resamples the batch and channel axes too.
#include <gtest/gtest.h>

#include <cmath>

#include "conformance/node_model.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::ModelBuilder;
using runtime::NDArray;
using testing::array;
using testing::CompiledNodeModel;

// ONNX's tf_crop_and_resize with linear or nearest (round_prefer_floor) sampling.
std::vector<float> reference(const std::vector<float>& x, const std::vector<int64_t>& in,
                             const std::vector<int64_t>& out, const std::vector<float>& roi,
                             bool linear, float extrapolation) {
    std::vector<float> y;
    std::vector<int64_t> o(4, 0);
    for (o[0] = 0; o[0] < out[0]; ++o[0]) {
        for (o[1] = 0; o[1] < out[1]; ++o[1]) {
            for (o[2] = 0; o[2] < out[2]; ++o[2]) {
                for (o[3] = 0; o[3] < out[3]; ++o[3]) {
                    float c[4];
                    bool outside = false;
                    for (int d = 0; d < 4; ++d) {
                        float s = roi[d], e = roi[d + 4], span = static_cast<float>(in[d] - 1);
                        c[d] = out[d] > 1 ? s * span + static_cast<float>(o[d]) * (e - s) * span /
                                                           static_cast<float>(out[d] - 1)
                                          : 0.5f * (s + e) * span;
                        outside = outside || c[d] < 0 || c[d] > span;
                    }
                    if (outside) {
                        y.push_back(extrapolation);
                        continue;
                    }
                    double sum = 0;
                    for (int corner = 0; corner < 16; ++corner) {
                        double w = 1;
                        int64_t flat = 0;
                        for (int d = 0; d < 4; ++d) {
                            auto lo = static_cast<int64_t>(std::floor(c[d]));
                            int64_t idx;
                            if (linear) {
                                bool up = corner >> d & 1;
                                idx = std::min(lo + (up ? 1 : 0), in[d] - 1);
                                double t = c[d] - static_cast<double>(lo);
                                w *= up ? t : 1 - t;
                            } else {
                                if (corner != 0) w = 0;
                                idx = static_cast<int64_t>(std::ceil(c[d] - 0.5f));
                            }
                            flat = flat * in[d] + idx;
                        }
                        if (w != 0) sum += w * x[static_cast<size_t>(flat)];
                    }
                    y.push_back(static_cast<float>(sum));
                }
            }
        }
    }
    return y;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << "element " << i;
}

CompiledNodeModel crop_model(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                             const char* mode) {
    ModelBuilder b(13);
    b.input("x", in);
    b.input("roi", {8});
    b.int64_init("sizes", {4}, out);
    auto* n = b.node("Resize", {"x", "roi", "", "sizes"}, {"y"}, "crop");
    ModelBuilder::attr_string(n, "coordinate_transformation_mode", "tf_crop_and_resize");
    ModelBuilder::attr_string(n, "mode", mode);
    ModelBuilder::attr_float(n, "extrapolation_value", -5.0f);
    b.output("y");
    return CompiledNodeModel(b.import(), false);
}

TEST(ResizeCrop, RegionsKnownOnlyAtRunTime) {
    std::vector<int64_t> in = {2, 3, 5, 6}, out = {2, 3, 4, 3};
    std::vector<float> x(2 * 3 * 5 * 6);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 10;
    NDArray xa = array(in, x, "float32");
    std::vector<std::vector<float>> rois = {
        {0, 0, 0.1f, 0.2f, 1, 1, 0.9f, 0.7f},    // inside
        {0, 0, -0.3f, 0.5f, 1, 1, 1.4f, 1.2f},   // reaching outside
        {0, 0, 0.5f, 0.25f, 1, 1, 0.5f, 0.75f},  // a zero-height region
        {0.5f, 0, 0, 0, 1, 0.5f, 1, 1},          // batch and channels resampled too
    };
    for (const char* mode : {"linear", "nearest"}) {
        CompiledNodeModel m = crop_model(in, out, mode);
        for (const auto& roi : rois) {
            NDArray y = m.run({xa, array<float>({8}, roi, "float32")})[0];
            expect_near(y.to_vector<float>(),
                        reference(x, in, out, roi, std::string(mode) == "linear", -5.0f));
        }
    }
    // One output element per spatial axis: the region's middle.
    CompiledNodeModel one = crop_model(in, {2, 3, 1, 1}, "linear");
    std::vector<float> roi = {0, 0, 0.2f, 0.4f, 1, 1, 0.6f, 0.8f};
    expect_near(one.run({xa, array<float>({8}, roi, "float32")})[0].to_vector<float>(),
                reference(x, in, {2, 3, 1, 1}, roi, true, -5.0f));
}

}  // namespace
}  // namespace anvil
