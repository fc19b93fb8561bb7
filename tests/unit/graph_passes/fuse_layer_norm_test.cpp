#include "graph/attr_fields.h"
#include "ops/reduce.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

Ref<Attrs> mean_attrs(std::vector<int64_t> axes) {
    ops::ReduceAttrs r;
    r.axes = std::move(axes);
    r.keepdims = true;
    return Ref<Attrs>(new ops::ReduceAttrs(r));
}

// (x - mean) / sqrt(mean((x - mean)^2) + eps) over `axes`, then `gamma` and `beta` when given.
Expr layer_norm_arithmetic(const Expr& x, std::vector<int64_t> axes, const Expr& eps,
                           const Expr& gamma = {}, const Expr& beta = {}) {
    Expr d = call("subtract", {x, call("mean", {x}, mean_attrs(axes))});
    Expr var = call("mean", {call("multiply", {d, d})}, mean_attrs(axes));
    Expr y = call("divide", {d, call("sqrt", {call("add", {var, eps})})});
    if (gamma.defined()) y = call("multiply", {y, gamma});
    if (beta.defined()) y = call("add", {y, beta});
    return y;
}

bool unchanged(const Ref<Var>& x, const Expr& body) {
    Ref<Function> f = make_function({x}, body);
    return fuse_layer_norm(module_of(f), test_context()).main().same_as(f);
}

TEST(FuseLayerNorm, ArithmeticOverTheLastAxisBecomesTheOp) {
    auto x = tensor_var("x", {2, 5, 8});
    Expr body = layer_norm_arithmetic(x, {-1}, constant({}, {1e-5f}), constant({8}, {2.0f}),
                                      constant({8}, {0.5f}));
    IRModule m = fuse_layer_norm(module_of(make_function({x}, body)), test_context());
    const Call* ln = m.main()->body.as<Call>();
    ASSERT_TRUE(ln && ln->op->name == "nn.layer_norm");
    EXPECT_TRUE(ln->args[0].same_as(x));
    EXPECT_EQ(ln->args.size(), 3u);
    EXPECT_EQ(attr_int(*ln->attrs, "axis"), -1);
    EXPECT_NEAR(*attr_float(*ln->attrs, "epsilon"), 1e-5, 1e-11);
    EXPECT_TRUE(type_equal(ln->type, body->type));
}

TEST(FuseLayerNorm, WithoutAffineGammaIsOne) {
    auto x = tensor_var("x", {2, 3, 4});
    IRModule m = fuse_layer_norm(
        module_of(make_function({x}, layer_norm_arithmetic(x, {1, 2}, constant({}, {1e-6f})))),
        test_context());
    const Call* ln = m.main()->body.as<Call>();
    ASSERT_TRUE(ln && ln->op->name == "nn.layer_norm");
    EXPECT_EQ(attr_int(*ln->attrs, "axis"), -2);
    EXPECT_EQ(values_of(ln->args[1]), (std::vector<float>{1.0f}));
}

TEST(FuseLayerNorm, OtherArithmeticStays) {
    auto x = tensor_var("x", {2, 5, 8});
    Expr eps = constant({}, {1e-5f});
    // Statistics over a leading axis.
    EXPECT_TRUE(unchanged(x, layer_norm_arithmetic(x, {1}, eps)));
    // A tensor eps, not a scalar.
    EXPECT_TRUE(unchanged(x, layer_norm_arithmetic(x, {-1}, constant({2, 5, 1}, {1e-5f}))));
    // The centred values are also a result.
    Expr d = call("subtract", {x, call("mean", {x}, mean_attrs({-1}))});
    Expr var = call("mean", {call("multiply", {d, d})}, mean_attrs({-1}));
    Expr y = call("divide", {d, call("sqrt", {call("add", {var, eps})})});
    EXPECT_TRUE(unchanged(x, make_tuple({y, d})));
}

TEST(FuseLayerNorm, GammaAlongALeadingAxisStaysOutside) {
    // gamma [5, 8] varies along axis 1, which is not normalized: the norm is fused, the
    // multiply by gamma stays after it.
    auto x = tensor_var("x", {2, 5, 8});
    Expr body = layer_norm_arithmetic(x, {-1}, constant({}, {1e-5f}), constant({5, 8}, {2.0f}));
    IRModule m = fuse_layer_norm(module_of(make_function({x}, body)), test_context());
    EXPECT_EQ(op_names(m.main()->body), (std::vector<std::string>{"nn.layer_norm", "multiply"}));
}

TEST(FuseLayerNorm, SymbolicNormalizedAxisStays) {
    auto x = make_var(
        "x", make_tensor_type({make_int(DataType::int64(), 2), make_var("n", DataType::int64())},
                              DataType::float32()));
    EXPECT_TRUE(unchanged(x, layer_norm_arithmetic(x, {-1}, constant({}, {1e-5f}))));
}

}  // namespace
}  // namespace anvil::graph::testing
