// resize2d (ops/transform_resize.cpp) against a reference written from ONNX's Resize definition
// (onnx/reference/ops/op_resize.py: per-axis coordinate transformation, then nearest rounding,
// linear or cubic taps on the edge-padded input), for every mode, coordinate transformation and
// nearest rounding, upsampling and downsampling an odd-sized image.
#include <gtest/gtest.h>

#include <algorithm>
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

// grid_sample against a direct reference of bilinear and nearest sampling with zeros and
// border padding (PyTorch's grid sampler), both corner alignments, grid points outside [-1, 1].
double grid_sample_reference(const runtime::NDArray& x, int64_t n, int64_t ch, double gx, double gy,
                             const std::string& mode, const std::string& padding, bool align) {
    int64_t c = x.shape()[1], h = x.shape()[2], w = x.shape()[3];
    auto denorm = [&](double g, int64_t d) {
        return align ? (g + 1) / 2 * double(d - 1) : ((g + 1) * double(d) - 1) / 2;
    };
    double fx = denorm(gx, w), fy = denorm(gy, h);
    if (mode == "nearest") {
        fx = std::nearbyint(fx);
        fy = std::nearbyint(fy);
    }
    auto adjust = [&](double v, int64_t d) {
        double lo = align ? 0 : -0.5, hi = align ? double(d - 1) : double(d) - 0.5;
        if (padding == "border" && (v < lo || v > hi)) v = std::clamp(v, 0.0, double(d - 1));
        return v;
    };
    fx = adjust(fx, w);
    fy = adjust(fy, h);
    auto pixel = [&](int64_t iy, int64_t ix) -> double {
        if (padding == "zeros" && (iy < 0 || iy >= h || ix < 0 || ix >= w)) return 0.0;
        iy = std::clamp<int64_t>(iy, 0, h - 1);
        ix = std::clamp<int64_t>(ix, 0, w - 1);
        return x.data<float>()[((n * c + ch) * h + iy) * w + ix];
    };
    if (mode == "nearest") return pixel(int64_t(fy), int64_t(fx));
    double x0 = std::floor(fx), y0 = std::floor(fy), tx = fx - x0, ty = fy - y0;
    auto ix = int64_t(x0), iy = int64_t(y0);
    return (1 - ty) * ((1 - tx) * pixel(iy, ix) + tx * pixel(iy, ix + 1)) +
           ty * ((1 - tx) * pixel(iy + 1, ix) + tx * pixel(iy + 1, ix + 1));
}

TEST(GridSample, BilinearAndNearestWithPadding) {
    auto x = random_tensor({2, 3, 4, 5}, 41);
    auto grid = random_tensor({2, 3, 6, 2}, 42, -1.3f, 1.3f);
    for (const char* mode : {"bilinear", "nearest"}) {
        for (const char* padding : {"zeros", "border"}) {
            for (bool align : {false, true}) {
                auto r =
                    run_op("grid_sample", {x, grid}, make_attrs<ops::GridSampleAttrs>([&](auto& a) {
                               a.mode = mode;
                               a.padding_mode = padding;
                               a.align_corners = align;
                           }));
                std::vector<float> ref;
                for_each_index({2, 3, 3, 6}, [&](const Shape& i) {
                    const float* g = grid.data<float>() + ((i[0] * 3 + i[2]) * 6 + i[3]) * 2;
                    ref.push_back(static_cast<float>(
                        grid_sample_reference(x, i[0], i[1], g[0], g[1], mode, padding, align)));
                });
                expect_close(r.outputs[0], ref, 1e-5f, 1e-5f,
                             std::string(mode) + " " + padding + (align ? " aligned" : ""));
            }
        }
    }
}

TEST(GridSample, Errors) {
    auto x = random_tensor({1, 2, 4, 4}, 1);
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("grid_sample", {x, random_tensor({1, 3, 3, 3}, 2)}, nullptr);
        }),
        "node 'node_0'", "grid_sample: the grid must be [N, H_out, W_out, 2]");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type(
                               "grid_sample", {x, random_tensor({1, 3, 3, 2}, 2)},
                               make_attrs<ops::GridSampleAttrs>([](auto& a) { a.mode = "area"; }));
                       }),
                       "grid_sample: mode must be bilinear, nearest or bicubic, got 'area'");
}

// roi_align on a linear image, where every bilinear sample is exact: each bin averages to the
// image at the bin's centre.
TEST(RoiAlign, AveragesLinearImage) {
    auto x = tensor_of({2, 1, 6, 7}, "float32");
    for_each_index({2, 1, 6, 7}, [&](const Shape& i) {
        x.data<float>()[offset_of(i, {2, 1, 6, 7})] = float(i[3] + 10 * i[2] + 100 * i[0]);
    });
    auto rois =
        tensor_from<float>({2, 4}, std::vector<float>{1, 1, 3, 3, 2, 0.5f, 5, 4.5f}, "float32");
    auto bi = tensor_from<int64_t>({2}, std::vector<int64_t>{0, 1}, "int64");
    auto r = run_op("roi_align", {x, rois, bi}, make_attrs<ops::RoiAlignAttrs>([](auto& a) {
                        a.output_height = 2;
                        a.output_width = 3;
                        a.sampling_ratio = 2;
                    }));
    std::vector<float> ref;
    for_each_index({2, 1, 2, 3}, [&](const Shape& i) {
        const float* roi = rois.data<float>() + i[0] * 4;
        double x0 = roi[0] - 0.5, y0 = roi[1] - 0.5;
        double bw = (roi[2] - roi[0]) / 3.0, bh = (roi[3] - roi[1]) / 2.0;
        double cx = x0 + (double(i[3]) + 0.5) * bw, cy = y0 + (double(i[2]) + 0.5) * bh;
        ref.push_back(float(cx + 10 * cy + 100 * double(i[0])));
    });
    expect_close(r.outputs[0], ref, 1e-5f, 1e-4f, "roi_align");
}

TEST(RoiAlign, Errors) {
    auto x = random_tensor({1, 2, 4, 4}, 1);
    auto bi = tensor_of({3}, "int64");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("roi_align", {x, random_tensor({3, 5}, 2), bi}, nullptr);
                       }),
                       "node 'node_0'", "roi_align: the rois must be [R, 4]");
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("roi_align", {x, random_tensor({3, 4}, 2), bi},
                          make_attrs<ops::RoiAlignAttrs>([](auto& a) { a.sampling_ratio = 0; }));
        }),
        "an adaptive sampling ratio is not supported");
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
                       "resize2d", "the scales and the roi, got 1 inputs");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("resize2d", {x}, make_attrs<Resize2DAttrs>([](auto& a) {
                                             a.size = {4, 4};
                                             a.coordinate_transformation_mode = "tf_crop";
                                         }));
                       }),
                       "resize2d", "tf_crop", "not supported");
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
