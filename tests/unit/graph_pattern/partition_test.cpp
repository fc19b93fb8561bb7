// Partitioning by dataflow patterns (graph/pattern/partition.h), and function attributes in the
// text form.
#include "graph/pattern/partition.h"

#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/structural_equal.h"
#include "graph/text_base64.h"
#include "graph/verifier.h"
#include "pattern_test_util.h"

namespace anvil::graph::testing {
namespace {

// The pad-optional conv + bias + activation pattern of TVM's BYOC examples, in float form:
//   (nn.pad(*) | *) -> nn.conv2d(., const) -> nn.bias_add(., const) -> nn.relu
DFPattern conv_bias_relu() {
    DFPattern data = is_op("nn.pad") | wildcard();
    DFPattern conv = is_op("nn.conv2d")({data, is_constant()});
    DFPattern bias = is_op("nn.bias_add")({conv, is_constant()});
    return is_op("nn.relu")({bias});
}

Expr conv_bias_relu_of(const Expr& x, int64_t channels) {
    Expr conv = call("nn.conv2d", {x, constant({channels, channels, 3, 3}, {0.25f})},
                     attrs_of_op("nn.conv2d", {{"padding", {1, 1, 1, 1}}}));
    return call("nn.relu", {call("nn.bias_add", {conv, constant({channels}, {1.0f})})});
}

// (A pointer into `e`: keep `e` alive while using it.)
const Function* callee_of(const Expr& e) {
    auto* c = e.as<Call>();
    return c && c->callee.defined() ? c->callee.as<Function>() : nullptr;
}

TEST(Partition, ConvBiasReluWithAndWithoutPad) {
    auto x = tensor_var("x", {1, 4, 8, 8});
    Expr padded =
        call("nn.pad", {x}, attrs_of_op("nn.pad", {{"pad_width", {0, 0, 0, 0, 1, 1, 1, 1}}}));
    Expr first = conv_bias_relu_of(padded, 4);
    Expr second = conv_bias_relu_of(first, 4);
    Expr out = partition(conv_bias_relu(), second, {{"Composite", "dnnl.conv2d_bias_relu"}});

    const Function* outer = callee_of(out);
    ASSERT_NE(outer, nullptr) << print(out);
    EXPECT_EQ(outer->attrs.at("Composite"), "dnnl.conv2d_bias_relu");
    EXPECT_EQ(outer->attrs.at("PartitionedFromPattern"), "nn.conv2d_nn.bias_add_nn.relu_");
    ASSERT_EQ(outer->params.size(), 1u);  // the data; the weight and bias stay inside
    const Function* inner = callee_of(out.as<Call>()->args[0]);
    ASSERT_NE(inner, nullptr) << print(out);
    EXPECT_EQ(inner->attrs.at("PartitionedFromPattern"), "nn.pad_nn.conv2d_nn.bias_add_nn.relu_");
    EXPECT_TRUE(out.as<Call>()->args[0].as<Call>()->args[0].same_as(x));
    EXPECT_TRUE(type_equal(out->type, second->type));
}

TEST(Partition, SharedValuesAreOneParameterAndInsidesUsedOutsideAreLeft) {
    auto x = tensor_var("x", {4});
    DFPattern a = wildcard(), b = wildcard();
    DFPattern p = is_op("add")({is_op("exp")({a}), b});
    // add(exp(x), x): x is read twice, one parameter.
    Expr partitioned = partition(p, call("add", {call("exp", {x}), x}));
    const Function* f = callee_of(partitioned);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->params.size(), 1u);
    // exp(x) also an output: not partitioned.
    Expr ex = call("exp", {x});
    Expr graph = make_tuple({call("add", {ex, x}), ex});
    EXPECT_TRUE(partition(p, graph).same_as(graph));
}

TEST(Partition, CheckDecidesPerMatch) {
    auto x = tensor_var("x", {1, 4, 8, 8});
    Expr e = conv_bias_relu_of(conv_bias_relu_of(x, 4), 4);
    int asked = 0;
    Expr out = partition(conv_bias_relu(), e, {}, [&](const Expr& root) {
        ++asked;
        return root.same_as(e);  // only the outer one
    });
    EXPECT_EQ(asked, 2);
    ASSERT_NE(callee_of(out), nullptr);
    EXPECT_EQ(callee_of(out.as<Call>()->args[0]), nullptr);
}

TEST(Partition, AFunctionIsPartitionedInItsBodyAndPrintsAndParsesBack) {
    auto x = tensor_var("x", {1, 4, 8, 8});
    Ref<Function> main = make_function({x}, conv_bias_relu_of(x, 4));
    Expr out = partition(conv_bias_relu(), Expr(main), {{"Composite", "conv_bias_relu"}});
    IRModule m;
    m.functions["main"] = out.cast<Function>();
    EXPECT_NO_THROW(verify(m));
    const std::string text = print(m);
    EXPECT_NE(text.find("Composite=\"conv_bias_relu\", "
                        "PartitionedFromPattern=\"nn.conv2d_nn.bias_add_nn.relu_\""),
              std::string::npos)
        << text;
    IRModule back = parse_module(text, ops::op_table());
    EXPECT_TRUE(structural_equal(back, m)) << text << "\n---\n" << print(back);
    EXPECT_EQ(print(back), text);
}

TEST(Partition, MatchesMayShareAConstant) {
    // Two layers with one weight and bias node (tied weights; one node per initializer).
    auto x = tensor_var("x", {1, 4, 8, 8});
    Expr w = constant({4, 4, 3, 3}, {0.25f}), b = constant({4}, {1.0f});
    auto layer = [&](const Expr& in) {
        Expr conv =
            call("nn.conv2d", {in, w}, attrs_of_op("nn.conv2d", {{"padding", {1, 1, 1, 1}}}));
        return call("nn.relu", {call("nn.bias_add", {conv, b})});
    };
    Expr out = partition(conv_bias_relu(), layer(layer(x)), {{"Composite", "c"}});
    ASSERT_NE(callee_of(out), nullptr);
    EXPECT_NE(callee_of(out.as<Call>()->args[0]), nullptr) << print(out);
}

TEST(Partition, ACalleeIsNeverAParameter) {
    // A match whose root calls a function (here: the wildcard matches a call of a partitioned
    // region): the callee stays the callee.
    auto x = tensor_var("x", {1, 4, 8, 8});
    Expr once = partition(conv_bias_relu(), conv_bias_relu_of(x, 4), {{"Composite", "c"}});
    Expr twice = partition(wildcard(), once);
    const Function* outer = callee_of(twice);
    ASSERT_NE(outer, nullptr) << print(twice);
    EXPECT_EQ(outer->params.size(), 1u);
    EXPECT_NE(callee_of(outer->body), nullptr);
}

TEST(Partition, ADominatorRegionIsOneFunction) {
    // relu(add(exp(c), sigmoid(c))), c = conv2d(x, w): the diamond with its parent, path
    // matched by a wildcard.
    auto x = tensor_var("x", {1, 4, 8, 8});
    Expr conv = call("nn.conv2d", {x, constant({4, 4, 1, 1}, {0.5f})});
    Expr out = call("nn.relu", {call("add", {call("exp", {conv}), call("sigmoid", {conv})})});
    DFPattern p =
        dominates(is_op("nn.conv2d")({wildcard(), is_constant()}), wildcard(), is_op("nn.relu"));
    Expr partitioned = partition(p, out);
    const Function* f = callee_of(partitioned);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->params.size(), 1u);
    EXPECT_EQ(f->attrs.at("PartitionedFromPattern"), "nn.conv2d_exp_sigmoid_add_nn.relu_");
}

