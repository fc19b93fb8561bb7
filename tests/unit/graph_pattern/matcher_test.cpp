// Matching dataflow patterns (graph/pattern/matcher.h) and printing them (pattern.h).
#include "graph/pattern/matcher.h"

#include "pattern_test_util.h"

namespace anvil::graph::testing {
namespace {

TEST(Pattern, PrintsReadably) {
    DFPattern x = wildcard();
    DFPattern conv = is_op("nn.conv2d")({x, is_constant()});
    DFPattern p = is_op("nn.relu")({conv.optional([](const DFPattern& c) {
        return is_op("nn.bias_add")({c, is_constant()});
    })});
    EXPECT_EQ(pattern_str(p), "nn.relu((%0=nn.conv2d(*, const) | nn.bias_add(%0, const)))");
    EXPECT_EQ(pattern_str(is_op("add")({x, x})), "add(%0=*, %0)");
    EXPECT_EQ(pattern_str(is_op("nn.softmax").has_attr({{"axis", int64_t{-1}}})),
              "nn.softmax(...).has_attr(axis=-1)");
    EXPECT_EQ(pattern_str(is_tuple_get_item(is_tuple({is_var("a"), is_var()}), 1)),
              "(var(%a), var).1");
    EXPECT_EQ(pattern_str(wildcard().has_dtype(DataType::float32()).has_shape({1, 3})),
              "*.has_dtype(float32).has_shape((1, 3))");
    EXPECT_EQ(pattern_str(dominates(is_op("nn.conv2d"), wildcard(), is_op("nn.relu"))),
              "dominates(nn.conv2d(...), *, nn.relu(...))");
}

TEST(Pattern, AnUnknownOpIsAnError) {
    try {
        is_op("nn.conv3x3");
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("is_op(\"nn.conv3x3\"): there is no op of that name"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_THROW(wildcard()({wildcard()}), UserError);        // only is_op(name) is called
    EXPECT_THROW(is_op("add")({wildcard()})({}), UserError);  // already has its arguments
    EXPECT_THROW(is_op("add")({DFPattern()}), UserError);
}

TEST(Matcher, CallsMatchTheirOpAndArguments) {
    auto x = tensor_var("x", {2, 3});
    auto y = tensor_var("y", {2, 3});
    Expr e = call("nn.relu", {call("add", {x, y})});
    EXPECT_TRUE(match(is_op("nn.relu")({is_op("add")({wildcard(), wildcard()})}), e));
    EXPECT_TRUE(match(is_op("nn.relu"), e));  // any arguments
    EXPECT_FALSE(match(is_op("exp")({wildcard()}), e));
    EXPECT_FALSE(match(is_op("nn.relu")({wildcard(), wildcard()}), e));  // one argument
    EXPECT_TRUE(match(is_op("nn.relu")({is_op("add")({is_var("x"), is_var("y")})}), e));
    EXPECT_FALSE(match(is_op("nn.relu")({is_op("add")({is_var("x"), is_var("x")})}), e));
    EXPECT_TRUE(match(is_op("nn.relu")({is_op("add")({is_expr(y), is_expr(x)})}), e))
        << "add commutes";
    EXPECT_FALSE(match(is_op("subtract")({is_expr(y), is_expr(x)}), call("subtract", {x, y})));
}

TEST(Matcher, ANodeUsedTwiceMatchesOneExpression) {
    auto x = tensor_var("x", {4});
    auto y = tensor_var("y", {4});
    DFPattern a = wildcard();
    DFPattern twice = is_op("multiply")({a, a});
    EXPECT_TRUE(match(twice, call("multiply", {x, x})));
    EXPECT_FALSE(match(twice, call("multiply", {x, y})));
}

TEST(Matcher, AlternativesRollBackTheFailedBranch) {
    auto x = tensor_var("x", {4});
    DFPattern a = wildcard();
    // The left branch binds `a` to x before it fails on exp; the right one must bind it anew.
    DFPattern p =
        is_op("add")({is_op("exp")({a}), a}) | is_op("add")({is_op("nn.relu")({a}), wildcard()});
    Expr e = call("add", {call("nn.relu", {x}), call("exp", {x})});
    DFPatternMatcher m(e);
    ASSERT_TRUE(m.match(p, e));
    EXPECT_TRUE(m.node_map()[a][0].same_as(x));
    EXPECT_EQ(m.node_map()[a].size(), 1u);
}

TEST(Matcher, AttributesTypesAndShapes) {
    auto x = tensor_var("x", {1, 4, 8, 8});
    Expr pool = call("nn.max_pool2d", {x}, attrs_of_op("nn.max_pool2d", {{"pool_size", {2, 2}}}));
    EXPECT_TRUE(match(is_op("nn.max_pool2d")
                          .has_attr({{"pool_size", std::vector<int64_t>{2, 2}},
                                     {"layout", std::string("NCHW")},
                                     {"ceil_mode", false}}),
                      pool));
    EXPECT_FALSE(
        match(is_op("nn.max_pool2d").has_attr({{"pool_size", std::vector<int64_t>{3, 3}}}), pool));
    EXPECT_FALSE(match(is_op("nn.max_pool2d").has_attr({{"no_such_field", int64_t{1}}}), pool));
    Expr softmax = call("nn.softmax", {x});
    EXPECT_TRUE(match(wildcard().has_attr({{"axis", int64_t{-1}}}), softmax));
    EXPECT_TRUE(
        match(is_op("nn.softmax").has_dtype(DataType::float32()).has_shape({1, 4, 8, 8}), softmax));
    EXPECT_FALSE(match(wildcard().has_shape({1, 4, 8}), softmax));
    EXPECT_FALSE(match(wildcard().has_dtype(DataType::float64()), softmax));
    EXPECT_TRUE(match(wildcard().has_type(x->type), softmax));
    EXPECT_TRUE(match(is_constant(), constant({2}, {1.0f})));
    EXPECT_FALSE(match(is_constant(), Expr(x)));
}

TEST(Matcher, TuplesAndTheirItems) {
    auto x = tensor_var("x", {4});
    Expr t = make_tuple({x, call("exp", {x})});
    Expr item = make_tuple_get_item(t, 1);
    EXPECT_TRUE(match(is_tuple_get_item(is_tuple({wildcard(), is_op("exp")}), 1), item));
    EXPECT_TRUE(match(is_tuple_get_item(wildcard()), item));
    EXPECT_FALSE(match(is_tuple_get_item(wildcard(), 0), item));
    EXPECT_FALSE(match(is_tuple({wildcard()}), t));
}

// relu(add(exp(c), sigmoid(c))) with c = conv2d(x, w): the elementwise diamond between the
// convolution and the relu.
struct Diamond {
    Ref<Var> x = tensor_var("x", {1, 4, 8, 8});
    Expr conv = call("nn.conv2d", {x, constant({4, 4, 1, 1}, {0.5f})});
    Expr left = call("exp", {conv});
    Expr right = call("sigmoid", {conv});
    Expr sum = call("add", {left, right});
    Expr out = call("nn.relu", {sum});
    DFPattern parent = is_op("nn.conv2d");
    DFPattern path = is_op("exp") | is_op("sigmoid") | is_op("add");
    DFPattern p = dominates(parent, path, is_op("nn.relu"));
};

TEST(Matcher, DominatesMatchesAPrivateRegion) {
    Diamond d;
    DFPatternMatcher m(d.out);
    ASSERT_TRUE(m.match(d.p, d.out));
    EXPECT_TRUE(m.node_map()[d.parent][0].same_as(d.conv));
    EXPECT_EQ(m.node_map()[d.path].size(), 3u);  // add, sigmoid, exp
    EXPECT_EQ(m.region().size(), 5u);            // and the conv and the relu
}

TEST(Matcher, DominatesRejectsAPathValueUsedOutside) {
    Diamond d;
    // exp(conv) is also an output: the region between conv and relu is not private.
    Expr graph = make_tuple({d.out, d.left});
    EXPECT_FALSE(DFPatternMatcher(graph).match(d.p, d.out));
    EXPECT_FALSE(match(dominates(is_op("nn.dense"), d.path, is_op("nn.relu")), d.out));
}

TEST(Matcher, DominatesNeedsEveryOperandOnThePath) {
    // relu(add(exp(conv), y)): y comes from neither the conv nor the path.
    Diamond d;
    auto y = tensor_var("y", {1, 4, 8, 8});
    Expr out = call("nn.relu", {call("add", {d.left, y})});
    EXPECT_FALSE(match(d.p, out));
    EXPECT_TRUE(match(dominates(d.parent, d.path | is_var(), is_op("nn.relu")), out));
    // relu(add(exp(conv(x)), x)): x is read by the conv too; a variable may be.
    Expr shared = call("nn.relu", {call("add", {d.left, d.x})});
    EXPECT_TRUE(match(dominates(d.parent, d.path | is_var(), is_op("nn.relu")), shared));
}

TEST(Matcher, NodeMapOfAnUnmatchedPatternIsAnError) {
    auto x = tensor_var("x", {4});
    DFPattern unused = wildcard();
    DFPatternMatcher m(x);
    ASSERT_TRUE(m.match(wildcard(), x));
    EXPECT_FALSE(m.node_map().contains(unused));
    EXPECT_THROW(m.node_map()[unused], UserError);
}

}  // namespace
}  // namespace anvil::graph::testing
