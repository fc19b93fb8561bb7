// alter_op_layout: which convolutions become nn.conv2d_nchwc, and where layout transforms go.
#include <algorithm>
#include <cstring>
#include <map>

#include "graph/attr_fields.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/elementwise.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

Ref<Attrs> conv_attrs(int64_t groups, std::vector<int64_t> padding = {1, 1, 1, 1}) {
    Ref<Attrs> a = ops::get_op("nn.conv2d").make_default_attrs();
    a = attr_with(*a, "padding", std::move(padding));
    return attr_with(*a, "groups", groups);
}

// The (src, dst) layouts of every layout_transform in `e`, operands first.
std::vector<std::string> transforms(const Expr& e) {
    std::vector<std::string> out;
    for (const Call* c : op_calls(e)) {
        if (c->op->name != "layout_transform") continue;
        out.push_back(*attr_string(*c->attrs, "src_layout") + "->" +
                      *attr_string(*c->attrs, "dst_layout"));
    }
    return out;
}

size_t count_op(const Expr& e, const std::string& name) {
    auto names = op_names(e);
    return static_cast<size_t>(std::count(names.begin(), names.end(), name));
}

TEST(AlterOpLayout, ConvChainStaysBlockedBetweenConvolutions) {
    // conv -> add(bias [32,1,1]) -> relu -> conv -> result
    auto x = tensor_var("x", {1, 16, 8, 8});
    Expr c1 = call("nn.conv2d", {x, constant({32, 16, 3, 3}, {0.5f})}, conv_attrs(1));
    Expr r = call("nn.relu", {call("add", {c1, constant({32, 1, 1}, {1.0f})})});
    Expr c2 =
        call("nn.conv2d", {r, constant({16, 32, 1, 1}, {0.25f})}, conv_attrs(1, {0, 0, 0, 0}));
    Ref<Function> f = make_function({x}, c2);
    IRModule m = alter_op_layout(module_of(f), test_context());
    const Expr& body = m.main()->body;
    EXPECT_TRUE(type_equal(body->type, c2->type));
    EXPECT_EQ(count_op(body, "nn.conv2d"), 0u);
    EXPECT_EQ(count_op(body, "nn.conv2d_nchwc"), 2u);
    // In, the two weights, the bias, out: nothing between the convolutions.
    EXPECT_EQ(transforms(body),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW16i16o", "NCHW->NCHW16c",
                                        "OIHW->OIHW16i16o", "NCHW16c->NCHW"}));
    // The bias became [1, 2, 1, 1, 16]: expanded to 4-D, then blocked.
    for (const Call* c : op_calls(body)) {
        if (c->op->name != "add") continue;
        auto* t = c->args[1]->type.as<TensorType>();
        EXPECT_EQ(t->static_shape(), (std::vector<int64_t>{1, 2, 1, 1, 16}));
    }
}

TEST(AlterOpLayout, ResidualAddReadsBothOperandsBlocked) {
    auto x = tensor_var("x", {1, 16, 8, 8});
    Expr y =
        call("nn.relu", {call("nn.conv2d", {x, constant({16, 16, 3, 3}, {0.1f})}, conv_attrs(1))});
    Expr z =
        call("add", {call("nn.conv2d", {y, constant({16, 16, 3, 3}, {0.2f})}, conv_attrs(1)), y});
    IRModule m = alter_op_layout(module_of(make_function({x}, z)), test_context());
    EXPECT_EQ(transforms(m.main()->body),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW16i16o", "OIHW->OIHW16i16o",
                                        "NCHW16c->NCHW"}));
}

TEST(AlterOpLayout, StemAndDepthwiseWeights) {
    // Three input channels have no block: the stem reads NCHW data, its weight's input block is
    // all three channels. 24 channels take blocks of 8; the depthwise weight's input block is 1.
    auto x = tensor_var("x", {1, 3, 16, 16});
    Expr stem = call("nn.conv2d", {x, constant({24, 3, 3, 3}, {1.0f})}, conv_attrs(1));
    Expr dw = call("nn.conv2d", {stem, constant({24, 1, 3, 3}, {1.0f})}, conv_attrs(24));
    IRModule m = alter_op_layout(module_of(make_function({x}, dw)), test_context());
    EXPECT_EQ(transforms(m.main()->body),
              (std::vector<std::string>{"OIHW->OIHW3i8o", "OIHW->OIHW1i8o", "NCHW8c->NCHW"}));
    EXPECT_TRUE(type_equal(m.main()->body->type, dw->type));
}

