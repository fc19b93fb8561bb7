#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

TEST(InferTypes, RebindingParametersRederivesEveryType) {
    auto x = tensor_var("x", {2, 3});
    auto a = make_var("a", x->type);
    Expr body = make_let(a, call("nn.relu", {x}),
                         make_tuple({call("add", {a, constant({3}, {1.0f})}), Expr(a)}));
    Ref<Function> f = make_function({x}, body);
    auto x4 = tensor_var("x", {4, 3});
    Ref<Function> g = rebind_params(f, {x4});
    auto t = make_tensor_type(std::vector<int64_t>{4, 3}, DataType::float32());
    EXPECT_TRUE(type_equal(g->type.as<FuncType>()->ret, make_tuple_type({t, t})));
    EXPECT_TRUE(type_equal(g->body.as<Let>()->var->type, t));  // the let follows its value
}

TEST(InferTypes, ShapeThatDoesNotFitIsAUserError) {
    auto x = tensor_var("x", {2, 3});
    Ref<Function> f = make_function({x}, call("add", {x, constant({3}, {1.0f})}));
    EXPECT_THROW(rebind_params(f, {tensor_var("x", {2, 5})}), UserError);
}

TEST(InferTypes, UnboundVariableIsAUserError) {
    auto x = tensor_var("x", {3});
    auto stray = tensor_var("stray", {3});
    IRModule m = module_of(make_function({x}, call("add", {x, stray})));
    EXPECT_THROW(infer_types(m, test_context()), UserError);
}

TEST(InferTypes, WellTypedModuleKeepsItsTypes) {
    auto x = tensor_var("x", {3});
    Ref<Function> f = make_function({x}, call("exp", {x}));
    IRModule m = infer_types(module_of(f), test_context());
    EXPECT_TRUE(type_equal(m.main()->type, f->type));
    EXPECT_TRUE(m.main()->params[0].same_as(x));
}

}  // namespace
}  // namespace anvil::graph::testing
