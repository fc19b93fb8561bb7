// The graph verifier: valid modules pass, and each class of broken invariant is reported (the
// broken IR is built by hand, bypassing the checking constructors where they would refuse it).
#include "graph_test_util.h"
#include "ops/elementwise.h"
#include "tir/parser.h"

namespace anvil::graph {
namespace {

using testing::call;
using testing::module_of;
using testing::tensor;

std::string problems_of(const IRModule& m) {
    std::string out;
    for (const auto& p : find_problems(m)) out += p + "\n";
    return out;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

Ref<Op> op_ref(const std::string& name) {
    return Ref<Op>(&ops::get_op(name));
}

TEST(GraphVerifier, AcceptsValidModules) {
    auto x = make_var("x", tensor({2}));
    auto v = make_var("v", tensor({2}));
    auto p = make_var("p", tensor({2}));
    auto fused = make_function({p}, call("exp", {p}), true);
    Expr body = make_let(v, make_call_function(fused, {x}), make_tuple({v, call("abs", {v})}));
    IRModule m = module_of(make_function({x}, body));
    EXPECT_EQ(problems_of(m), "");
    EXPECT_NO_THROW(verify(m));
}

TEST(GraphVerifier, VarUsedOutsideItsScope) {
    auto x = make_var("x", tensor({2}));
    auto v = make_var("v", tensor({2}));
    Expr let = make_let(v, call("exp", {x}), v);
    IRModule m = module_of(make_function({x}, make_tuple({let, call("abs", {v})})));
    std::string p = problems_of(m);
    EXPECT_TRUE(has(p,
                    "@main: function: %v is used outside the scope that binds it (it is a let "
                    "in @main)"))
        << p;
    // A nested function that captures a parameter of the enclosing one.
    auto q = make_var("q", tensor({2}));
    auto inner = make_function({q}, call("add", {q, x}));
    IRModule m2 = module_of(make_function({x}, make_call_function(inner, {x})));
    p = problems_of(m2);
    EXPECT_TRUE(has(p,
                    "%x is used outside the scope that binds it (it is a parameter of a "
                    "function in @main)"))
        << p;
    // A let whose value uses its own variable.
    Expr self = Expr(new Let(v, call("exp", {v}), v, tensor({2}), {}));
    p = problems_of(module_of(make_function({x}, self)));
    EXPECT_TRUE(has(p, "let %v: %v is used in its own value")) << p;
}

TEST(GraphVerifier, VarBoundTwice) {
    auto x = make_var("x", tensor({2}));
    IRModule m;
    m.functions["a"] = make_function({x}, call("exp", {x}));
    m.functions["b"] = make_function({x}, call("negative", {x}));
    std::string p = problems_of(m);
    EXPECT_TRUE(has(p,
                    "@b: %x is bound twice: as a parameter of a function in @a and as a "
                    "parameter of a function in @b"))
        << p;
    // Parameter and let in one function.
    auto y = make_var("y", tensor({2}));
    p = problems_of(
        module_of(make_function({y}, make_let(y, call("exp", {make_var("z", tensor({2}))}), y))));
    EXPECT_TRUE(has(p, "%y is bound twice")) << p;
}

TEST(GraphVerifier, StaleCallTypes) {
    auto x = make_var("x", tensor({2}));
    // Built without the type rule, with a wrong type.
    Expr wrong =
        Expr(new Call(op_ref("nn.relu"), Expr(), {x}, Ref<Attrs>(new NoAttrs()), tensor({3}), {}));
    std::string p = problems_of(module_of(make_function({x}, wrong)));
    EXPECT_TRUE(has(p,
                    "@main: call of nn.relu: stored type Tensor[(3,), float32] but the type "
                    "rule now gives Tensor[(2,), float32]"))
        << p;
    // Attributes changed after the call was typed: the rule is run again.
    auto attrs = make_ref<ops::CastAttrs>();
    Expr cast = call("cast", {x}, attrs);
    const_cast<ops::CastAttrs*>(attrs.get())->dtype = DataType::int_(8);
    p = problems_of(module_of(make_function({x}, cast)));
    EXPECT_TRUE(has(p,
                    "call of cast: stored type Tensor[(2,), float32] but the type rule now "
                    "gives Tensor[(2,), int8]"))
        << p;
    // The rule rejects the arguments outright.
    auto b = make_var("b", tensor({2}, DataType::bool_()));
    Expr bad = Expr(new Call(op_ref("exp"), Expr(), {b}, Ref<Attrs>(new NoAttrs()),
                             tensor({2}, DataType::bool_()), {}));
    p = problems_of(module_of(make_function({b}, bad)));
    EXPECT_TRUE(has(p, "call of exp: the type rule rejects the call: exp needs a floating-point"))
        << p;
    // Wrong attribute type, wrong op arity.
    Expr attrs_kind =
        Expr(new Call(op_ref("cast"), Expr(), {x}, Ref<Attrs>(new NoAttrs()), tensor({2}), {}));
    p = problems_of(module_of(make_function({x}, attrs_kind)));
    EXPECT_TRUE(has(p, "attributes of type NoAttrs, the op takes CastAttrs")) << p;
    Expr arity =
        Expr(new Call(op_ref("add"), Expr(), {x}, Ref<Attrs>(new NoAttrs()), tensor({2}), {}));
    p = problems_of(module_of(make_function({x}, arity)));
    EXPECT_TRUE(has(p, "call of add: 1 argument(s), the op takes 2")) << p;
}

TEST(GraphVerifier, StaleTypesOfOtherNodes) {
    auto x = make_var("x", tensor({2}));
    Expr tuple = Expr(new Tuple({x}, make_tuple_type({tensor({3})}), {}));
    std::string p = problems_of(module_of(make_function({x}, tuple)));
    EXPECT_TRUE(has(p,
                    "@main: Tuple: stored type (Tensor[(3,), float32],) but its parts give "
                    "(Tensor[(2,), float32],)"))
        << p;
    Expr get = Expr(new TupleGetItem(make_tuple({x}), 1, tensor({2}), {}));
    p = problems_of(module_of(make_function({x}, get)));
    EXPECT_TRUE(has(p, "TupleGetItem: item 1 of a (Tensor[(2,), float32],)")) << p;
}

TEST(GraphVerifier, PrimitiveInsidePrimitive) {
    auto x = make_var("x", tensor({2}));
    auto p0 = make_var("p0", tensor({2}));
    auto p1 = make_var("p1", tensor({2}));
    auto inner = make_function({p1}, call("exp", {p1}), true);
    auto outer = make_function({p0}, make_call_function(inner, {p0}), true);
    std::string p = problems_of(module_of(make_function({x}, make_call_function(outer, {x}))));
    EXPECT_TRUE(has(p, "@main: primitive function: contains another primitive function")) << p;
    // A plain function inside a primitive one is allowed.
    auto plain = make_function({p1}, call("exp", {p1}));
    auto outer2 = make_function({p0}, make_call_function(plain, {p0}), true);
    EXPECT_EQ(problems_of(module_of(make_function({x}, make_call_function(outer2, {x})))), "");
}

TEST(GraphVerifier, FreeVariables) {
    auto x = make_var("x", tensor({2}));
    auto y = make_var("y", tensor({2}));
    std::string p = problems_of(module_of(make_function({x}, call("add", {x, y}))));
    EXPECT_TRUE(has(p, "@main: function: free variable %y (bound nowhere in the module)")) << p;
    // Reported once, at the innermost function.
    auto q = make_var("q", tensor({2}));
    auto inner = make_function({q}, call("add", {q, y}));
    p = problems_of(module_of(make_function({x}, make_call_function(inner, {x}))));
    EXPECT_EQ(p, "@main: function: free variable %y (bound nowhere in the module)\n");
}

TEST(GraphVerifier, FunctionCallArityAndTypes) {
    auto x = make_var("x", tensor({2}));
    auto p0 = make_var("p0", tensor({2}));
    auto fn = make_function({p0}, call("exp", {p0}), true);
    Expr two =
        Expr(new Call(nullptr, Expr(fn), {x, x}, Ref<Attrs>(new NoAttrs()), tensor({2}), {}));
    std::string p = problems_of(module_of(make_function({x}, two)));
    EXPECT_TRUE(has(p, "@main: call of a function: 2 argument(s) for a function of 1 parameter(s)"))
        << p;
    auto i = make_var("i", tensor({2}, DataType::int32()));
    Expr typed = Expr(new Call(nullptr, Expr(fn), {i}, Ref<Attrs>(new NoAttrs()), tensor({2}), {}));
    p = problems_of(module_of(make_function({i}, typed)));
    EXPECT_TRUE(has(p,
                    "argument 0 has type Tensor[(2,), int32], the parameter %p0 has "
                    "Tensor[(2,), float32]"))
        << p;
    Expr neither = Expr(new Call(nullptr, Expr(), {x}, Ref<Attrs>(new NoAttrs()), tensor({2}), {}));
    p = problems_of(module_of(make_function({x}, neither)));
    EXPECT_TRUE(has(p, "a call must name exactly one of an op and a function")) << p;
}

TEST(GraphVerifier, KernelsAndTheMessage) {
    IRModule m = module_of(make_function({}, make_tuple({})));
    m.kernels["other"] =
        tir::parse_prim_func("prim_func k(A: float32[4]) { for i in [0, 4) { A[i] = 1f } }");
    std::string p = problems_of(m);
    EXPECT_TRUE(has(p, "kernel 'other' is stored under a name that is not its own ('k')")) << p;
    try {
        verify(m);
        ADD_FAILURE() << "verify accepted a broken module";
    } catch (const InternalError& e) {
        EXPECT_TRUE(has(e.what(), "the graph verifier found 1 problem(s):\n  kernel 'other'"))
            << e.what();
    }
}

}  // namespace
}  // namespace anvil::graph
