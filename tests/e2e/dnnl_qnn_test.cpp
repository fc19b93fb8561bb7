// oneDNN's int8 composites (dnnl.qnn.conv2d, dnnl.qnn.dense): small quantized graphs in the forms
// the importers write them (ONNX QDQ: requantize to int32, clip, cast; PyTorch: a ReLU as a clip
// at the zero point; TFLite: requantize straight to int8) compiled with "dnnl, llvm" must compute
// what they compile to natively, within one quantization step (oneDNN rounds its float product,
// requantize may round in fixed point), with the layers offloaded. Layers oneDNN cannot compute
// exactly stay native, among them those whose sums would saturate on CPUs without VNNI.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "codegen/target.h"
#include "e2e/dnnl_compare.h"
#include "graph_test_exprs.h"
#include "ops/activation.h"
#include "ops/dense.h"
#include "ops/elementwise.h"
#include "ops/qnn.h"
#include "ops/transform.h"
#include "support/error.h"

namespace anvil {
namespace {

using graph::Expr;
using graph::testing::call;
using graph::testing::tensor_var;

runtime::NDArray random_ints(const std::vector<int64_t>& shape, DataType dtype, uint32_t seed,
                             int lo, int hi) {
    auto a = runtime::NDArray::empty(shape, runtime::dl_dtype_from_string(dtype.str()));
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(lo, hi);
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        int v = dist(rng);
        if (dtype == DataType::uint(8)) {
            a.data<uint8_t>()[i] = static_cast<uint8_t>(v);
        } else if (dtype == DataType::int_(8)) {
            a.data<int8_t>()[i] = static_cast<int8_t>(v);
        } else {
            a.data<int32_t>()[i] = v;
        }
    }
    return a;
}

// An int8 weight, an int32 bias. The weights keep to 7 bits (onnxruntime's and PyTorch's
// reduce_range for CPUs without VNNI), which oneDNN sums exactly on every x86 CPU, unless `full`.
Expr weight(std::vector<int64_t> shape, uint32_t seed, bool full = false) {
    return graph::make_constant(
        random_ints(shape, DataType::int_(8), seed, full ? -127 : -64, full ? 127 : 64));
}
Expr bias(std::vector<int64_t> shape, uint32_t seed) {
    return graph::make_constant(random_ints(shape, DataType::int32(), seed, -2000, 2000));
}

Expr i32(int32_t v) {
    auto a = runtime::NDArray::empty({}, DLDataType{kDLInt, 32, 1});
    a.data<int32_t>()[0] = v;
    return graph::make_constant(a);
}
Expr f32(float v) {
    return graph::testing::constant({}, {v});
}
Expr scales(std::vector<float> v) {
    return graph::testing::constant({static_cast<int64_t>(v.size())}, v);
}

Expr qnn_conv(const Expr& data, const Expr& w, int32_t data_zp, const Expr& w_scale,
              std::vector<int64_t> strides, std::vector<int64_t> padding, int64_t groups = 1,
              std::vector<int64_t> dilation = {1, 1}) {
    ops::QnnConv2DAttrs a;
    a.strides = std::move(strides);
    a.padding = std::move(padding);
    a.groups = groups;
    a.dilation = std::move(dilation);
    return call("qnn.conv2d", {data, w, i32(data_zp), i32(0), f32(0.02f), w_scale},
                make_ref<ops::QnnConv2DAttrs>(a));
}

Expr bias_add(const Expr& x, const Expr& b) {
    ops::BiasAddAttrs a;
    a.axis = 1;
    return call("nn.bias_add", {x, b}, make_ref<ops::BiasAddAttrs>(a));
}

Expr requantize(const Expr& x, const Expr& in_scale, int32_t in_zp, float out_scale, int32_t out_zp,
                DataType out_dtype, const std::string& compute_dtype = "int64",
                const std::string& rounding = "UPWARD") {
    ops::RequantizeAttrs a;
    a.axis = 1;
    a.out_dtype = out_dtype;
    a.compute_dtype = compute_dtype;
    a.rounding = rounding;
    return call("qnn.requantize", {x, in_scale, i32(in_zp), f32(out_scale), i32(out_zp)},
                make_ref<ops::RequantizeAttrs>(a));
}

Expr clip(const Expr& x, double lo, double hi) {
    ops::ClipAttrs a;
    a.a_min = lo;
    a.a_max = hi;
    return call("clip", {x}, make_ref<ops::ClipAttrs>(a));
}

Expr cast(const Expr& x, DataType dtype) {
    ops::CastAttrs a;
    a.dtype = dtype;
    return call("cast", {x}, make_ref<ops::CastAttrs>(a));
}

std::vector<double> numbers(const runtime::NDArray& a) {
    DLDataType t = a.dtype();
    std::vector<double> out;
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        if (t.code == kDLUInt && t.bits == 8) {
            out.push_back(static_cast<const uint8_t*>(a.raw_data())[i]);
        } else if (t.code == kDLInt && t.bits == 8) {
            out.push_back(static_cast<const int8_t*>(a.raw_data())[i]);
        } else if (t.code == kDLInt && t.bits == 32) {
            out.push_back(static_cast<const int32_t*>(a.raw_data())[i]);
        } else {
            out.push_back(static_cast<const float*>(a.raw_data())[i]);
        }
    }
    return out;
}

