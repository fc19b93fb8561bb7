#include "graph/attr_fields.h"
#include "graph/verifier.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

// The calls of primitive functions in main, operands first, each as its ops' names.
std::vector<std::vector<std::string>> groups_of(const IRModule& m) {
    EXPECT_NO_THROW(verify(m));
    std::vector<std::vector<std::string>> out;
    post_order_visit(m.main()->body, [&](const Expr& e) {
        auto* c = e.as<Call>();
        if (!c || !c->callee.defined()) return;
        auto* fn = c->callee.as<Function>();
        EXPECT_TRUE(fn->primitive);
        out.push_back(op_names(fn->body));
    });
    return out;
}

// Every op call of main lies inside a primitive function.
void expect_all_fused(const IRModule& m) {
    class OutsideCalls : public ExprVisitor {
    protected:
        void visit_(const Call* op) override {
            if (op->op.defined()) ADD_FAILURE() << op->op->name << " left outside a kernel";
            for (const auto& a : op->args) visit(a);  // not the callee
        }
    };
    OutsideCalls().visit(m.main()->body);
}

using Groups = std::vector<std::vector<std::string>>;

TEST(FuseOps, ElementwiseChainIsOneGroup) {
    auto x = tensor_var("x", {2, 8});
    Expr c = constant({8}, {1.0f});
    Expr body = call("exp", {call("nn.relu", {call("add", {x, c})})});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    expect_all_fused(m);
    EXPECT_EQ(groups_of(m), (Groups{{"add", "nn.relu", "exp"}}));
    // The tensor constant is a parameter of the kernel, passed by the call.
    auto* outer = m.main()->body.as<Call>();
    ASSERT_TRUE(outer && outer->callee.defined());
    ASSERT_EQ(outer->args.size(), 2u);
    EXPECT_TRUE(outer->args[0].same_as(Expr(x)));
    EXPECT_TRUE(outer->args[1].same_as(c));
    EXPECT_TRUE(type_equal(m.main()->body->type, body->type));
}

// y = y * y + y, `steps` times: the kernel's inlined expression reads each step's value three
// times per later step (2 + 3 * size), so it grows exponentially with the steps.
Expr self_reading_chain(const Ref<Var>& x, int steps) {
    Expr y = x;
    for (int k = 0; k < steps; ++k) y = call("add", {call("multiply", {y, y}), y});
    return y;
}

TEST(FuseOps, GroupsStopWhereTheInlinedExpressionWouldExplode) {
    auto x = tensor_var("x", {8});
    // Four steps inline 161 ops: one kernel.
    IRModule short_chain =
        fuse_ops(module_of(make_function({x}, self_reading_chain(x, 4))), test_context());
    EXPECT_EQ(groups_of(short_chain).size(), 1u);
    // Twenty steps would inline about 3^20 ops; a kernel never takes six whole steps (five
    // inline 485 ops; six make 1457, over the bound of 1024).
    IRModule long_chain =
        fuse_ops(module_of(make_function({x}, self_reading_chain(x, 20))), test_context());
    expect_all_fused(long_chain);
    Groups groups = groups_of(long_chain);
    EXPECT_GE(groups.size(), 4u);
    for (const auto& g : groups) EXPECT_LT(g.size(), 12u);
}

TEST(FuseOps, ScalarConstantStaysInside) {
    auto x = tensor_var("x", {4});
    Expr body = call("multiply", {x, constant({}, {2.0f})});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    auto* outer = m.main()->body.as<Call>();
    ASSERT_TRUE(outer && outer->callee.defined());
    EXPECT_EQ(outer->args.size(), 1u);
}

TEST(FuseOps, AnchorTakesBiasActivationAndResidual) {
    auto anchor = stand_in_op("test.conv", OpPattern::OutEWiseFusable);
    auto x = tensor_var("x", {1, 4, 8, 8});
    Expr conv = make_call(anchor, {x});
    Expr biased = call("add", {conv, constant({4, 1, 1}, {0.5f})});
    Expr act = call("nn.relu", {biased});
    Expr residual = call("add", {act, x});
    Expr conv2 = make_call(anchor, {residual});
    Expr body = call("nn.relu", {conv2});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    expect_all_fused(m);
    EXPECT_EQ(groups_of(m),
              (Groups{{"test.conv", "add", "nn.relu", "add"}, {"test.conv", "nn.relu"}}));
}

TEST(FuseOps, TwoAnchorsNeverShareAGroup) {
    auto anchor = stand_in_op("test.conv", OpPattern::OutEWiseFusable);
    auto x = tensor_var("x", {1, 4, 8, 8});
    Expr body = make_call(anchor, {make_call(anchor, {x})});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    EXPECT_EQ(groups_of(m), (Groups{{"test.conv"}, {"test.conv"}}));
}

TEST(FuseOps, DiamondJoinsAtItsPostDominator) {
    auto x = tensor_var("x", {16});
    Expr r = call("nn.relu", {x});
    Expr body = call("add", {call("exp", {r}), call("tanh", {r})});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    ASSERT_EQ(groups_of(m).size(), 1u);
    EXPECT_EQ(groups_of(m)[0].size(), 4u);
}

TEST(FuseOps, ReductionTakesItsInputsButNotItsUsers) {
    auto x = tensor_var("x", {4, 16});
    Expr s = call("sum", {call("exp", {call("nn.relu", {x})})});
    Expr body = call("sqrt", {s});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    EXPECT_EQ(groups_of(m), (Groups{{"nn.relu", "exp", "sum"}, {"sqrt"}}));
}

