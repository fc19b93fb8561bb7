#include <cmath>

#include "ops/norm.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

using ops::BatchNormAttrs;

// A stand-in nn.batch_norm with the op's own attribute struct (the nn family's op may differ in
// other respects, such as its result; the pass only reads the attributes).
Ref<Op> batch_norm_op(bool returns_tuple) {
    auto op = stand_in_op("nn.batch_norm", OpPattern::Opaque, 5);
    auto* o = const_cast<Op*>(op.get());
    o->make_default_attrs = [] { return Ref<Attrs>(new BatchNormAttrs()); };
    if (returns_tuple) {
        o->infer_type = [](const Op&, const std::vector<Type>& args, const Attrs&,
                           const SourceLoc&) {
            return make_tuple_type({args[0], args[3], args[4]});
        };
    }
    return op;
}

struct BatchNormGraph {
    Ref<Var> x = tensor_var("x", {1, 2, 3, 3});
    Expr gamma = constant({2}, {1.0f, 2.0f});
    Expr beta = constant({2}, {0.5f, -1.0f});
    Expr mean = constant({2}, {3.0f, 4.0f});
    Expr var = constant({2}, {4.0f, 0.25f});
    std::vector<Expr> args() const { return {x, gamma, beta, mean, var}; }
};

TEST(SimplifyInference, BatchNormBecomesPerChannelScaleAndShift) {
    BatchNormGraph g;
    auto attrs = make_ref<BatchNormAttrs>();
    const_cast<BatchNormAttrs*>(attrs.get())->epsilon = 0.0;
    Expr body = call("nn.relu", {make_call(batch_norm_op(false), g.args(), attrs)});
    IRModule m = simplify_inference(module_of(make_function({g.x}, body)), test_context());
    ASSERT_EQ(op_names(m.main()->body), (std::vector<std::string>{"multiply", "add", "nn.relu"}));
    auto calls = op_calls(m.main()->body);
    Expr scale = calls[0]->args[1], shift = calls[1]->args[1];
    EXPECT_TRUE(type_equal(scale->type,
                           make_tensor_type(std::vector<int64_t>{2, 1, 1}, DataType::float32())));
    // scale = gamma / sqrt(var), shift = beta - mean * scale
    EXPECT_EQ(values_of(scale), (std::vector<float>{0.5f, 4.0f}));
    EXPECT_EQ(values_of(shift), (std::vector<float>{-1.0f, -17.0f}));
    EXPECT_TRUE(type_equal(m.main()->body->type, body->type));
}

TEST(SimplifyInference, TupleResultIsReplacedWhereItsValueIsRead) {
    BatchNormGraph g;
    Expr bn = make_call(batch_norm_op(true), g.args());
    Expr body = call("exp", {make_tuple_get_item(bn, 0)});
    IRModule m = simplify_inference(module_of(make_function({g.x}, body)), test_context());
    EXPECT_EQ(op_names(m.main()->body), (std::vector<std::string>{"multiply", "add", "exp"}));
}

TEST(SimplifyInference, AxisAndEpsilonComeFromTheAttributes) {
    BatchNormGraph g;
    auto attrs = make_ref<BatchNormAttrs>();
    auto* a = const_cast<BatchNormAttrs*>(attrs.get());
    a->axis = -3;  // the channels of x [1, 2, 3, 3], counted from the end
    a->epsilon = 12.0;
    Expr body = make_call(batch_norm_op(false), g.args(), attrs);
    IRModule m = simplify_inference(module_of(make_function({g.x}, body)), test_context());
    auto calls = op_calls(m.main()->body);
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_TRUE(type_equal(calls[0]->args[1]->type,
                           make_tensor_type(std::vector<int64_t>{2, 1, 1}, DataType::float32())));
    // sqrt(var + 12) = {4, 3.5}; computed in double and rounded once.
    const double s1 = 2.0 / 3.5;
    EXPECT_EQ(values_of(calls[0]->args[1]), (std::vector<float>{0.25f, static_cast<float>(s1)}));
    EXPECT_EQ(values_of(calls[1]->args[1]),
              (std::vector<float>{-0.25f, static_cast<float>(-1.0 - 4.0 * s1)}));
}

TEST(SimplifyInference, VariableStatisticsBecomeArithmetic) {
    BatchNormGraph g;
    auto var = tensor_var("var", {2});
    Expr body = make_call(batch_norm_op(false), {g.x, g.gamma, g.beta, g.mean, var});
    IRModule m = simplify_inference(module_of(make_function({g.x, var}, body)), test_context());
    auto names = op_names(m.main()->body);
    EXPECT_EQ(names.back(), "add");
    EXPECT_NE(std::find(names.begin(), names.end(), "rsqrt"), names.end());
    EXPECT_NE(std::find(names.begin(), names.end(), "reshape"), names.end());
    EXPECT_TRUE(type_equal(m.main()->body->type, body->type));
}

TEST(SimplifyInference, OtherOpsStay) {
    auto x = tensor_var("x", {4});
    Ref<Function> f = make_function({x}, call("exp", {x}));
    EXPECT_TRUE(simplify_inference(module_of(f), test_context()).main().same_as(f));
}

}  // namespace
}  // namespace anvil::graph::testing
