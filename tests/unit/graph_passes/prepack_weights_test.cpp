#include "graph/attr_fields.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

TEST(PrepackWeights, ConvWithConstantWeightReadsThePackedWeight) {
    auto x = tensor_var("x", {1, 8, 8, 8});
    Expr w = constant({40, 8, 3, 3}, {1.0f});
    Expr conv = call("nn.conv2d", {x, w},
                     attr_with(*ops::get_op("nn.conv2d").make_default_attrs(), "padding",
                               std::vector<int64_t>{1, 1, 1, 1}));
    IRModule m = prepack_weights(module_of(make_function({x}, conv)), test_context());
    const Expr& body = m.main()->body;
    ASSERT_EQ(op_names(body),
              (std::vector<std::string>{"nn.conv2d_pack_weight", "nn.conv2d_packed"}));
    EXPECT_TRUE(type_equal(body->type, conv->type));
    const Call* packed = body.as<Call>();
    EXPECT_EQ(attr_int(*packed->attrs, "channels"), 40);
    EXPECT_EQ(attr_ints(*packed->attrs, "padding"), (std::vector<int64_t>{1, 1, 1, 1}));
    // 40 channels in blocks of 8, 16 or 32, zero-padded past 40.
    auto* pt = packed->args[1]->type.as<TensorType>();
    ASSERT_EQ(pt->ndim(), 5u);
    auto s = pt->static_shape();
    EXPECT_GE(s[0] * s[4], 40);
    EXPECT_LT((s[0] - 1) * s[4], 40);
}

TEST(PrepackWeights, TuningChoosesTheWeightBlockOrTheDirectForm) {
    auto x = tensor_var("x", {1, 8, 8, 8});
    Expr conv = call("nn.conv2d", {x, constant({40, 8, 3, 3}, {1.0f})});
    PassContext ctx = test_context();
    int64_t chosen = -1;
    int asked = 0;
    ctx.conv2d_weight_block = [&](const Call& c) {
        EXPECT_EQ(c.op->name, "nn.conv2d");
        ++asked;
        return chosen;
    };
    for (int64_t block : {8, 32}) {
        chosen = block;
        IRModule m = prepack_weights(module_of(make_function({x}, conv)), ctx);
        const Call* packed = m.main()->body.as<Call>();
        ASSERT_EQ(packed->op->name, "nn.conv2d_packed");
        auto s = packed->args[1]->type.as<TensorType>()->static_shape();
        EXPECT_EQ(s, (std::vector<int64_t>{(40 + block - 1) / block, 8, 3, 3, block}));
        EXPECT_TRUE(type_equal(packed->type, conv->type));
    }
    // 0: nn.conv2d_packed of the weight as it is, the direct form.
    chosen = 0;
    IRModule m = prepack_weights(module_of(make_function({x}, conv)), ctx);
    EXPECT_EQ(op_names(m.main()->body), (std::vector<std::string>{"nn.conv2d_packed"}));
    EXPECT_EQ(m.main()->body.as<Call>()->args[1]->type.as<TensorType>()->ndim(), 4u);
    EXPECT_EQ(asked, 3);
}

TEST(PrepackWeights, DenseWithConstantWeightReadsThePackedWeight) {
    auto x = tensor_var("x", {2, 5});
    Expr dense = call("nn.dense", {x, constant({10, 5}, {0.5f})});
    IRModule m = prepack_weights(module_of(make_function({x}, dense)), test_context());
    const Expr& body = m.main()->body;
    ASSERT_EQ(op_names(body),
              (std::vector<std::string>{"nn.dense_pack_weight", "nn.dense_packed"}));
    EXPECT_TRUE(type_equal(body->type, dense->type));
    EXPECT_EQ(attr_int(*body.as<Call>()->attrs, "units"), 10);
}

// An int8 constant of `shape`, every element 1.
Expr int8_ones(std::vector<int64_t> shape) {
    auto a = runtime::NDArray::empty(shape, DLDataType{kDLInt, 8, 1});
    std::vector<int8_t> ones(a.num_elements(), 1);
    a.copy_from(ones);
    return make_constant(a);
}

TEST(PrepackWeights, Uint8ConvAndDensePackInt8WeightsInWordsOfFour) {
    auto conv_attrs = make_ref<ops::Conv2DAttrs>();
    const_cast<ops::Conv2DAttrs*>(conv_attrs.get())->out_dtype = DataType::int32();
    auto dense_attrs = make_ref<ops::DenseAttrs>();
    const_cast<ops::DenseAttrs*>(dense_attrs.get())->out_dtype = DataType::int32();
    // The convolution reads its weight packed in words: int32 [O/16, C/4, KH, KW, 16].
    auto x = tensor_var("x", {1, 6, 8, 8}, DataType::uint(8));
    Expr conv = call("nn.conv2d", {x, int8_ones({20, 6, 3, 3})}, conv_attrs);
    IRModule m = prepack_weights(module_of(make_function({x}, conv)), test_context());
    const Call* packed = m.main()->body.as<Call>();
    ASSERT_EQ(packed->op->name, "nn.conv2d_packed");
    EXPECT_EQ(attr_int(*packed->attrs, "words"), 4);
    auto* pt = packed->args[1]->type.as<TensorType>();
    EXPECT_EQ(pt->dtype, DataType::int32());
    EXPECT_EQ(pt->static_shape(), (std::vector<int64_t>{2, 2, 3, 3, 16}));
    EXPECT_TRUE(type_equal(packed->type, conv->type));
    // The dense becomes that 1x1 convolution of its rows.
    auto d = tensor_var("d", {3, 40}, DataType::uint(8));
    Expr dense = call("nn.dense", {d, int8_ones({10, 40})}, dense_attrs);
    m = prepack_weights(module_of(make_function({d}, dense)), test_context());
    EXPECT_EQ(op_names(m.main()->body),
              (std::vector<std::string>{"reshape", "nn.conv2d_pack_weight", "nn.conv2d_packed",
                                        "reshape"}));
    EXPECT_TRUE(type_equal(m.main()->body->type, dense->type));
}

