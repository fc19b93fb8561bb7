// oneDNN regions in process: small graphs compiled with "dnnl, llvm" must compute what the same
// graphs compile to natively, with the ops under test offloaded. Each case exercises one thing
// the oneDNN runtime library does with layouts and views: blocked layouts between layers, the
// residual sum post-op, grouped weights, broadcast operands, reshapes of the caller's tensors,
// transposed matrix operands, pooling windows over padding, clips without a bound, regions with
// several results. The regions are created on the compiler's thread and run on this one (what
// oneDNN's per-thread scratchpad broke). And the library's reader refuses malformed bytes with a
// UserError.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "driver/compile.h"
#include "driver/evaluate.h"
#include "e2e/dnnl_compare.h"
#include "e2e/run_kernel.h"
#include "graph_test_exprs.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/pool.h"
#include "ops/softmax.h"
#include "ops/transform.h"
#include "runtime/external_module.h"

namespace anvil {
namespace {

using graph::Expr;
using graph::testing::call;
using graph::testing::tensor_var;

Expr weights(std::vector<int64_t> shape, uint32_t seed) {
    return graph::make_constant(testing::random_tensor(shape, seed, -0.5f, 0.5f));
}

Expr scalar(float v) {
    auto a = testing::zeros({});
    a.data<float>()[0] = v;
    return graph::make_constant(a);
}

Ref<graph::Attrs> conv_attrs(std::vector<int64_t> strides, std::vector<int64_t> padding,
                             int64_t groups = 1, std::vector<int64_t> dilation = {1, 1}) {
    ops::Conv2DAttrs a;
    a.strides = std::move(strides);
    a.padding = std::move(padding);
    a.groups = groups;
    a.dilation = std::move(dilation);
    return make_ref<ops::Conv2DAttrs>(a);
}

Ref<graph::Attrs> clip_attrs(double lo, double hi) {
    ops::ClipAttrs a;
    a.a_min = lo;
    a.a_max = hi;
    return make_ref<ops::ClipAttrs>(a);
}

// Compiles `body` over `params` natively and with oneDNN, runs both on random inputs and
// compares; returns how many ops oneDNN took.
int64_t expect_same_with_dnnl(const std::vector<Ref<graph::Var>>& params, const Expr& body) {
    std::vector<runtime::NDArray> inputs;
    for (size_t i = 0; i < params.size(); ++i) {
        auto* t = params[i]->type.as<graph::TensorType>();
        inputs.push_back(testing::random_tensor(t->static_shape(), 100 + i));
    }
    testing::NativeAndDnnl r = testing::run_native_and_dnnl(params, body, inputs);
    const auto &want = r.native, &got = r.dnnl;
    EXPECT_EQ(want.size(), got.size());
    for (size_t k = 0; k < want.size() && k < got.size(); ++k) {
        auto w = want[k].to_vector<float>(), g = got[k].to_vector<float>();
        EXPECT_EQ(w.size(), g.size());
        for (size_t i = 0; i < w.size() && i < g.size(); ++i) {
            if (std::fabs(g[i] - w[i]) > 1e-4f + 1e-4f * std::fabs(w[i])) {
                ADD_FAILURE() << "output " << k << "[" << i << "]: " << g[i] << " with oneDNN, "
                              << w[i] << " natively";
                break;
            }
        }
    }
    return r.offloaded_ops;
}

TEST(Dnnl, ConvolutionsWithBiasResidualAndActivationsInBlockedLayouts) {
    auto x = tensor_var("x", {1, 8, 12, 12});
    Expr a = call("nn.conv2d", {x, weights({16, 8, 3, 3}, 1)}, conv_attrs({1, 1}, {1, 1, 1, 1}));
    a = call("nn.relu", {call("add", {a, weights({16, 1, 1}, 2)})});
    Expr b = call("nn.conv2d", {a, weights({16, 16, 3, 3}, 3)}, conv_attrs({1, 1}, {1, 1, 1, 1}));
    b = call("add", {b, weights({16, 1, 1}, 4)});
    Expr c = call("nn.conv2d", {a, weights({16, 16, 1, 1}, 5)}, conv_attrs({1, 1}, {0, 0, 0, 0}));
    c = call("add", {c, weights({16, 1, 1}, 6)});
    // A residual of two convolution branches, then a strided, asymmetrically padded, dilated one.
    Expr r = call("nn.relu", {call("add", {b, c})});
    Expr d = call("nn.conv2d", {r, weights({8, 16, 3, 3}, 7)},
                  conv_attrs({2, 2}, {1, 0, 2, 1}, 1, {2, 2}));
    EXPECT_EQ(expect_same_with_dnnl({x}, d), 10);
}

TEST(Dnnl, DepthwiseAndGroupedConvolutionsWithClips) {
    auto x = tensor_var("x", {2, 4, 9, 9});
    Expr a = call("nn.conv2d", {x, weights({4, 1, 3, 3}, 11)}, conv_attrs({1, 1}, {1, 1, 1, 1}, 4));
    a = call("clip", {call("add", {a, weights({4, 1, 1}, 12)})}, clip_attrs(0, 6));
    Expr b = call("nn.conv2d", {a, weights({6, 2, 3, 3}, 13)}, conv_attrs({2, 2}, {0, 0, 0, 0}, 2));
    // No upper bound: an infinite a_max.
    Expr c = call("clip", {b}, clip_attrs(-0.1, std::numeric_limits<double>::infinity()));
    EXPECT_EQ(expect_same_with_dnnl({x}, c), 5);
}

TEST(Dnnl, PoolingOverPaddingAndGlobalPools) {
    auto x = tensor_var("x", {1, 3, 10, 10});
    auto pool = [](bool include) {
        ops::Pool2DAttrs a;
        a.pool_size = {3, 3};
        a.strides = {2, 2};
        a.padding = {1, 1, 2, 2};
        a.count_include_pad = include;
        return Ref<graph::Attrs>(make_ref<ops::Pool2DAttrs>(a));
    };
    Expr m = call("nn.max_pool2d", {x}, pool(false));
    Expr i = call("nn.avg_pool2d", {x}, pool(true));
    Expr e = call("nn.avg_pool2d", {x}, pool(false));
    Expr g = call("nn.global_avg_pool2d", {x});
    Expr gm = call("nn.global_max_pool2d", {x});
    EXPECT_EQ(expect_same_with_dnnl({x}, graph::make_tuple({m, i, e, g, gm})), 5);
}

TEST(Dnnl, ConcatenationOfBlockedValuesAndCeilModePools) {
    auto x = tensor_var("x", {1, 8, 12, 12});
    Expr a = call("nn.conv2d", {x, weights({16, 8, 1, 1}, 41)}, conv_attrs({1, 1}, {0, 0, 0, 0}));
    Expr b = call("nn.conv2d", {x, weights({8, 8, 3, 3}, 42)}, conv_attrs({1, 1}, {1, 1, 1, 1}));
    ops::ConcatenateAttrs channels;
    channels.axis = 1;
    Expr cat = call("concatenate", {call("nn.relu", {a}), call("nn.relu", {b}), x},
                    make_ref<ops::ConcatenateAttrs>(channels));  // [1, 32, 11, 11]
    ops::Pool2DAttrs ceil;
    ceil.pool_size = {3, 3};
    ceil.strides = {2, 2};
    ceil.ceil_mode = true;  // 12 -> 6 windows (5 in floor mode), the last one past the input
    Expr m = call("nn.max_pool2d", {cat}, make_ref<ops::Pool2DAttrs>(ceil));
    Expr v = call("nn.avg_pool2d", {cat}, make_ref<ops::Pool2DAttrs>(ceil));
    EXPECT_EQ(expect_same_with_dnnl({x}, graph::make_tuple({m, v})), 7);
}

TEST(Dnnl, BroadcastOperandsAndReshapesOfTheCallersTensors) {
    auto x = tensor_var("x", {2, 3, 4});
    auto mask = tensor_var("mask", {3, 1});
    auto shape = [](std::vector<int64_t> s) {
        ops::ReshapeAttrs a;
        a.newshape = std::move(s);
        return Ref<graph::Attrs>(make_ref<ops::ReshapeAttrs>(a));
    };
    // A reshape of a reshape of the caller's tensor (views of views), read twice, and a mask
    // broadcast from a region input.
    Expr r = call("flatten", {call("reshape", {x}, shape({3, 2, 4}))});  // [3, 8]
    Expr sum = call("add", {call("nn.relu", {r}), mask});
    Expr prod = call("multiply", {mask, r});
    Expr q = call("subtract", {sum, weights({8}, 21)});
    EXPECT_EQ(expect_same_with_dnnl({x, mask}, graph::make_tuple({q, prod})), 6);
}

TEST(Dnnl, DenseMatmulSoftmaxAndTransposedOperands) {
    auto x = tensor_var("x", {4, 6});
    auto y = tensor_var("y", {2, 5, 6});
    Expr d = call("nn.dense", {x, weights({8, 6}, 31)});
    d = call("nn.gelu", {call("add", {d, weights({8}, 32)})});
    ops::MatmulAttrs tb;
    tb.transpose_b = true;
    Expr mm = call("nn.matmul", {y, y}, make_ref<ops::MatmulAttrs>(tb));  // [2, 5, 5]
    ops::SoftmaxAttrs last;
    last.axis = -1;
    Expr s = call("nn.softmax", {mm}, make_ref<ops::SoftmaxAttrs>(last));
    ops::HardSigmoidAttrs hs;
    hs.alpha = 0.3;
    hs.beta = 0.4;
    Expr t = call("sigmoid", {call("tanh", {d})});  // in (0.27, 0.73)
    // Spread over (-3.7, 3.7), so that hardswish's and hardsigmoid's clips both cut.
    t = call("subtract", {call("multiply", {t, scalar(16)}), scalar(8)});
    t = call("nn.hardsigmoid", {call("nn.hardswish", {t})}, make_ref<ops::HardSigmoidAttrs>(hs));
    EXPECT_EQ(expect_same_with_dnnl({x, y}, graph::make_tuple({s, t})), 11);
}

TEST(Dnnl, EveryEltwiseAndBinaryOp) {
    auto x = tensor_var("x", {4, 9});
    auto y = tensor_var("y", {9});
    Expr pos = call("add", {call("abs", {x}), scalar(0.5)});  // log and sqrt of positives
    ops::EluAttrs elu;
    elu.alpha = 0.7;
    ops::LeakyReluAttrs leaky;
    leaky.alpha = 0.2;
    std::vector<Expr> outs = {call("log", {pos}),
                              call("sqrt", {pos}),
                              call("exp", {x}),
                              call("nn.elu", {x}, make_ref<ops::EluAttrs>(elu)),
                              call("nn.leaky_relu", {x}, make_ref<ops::LeakyReluAttrs>(leaky)),
                              call("divide", {x, pos}),
                              call("maximum", {x, y}),
                              call("minimum", {y, x})};
    EXPECT_EQ(expect_same_with_dnnl({x, y}, graph::make_tuple(outs)), 10);
}

TEST(Dnnl, RegionsWithSeveralResultsAroundANativeOp) {
    auto x = tensor_var("x", {3, 7});
    Expr r = call("nn.relu", {x});
    Expr e = call("exp", {r});
    Expr s = call("sin", {r});  // native: the region must return r too
    Expr t = call("tanh", {call("add", {e, s})});
    EXPECT_EQ(expect_same_with_dnnl({x}, graph::make_tuple({t, e})), 4);
}

std::string header(const std::string& json) {
    std::string bytes = "ANVDNNL1";
    uint64_t n = json.size();
    for (int i = 0; i < 8; ++i) bytes += static_cast<char>((n >> (8 * i)) & 0xff);
    bytes += json;
    bytes.resize((bytes.size() + 63) / 64 * 64, '\0');
    return bytes;
}

std::string load_error(const std::string& bytes) {
    try {
        runtime::load_external_module("dnnl", bytes);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(loaded)";
}

TEST(Dnnl, MalformedRegionBytesAreUserErrors) {
    EXPECT_NE(load_error("ANVDNNL").find("bad header"), std::string::npos);
    EXPECT_NE(load_error(header("{not json")).find("malformed oneDNN regions"), std::string::npos);
    EXPECT_NE(load_error(header(R"({"version": 7, "functions": []})")).find("format version"),
              std::string::npos);
    const std::string fn =
        R"({"version": 2, "functions": [{"symbol": "f", "values": [[4], [4]],
            "dtypes": ["f32", "f32"], "inputs": [0], "outputs": [1], "constants": [], "steps": [)";
    EXPECT_NE(load_error(header(fn + R"({"op": "eltwise", "alg": "relu", "alpha": 0, "beta": 0,
                                       "src": 5, "dst": 1}]}]})"))
                  .find("oneDNN region f, step 0: value id 5 out of range"),
              std::string::npos);
    EXPECT_NE(load_error(header(fn + R"({"op": "eltwise", "alg": "relu", "alpha": 0, "beta": 0,
                                       "src": 1, "dst": 1}]}]})"))
                  .find("read before it is computed"),
              std::string::npos);
    EXPECT_NE(load_error(header(fn + R"(]}]})")).find("output value 1 is never computed"),
              std::string::npos);
    // A constant past the end of the weights.
    EXPECT_NE(load_error(header(R"({"version": 2, "functions": [{"symbol": "f",
        "values": [[4], [4], [4]], "dtypes": ["f32", "f32", "f32"], "inputs": [0], "outputs": [2],
        "constants": [{"value": 1, "offset": 64}], "steps": []}]})"))
                  .find("lies outside the weights"),
              std::string::npos);
    // Element types: unknown, missing, an f32 step of 8-bit values, an int8 layer of f32 data.
    const std::string typed = R"({"version": 2, "functions": [{"symbol": "f",
        "values": [[1, 4], [2, 4], [1, 2]], "inputs": [0], "outputs": [2],
        "constants": [{"value": 1, "offset": 0}], )";
    const std::string layer = R"("steps": [{"op": "inner_product", "src": 0, "weights": 1,
        "bias": -1, "sum": -1, "dst": 2, "post_op": null, "quantized": {"src_zero_point": 0,
        "dst_zero_point": 0, "scales": [0.5]}}]}]})";
    std::string weights(64, '\0');
    EXPECT_NE(load_error(header(typed + R"("dtypes": ["f32", "f16", "f32"], )" + layer) + weights)
                  .find("an unknown dtype"),
              std::string::npos);
    EXPECT_NE(load_error(header(typed + R"("dtypes": ["f32"], )" + layer) + weights)
                  .find("not one dtype per value"),
              std::string::npos);
    EXPECT_NE(load_error(header(typed + R"("dtypes": ["f32", "s8", "u8"], )" + layer) + weights)
                  .find("a quantized layer of other than u8/s8 data"),
              std::string::npos);
    EXPECT_NE(load_error(header(R"({"version": 2, "functions": [{"symbol": "f",
        "values": [[4], [4]], "dtypes": ["u8", "u8"], "inputs": [0], "outputs": [1],
        "constants": [], "steps": [{"op": "eltwise", "alg": "relu", "alpha": 0, "beta": 0,
        "src": 0, "dst": 1}]}]})"))
                  .find("eltwise of a value that is not f32"),
              std::string::npos);
    // An int8 layer's parameters: a zero point out of range, a scale that is not positive.
    for (auto [from, to, message] :
         {std::tuple{"\"src_zero_point\": 0", "\"src_zero_point\": 99999999",
                     "a zero point out of range"},
          std::tuple{"[0.5]", "[-0.5]", "a scale that is not a positive number"}}) {
        std::string bad_layer = layer;
        bad_layer.replace(bad_layer.find(from), std::string(from).size(), to);
        EXPECT_NE(
            load_error(header(typed + R"("dtypes": ["u8", "s8", "u8"], )" + bad_layer) + weights)
                .find(message),
            std::string::npos)
            << message;
    }
    std::string three_scales = layer;
    three_scales.replace(three_scales.find("[0.5]"), 5, "[0.5, 1, 2]");
    EXPECT_NE(
        load_error(header(typed + R"("dtypes": ["u8", "s8", "u8"], )" + three_scales) + weights)
            .find("not one scale or one per output channel"),
        std::string::npos);
    // A well-formed int8 layer loads; its arguments must be of its types.
    runtime::Module q = runtime::load_external_module(
        "dnnl", header(typed + R"("dtypes": ["u8", "s8", "u8"], )" + layer) + weights);
    auto u8 = testing::zeros({1, 4}, "uint8"), u8_out = testing::zeros({1, 2}, "uint8");
    q.get_function("f")(u8, u8_out);
    try {
        q.get_function("f")(testing::zeros({1, 4}), u8_out);
        ADD_FAILURE() << "a float32 argument was accepted for uint8";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("argument 0 is not the compact uint8"),
                  std::string::npos)
            << e.what();
    }
    // A well-formed region loads and checks its arguments when called.
    std::string ok = header(fn + R"({"op": "eltwise", "alg": "relu", "alpha": 0, "beta": 0,
                                     "src": 0, "dst": 1}]}]})");
    runtime::Module m = runtime::load_external_module("dnnl", ok);
    auto in = testing::random_tensor({4}, 1), out = testing::zeros({4}), bad = testing::zeros({5});
    m.get_function("f")(in, out);
    auto v = in.to_vector<float>(), r = out.to_vector<float>();
    for (int i = 0; i < 4; ++i) EXPECT_EQ(r[i], std::max(v[i], 0.0f));
    try {
        m.get_function("f")(in, bad);
        ADD_FAILURE() << "a wrongly shaped output was accepted";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("f: argument 1 is not"), std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace anvil