TEST(Partition, OnlyWhatComputesIsPartitioned) {
    auto x = tensor_var("x", {4});
    Expr e = call("exp", {x});
    // A wildcard matches the call (a region of one op, its operand a parameter) and the
    // variable, which computes nothing.
    Expr partitioned = partition(wildcard(), e);
    const Function* f = callee_of(partitioned);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->params.size(), 1u);
    EXPECT_TRUE(partition(is_var(), Expr(x)).same_as(Expr(x)));
    EXPECT_TRUE(partition(is_op("nn.relu"), e).same_as(e));
}

TEST(FunctionAttrs, TextErrors) {
    const char* twice = R"(def @main(%x: Tensor[(4), float32], Composite="a", Composite="b") {
  %x
})";
    EXPECT_THROW(parse_module(twice, ops::op_table()), UserError);
    const char* not_string = R"(def @main(%x: Tensor[(4), float32], Composite=1) {
  %x
})";
    EXPECT_THROW(parse_module(not_string, ops::op_table()), UserError);
    const char* param_after = R"(def @main(Composite="a", %x: Tensor[(4), float32]) {
  %x
})";
    EXPECT_THROW(parse_module(param_after, ops::op_table()), UserError);
    const char* dotted = R"(def @main(%x: Tensor[(4), float32], Composite.x="a") {
  %x
})";
    try {
        parse_module(dotted, ops::op_table());
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("1:37"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("letters, digits and _ only"), std::string::npos);
    }
    EXPECT_THROW(make_function({}, constant({}, {1.0f}), false, {}, {{"has space", "x"}}),
                 UserError);
}

}  // namespace
}  // namespace anvil::graph::testing

