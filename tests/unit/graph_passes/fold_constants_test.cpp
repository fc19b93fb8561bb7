#include "ops/transform.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

// A stand-in for the driver's evaluator: add and multiply of same-shaped float32 tensors or
// scalars; counts its calls.
struct TinyEvaluator {
    int calls = 0;
    std::vector<float> eval(const Expr& e) {
        if (e.is<Constant>()) return values_of(e);
        auto* c = e.as<Call>();
        EXPECT_TRUE(c && c->op.defined());
        auto a = eval(c->args[0]), b = eval(c->args[1]);
        size_t n = std::max(a.size(), b.size());
        std::vector<float> out(n);
        for (size_t i = 0; i < n; ++i) {
            float x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
            out[i] = c->op->name == "add" ? x + y : x * y;
        }
        return out;
    }
    std::function<runtime::NDArray(const Expr&)> fn() {
        return [this](const Expr& e) {
            ++calls;
            auto v = eval(e);
            auto shape = e->type.as<TensorType>()->static_shape();
            auto a = runtime::NDArray::empty(shape, DLDataType{kDLFloat, 32, 1});
            a.copy_from(v);
            return a;
        };
    }
};

TEST(FoldConstants, FoldsMaximalConstantExpressionsAtOnce) {
    auto x = tensor_var("x", {3});
    Expr k = call("multiply", {call("add", {constant({3}, {1, 2, 3}), constant({3}, {1.0f})}),
                               constant({}, {2.0f})});
    Expr body = call("add", {x, k});
    TinyEvaluator ev;
    PassContext ctx = test_context();
    ctx.evaluate = ev.fn();
    IRModule m = fold_constants(module_of(make_function({x}, body)), ctx);
    EXPECT_EQ(ev.calls, 1);
    auto* add = m.main()->body.as<Call>();
    ASSERT_TRUE(add);
    EXPECT_TRUE(add->args[0].same_as(Expr(x)));
    EXPECT_EQ(values_of(add->args[1]), (std::vector<float>{4, 6, 8}));
}

TEST(FoldConstants, WithoutEvaluatorNothingChanges) {
    auto x = tensor_var("x", {3});
    Expr body = call("add", {x, call("add", {constant({3}, {1.0f}), constant({3}, {1.0f})})});
    Ref<Function> f = make_function({x}, body);
    IRModule m = fold_constants(module_of(f), test_context());
    EXPECT_TRUE(m.main().same_as(f));
}

TEST(FoldConstants, ItemOfAConstantTupleIsTheField) {
    auto x = tensor_var("x", {3});
    Expr c = constant({3}, {5.0f});
    Expr body = call("add", {x, make_tuple_get_item(make_tuple({x, c}), 1)});
    TinyEvaluator ev;
    PassContext ctx = test_context();
    ctx.evaluate = ev.fn();
    IRModule m = fold_constants(module_of(make_function({x}, body)), ctx);
    EXPECT_EQ(ev.calls, 0);
    EXPECT_TRUE(m.main()->body.as<Call>()->args[1].same_as(c));
}

TEST(FoldConstants, ExpressionsOfVariablesStay) {
    auto x = tensor_var("x", {3});
    Ref<Function> f = make_function({x}, call("add", {x, constant({3}, {1.0f})}));
    TinyEvaluator ev;
    PassContext ctx = test_context();
    ctx.evaluate = ev.fn();
    IRModule m = fold_constants(module_of(f), ctx);
    EXPECT_EQ(ev.calls, 0);
    EXPECT_TRUE(m.main().same_as(f));
}

// arange of a symbolic length depends on no variable, but its value exists only at run time.
TEST(FoldConstants, ConstantsOfASymbolicShapeStay) {
    PrimExpr n = anvil::make_var("n", DataType::int64());
    auto x = make_var("x", make_tensor_type(std::vector<PrimExpr>{n}, DataType::float32()));
    auto attrs = make_ref<ops::ArangeAttrs>();
    const_cast<ops::ArangeAttrs*>(attrs.get())->length = {n};
    Expr steps = call("arange", {constant({}, {0.0f}), constant({}, {1.0f})}, attrs);
    Expr doubled = call("multiply", {steps, constant({}, {2.0f})});
    Ref<Function> f = make_function({x}, call("add", {x, doubled}));
    TinyEvaluator ev;
    PassContext ctx = test_context();
    ctx.evaluate = ev.fn();
    IRModule m = fold_constants(module_of(f), ctx);
    EXPECT_EQ(ev.calls, 0);
    EXPECT_TRUE(m.main().same_as(f));
}

}  // namespace
}  // namespace anvil::graph::testing
