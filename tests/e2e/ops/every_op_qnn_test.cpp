// Every-op cases of the QNN dialect (ops/qnn.cpp, ops/qnn_conv.cpp) and fixed_point_multiply:
// each module compiled as a model is (canonicalize_qnn in the pipeline), against integer references
// written here — TFLite's fixed-point functions and its integer ADD, plain integer convolution
// and products. python/tests/test_qnn.py covers more shapes and roundings against NumPy.
#include <algorithm>
#include <cmath>

#include "every_op.h"
#include "graph/text_base64.h"
#include "ops/qnn.h"

namespace anvil::every_op {
namespace {

using Values = std::vector<double>;

// ---- TFLite's fixed-point arithmetic --------------------------------------------------------

int64_t high_mul(int64_t a, int64_t m) {  // SaturatingRoundingDoublingHighMul
    int64_t ab = a * m;
    int64_t nudge = ab >= 0 ? (int64_t(1) << 30) : 1 - (int64_t(1) << 30);
    return (ab + nudge) / (int64_t(1) << 31);
}

int64_t divide_by_pot(int64_t x, int e) {  // RoundingDivideByPOT
    int64_t mask = (int64_t(1) << e) - 1, remainder = x & mask;
    int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

// x * ratio in fixed point as rounding `tflite` (TFLite) or UPWARD.
int64_t scale(int64_t x, double ratio, bool tflite) {
    ops::FixedPoint f = ops::fixed_point_of(ratio, "ratio", SourceLoc{});
    if (tflite) {
        int left = std::max(f.shift, 0), right = std::max(-f.shift, 0);
        return divide_by_pot(high_mul(x * (int64_t(1) << left), f.multiplier), right);
    }
    int total = 31 - f.shift;
    return (x * f.multiplier + (int64_t(1) << (total - 1))) >> total;
}

double saturate(double v, const std::string& dtype) {
    if (dtype == "uint8") return std::clamp(v, 0.0, 255.0);
    if (dtype == "int8") return std::clamp(v, -128.0, 127.0);
    return v;
}

std::string constant_line(int index, const std::vector<float>& v) {
    return "meta[Constant][" + std::to_string(index) +
           "]: " + tensor_type({int64_t(v.size())}, "float32") + " = \"" +
           graph::text::base64_encode(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4) +
           "\"\n";
}

std::vector<OpCase> quantize_cases() {
    std::vector<OpCase> cases;
    // Per channel (axis 1): 3 scales and zero points as metadata constants.
    Shape s{2, 3, 5};
    NDArray x = rand_f32(s, 901, -3, 3);
    std::vector<float> scales{0.02f, 0.05f, 0.013f};
    std::vector<double> zps{-3, 0, 7};
    Values xv = values_of(x), q, d;
    for_each_index(s, [&](const Shape& i) {
        float r = std::nearbyint(float(xv[q.size()]) / scales[i[1]]);
        q.push_back(std::clamp(double(r) + zps[i[1]], -128.0, 127.0));
        d.push_back(double(float(q.back() - zps[i[1]]) * scales[i[1]]));
    });
    std::string zp_meta =
        "meta[Constant][1]: " + tensor_type({3}, "int32") + " = \"/f///wAAAAAHAAAA\"\n";
    cases.push_back(
        {"qnn.quantize and qnn.dequantize per channel, int8",
         "def @main(%x: " + tensor_type(s) +
             ") {\n  %0 = qnn.quantize(%x, meta[Constant][0], meta[Constant][1], axis=1);\n"
             "  %1 = qnn.dequantize(%0, meta[Constant][0], meta[Constant][1], axis=1);\n"
             "  (%0, %1)\n}\n#[metadata]\n" +
             constant_line(0, scales) + zp_meta,
         {x},
         tuple_want({tensor_want(s, q, 0, "int8"), tensor_want(s, d, 1e-6)})});
    // requantize of int32 accumulators to uint8, per channel, TFLite's rounding.
    NDArray acc = rand_int({2, 3, 7}, 902, -300000, 300000, "int32");
    std::vector<float> in_scales{1.1e-4f, 3.7e-5f, 2.5e-4f};
    Values av = values_of(acc), r;
    for_each_index({2, 3, 7}, [&](const Shape& i) {
        double ratio = double(in_scales[i[1]]) / double(0.0625f);
        r.push_back(saturate(double(scale(int64_t(av[r.size()]) - 5, ratio, true) + 128), "uint8"));
    });
    cases.push_back({"qnn.requantize int32 -> uint8 per channel, TFLITE",
                     "def @main(%a: " + tensor_type({2, 3, 7}, "int32") +
                         ") { qnn.requantize(%a, meta[Constant][0], 5, 0.0625f, 128, axis=1, "
                         "rounding=\"TFLITE\", out_dtype=\"uint8\") }\n#[metadata]\n" +
                         constant_line(0, in_scales),
                     {acc},
                     tensor_want({2, 3, 7}, r, 0, "uint8")});
    // fixed_point_multiply itself: 0.75 * x, rounding half up.
    NDArray fx = rand_int({11}, 903, -1000, 1000, "int32");
    Values fv = values_of(fx), fw;
    for (double v : fv) fw.push_back(double(scale(int64_t(v), 0.75, false)));
    cases.push_back({"fixed_point_multiply by 0.75",
                     "def @main(%x: " + tensor_type({11}, "int32") +
                         ") { fixed_point_multiply(%x, 1610612736, 0) }",
                     {fx},
                     tensor_want({11}, fw, 0, "int32")});
    return cases;
}

// (x - xz) * (w - wz) summed over a 2-D window, NCHW / OIHW, one group.
Values int_conv(const Values& x, const Shape& xs, int64_t xz, const Values& w, const Shape& ws,
                int64_t wz, int64_t stride, int64_t pad, Shape* out) {
    int64_t oh = (xs[2] + 2 * pad - ws[2]) / stride + 1,
            ow = (xs[3] + 2 * pad - ws[3]) / stride + 1;
    *out = {xs[0], ws[0], oh, ow};
    Values y;
    for_each_index(*out, [&](const Shape& o) {
        double sum = 0;
        for (int64_t c = 0; c < xs[1]; ++c)
            for (int64_t i = 0; i < ws[2]; ++i)
                for (int64_t j = 0; j < ws[3]; ++j) {
                    int64_t h = o[2] * stride - pad + i, v = o[3] * stride - pad + j;
                    if (h < 0 || h >= xs[2] || v < 0 || v >= xs[3]) continue;  // zero point
                    sum += (x[((o[0] * xs[1] + c) * xs[2] + h) * xs[3] + v] - xz) *
                           (w[((o[1] * ws[1] + c) * ws[2] + i) * ws[3] + j] - wz);
                }
        y.push_back(sum);
    });
    return y;
}

std::vector<OpCase> product_cases() {
    std::vector<OpCase> cases;
    NDArray x = rand_int({1, 3, 7, 6}, 911, 0, 255, "uint8");
    NDArray w = rand_int({5, 3, 3, 3}, 912, -128, 127, "int8");
    Shape out;
    Values y =
        int_conv(values_of(x), {1, 3, 7, 6}, 131, values_of(w), {5, 3, 3, 3}, -2, 2, 1, &out);
    cases.push_back({"qnn.conv2d u8 x s8 stride 2 pad 1",
                     "def @main(%x: " + tensor_type({1, 3, 7, 6}, "uint8") +
                         ", %w: " + tensor_type({5, 3, 3, 3}, "int8") +
                         ") { qnn.conv2d(%x, %w, 131, -2, 0.1f, 0.01f, strides=[2, 2], "
                         "padding=[1, 1, 1, 1], channels=5, kernel_size=[3, 3]) }",
                     {x, w},
                     tensor_want(out, y, 0, "int32")});
    // conv2d_transpose with stride 1 and no padding is the convolution of the fully padded input
    // with the flipped, transposed kernel; checked on a 1-channel case by direct scatter.
    NDArray tx = rand_int({1, 1, 3, 4}, 913, -128, 127, "int8");
    NDArray tw = rand_int({1, 2, 2, 2}, 914, -128, 127, "int8");
    Values txv = values_of(tx), twv = values_of(tw), ty(2 * 4 * 5, 0.0);
    for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 4; ++j)
            for (int64_t o = 0; o < 2; ++o)
                for (int64_t a = 0; a < 2; ++a)
                    for (int64_t b = 0; b < 2; ++b) {
                        ty[(o * 4 + i + a) * 5 + j + b] +=
                            (txv[i * 4 + j] - 1) * (twv[(o * 2 + a) * 2 + b] + 3);
                    }
    cases.push_back({"qnn.conv2d_transpose s8",
                     "def @main(%x: " + tensor_type({1, 1, 3, 4}, "int8") +
                         ", %w: " + tensor_type({1, 2, 2, 2}, "int8") +
                         ") { qnn.conv2d_transpose(%x, %w, 1, -3, 0.1f, 0.01f) }",
                     {tx, tw},
                     tensor_want({1, 2, 4, 5}, ty, 0, "int32")});
    NDArray a = rand_int({3, 2, 17}, 915, 0, 255, "uint8");
    NDArray b = rand_int({3, 5, 17}, 916, -128, 127, "int8");
    Values av = values_of(a), bv = values_of(b), mm, dense;
    for (int64_t n = 0; n < 3; ++n)
        for (int64_t i = 0; i < 2; ++i)
            for (int64_t j = 0; j < 5; ++j) {
                double s = 0;
                for (int64_t k = 0; k < 17; ++k) {
                    s += (av[(n * 2 + i) * 17 + k] - 100) * (bv[(n * 5 + j) * 17 + k] - 4);
                }
                mm.push_back(s);
            }
    cases.push_back({"qnn.batch_matmul u8 x s8 transpose_b",
                     "def @main(%a: " + tensor_type({3, 2, 17}, "uint8") +
                         ", %b: " + tensor_type({3, 5, 17}, "int8") +
                         ") { qnn.batch_matmul(%a, %b, 100, 4, 0.1f, 0.01f) }",
                     {a, b},
                     tensor_want({3, 2, 5}, mm, 0, "int32")});
    // qnn.dense is the first batch of the same product.
    NDArray a0 = array_of({2, 17}, Values(av.begin(), av.begin() + 34), "uint8");
    NDArray b0 = array_of({5, 17}, Values(bv.begin(), bv.begin() + 85), "int8");
    cases.push_back({"qnn.dense u8 x s8",
                     "def @main(%a: " + tensor_type({2, 17}, "uint8") +
                         ", %b: " + tensor_type({5, 17}, "int8") +
                         ") { qnn.dense(%a, %b, 100, 4, 0.1f, 0.01f, units=5) }",
                     {a0, b0},
                     tensor_want({2, 5}, Values(mm.begin(), mm.begin() + 10), 0, "int32")});
    return cases;
}

std::vector<OpCase> elementwise_qnn_cases() {
    std::vector<OpCase> cases;
    Shape s{2, 3, 5};
    NDArray l = rand_int(s, 921, -128, 127, "int8"), r = rand_int({5}, 922, -128, 127, "int8");
    Values lv = values_of(l), rv = values_of(r);
    // TFLite's integer ADD / SUB: 20 bits of headroom, both at twice the larger scale.
    double ls = 0.05f, rs = 0.03f, os = 0.07f, twice = 2 * std::max(ls, rs);
    for (const char* op : {"add", "subtract"}) {
        Values want;
        for_each_index(s, [&](const Shape& i) {
            int64_t a = scale((int64_t(lv[want.size()]) - 10) << 20, ls / twice, true);
            int64_t b = scale((int64_t(rv[i[2]]) + 4) << 20, rs / twice, true);
            int64_t sum = std::string(op) == "add" ? a + b : a - b;
            want.push_back(
                saturate(double(scale(sum, twice / (std::ldexp(1.0, 20) * os), true) + 3), "int8"));
        });
        cases.push_back({std::string("qnn.") + op + " int8 broadcast",
                         "def @main(%l: " + tensor_type(s, "int8") +
                             ", %r: " + tensor_type({5}, "int8") + ") { qnn." + op +
                             "(%l, %r, 0.05f, 10, 0.03f, -4, 0.07f, 3) }",
                         {l, r},
                         tensor_want(s, want, 0, "int8")});
    }
    Values prod;
    for_each_index(s, [&](const Shape& i) {
        int64_t p = (int64_t(lv[prod.size()]) - 10) * (int64_t(rv[i[2]]) + 4);
        prod.push_back(saturate(
            double(scale(p, double(0.05f) * double(0.03f) / double(0.5f), false) - 1), "int8"));
    });
    cases.push_back({"qnn.mul int8 broadcast",
                     "def @main(%l: " + tensor_type(s, "int8") +
                         ", %r: " + tensor_type({5}, "int8") +
                         ") { qnn.mul(%l, %r, 0.05f, 10, 0.03f, -4, 0.5f, -1) }",
                     {l, r},
                     tensor_want(s, prod, 0, "int8")});
    // concatenate: the second input requantized to the output's scale (UPWARD), the first as is.
    NDArray c = rand_int({2, 2, 5}, 923, -128, 127, "int8");
    Values cv = values_of(c), cat;
    for (int64_t n = 0; n < 2; ++n) {
        for (int64_t k = 0; k < 15; ++k) cat.push_back(lv[n * 15 + k]);
        for (int64_t k = 0; k < 10; ++k) {
            cat.push_back(saturate(
                double(scale(int64_t(cv[n * 10 + k]) + 4, double(0.03f) / double(0.05f), false) +
                       10),
                "int8"));
        }
    }
    cases.push_back({"qnn.concatenate int8 axis 1",
                     "def @main(%a: " + tensor_type(s, "int8") +
                         ", %b: " + tensor_type({2, 2, 5}, "int8") +
                         ") { qnn.concatenate((%a, %b), (0.05f, 0.03f), (10, -4), 0.05f, 10, "
                         "axis=1) }",
                     {l, c},
                     tensor_want({2, 5, 5}, cat, 0, "int8")});
    // Through float: dequantize, the float op, quantize (float32 arithmetic, as the kernel).
    auto through_float = [&](const std::string& op, double (*f)(double)) {
        Values want;
        for (double q : lv) {
            float real = float(q - 10) * 0.05f;
            float y = float(f(double(real)));
            want.push_back(saturate(double(std::nearbyint(y / (1.0f / 128))) + 0, "int8"));
        }
        cases.push_back({"qnn." + op + " int8",
                         "def @main(%l: " + tensor_type(s, "int8") + ") { qnn." + op +
                             "(%l, 0.05f, 10, 0.0078125f, 0) }",
                         {l},
                         tensor_want(s, want, 0.02, "int8")});
    };
    through_float("sigmoid", [](double v) { return 1 / (1 + std::exp(-v)); });
    through_float("tanh", [](double v) { return std::tanh(v); });
    through_float("hardswish", [](double v) { return v * std::clamp(v + 3, 0.0, 6.0) / 6; });
    // avg_pool2d 2x2 stride 2 over a 5-wide plane: the last column is dropped.
    NDArray p = rand_int({1, 2, 4, 5}, 924, 0, 255, "uint8");
    Values pv = values_of(p), pooled;
    for (int64_t c2 = 0; c2 < 2; ++c2)
        for (int64_t i = 0; i < 2; ++i)
            for (int64_t j = 0; j < 2; ++j) {
                float sum = 0;
                for (int64_t a = 0; a < 2; ++a)
                    for (int64_t b = 0; b < 2; ++b) {
                        sum += float(pv[(c2 * 4 + 2 * i + a) * 5 + 2 * j + b] - 128) * 0.1f;
                    }
                pooled.push_back(saturate(double(std::nearbyint(sum / 4 / 0.2f)) + 128, "uint8"));
            }
    cases.push_back({"qnn.avg_pool2d uint8",
                     "def @main(%p: " + tensor_type({1, 2, 4, 5}, "uint8") +
                         ") { qnn.avg_pool2d(%p, 0.1f, 128, 0.2f, 128, pool_size=[2, 2], "
                         "strides=[2, 2]) }",
                     {p},
                     tensor_want({1, 2, 2, 2}, pooled, 0.01, "uint8")});
    return cases;
}

}  // namespace

std::vector<OpCase> qnn_cases() {
    std::vector<OpCase> cases;
    for (auto* family : {quantize_cases, product_cases, elementwise_qnn_cases}) {
        for (OpCase& c : family()) cases.push_back(std::move(c));
    }
    return cases;
}

namespace {

TEST(EveryOp, QuantizedOps) {
    run_cases(qnn_cases());
}

}  // namespace
}  // namespace anvil::every_op