TEST(AlterOpLayout, PlainConsumersShareOneTransformBack) {
    auto x = tensor_var("x", {1, 16, 8, 8});
    Expr c = call("nn.conv2d", {x, constant({16, 16, 3, 3}, {1.0f})}, conv_attrs(1));
    // prelu names the channel axis: it reads NCHW, as the tuple does.
    Expr p = call("nn.prelu", {c, constant({16}, {0.1f})});
    Expr t = make_tuple({p, c});
    IRModule m = alter_op_layout(module_of(make_function({x}, t)), test_context());
    EXPECT_EQ(transforms(m.main()->body),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW16i16o", "NCHW16c->NCHW"}));
}

Expr to_nchw(const Expr& v, const std::string& src) {
    Ref<Attrs> t = ops::get_op("layout_transform").make_default_attrs();
    t = attr_with(*t, "src_layout", src);
    t = attr_with(*t, "dst_layout", std::string("NCHW"));
    return call("layout_transform", {v}, t);
}

TEST(AlterOpLayout, ConvolutionsOfOneInputShareItsTransform) {
    auto x = tensor_var("x", {1, 16, 8, 8});
    Expr a = call("nn.conv2d", {x, constant({16, 16, 3, 3}, {1.0f})}, conv_attrs(1));
    Expr b = call("nn.conv2d", {x, constant({16, 16, 3, 3}, {2.0f})}, conv_attrs(1));
    IRModule m =
        alter_op_layout(module_of(make_function({x}, call("add", {a, b}))), test_context());
    EXPECT_EQ(transforms(m.main()->body),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW16i16o", "OIHW->OIHW16i16o",
                                        "NCHW16c->NCHW"}));
}

TEST(AlterOpLayout, AModelsOwnTransformToNCHWIsReadBlocked) {
    // layout_transform(v, NCHW8c, NCHW) in the model: the convolution reads v, its weight
    // packed for blocks of 8 input channels.
    auto v = tensor_var("v", {1, 4, 8, 8, 8});
    Expr x = to_nchw(v, "NCHW8c");
    Expr c = call("nn.conv2d", {x, constant({32, 32, 3, 3}, {1.0f})}, conv_attrs(1));
    IRModule m = alter_op_layout(module_of(make_function({v}, c)), test_context());
    EXPECT_EQ(transforms(m.main()->body),
              (std::vector<std::string>{"OIHW->OIHW8i16o", "NCHW16c->NCHW"}));
    EXPECT_TRUE(type_equal(m.main()->body->type, c->type));
}

TEST(AlterOpLayout, AModelsTransformReadByAPlainConsumerStays) {
    auto v = tensor_var("v", {1, 2, 8, 8, 16});
    Expr x = to_nchw(v, "NCHW16c");
    Expr c = call("nn.conv2d", {x, constant({32, 32, 3, 3}, {1.0f})}, conv_attrs(1));
    Expr p = call("nn.prelu", {x, constant({32}, {0.1f})});  // reads NCHW
    IRModule m = alter_op_layout(module_of(make_function({v}, make_tuple({c, p}))), test_context());
    EXPECT_EQ(transforms(m.main()->body),
              (std::vector<std::string>{"OIHW->OIHW16i16o", "NCHW16c->NCHW", "NCHW16c->NCHW"}));
}

TEST(AlterOpLayout, BlocksNoKernelIsBuiltForAreNotCarried) {
    // A model's NCHW1c value broadcasts over the channels of a blocked convolution output: it
    // is an operand like any 1-channel NCHW value, not a blocked one.
    auto x = tensor_var("x", {1, 16, 8, 8});
    auto v = tensor_var("v", {1, 1, 8, 8, 1});
    Expr c = call("nn.conv2d", {x, constant({16, 16, 3, 3}, {1.0f})}, conv_attrs(1));
    Expr sum = call("add", {c, to_nchw(v, "NCHW1c")});
    IRModule m = alter_op_layout(module_of(make_function({x, v}, sum)), test_context());
    EXPECT_EQ(transforms(m.main()->body),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW16i16o", "NCHW1c->NCHW",
                                        "NCHW16c->NCHW"}));
    EXPECT_TRUE(type_equal(m.main()->body->type, sum->type));
}

