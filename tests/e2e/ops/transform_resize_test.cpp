// resize2d (ops/transform_resize.cpp) against a reference written from ONNX's Resize definition
// (onnx/reference/ops/op_resize.py: per-axis coordinate transformation, then nearest rounding,
// linear or cubic taps on the edge-padded input), for every mode, coordinate transformation and
// nearest rounding, upsampling and downsampling an odd-sized image.
#include <gtest/gtest.h>

#include <cmath>

#include "op_runner.h"
#include "ops/transform.h"

namespace anvil::op_testing {
namespace {

using ops::Resize2DAttrs;

// ONNX's coordinate transformation in float32, step for step as onnxruntime computes it.
float source_coordinate(const std::string& mode, int64_t i, int64_t in, int64_t out, float scale) {
    float x = static_cast<float>(i);
    if (mode == "half_pixel") return (x + 0.5f) / scale - 0.5f;
    if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    if (mode == "half_pixel_symmetric") {
        float adjustment = static_cast<float>(out) / (scale * static_cast<float>(in));
        float offset = static_cast<float>(in) / 2.0f * (1.0f - adjustment);
        return offset + (x + 0.5f) / scale - 0.5f;
    }
    if (mode == "align_corners") {
        return out == 1 ? 0.0f : x * static_cast<float>(in - 1) / static_cast<float>(out - 1);
    }
    if (mode == "asymmetric") return x / scale;
    return (x + 0.5f) / scale;  // tf_half_pixel_for_nn
}

struct Taps {
    std::vector<int64_t> index;
    std::vector<double> weight;
};

double cubic_weight(double s, double a) {
    s = std::abs(s);
    if (s <= 1) return ((a + 2) * s - (a + 3)) * s * s + 1;
    if (s < 2) return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a;
    return 0;
}

Taps taps_of(const Resize2DAttrs& a, int axis, int64_t i, int64_t in, int64_t out) {
    float scale = a.scales.empty() ? static_cast<float>(out) / static_cast<float>(in)
                                   : static_cast<float>(a.scales[axis]);
    float x = source_coordinate(a.coordinate_transformation_mode, i, in, out, scale);
    auto clamp = [&](int64_t v) { return std::max<int64_t>(0, std::min(v, in - 1)); };
    int64_t f = static_cast<int64_t>(std::floor(x));
    double ratio = static_cast<double>(x) - static_cast<double>(f);
    Taps t;
    if (a.mode == "nearest") {
        int64_t pick = f;
        if (ratio != 0) {
            const std::string& m = a.nearest_mode;
            bool up = m == "ceil" || (m == "round_prefer_floor" && ratio > 0.5) ||
                      (m == "round_prefer_ceil" && ratio >= 0.5);
            pick = up ? f + 1 : f;
        }
        return {{clamp(pick)}, {1.0}};
    }
    if (a.mode == "linear") return {{clamp(f), clamp(f + 1)}, {1 - ratio, ratio}};
    for (int k = -1; k <= 2; ++k) {
        double w = cubic_weight(ratio - k, a.cubic_coeff_a);
        if (a.exclude_outside && (f + k < 0 || f + k >= in)) w = 0;
        t.index.push_back(clamp(f + k));
        t.weight.push_back(w);
    }
    if (a.exclude_outside) {
        double total = 0;
        for (double w : t.weight) total += w;
        for (double& w : t.weight) w /= total;
    }
    return t;
}

void check_resize(const Resize2DAttrs& a, const Shape& shape) {
    auto x = random_tensor(shape, 120);
    auto attrs = make_attrs<Resize2DAttrs>([&](auto& r) { r = a; });
    auto r = run_op("resize2d", {x}, attrs);
    int64_t n = shape[0], c = shape[1], in_h = shape[2], in_w = shape[3];
    int64_t out_h = a.size[0], out_w = a.size[1];
    Shape out_shape = {n, c, out_h, out_w};
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    std::vector<float> expected(num_elements(out_shape));
    for_each_index(out_shape, [&](const Shape& o) {
        Taps ty = taps_of(a, 0, o[2], in_h, out_h), tx = taps_of(a, 1, o[3], in_w, out_w);
        double sum = 0;
        for (size_t p = 0; p < ty.index.size(); ++p) {
            for (size_t q = 0; q < tx.index.size(); ++q) {
                sum += ty.weight[p] * tx.weight[q] *
                       x.data<float>()[offset_of({o[0], o[1], ty.index[p], tx.index[q]}, shape)];
            }
        }
        expected[offset_of(o, out_shape)] = static_cast<float>(sum);
    });
    std::string what = a.mode + " " + a.coordinate_transformation_mode + " " + a.nearest_mode +
                       (a.exclude_outside ? " exclude_outside" : "") + " to " +
                       std::to_string(out_h) + "x" + std::to_string(out_w);
    expect_close(r.outputs[0], expected, 1e-5f, 1e-5f, what);
}

const char* const kCoordinateModes[] = {"half_pixel",         "half_pixel_symmetric",
                                        "pytorch_half_pixel", "align_corners",
                                        "asymmetric",         "tf_half_pixel_for_nn"};
const std::vector<std::vector<int64_t>> kSizes = {{11, 16}, {3, 4}, {5, 1}, {1, 7}};

TEST(Resize2D, Nearest) {
    for (const char* ctm : kCoordinateModes) {
        for (const char* nm : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}) {
            for (const auto& size : kSizes) {
                Resize2DAttrs a;
                a.size = size;
                a.mode = "nearest";
                a.coordinate_transformation_mode = ctm;
                a.nearest_mode = nm;
                check_resize(a, {1, 2, 5, 7});
            }
        }
    }
}

TEST(Resize2D, Linear) {
    for (const char* ctm : kCoordinateModes) {
        for (const auto& size : kSizes) {
            Resize2DAttrs a;
            a.size = size;
            a.mode = "linear";
            a.coordinate_transformation_mode = ctm;
            check_resize(a, {2, 3, 5, 7});
        }
    }
}

TEST(Resize2D, Cubic) {
    for (const char* ctm : kCoordinateModes) {
        for (bool exclude : {false, true}) {
            for (const auto& size : kSizes) {
                Resize2DAttrs a;
                a.size = size;
                a.mode = "cubic";
                a.coordinate_transformation_mode = ctm;
                a.exclude_outside = exclude;
                a.cubic_coeff_a = exclude ? -0.5 : -0.75;  // TF's and PyTorch's A
                check_resize(a, {1, 2, 5, 7});
            }
        }
    }
}

TEST(Resize2D, ExplicitScales) {
    // ONNX `scales` input: output floor(in * scale), coordinates from the scale itself.
    for (const char* mode : {"nearest", "linear", "cubic"}) {
        for (const char* ctm : {"asymmetric", "half_pixel"}) {
            Resize2DAttrs a;
            a.size = {10, 10};  // floor(5 * 2.1), floor(7 * 1.5)
            a.scales = {2.1, 1.5};
            a.mode = mode;
            a.coordinate_transformation_mode = ctm;
            check_resize(a, {1, 2, 5, 7});
        }
    }
}

TEST(Resize2D, IntegerNearestUpsample) {
    auto x = tensor_from<int32_t>({1, 1, 2, 2}, {1, 2, 3, 4}, "int32");
    auto r = run_op("resize2d", {x}, make_attrs<Resize2DAttrs>([](auto& a) {
                        a.size = {4, 4};
                        a.coordinate_transformation_mode = "asymmetric";
                        a.nearest_mode = "floor";
                    }));
    std::vector<int32_t> expected = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    for (int i = 0; i < 16; ++i) EXPECT_EQ(r.outputs[0].data<int32_t>()[i], expected[i]);
}

TEST(Resize2D, Errors) {
    auto x = random_tensor({1, 2, 5, 7}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("resize2d", {x},
                                         make_attrs<Resize2DAttrs>([](auto& a) { a.size = {4}; }));
                       }),
                       "resize2d", "size must be the output [height, width]");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("resize2d", {x}, make_attrs<Resize2DAttrs>([](auto& a) {
                                             a.size = {4, 4};
                                             a.coordinate_transformation_mode =
                                                 "tf_crop_and_resize";
                                         }));
                       }),
                       "resize2d", "tf_crop_and_resize", "not supported");
    auto v = random_tensor({2, 5, 7}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("resize2d", {v}, make_attrs<Resize2DAttrs>([](auto& a) {
                                             a.size = {4, 4};
                                         }));
                       }),
                       "resize2d", "NCHW");
}

}  // namespace
}  // namespace anvil::op_testing