namespace anvil::graph::testing {
namespace {

// The QNN form of the BYOC issue's pad-optional pattern, over a layer as PyTorch and TFLite models
// have it (Anvil's pad takes the pad value as its optional second operand, as TVM's nn.pad does).
DFPattern qnn_conv_pattern() {
    DFPattern pattern = is_op("nn.pad")({wildcard(), wildcard()}) | wildcard();
    pattern = is_op("qnn.conv2d")(
        {pattern, is_constant(), is_constant(), is_constant(), is_constant(), is_constant()});
    pattern = is_op("nn.bias_add")({pattern, is_constant()});
    return is_op("qnn.requantize")(
        {pattern, is_constant(), is_constant(), is_constant(), is_constant()});
}

std::string constant_text(int index, const std::string& type, const std::vector<uint8_t>& bytes) {
    return "meta[Constant][" + std::to_string(index) + "]: " + type + " = \"" +
           text::base64_encode(bytes.data(), bytes.size()) + "\"\n";
}

TEST(Partition, QnnConvPatternWithAndWithoutPad) {
    std::string text =
        "def @main(%x: Tensor[(1, 3, 8, 8), uint8]) {\n"
        "  %0 = nn.pad(%x, 114u8, pad_width=[0, 0, 0, 0, 1, 1, 1, 1]);\n"
        "  %1 = qnn.conv2d(%0, meta[Constant][0], 114, 0, 0.02f, 0.003f, channels=4);\n"
        "  %2 = nn.bias_add(%1, meta[Constant][1]);\n"
        "  %3 = qnn.requantize(%2, 6e-05f, 0, 0.015f, 0, axis=1, out_dtype=\"uint8\");\n"
        "  %4 = qnn.conv2d(%3, meta[Constant][2], 0, 0, 0.015f, 0.003f, padding=[1, 1, 1, 1]);\n"
        "  %5 = nn.bias_add(%4, meta[Constant][1]);\n"
        "  qnn.requantize(%5, 4.5e-05f, 0, 0.015f, 0, axis=1, out_dtype=\"uint8\")\n"
        "}\n#[metadata]\n" +
        constant_text(0, "Tensor[(4, 3, 3, 3), int8]", std::vector<uint8_t>(108, 3)) +
        constant_text(1, "Tensor[(4,), int32]", std::vector<uint8_t>(16, 0)) +
        constant_text(2, "Tensor[(4, 4, 3, 3), int8]", std::vector<uint8_t>(144, 255));
    IRModule m = parse_module(text, ops::op_table());
    Expr out = partition(qnn_conv_pattern(), m.main()->body, {{"Composite", "dnnl.qnn.conv2d"}});
    const Function* second = callee_of(out);
    ASSERT_NE(second, nullptr) << print(out);
    EXPECT_EQ(second->attrs.at("PartitionedFromPattern"), "qnn.conv2d_nn.bias_add_qnn.requantize_");
    const Function* first = callee_of(out.as<Call>()->args[0]);
    ASSERT_NE(first, nullptr) << print(out);
    EXPECT_EQ(first->attrs.at("Composite"), "dnnl.qnn.conv2d");
    EXPECT_EQ(first->attrs.at("PartitionedFromPattern"),
              "nn.pad_qnn.conv2d_nn.bias_add_qnn.requantize_");
    EXPECT_TRUE(type_equal(out->type, m.main()->body->type));
}

}  // namespace
}  // namespace anvil::graph::testing