// Whether oneDNN's int8 kernels on this machine sum products in int32 (VNNI or AMX).
bool host_has_vnni() {
    Target host = Target::host();
    return host.has_feature("avx512vnni") || host.has_feature("avxvnni") ||
           host.has_feature("amx-int8");
}

// Compiles `body` over `params` (8-bit tensors) natively and with oneDNN, runs both on random
// inputs and compares: every element within one step, most equal (`exact`: all equal). Returns
// how many ops oneDNN took.
int64_t expect_close_with_dnnl(const std::vector<Ref<graph::Var>>& params, const Expr& body,
                               bool exact = false) {
    std::vector<runtime::NDArray> inputs;
    for (size_t i = 0; i < params.size(); ++i) {
        auto* t = params[i]->type.as<graph::TensorType>();
        bool u8 = t->dtype == DataType::uint(8);
        inputs.push_back(random_ints(t->static_shape(), t->dtype, 100 + static_cast<uint32_t>(i),
                                     u8 ? 0 : -128, u8 ? 255 : 127));
    }
    testing::NativeAndDnnl r = testing::run_native_and_dnnl(params, body, inputs);
    const auto &want = r.native, &got = r.dnnl;
    EXPECT_EQ(want.size(), got.size());
    for (size_t k = 0; k < want.size() && k < got.size(); ++k) {
        auto w = numbers(want[k]), g = numbers(got[k]);
        EXPECT_EQ(w.size(), g.size());
        size_t equal = 0;
        for (size_t i = 0; i < w.size() && i < g.size(); ++i) {
            equal += g[i] == w[i];
            if (std::fabs(g[i] - w[i]) > (exact ? 0 : 1)) {
                ADD_FAILURE() << "output " << k << "[" << i << "]: " << g[i] << " with oneDNN, "
                              << w[i] << " natively";
                break;
            }
        }
        EXPECT_GE(static_cast<double>(equal), 0.95 * static_cast<double>(w.size()))
            << "output " << k;
    }
    return r.offloaded_ops;
}

TEST(DnnlQnn, ConvolutionsInTheFormsOfEachImporter) {
    auto x = tensor_var("x", {2, 5, 11, 11}, DataType::uint(8));
    // ONNX QDQ: per-channel weight scales, a bias, requantize in float32 to int32, clip, cast.
    std::vector<float> w_scales{0.011f, 0.02f, 0.017f, 0.009f, 0.013f, 0.024f, 0.015f, 0.01f};
    std::vector<float> in_scales;
    for (float s : w_scales) in_scales.push_back(s * 0.02f);
    Expr a = qnn_conv(x, weight({8, 5, 3, 3}, 1), 7, scales(w_scales), {2, 2}, {1, 1, 1, 1});
    a = requantize(bias_add(a, bias({8}, 2)), scales(in_scales), 0, 0.05f, 3, DataType::int32(),
                   "float32");
    a = cast(clip(a, 0, 255), DataType::uint(8));
    // PyTorch: one scale, a bias added as [C, 1, 1] (the add's operands either way round),
    // fixed-point requantize, a ReLU (the clip at the zero point), dilated and asymmetrically
    // padded.
    Expr b = qnn_conv(a, weight({8, 8, 3, 3}, 3), 3, f32(0.012f), {1, 1}, {2, 1, 1, 2}, 1, {2, 2});
    b = call("add", {bias({8, 1, 1}, 4), b});
    b = requantize(b, f32(0.012f * 0.05f), 0, 0.04f, 9, DataType::int32());
    b = cast(clip(b, 9, 255), DataType::uint(8));
    // TFLite: depthwise, no bias, an input zero point, TFLite's rounding straight to int8.
    Expr c = qnn_conv(b, weight({8, 1, 3, 3}, 5), 9, f32(0.03f), {1, 1}, {1, 1, 1, 1}, 8);
    c = requantize(c, f32(0.03f * 0.04f), 11, 0.06f, -5, DataType::int_(8), "int64", "TFLITE");
    // Two results, one of them also read inside the region.
    EXPECT_EQ(expect_close_with_dnnl({x}, graph::make_tuple({c, a})), 12);
}