TEST(AlterOpLayout, ConvolutionsInNestedFunctionsAreBlocked) {
    auto y = tensor_var("y", {1, 16, 8, 8});
    Ref<Function> inner =
        make_function({y}, call("nn.conv2d", {y, constant({16, 16, 3, 3}, {1.0f})}, conv_attrs(1)));
    auto x = tensor_var("x", {1, 16, 8, 8});
    IRModule m = alter_op_layout(module_of(make_function({x}, make_call_function(inner, {x}))),
                                 test_context());
    const Function* f = m.main()->body.as<Call>()->callee.as<Function>();
    EXPECT_EQ(count_op(f->body, "nn.conv2d_nchwc"), 1u);
    EXPECT_EQ(transforms(f->body),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW16i16o", "NCHW16c->NCHW"}));
}

TEST(AlterOpLayout, FunctionsOfAnExternalCompilerAreLeftAndNotAskedAbout) {
    // A dnnl region's convolution stays as partitioned, and tuning is not asked about its
    // channel count; a function whose body is a function is rewritten once, inside.
    auto y = tensor_var("y", {1, 32, 8, 8});
    Ref<Function> region = make_function(
        {y}, call("nn.conv2d", {y, constant({32, 32, 3, 3}, {1.0f})}, conv_attrs(1)), false, {},
        {{"Compiler", "dnnl"}, {"global_symbol", "tvmgen_default_dnnl_main_0"}});
    auto z = tensor_var("z", {1, 16, 8, 8});
    Ref<Function> inner =
        make_function({z}, call("nn.conv2d", {z, constant({16, 16, 3, 3}, {1.0f})}, conv_attrs(1)));
    auto x = tensor_var("x", {1, 32, 8, 8});
    Ref<Function> outer = make_function({}, inner);
    Expr body = make_tuple({make_call_function(region, {x}), outer});
    PassContext ctx = test_context();
    std::vector<int64_t> asked;
    ctx.layout_block = [&](int64_t channels, const std::vector<const Call*>&,
                           const std::vector<int64_t>& choices) {
        asked.push_back(channels);
        return choices.back();
    };
    IRModule m = alter_op_layout(module_of(make_function({x}, body)), ctx);
    const auto* t = m.main()->body.as<Tuple>();
    EXPECT_TRUE(t->fields[0].as<Call>()->callee.same_as(region));
    const Function* rewritten = t->fields[1].as<Function>()->body.as<Function>();
    EXPECT_EQ(count_op(rewritten->body, "nn.conv2d_nchwc"), 1u);
    EXPECT_EQ(asked, (std::vector<int64_t>{16}));
}

TEST(AlterOpLayout, PoolsOfBlockedValuesPoolTheBlocks) {
    // ResNet's stem: conv -> relu -> max_pool -> conv, then a global pool, also of the blocks:
    // only its [1, 1, 1, 1, 16] result goes back to NCHW.
    auto x = tensor_var("x", {1, 3, 16, 16});
    Expr stem =
        call("nn.relu", {call("nn.conv2d", {x, constant({16, 3, 3, 3}, {1.0f})}, conv_attrs(1))});
    Ref<Attrs> pa = ops::get_op("nn.max_pool2d").make_default_attrs();
    pa = attr_with(*pa, "pool_size", std::vector<int64_t>{3, 3});
    pa = attr_with(*pa, "strides", std::vector<int64_t>{2, 2});
    Expr pool = call("nn.max_pool2d", {stem}, pa);
    Expr c = call("nn.conv2d", {pool, constant({16, 16, 3, 3}, {1.0f})}, conv_attrs(1));
    Expr g = call("nn.global_avg_pool2d", {c});
    IRModule m = alter_op_layout(module_of(make_function({x}, g)), test_context());
    const Expr& body = m.main()->body;
    EXPECT_TRUE(type_equal(body->type, g->type));
    EXPECT_EQ(transforms(body),
              (std::vector<std::string>{"OIHW->OIHW3i16o", "OIHW->OIHW16i16o", "NCHW16c->NCHW"}));
    int pools = 0;
    for (const Call* call : op_calls(body)) {
        if (call->op->name == "nn.max_pool2d" || call->op->name == "nn.global_avg_pool2d") {
            EXPECT_EQ(attr_string(*call->attrs, "layout"), "NCHW16c") << call->op->name;
            ++pools;
        }
        if (call->op->name == "layout_transform" &&
            attr_string(*call->attrs, "dst_layout") == "NCHW") {
            EXPECT_EQ(call->args[0].as<Call>()->op->name, "nn.global_avg_pool2d");
        }
    }
    EXPECT_EQ(pools, 2);
}

TEST(AlterOpLayout, BiasAddAndChannelConcatenationStayBlocked) {
    // A fire module (SqueezeNet): conv + bias_add, two branches concatenated, another conv.
    auto x = tensor_var("x", {1, 16, 8, 8});
    auto conv_bias = [](Expr in, int64_t out, int64_t k) {
        Expr c = call("nn.conv2d", {in, constant({out, 16, k, k}, {0.5f})},
                      conv_attrs(1, k == 3 ? std::vector<int64_t>{1, 1, 1, 1}
                                           : std::vector<int64_t>{0, 0, 0, 0}));
        return call("nn.relu", {call("nn.bias_add", {c, constant({out}, {1.0f})})});
    };
    Ref<Attrs> cat = attr_with(*ops::get_op("concatenate").make_default_attrs(), "axis", 1);
    Expr fire = call("concatenate", {conv_bias(x, 16, 1), conv_bias(x, 32, 3)}, cat);
    Expr next =
        call("nn.conv2d", {fire, constant({16, 48, 1, 1}, {1.0f})}, conv_attrs(1, {0, 0, 0, 0}));
    IRModule m = alter_op_layout(module_of(make_function({x}, next)), test_context());
    const Expr& body = m.main()->body;
    EXPECT_TRUE(type_equal(body->type, next->type));
    EXPECT_EQ(count_op(body, "nn.bias_add"), 0u);
    EXPECT_EQ(count_op(body, "add"), 2u);
    // Data: one transform in, one out; the rest are weights and biases.
    auto t = transforms(body);
    EXPECT_EQ(std::count(t.begin(), t.end(), "NCHW16c->NCHW"), 1);
    for (const Call* c : op_calls(body)) {
        if (c->op->name != "concatenate") continue;
        EXPECT_EQ(c->type.as<TensorType>()->static_shape(), (std::vector<int64_t>{1, 3, 8, 8, 16}));
    }
}

TEST(AlterOpLayout, ConvolutionsWithoutABlockedFormStay) {
    auto x = tensor_var("x", {1, 16, 8, 8});
    std::vector<Ref<Function>> fs = {
        // Two groups of 8: neither groups == 1 nor depthwise.
        make_function({x}, call("nn.conv2d", {x, constant({16, 8, 3, 3}, {1.0f})}, conv_attrs(2))),
        // 12 output channels have no block of 8 or 16.
        make_function({x}, call("nn.conv2d", {x, constant({12, 16, 3, 3}, {1.0f})}, conv_attrs(1))),
    };
    auto w = tensor_var("w", {16, 16, 3, 3});
    fs.push_back(make_function({x, w}, call("nn.conv2d", {x, w}, conv_attrs(1))));
    PrimExpr n = anvil::make_var("n", DataType::int64());
    auto dyn = make_var(
        "d", make_tensor_type({n, make_int(DataType::int64(), 16), make_int(DataType::int64(), 8),
                               make_int(DataType::int64(), 8)},
                              DataType::float32()));
    fs.push_back(make_function(
        {dyn}, call("nn.conv2d", {dyn, constant({16, 16, 3, 3}, {1.0f})}, conv_attrs(1))));
    for (const auto& f : fs) {
        EXPECT_TRUE(alter_op_layout(module_of(f), test_context()).main().same_as(f));
    }
}

// A constant weight of `shape` and type `t`, zeros (its values do not matter to the layouts).
Expr typed_weight(const std::vector<int64_t>& shape, DLDataType t) {
    auto a = runtime::NDArray::empty(shape, t);
    std::memset(a.raw_data(), 0, a.nbytes());
    return make_constant(a);
}

// nn.conv2d attributes: `groups`, `pad` on every side, sums in `out_dtype`.
Ref<Attrs> typed_conv_attrs(int64_t groups, int64_t pad, DataType out_dtype) {
    ops::Conv2DAttrs a;
    a.groups = groups;
    a.padding = {pad, pad, pad, pad};
    a.out_dtype = out_dtype;
    return make_ref<ops::Conv2DAttrs>(a);
}

const DLDataType kInt8{kDLInt, 8, 1}, kBfloat16{kDLBfloat, 16, 1}, kFloat16{kDLFloat, 16, 1};

TEST(AlterOpLayout, QuantizedConvolutionsStayBlockedThroughTheirEpilogues) {
    // uint8 x int8 convolutions summed in int32, each requantized back to uint8 by elementwise
    // ops: 1x1 16 -> 32, depthwise 3x3 on 32, 1x1 32 -> 24 (a block of 8).
    auto requantize = [](const Expr& sums) {
        ops::ClipAttrs clip;
        clip.a_min = 0;
        clip.a_max = 255;
        ops::CastAttrs cast;
        cast.dtype = DataType::uint(8);
        return call("cast", {call("clip", {sums}, make_ref<ops::ClipAttrs>(clip))},
                    make_ref<ops::CastAttrs>(cast));
    };
    auto x = tensor_var("x", {1, 16, 8, 8}, DataType::uint(8));
    Expr a = requantize(call("nn.conv2d", {x, typed_weight({32, 16, 1, 1}, kInt8)},
                             typed_conv_attrs(1, 0, DataType::int32())));
    Expr b = requantize(call("nn.conv2d", {a, typed_weight({32, 1, 3, 3}, kInt8)},
                             typed_conv_attrs(32, 1, DataType::int32())));
    Expr c = call("nn.conv2d", {b, typed_weight({24, 32, 1, 1}, kInt8)},
                  typed_conv_attrs(1, 0, DataType::int32()));
    Ref<Function> f = make_function({x}, c);
    IRModule m = alter_op_layout(module_of(f), test_context());
    const Expr& body = m.main()->body;
    EXPECT_TRUE(type_equal(body->type, c->type));
    EXPECT_EQ(count_op(body, "nn.conv2d"), 0u);
    EXPECT_EQ(count_op(body, "nn.conv2d_nchwc"), 3u);
    // In, the depthwise weight, out: the clips and casts compute on the blocks.
    EXPECT_EQ(transforms(body),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW1i16o", "NCHW8c->NCHW"}));
    // The 1x1 weights in words of 4 input channels, in the output's blocks (16, then 8).
    std::vector<std::vector<int64_t>> packed;
    for (const Call* call : op_calls(body)) {
        if (call->op->name != "nn.conv2d_pack_weight") continue;
        EXPECT_EQ(attr_bool(*call->attrs, "words"), true);
        packed.push_back(call->type.as<TensorType>()->static_shape());
    }
    EXPECT_EQ(packed, (std::vector<std::vector<int64_t>>{{2, 4, 1, 1, 16}, {3, 8, 1, 1, 8}}));
}

TEST(AlterOpLayout, NarrowConvolutionsWithoutABlockedFormStay) {
    auto x8 = tensor_var("x", {1, 16, 8, 8}, DataType::int_(8));
    auto xb = tensor_var("x", {1, 16, 8, 8}, DataType::bfloat16());
    auto xh = tensor_var("x", {1, 16, 8, 8}, DataType::float16());
    std::vector<Ref<Function>> fs = {
        // int8 data of one group: vpdpbusd reads unsigned data.
        make_function({x8}, call("nn.conv2d", {x8, typed_weight({16, 16, 1, 1}, kInt8)},
                                 typed_conv_attrs(1, 0, DataType::int32()))),
        // bfloat16 summed in bfloat16, and float16.
        make_function({xb}, call("nn.conv2d", {xb, typed_weight({16, 16, 1, 1}, kBfloat16)},
                                 typed_conv_attrs(1, 0, DataType::void_()))),
        make_function({xh}, call("nn.conv2d", {xh, typed_weight({16, 16, 1, 1}, kFloat16)},
                                 typed_conv_attrs(1, 0, DataType::void_()))),
    };
    for (size_t i = 0; i < fs.size(); ++i) {
        EXPECT_TRUE(alter_op_layout(module_of(fs[i]), test_context()).main().same_as(fs[i])) << i;
    }
}

TEST(AlterOpLayout, BfloatConvolutionsTakeTheirWeightInWords) {
    // to_mixed_precision's convolution: bfloat16 operands summed in float32, one group and
    // depthwise.
    auto x = tensor_var("x", {1, 16, 8, 8}, DataType::bfloat16());
    Expr a = call("nn.conv2d", {x, typed_weight({16, 1, 3, 3}, kBfloat16)},
                  typed_conv_attrs(16, 1, DataType::float32()));
    ops::CastAttrs cast;
    cast.dtype = DataType::bfloat16();
    Expr b = call("nn.conv2d",
                  {call("cast", {a}, make_ref<ops::CastAttrs>(cast)),
                   typed_weight({32, 16, 3, 3}, kBfloat16)},
                  typed_conv_attrs(1, 1, DataType::float32()));
    IRModule m = alter_op_layout(module_of(make_function({x}, b)), test_context());
    const Expr& body = m.main()->body;
    EXPECT_TRUE(type_equal(body->type, b->type));
    EXPECT_EQ(count_op(body, "nn.conv2d_nchwc"), 2u);
    EXPECT_EQ(transforms(body),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW1i16o", "NCHW16c->NCHW"}));
    size_t packed = 0;
    for (const Call* call : op_calls(body)) {
        if (call->op->name != "nn.conv2d_pack_weight") continue;
        ++packed;
        EXPECT_EQ(call->type.as<TensorType>()->static_shape(),
                  (std::vector<int64_t>{2, 8, 3, 3, 16}));  // words of 2 channels
    }
    EXPECT_EQ(packed, 1u);
}

// conv 16 -> 32, relu, conv 32 -> 32 plus the relu (a residual add), conv 32 -> 16; the first
// two k x k (3: Winograd could compute them).
Ref<Function> residual_block(int64_t k = 3) {
    auto x = tensor_var("x", {1, 16, 8, 8});
    const int64_t p = k / 2;
    Expr a = call("nn.relu", {call("nn.conv2d", {x, constant({32, 16, k, k}, {0.1f})},
                                   conv_attrs(1, {p, p, p, p}))});
    Expr b = call(
        "add",
        {call("nn.conv2d", {a, constant({32, 32, k, k}, {0.2f})}, conv_attrs(1, {p, p, p, p})), a});
    Expr c = call("nn.conv2d", {b, constant({16, 32, 1, 1}, {0.3f})}, conv_attrs(1, {0, 0, 0, 0}));
    return make_function({x}, c);
}

TEST(AlterOpLayout, TuningChoosesTheBlockOfEachChannelCount) {
    PassContext ctx = test_context();
    std::map<int64_t, size_t> asked;  // channel count -> convolutions touching it
    std::map<int64_t, std::vector<int64_t>> offered;
    int64_t block_of_32 = -1;
    ctx.layout_block = [&](int64_t channels, const std::vector<const Call*>& convs,
                           const std::vector<int64_t>& choices) {
        EXPECT_FALSE(asked.count(channels)) << "asked twice about " << channels;
        asked[channels] = convs.size();
        offered[channels] = choices;
        return channels == 32 ? block_of_32 : int64_t{-1};
    };
    auto run = [&](int64_t block, int64_t k = 3) {
        asked.clear();
        block_of_32 = block;
        return alter_op_layout(module_of(residual_block(k)), ctx).main()->body;
    };
    // -1: the default, 16 for both counts; 16 counts two convolutions, 32 three.
    EXPECT_EQ(transforms(run(-1)),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW16i16o", "OIHW->OIHW16i16o",
                                        "OIHW->OIHW16i16o", "NCHW16c->NCHW"}));
    EXPECT_EQ(asked, (std::map<int64_t, size_t>{{16, 2}, {32, 3}}));
    // Unblocked is no choice where a 3x3 convolution touches the count (Winograd needs blocks).
    EXPECT_EQ(offered, (std::map<int64_t, std::vector<int64_t>>{{16, {8, 16}}, {32, {8, 16, 32}}}));
    // 32 channels in blocks of 8 and of 32: the 16-channel input and output keep 16.
    EXPECT_EQ(transforms(run(8)),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW16i8o", "OIHW->OIHW8i8o",
                                        "OIHW->OIHW8i16o", "NCHW16c->NCHW"}));
    Expr wide = run(32);
    EXPECT_EQ(transforms(wide),
              (std::vector<std::string>{"NCHW->NCHW16c", "OIHW->OIHW16i32o", "OIHW->OIHW32i32o",
                                        "OIHW->OIHW32i16o", "NCHW16c->NCHW"}));
    for (const Call* c : op_calls(wide)) {
        if (c->op->name == "add") {
            EXPECT_EQ(c->type.as<TensorType>()->static_shape(),
                      (std::vector<int64_t>{1, 1, 8, 8, 32}));
        }
    }
    // 0 is no choice here: the default.
    EXPECT_EQ(transforms(run(0)), transforms(run(-1)));
    // With 1x1 convolutions it is: the convolutions producing 32 channels stay unblocked; the
    // last one reads them as NCHW (its weight's input block is all 32 channels).
    Expr unblocked = run(0, 1);
    EXPECT_EQ(offered.at(32), (std::vector<int64_t>{0, 8, 16, 32}));
    EXPECT_EQ(count_op(unblocked, "nn.conv2d"), 2u);
    EXPECT_EQ(count_op(unblocked, "nn.conv2d_nchwc"), 1u);
    EXPECT_EQ(transforms(unblocked),
              (std::vector<std::string>{"OIHW->OIHW32i16o", "NCHW16c->NCHW"}));
    // A block that does not divide the channels (or is no block) is not a choice: the default.
    for (int64_t bad : {4, 12, 64}) EXPECT_EQ(transforms(run(bad)), transforms(run(-1))) << bad;
}

