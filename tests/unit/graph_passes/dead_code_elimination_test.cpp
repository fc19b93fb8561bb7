#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

TEST(DeadCodeElimination, RemovesUnusedLets) {
    auto x = tensor_var("x", {4});
    auto a = make_var("a", x->type);
    auto b = make_var("b", x->type);
    auto c = make_var("c", x->type);
    // let a = exp(x); let b = relu(a); let c = log(a); c   -- b is dead
    Expr body = make_let(a, call("exp", {x}),
                         make_let(b, call("nn.relu", {a}), make_let(c, call("log", {a}), Expr(c))));
    IRModule m = dead_code_elimination(module_of(make_function({x}, body)), test_context());
    const Expr& out = m.main()->body;
    ASSERT_TRUE(out.is<Let>());
    EXPECT_TRUE(out.as<Let>()->var.same_as(a));
    ASSERT_TRUE(out.as<Let>()->body.is<Let>());
    EXPECT_TRUE(out.as<Let>()->body.as<Let>()->var.same_as(c));
    EXPECT_EQ(op_names(out), (std::vector<std::string>{"exp", "log"}));
}

TEST(DeadCodeElimination, BindingOnlyUsedByADeadOneIsDead) {
    auto x = tensor_var("x", {4});
    auto a = make_var("a", x->type);
    auto b = make_var("b", x->type);
    Expr body = make_let(a, call("exp", {x}), make_let(b, call("nn.relu", {a}), Expr(x)));
    IRModule m = dead_code_elimination(module_of(make_function({x}, body)), test_context());
    EXPECT_TRUE(m.main()->body.same_as(Expr(x)));
}

TEST(DeadCodeElimination, LiveGraphIsUnchanged) {
    auto x = tensor_var("x", {4});
    auto a = make_var("a", x->type);
    Ref<Function> f = make_function({x}, make_let(a, call("exp", {x}), call("log", {a})));
    IRModule m = dead_code_elimination(module_of(f), test_context());
    EXPECT_TRUE(m.main().same_as(f));
}

}  // namespace
}  // namespace anvil::graph::testing