// requantize in float32 (ONNX Runtime's and PyTorch's arithmetic, compute_dtype "float32") rounds
// (acc + bias) * scale half to even and then adds the zero point; oneDNN does the same with a
// round post-op. Odd zero points make ties differ otherwise, and a one-step difference grows
// through the next layers (MobileNetV2's linear bottlenecks).
TEST(DnnlQnn, Float32RequantizeIsBitExact) {
    auto x = tensor_var("x", {1, 96, 14, 14}, DataType::uint(8));
    Expr a = qnn_conv(x, weight({576, 96, 1, 1}, 51), 115, f32(0.01f), {1, 1}, {0, 0, 0, 0});
    a = requantize(bias_add(a, bias({576}, 52)), f32(0.01f * 0.02f), 0, 0.37f, 121,
                   DataType::int32(), "float32");
    a = cast(clip(a, 0, 255), DataType::uint(8));
    Expr b = qnn_conv(a, weight({576, 1, 3, 3}, 53), 121, f32(0.02f), {2, 2}, {1, 1, 1, 1}, 576);
    b = requantize(bias_add(b, bias({576}, 54)), f32(0.02f * 0.37f), 0, 0.11f, 3, DataType::int32(),
                   "float32");
    b = cast(clip(b, 3, 255), DataType::uint(8));
    EXPECT_EQ(expect_close_with_dnnl({x}, b, /*exact=*/true), 10);
}

TEST(DnnlQnn, Int8DataClippedToInt8AndGroupedConvolutions) {
    auto x = tensor_var("x", {1, 6, 9, 7}, DataType::int_(8));
    Expr a = qnn_conv(x, weight({4, 3, 3, 3}, 11), -4, scales({0.02f, 0.03f, 0.01f, 0.04f}), {1, 2},
                      {0, 1, 2, 1}, 2);
    a = requantize(bias_add(a, bias({4}, 12)), scales({4e-4f, 6e-4f, 2e-4f, 8e-4f}), 0, 0.1f, 2,
                   DataType::int_(8), "int64", "TONEAREST");
    a = clip(a, -100, 120);
    // oneDNN convolves int8 data exactly only with VNNI (it halves the weights without it).
    const bool vnni = host_has_vnni();
    EXPECT_EQ(expect_close_with_dnnl({x}, a), vnni ? 4 : 0);
    // A clip wider than int8 on an int8 result: its bounds meet the type's.
    Expr b = qnn_conv(x, weight({2, 6, 1, 1}, 13), 3, f32(0.02f), {1, 1}, {0, 0, 0, 0});
    b = clip(requantize(b, f32(4e-4f), 0, 0.02f, -7, DataType::int_(8), "float32"), -200, 300);
    EXPECT_EQ(expect_close_with_dnnl({x}, b), vnni ? 3 : 0);
}

TEST(DnnlQnn, DenseLayersOfUint8AndInt8Data) {
    auto x = tensor_var("x", {3, 40}, DataType::uint(8));
    auto y = tensor_var("y", {2, 24}, DataType::int_(8));
    std::vector<float> per_unit(10);
    for (int i = 0; i < 10; ++i) per_unit[i] = 1e-4f * static_cast<float>(i + 3);
    Expr a = call("qnn.dense", {x, weight({10, 40}, 21), i32(128), i32(0), f32(0.01f), f32(0.02f)});
    a = requantize(bias_add(a, bias({10}, 22)), scales(per_unit), 0, 0.07f, 100, DataType::int32(),
                   "float32");
    a = cast(clip(a, 0, 255), DataType::uint(8));
    Expr b = call("qnn.dense", {y, weight({5, 24}, 23), i32(0), i32(0), f32(0.01f), f32(0.02f)});
    b = requantize(b, f32(2e-4f), 0, 0.03f, 0, DataType::int_(8));
    EXPECT_EQ(expect_close_with_dnnl({x, y}, graph::make_tuple({a, b})), 7);
}