TEST(FuseOps, OpaqueOpsStayAlone) {
    auto opaque = stand_in_op("test.opaque", OpPattern::Opaque);
    auto x = tensor_var("x", {16});
    Expr body = call("exp", {make_call(opaque, {call("nn.relu", {x})})});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    EXPECT_EQ(groups_of(m), (Groups{{"nn.relu"}, {"test.opaque"}, {"exp"}}));
}

TEST(FuseOps, InjectiveChainsJoin) {
    auto injective = stand_in_op("test.injective", OpPattern::Injective);
    auto x = tensor_var("x", {16});
    Expr body = make_call(injective, {call("exp", {make_call(injective, {x})})});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    EXPECT_EQ(groups_of(m), (Groups{{"test.injective", "exp", "test.injective"}}));
}

TEST(FuseOps, AnchorDoesNotTakeAnInjectiveTail) {
    auto anchor = stand_in_op("test.conv", OpPattern::OutEWiseFusable);
    auto injective = stand_in_op("test.injective", OpPattern::Injective);
    auto x = tensor_var("x", {1, 4, 8, 8});
    Expr body = make_call(injective, {call("nn.relu", {make_call(anchor, {x})})});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    EXPECT_EQ(groups_of(m), (Groups{{"test.conv", "nn.relu"}, {"test.injective"}}));
}

TEST(FuseOps, ValueUsedTwiceOutsideIsAGroupOutput) {
    auto x = tensor_var("x", {8});
    Expr r = call("nn.relu", {x});
    Expr body = make_tuple({r, call("exp", {r})});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    expect_all_fused(m);
    EXPECT_EQ(groups_of(m), (Groups{{"nn.relu"}, {"exp"}}));
    auto* tuple = m.main()->body.as<Tuple>();
    ASSERT_TRUE(tuple);
    // Both uses of relu read the same kernel call.
    EXPECT_TRUE(tuple->fields[1].as<Call>()->args[0].same_as(tuple->fields[0]));
}

TEST(FuseOps, OptLevelZeroPutsEachOpAlone) {
    auto x = tensor_var("x", {2, 8});
    Expr body = call("exp", {call("nn.relu", {x})});
    PassContext ctx = test_context();
    ctx.opt_level = 0;
    IRModule m = fuse_ops(module_of(make_function({x}, body)), ctx);
    expect_all_fused(m);
    EXPECT_EQ(groups_of(m), (Groups{{"nn.relu"}, {"exp"}}));
}

TEST(FuseOps, IsIdempotent) {
    auto x = tensor_var("x", {2, 8});
    Expr body = call("exp", {call("nn.relu", {x})});
    IRModule once = fuse_ops(module_of(make_function({x}, body)), test_context());
    IRModule twice = fuse_ops(once, test_context());
    EXPECT_TRUE(twice.main().same_as(once.main()));
}

TEST(FuseOps, GroupParametersAreTheExternalInputsOnce) {
    auto x = tensor_var("x", {8});
    auto y = tensor_var("y", {8});
    Expr body = call("multiply", {call("add", {x, y}), call("subtract", {x, y})});
    IRModule m = fuse_ops(module_of(make_function({x, y}, body)), test_context());
    auto* outer = m.main()->body.as<Call>();
    ASSERT_TRUE(outer && outer->callee.defined());
    EXPECT_EQ(outer->callee.as<Function>()->params.size(), 2u);
}

TEST(FuseOps, ItemsOfAnotherGroupsTupleAreTensorParameters) {
    auto opaque_pair = stand_in_op("test.pair", OpPattern::Opaque);
    const_cast<Op*>(opaque_pair.get())->infer_type = [](const Op&, const std::vector<Type>& args,
                                                        const Attrs&, const SourceLoc&) {
        return make_tuple_type({args[0], args[0]});
    };
    auto x = tensor_var("x", {8});
    Expr pair = make_call(opaque_pair, {x});
    Expr body = call(
        "add", {call("nn.relu", {make_tuple_get_item(pair, 0)}), make_tuple_get_item(pair, 1)});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    expect_all_fused(m);
    EXPECT_EQ(groups_of(m), (Groups{{"test.pair"}, {"nn.relu", "add"}}));
    auto* outer = m.main()->body.as<Call>();
    ASSERT_TRUE(outer && outer->callee.defined());
    for (const auto& p : outer->callee.as<Function>()->params) {
        EXPECT_TRUE(p->type.is<TensorType>()) << type_str(p->type);
    }
}

TEST(FuseOps, SplitPartsJoinTheirConcatenation) {
    auto x = tensor_var("x", {8});
    auto split_attrs = ops::get_op("split").make_default_attrs();
    Expr parts = call("split", {x}, attr_with(*split_attrs, "sections", int64_t{2}));
    Expr body = call("concatenate", {call("exp", {make_tuple_get_item(parts, 1)}),
                                     call("nn.relu", {make_tuple_get_item(parts, 0)})});
    IRModule m = fuse_ops(module_of(make_function({x}, body)), test_context());
    expect_all_fused(m);
    ASSERT_EQ(groups_of(m).size(), 1u);
}

}  // namespace
}  // namespace anvil::graph::testing
