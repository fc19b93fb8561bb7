#include "ops/elementwise.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

TEST(EliminateCommonSubexpr, MergesIdenticalCallsTransitively) {
    auto x = tensor_var("x", {4});
    auto y = tensor_var("y", {4});
    Expr a1 = call("exp", {call("add", {x, y})});
    Expr a2 = call("exp", {call("add", {x, y})});
    Expr body = call("multiply", {a1, a2});
    IRModule m = eliminate_common_subexpr(module_of(make_function({x, y}, body)), test_context());
    auto* mul = m.main()->body.as<Call>();
    ASSERT_TRUE(mul);
    EXPECT_TRUE(mul->args[0].same_as(mul->args[1]));
    EXPECT_EQ(op_names(m.main()->body).size(), 3u);
}

TEST(EliminateCommonSubexpr, DifferentAttributesOrArgumentOrderStay) {
    auto x = tensor_var("x", {4});
    auto y = tensor_var("y", {4});
    auto to_int = make_ref<ops::CastAttrs>();
    const_cast<ops::CastAttrs*>(to_int.get())->dtype = DataType::int32();
    auto to_i64 = make_ref<ops::CastAttrs>();
    const_cast<ops::CastAttrs*>(to_i64.get())->dtype = DataType::int64();
    Expr body = make_tuple({call("cast", {x}, to_int), call("cast", {x}, to_i64),
                            call("subtract", {x, y}), call("subtract", {y, x})});
    Ref<Function> f = make_function({x, y}, body);
    IRModule m = eliminate_common_subexpr(module_of(f), test_context());
    EXPECT_TRUE(m.main().same_as(f));
}

TEST(EliminateCommonSubexpr, EqualAttributesMerge) {
    auto x = tensor_var("x", {4});
    auto a1 = make_ref<ops::CastAttrs>();
    const_cast<ops::CastAttrs*>(a1.get())->dtype = DataType::int32();
    auto a2 = make_ref<ops::CastAttrs>();
    const_cast<ops::CastAttrs*>(a2.get())->dtype = DataType::int32();
    Expr body = make_tuple({call("cast", {x}, a1), call("cast", {x}, a2)});
    IRModule m = eliminate_common_subexpr(module_of(make_function({x}, body)), test_context());
    auto* t = m.main()->body.as<Tuple>();
    EXPECT_TRUE(t->fields[0].same_as(t->fields[1]));
}

}  // namespace
}  // namespace anvil::graph::testing