TEST(DnnlQnn, PadsWithTheZeroPointFoldIntoTheConvolution) {
    auto x = tensor_var("x", {1, 4, 7, 7}, DataType::uint(8));
    auto padded_conv = [&](double pad_value) {
        ops::PadAttrs p;
        p.pad_width = {0, 0, 0, 0, 1, 2, 2, 1};  // (before, after) of N, C, H, W
        p.pad_value = pad_value;
        // The pad value as an attribute, or as a constant operand (ONNX Pad's form).
        Expr padded = pad_value == 6 ? call("nn.pad", {x, i32(6)}, make_ref<ops::PadAttrs>(p))
                                     : call("nn.pad", {x}, make_ref<ops::PadAttrs>(p));
        Expr c = qnn_conv(padded, weight({6, 4, 3, 3}, 41), 6, f32(0.01f), {1, 1}, {1, 0, 0, 1});
        return requantize(c, f32(2e-4f), 0, 0.02f, 1, DataType::uint(8), "float32");
    };
    EXPECT_EQ(expect_close_with_dnnl({x}, padded_conv(6)), 3);
    // Padding with another value than the zero point is no convolution padding: the pad stays.
    EXPECT_EQ(expect_close_with_dnnl({x}, padded_conv(0)), 2);
}

TEST(DnnlQnn, LayersOneDnnCannotComputeExactlyStayNative) {
    auto x = tensor_var("x", {1, 4, 6, 6}, DataType::uint(8));
    auto conv = [&](int32_t w_zp) {
        return call("qnn.conv2d",
                    {x, weight({4, 4, 1, 1}, 31), i32(5), i32(w_zp), f32(0.02f), f32(0.01f)},
                    make_ref<ops::QnnConv2DAttrs>());
    };
    auto rq = [&](const Expr& e, DataType t) {
        return requantize(e, f32(2e-4f), 0, 0.01f, 0, t, "float32");
    };
    // A weight zero point (oneDNN 2.6 has none for weights).
    EXPECT_EQ(expect_close_with_dnnl({x}, rq(conv(3), DataType::uint(8))), 0);
    // A cast without a clip wraps around where oneDNN saturates.
    EXPECT_EQ(expect_close_with_dnnl({x}, cast(rq(conv(0), DataType::int32()), DataType::uint(8))),
              0);
    // A clip bound between two integers (the layer before it is offloaded, the clip is not),
    // and one wider than the cast's type.
    EXPECT_EQ(expect_close_with_dnnl({x}, clip(rq(conv(0), DataType::uint(8)), 0.5, 200)), 2);
    EXPECT_EQ(expect_close_with_dnnl(
                  {x}, cast(clip(rq(conv(0), DataType::int32()), 0, 300), DataType::uint(8))),
              0);
    // Per-channel input zero points of requantize.
    auto zps = runtime::NDArray::empty({4}, DLDataType{kDLInt, 32, 1});
    for (int i = 0; i < 4; ++i) zps.data<int32_t>()[i] = i;
    ops::RequantizeAttrs a;
    a.axis = 1;
    a.out_dtype = DataType::uint(8);
    Expr per_channel_zp =
        call("qnn.requantize", {conv(0), f32(2e-4f), graph::make_constant(zps), f32(0.01f), i32(0)},
             make_ref<ops::RequantizeAttrs>(a));
    EXPECT_EQ(expect_close_with_dnnl({x}, per_channel_zp), 0);
}

// How many ops oneDNN takes of `body` compiled for `target`.
int64_t offloaded_for(const std::vector<Ref<graph::Var>>& params, const Expr& body,
                      const std::string& target) {
    graph::IRModule m;
    m.functions["main"] = graph::make_function(params, body);
    return testing::offloaded_ops(driver::compile_model(m, target));
}