TEST(AlterOpLayout, AConcatenationTakesTheBlockChosenForItsChannelCount) {
    // Two 16-channel convolutions concatenated to 32 channels, read by a third convolution.
    auto x = tensor_var("x", {1, 16, 8, 8});
    Expr a = call("nn.conv2d", {x, constant({16, 16, 3, 3}, {0.1f})}, conv_attrs(1));
    Expr b = call("nn.conv2d", {x, constant({16, 16, 3, 3}, {0.2f})}, conv_attrs(1));
    Ref<Attrs> ca = attr_with(*ops::get_op("concatenate").make_default_attrs(), "axis", 1);
    Expr cat = call("concatenate", {a, b}, ca);
    Expr c =
        call("nn.conv2d", {cat, constant({16, 32, 1, 1}, {0.3f})}, conv_attrs(1, {0, 0, 0, 0}));
    PassContext ctx = test_context();
    int64_t block_of_32 = -1;
    ctx.layout_block = [&](int64_t channels, const std::vector<const Call*>&,
                           const std::vector<int64_t>&) {
        return channels == 32 ? block_of_32 : int64_t{-1};
    };
    auto concat_shape = [&](int64_t block) {
        block_of_32 = block;
        Expr body = alter_op_layout(module_of(make_function({x}, c)), ctx).main()->body;
        for (const Call* call : op_calls(body)) {
            if (call->op->name == "concatenate") {
                return call->type.as<TensorType>()->static_shape();
            }
        }
        return std::vector<int64_t>{};
    };
    EXPECT_EQ(concat_shape(-1), (std::vector<int64_t>{1, 2, 8, 8, 16}));
    EXPECT_EQ(concat_shape(8), (std::vector<int64_t>{1, 4, 8, 8, 8}));
    // 32 does not divide the operands' 16 channels: the operands' block.
    EXPECT_EQ(concat_shape(32), (std::vector<int64_t>{1, 2, 8, 8, 16}));
    // 0: the concatenation reads NCHW operands, and so does the convolution after it.
    EXPECT_EQ(concat_shape(0), (std::vector<int64_t>{1, 32, 8, 8}));
}

}  // namespace
}  // namespace anvil::graph::testing
