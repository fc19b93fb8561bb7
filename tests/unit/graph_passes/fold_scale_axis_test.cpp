#include <algorithm>

#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

// conv2d of a (1, 2, 4, 4) input with 2 output channels and 3x3 weights of ones.
struct ConvGraph {
    Ref<Var> x = tensor_var("x", {1, 2, 4, 4});
    Expr w = constant({2, 2, 3, 3}, {1.0f});
    Expr conv = call("nn.conv2d", {x, w});  // (1, 2, 2, 2)
};

std::vector<float> weight_of(const Expr& conv) {
    const Call* c = conv.as<Call>();
    EXPECT_TRUE(c && c->op->name == "nn.conv2d");
    return c ? values_of(c->args[1]) : std::vector<float>{};
}

TEST(FoldScaleAxis, PerChannelScaleMovesIntoTheWeights) {
    ConvGraph g;
    Expr body = call("multiply", {g.conv, constant({2, 1, 1}, {2, 3})});
    IRModule m = fold_scale_axis(module_of(make_function({g.x}, body)), test_context());
    EXPECT_EQ(op_names(m.main()->body), (std::vector<std::string>{"nn.conv2d"}));
    auto w = weight_of(m.main()->body);
    ASSERT_EQ(w.size(), 36u);
    EXPECT_EQ(w[0], 2.0f);
    EXPECT_EQ(w[17], 2.0f);
    EXPECT_EQ(w[18], 3.0f);
    EXPECT_EQ(w[35], 3.0f);
}

TEST(FoldScaleAxis, ScaleMovesThroughABiasAdd) {
    ConvGraph g;
    Expr biased = call("add", {constant({1, 2, 1, 1}, {10, 20}), g.conv});
    Expr body = call("nn.relu", {call("multiply", {constant({2, 1, 1}, {2, 3}), biased})});
    IRModule m = fold_scale_axis(module_of(make_function({g.x}, body)), test_context());
    ASSERT_EQ(op_names(m.main()->body), (std::vector<std::string>{"nn.conv2d", "add", "nn.relu"}));
    const Call* add = op_calls(m.main()->body)[1];
    EXPECT_EQ(values_of(add->args[0]), (std::vector<float>{20, 60}));
    EXPECT_EQ(weight_of(add->args[1])[35], 3.0f);
    EXPECT_TRUE(type_equal(m.main()->body->type, body->type));
}

TEST(FoldScaleAxis, ScalarScaleFolds) {
    ConvGraph g;
    Expr body = call("multiply", {g.conv, constant({}, {0.5f})});
    IRModule m = fold_scale_axis(module_of(make_function({g.x}, body)), test_context());
    EXPECT_EQ(weight_of(m.main()->body)[20], 0.5f);
}

TEST(FoldScaleAxis, ScaleAlongAnotherAxisOrASharedConvStays) {
    ConvGraph g;
    // Varies along the last axis (width), not channels.
    Expr along_w = call("multiply", {g.conv, constant({2}, {2, 3})});
    Ref<Function> f1 = make_function({g.x}, along_w);
    EXPECT_TRUE(fold_scale_axis(module_of(f1), test_context()).main().same_as(f1));
    // The unscaled conv is also a result.
    Expr shared = make_tuple({g.conv, call("multiply", {g.conv, constant({2, 1, 1}, {2, 3})})});
    Ref<Function> f2 = make_function({g.x}, shared);
    EXPECT_TRUE(fold_scale_axis(module_of(f2), test_context()).main().same_as(f2));
}

TEST(FoldScaleAxis, ScalesSharedBetweenLayersAllFold) {
    // 150 convolutions scaled by one constant node (one per initializer): each folds, in one
    // round of the rewrite (a shared constant does not keep matches apart).
    auto x = tensor_var("x", {1, 2, 4, 4});
    Expr s = constant({2, 1, 1}, {2, 3});
    std::vector<Expr> outs;
    for (int i = 0; i < 150; ++i) {
        outs.push_back(
            call("multiply", {call("nn.conv2d", {x, constant({2, 2, 3, 3}, {1.0f})}), s}));
    }
    IRModule m = fold_scale_axis(module_of(make_function({x}, make_tuple(outs))), test_context());
    auto names = op_names(m.main()->body);
    EXPECT_EQ(std::count(names.begin(), names.end(), "multiply"), 0);
    EXPECT_EQ(std::count(names.begin(), names.end(), "nn.conv2d"), 150);
}

TEST(FoldScaleAxis, WeightThatIsAVariableStays) {
    auto x = tensor_var("x", {1, 2, 4, 4});
    auto w = tensor_var("w", {2, 2, 3, 3});
    Expr body = call("multiply", {call("nn.conv2d", {x, w}), constant({2, 1, 1}, {2, 3})});
    Ref<Function> f = make_function({x, w}, body);
    EXPECT_TRUE(fold_scale_axis(module_of(f), test_context()).main().same_as(f));
}

}  // namespace
}  // namespace anvil::graph::testing