// On x86 CPUs without VNNI or AMX oneDNN's int8 kernels add pairs of u8 x s8 products in int16
// with saturation, and halve the weights of convolutions of int8 data: such layers are
// offloaded only where that cannot change a result (every |weight| <= 64, uint8 data).
TEST(DnnlQnn, LayersWhoseSumsWouldSaturateStayNativeWithoutVnni) {
    auto u8 = tensor_var("u8", {1, 8, 5, 5}, DataType::uint(8));
    auto s8 = tensor_var("s8", {3, 16}, DataType::int_(8));
    auto conv = [&](const Ref<graph::Var>& data, bool full) {
        Expr c =
            qnn_conv(data, weight({4, 8, 3, 3}, 61, full), 3, f32(0.01f), {1, 1}, {1, 1, 1, 1});
        return requantize(c, f32(2e-4f), 0, 0.02f, 1, data->type.as<graph::TensorType>()->dtype,
                          "float32");
    };
    auto dense = [&](bool full) {
        Expr d = call("qnn.dense",
                      {s8, weight({6, 16}, 62, full), i32(-3), i32(0), f32(0.01f), f32(0.02f)});
        return requantize(d, f32(2e-4f), 0, 0.03f, 0, DataType::int_(8), "float32");
    };
    auto s8_conv_input = tensor_var("x", {1, 8, 5, 5}, DataType::int_(8));
    for (const char* cpu : {"x86-64-v3", "skylake-avx512"}) {  // AVX2; AVX-512 without VNNI
        const std::string target = std::string("dnnl, llvm -mcpu=") + cpu;
        EXPECT_EQ(offloaded_for({u8}, conv(u8, false), target), 2) << cpu;
        EXPECT_EQ(offloaded_for({u8}, conv(u8, true), target), 0) << cpu;
        EXPECT_EQ(offloaded_for({s8_conv_input}, conv(s8_conv_input, false), target), 0) << cpu;
        EXPECT_EQ(offloaded_for({s8}, dense(false), target), 2) << cpu;
        EXPECT_EQ(offloaded_for({s8}, dense(true), target), 0) << cpu;
    }
    // AVX-512 VNNI, AVX-VNNI, AMX: every form.
    for (const char* cpu : {"znver4", "alderlake", "sapphirerapids"}) {
        const std::string target = std::string("dnnl, llvm -mcpu=") + cpu;
        EXPECT_EQ(offloaded_for({u8}, conv(u8, true), target), 2) << cpu;
        EXPECT_EQ(offloaded_for({s8_conv_input}, conv(s8_conv_input, true), target), 2) << cpu;
        EXPECT_EQ(offloaded_for({s8}, dense(true), target), 2) << cpu;
    }
}

// A library compiled for a CPU with VNNI (here AVX-VNNI, whose kernels run on any AVX2 CPU) runs
// its int8 layers where oneDNN has VNNI, and refuses to run them where they would saturate.
TEST(DnnlQnn, LayersCompiledForVnniAreRefusedOnCpusWithoutIt) {
    auto x = tensor_var("x", {1, 8, 6, 6}, DataType::uint(8));
    Expr c =
        qnn_conv(x, weight({8, 8, 3, 3}, 71, /*full=*/true), 5, f32(0.01f), {1, 1}, {1, 1, 1, 1});
    c = requantize(c, f32(2e-4f), 0, 0.02f, 1, DataType::uint(8), "float32");
    graph::IRModule m;
    m.functions["main"] = graph::make_function({x}, c);
    driver::CompiledModel vnni =
        driver::compile_model(m, "dnnl, llvm -mcpu=x86-64-v3 -mattr=+avxvnni");
    ASSERT_EQ(vnni.partition.compilers.size(), 1u);
    std::vector<runtime::NDArray> inputs{random_ints({1, 8, 6, 6}, DataType::uint(8), 7, 0, 255)};
    if (host_has_vnni()) {
        driver::CompiledModel native = driver::compile_model(m, "llvm");
        auto want = numbers(driver::evaluate_lowered(native.module, native.kernels, inputs)[0]);
        auto got = numbers(driver::evaluate_lowered(vnni.module, vnni.kernels, inputs)[0]);
        EXPECT_EQ(got, want);
    } else {
        try {
            driver::evaluate_lowered(vnni.module, vnni.kernels, inputs);
            ADD_FAILURE() << "loaded an int8 layer compiled for VNNI on a CPU without it";
        } catch (const UserError& e) {
            EXPECT_NE(std::string(e.what()).find("compiled for a CPU with VNNI or AMX"),
                      std::string::npos)
                << e.what();
        }
    }
}

}  // namespace
}  // namespace anvil