// A bfloat16 constant of `shape`, every element 1.
Expr bfloat16_ones(std::vector<int64_t> shape) {
    auto a = runtime::NDArray::empty(shape, DLDataType{kDLBfloat, 16, 1});
    std::vector<uint16_t> ones(a.num_elements(), 0x3f80);
    a.copy_from(ones);
    return make_constant(a);
}

TEST(PrepackWeights, Bfloat16ConvAndDensePackInWordsOfTwoChannels) {
    auto conv_attrs = make_ref<ops::Conv2DAttrs>();
    const_cast<ops::Conv2DAttrs*>(conv_attrs.get())->out_dtype = DataType::float32();
    auto dense_attrs = make_ref<ops::DenseAttrs>();
    const_cast<ops::DenseAttrs*>(dense_attrs.get())->out_dtype = DataType::float32();
    // int32 [O/16, C/2, KH, KW, 16]: 7 channels are 4 words, the last one half zero.
    auto x = tensor_var("x", {1, 7, 8, 8}, DataType::bfloat16());
    Expr conv = call("nn.conv2d", {x, bfloat16_ones({20, 7, 3, 3})}, conv_attrs);
    IRModule m = prepack_weights(module_of(make_function({x}, conv)), test_context());
    const Call* packed = m.main()->body.as<Call>();
    ASSERT_EQ(packed->op->name, "nn.conv2d_packed");
    EXPECT_EQ(attr_int(*packed->attrs, "words"), 2);
    auto* pt = packed->args[1]->type.as<TensorType>();
    EXPECT_EQ(pt->dtype, DataType::int32());
    EXPECT_EQ(pt->static_shape(), (std::vector<int64_t>{2, 4, 3, 3, 16}));
    EXPECT_TRUE(type_equal(packed->type, conv->type));
    auto d = tensor_var("d", {3, 40}, DataType::bfloat16());
    Expr dense = call("nn.dense", {d, bfloat16_ones({10, 40})}, dense_attrs);
    m = prepack_weights(module_of(make_function({d}, dense)), test_context());
    EXPECT_EQ(op_names(m.main()->body),
              (std::vector<std::string>{"reshape", "nn.conv2d_pack_weight", "nn.conv2d_packed",
                                        "reshape"}));
    EXPECT_TRUE(type_equal(m.main()->body->type, dense->type));
}

TEST(PrepackWeights, DepthwiseAndVariableWeightsStay) {
    auto x = tensor_var("x", {1, 6, 8, 8});
    Expr dw = call("nn.conv2d", {x, constant({6, 1, 3, 3}, {1.0f})},
                   attr_with(*ops::get_op("nn.conv2d").make_default_attrs(), "groups", 6));
    Ref<Function> f1 = make_function({x}, dw);
    EXPECT_TRUE(prepack_weights(module_of(f1), test_context()).main().same_as(f1));
    auto w = tensor_var("w", {8, 6, 3, 3});
    Ref<Function> f2 = make_function({x, w}, call("nn.conv2d", {x, w}));
    EXPECT_TRUE(prepack_weights(module_of(f2), test_context()).main().same_as(f2));
    // A short reduction (3 channels x 3x3 taps, an RGB stem) is computed directly, unblocked.
    auto rgb = tensor_var("rgb", {1, 3, 8, 8});
    Ref<Function> f3 =
        make_function({rgb}, call("nn.conv2d", {rgb, constant({16, 3, 3, 3}, {1.0f})}));
    EXPECT_TRUE(prepack_weights(module_of(f3), test_context()).main().same_as(f3));
    // So is any kernel over an RGB image's three channels (ResNet's 7x7 stem); four channels of
    // 7x7 taps are blocked.
    Ref<Function> f4 =
        make_function({rgb}, call("nn.conv2d", {rgb, constant({64, 3, 7, 7}, {1.0f})}));
    EXPECT_TRUE(prepack_weights(module_of(f4), test_context()).main().same_as(f4));
    auto rgba = tensor_var("rgba", {1, 4, 16, 16});
    Ref<Function> f5 =
        make_function({rgba}, call("nn.conv2d", {rgba, constant({64, 4, 7, 7}, {1.0f})}));
    EXPECT_EQ(op_names(prepack_weights(module_of(f5), test_context()).main()->body),
              (std::vector<std::string>{"nn.conv2d_pack_weight", "nn.conv2d_packed"}));
}

}  // namespace
}  // namespace anvil::graph::testing
