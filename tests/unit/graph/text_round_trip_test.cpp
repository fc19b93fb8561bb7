// The graph IR's text form: the exact spelling of each construct, and print -> parse -> print
// round trips (structurally equal, identical text) for every node kind, constants bit-exact,
// shared nodes printed once, symbolic dimensions, attributes of every kind and kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "graph_test_util.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/op_table.h"
#include "ops/sequence.h"
#include "ops/transform.h"
#include "tir/parser.h"

namespace anvil::graph {
namespace {

using testing::call;
using testing::constant;
using testing::expect_round_trip;
using testing::module_of;
using testing::tensor;

TEST(GraphText, PrintsRelayStyleWithNumberedTemporariesAndTypes) {
    auto x = make_var("x", tensor({2, 3}));
    auto y = make_var("y", tensor({2, 3}));
    Expr sum = call("add", {x, y});
    Expr body = call("multiply", {call("nn.relu", {sum}), sum});
    std::string text = expect_round_trip(module_of(make_function({x, y}, body)));
    EXPECT_EQ(text,
              "def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(2, 3), float32]) -> "
              "Tensor[(2, 3), float32] {\n"
              "  %0 = add(%x, %y) /* ty=Tensor[(2, 3), float32] */;\n"
              "  %1 = nn.relu(%0) /* ty=Tensor[(2, 3), float32] */;\n"
              "  %2 = multiply(%1, %0) /* ty=Tensor[(2, 3), float32] */;\n"
              "  %2\n"
              "}\n");
}

TEST(GraphText, SharedNodePrintsOnce) {
    auto x = make_var("x", tensor({4}));
    Expr e = call("exp", {x});
    Expr body = call("add", {call("add", {e, e}), call("multiply", {e, e})});
    IRModule m = module_of(make_function({x}, body));
    std::string text = expect_round_trip(m);
    size_t count = 0;
    for (size_t k = text.find("exp("); k != std::string::npos; k = text.find("exp(", k + 1)) {
        ++count;
    }
    EXPECT_EQ(count, 1u) << text;
    // The parse shares the node as well.
    IRModule back = parse_module(text, ops::op_table());
    auto* outer = back.main()->body.as<Call>();
    ASSERT_TRUE(outer);
    EXPECT_TRUE(outer->args[0].as<Call>()->args[0].same_as(outer->args[1].as<Call>()->args[1]));
}

TEST(GraphText, AttributesPrintOnlyWhenNotDefault) {
    auto x = make_var("x", tensor({2}));
    auto attrs = make_ref<ops::CastAttrs>();
    const_cast<ops::CastAttrs*>(attrs.get())->dtype = DataType::int64();
    Expr body = make_tuple({call("cast", {x}, attrs), call("cast", {x})});
    std::string text = expect_round_trip(module_of(make_function({x}, body)));
    EXPECT_NE(text.find("cast(%x, dtype=\"int64\") /* ty=Tensor[(2,), int64] */"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("cast(%x) /* ty=Tensor[(2,), float32] */"), std::string::npos) << text;
}

TEST(GraphText, TuplesProjectionsAndLets) {
    auto x = make_var("x", tensor({3}));
    auto v = make_var("v", tensor({3}));
    Expr pair = make_tuple({x, call("negative", {x})});
    Expr first = make_tuple_get_item(pair, 1);
    Expr body = make_let(v, call("abs", {first}), make_tuple({v, make_tuple({x}), make_tuple({})}));
    std::string text = expect_round_trip(module_of(make_function({x}, body)));
    EXPECT_NE(text.find("%1 = (%x, %0);"), std::string::npos) << text;
    EXPECT_NE(text.find("%2 = %1.1 /* ty=Tensor[(3,), float32] */;"), std::string::npos) << text;
    EXPECT_NE(text.find("let %v: Tensor[(3,), float32] = abs(%2) /* ty="), std::string::npos)
        << text;
    EXPECT_NE(text.find("(%x,)"), std::string::npos) << text;
    EXPECT_NE(text.find("= ();"), std::string::npos) << text;
    EXPECT_NE(text.find("-> (Tensor[(3,), float32], (Tensor[(3,), float32],), ())"),
              std::string::npos)
        << text;
}

TEST(GraphText, LetInOperandPositionPrintsAsBlock) {
    auto x = make_var("x", tensor({3}));
    auto v = make_var("v", tensor({3}));
    Expr inner = make_let(v, call("exp", {x}), call("add", {v, v}));
    Expr body = call("multiply", {inner, x});
    std::string text = expect_round_trip(module_of(make_function({x}, body)));
    EXPECT_NE(text.find("%0 = {\n    let %v"), std::string::npos) << text;
}

TEST(GraphText, PrimitiveFunctionsAndTheirCalls) {
    auto x = make_var("x", tensor({1, 8}));
    auto p0 = make_var("p0", tensor({1, 8}));
    auto p1 = make_var("p1", tensor({1, 8}));
    auto fused = make_function({p0, p1}, call("nn.relu", {call("add", {p0, p1})}), true);
    Expr a = make_call_function(fused, {x, x});
    Expr b = make_call_function(fused, {a, x});  // the function is shared: bound once
    auto q0 = make_var("p0", tensor({1, 8}));    // same name, another object and scope
    auto plain = make_function({q0}, call("exp", {q0}));
    IRModule m = module_of(make_function({x}, make_tuple({b, make_call_function(plain, {b})})));
    std::string text = expect_round_trip(m);
    EXPECT_NE(text.find("%0 = fn (%p0: Tensor[(1, 8), float32], %p1: Tensor[(1, 8), float32], "
                        "primitive=1) -> Tensor[(1, 8), float32] {\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("%3 = %0(%x, %x) /* ty=Tensor[(1, 8), float32] */;"), std::string::npos)
        << text;
    EXPECT_NE(text.find("%4 = %0(%3, %x)"), std::string::npos) << text;
    EXPECT_NE(text.find("%5 = fn (%p0: Tensor[(1, 8), float32]) -> "), std::string::npos) << text;
}

TEST(GraphText, ClosedNodeSharedWithAFunctionPrintsInEach) {
    // A function body shows everything it uses, so a closed node shared with the enclosing
    // function (here with a function of its own inside) is printed in both scopes.
    auto q = make_var("q", tensor({2}));
    auto helper = make_function({q}, call("exp", {q}));
    Expr shared = make_call_function(helper, {constant<float>({2}, DataType::float32(), {1, 2})});
    auto p = make_var("p", tensor({2}));
    auto fused = make_function({p}, call("add", {p, shared}), true);
    auto x = make_var("x", tensor({2}));
    IRModule m =
        module_of(make_function({x}, call("add", {make_call_function(fused, {x}), shared})));
    std::string text = expect_round_trip(m);
    size_t count = 0;
    for (size_t k = text.find("exp(%q)"); k != std::string::npos; k = text.find("exp(%q)", k + 1)) {
        ++count;
    }
    EXPECT_EQ(count, 2u) << text;
}

TEST(GraphText, PrimitiveGlobalFunctionAndNoParameters) {
    IRModule m;
    auto c = constant<float>({}, DataType::float32(), {2.5f});
    m.functions["main"] = make_function({}, call("exp", {c}));
    auto p = make_var("p", tensor({2}));
    m.functions["fused_exp"] = make_function({p}, call("exp", {p}), true);
    std::string text = expect_round_trip(m);
    EXPECT_NE(text.find("def @fused_exp(%p: Tensor[(2,), float32], primitive=1)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("def @main() -> Tensor[(), float32]"), std::string::npos) << text;
}

TEST(GraphText, VariableNamesAreMadeUniqueAndSafe) {
    auto a = make_var("input.1", tensor({2}));
    auto b = make_var("input.1", tensor({2}));
    auto c = make_var("0", tensor({2}));
    auto d = make_var("", tensor({2}));
    Expr body = call("add", {call("add", {a, b}), call("add", {c, d})});
    std::string text = expect_round_trip(module_of(make_function({a, b, c, d}, body)));
    EXPECT_NE(text.find("(%input_1: Tensor[(2,), float32], %input_1_1: Tensor[(2,), float32], "
                        "%_0: Tensor[(2,), float32], %v: Tensor[(2,), float32])"),
              std::string::npos)
        << text;
}

TEST(GraphText, DottedParameterNamesReadBack) {
    // PyTorch's parameter names (features.0.0_weight) keep their dots; a dot before digits
    // only (%t.0, input.1) is a tuple projection, so such a name is spelled with '_'.
    auto w = make_var("features.0.0_weight", tensor({2}));
    auto t = make_var("t", make_tuple_type({tensor({2}), tensor({2})}));
    Expr body = call("add", {w, make_tuple_get_item(t, 1)});
    std::string text = expect_round_trip(module_of(make_function({w, t}, body)));
    EXPECT_NE(text.find("add(%features.0.0_weight, %0)"), std::string::npos) << text;
    EXPECT_NE(text.find("%0 = %t.1 "), std::string::npos) << text;
    IRModule m = parse_module(
        "def @main(%conv1.bias: Tensor[(2,), float32], %p: (Tensor[(2,), float32],)) {\n"
        "  add(%conv1.bias, %p.0)\n}\n",
        ops::op_table());
    EXPECT_EQ(m.main()->params[0]->name, "conv1.bias");
    EXPECT_TRUE(m.main()->body.as<Call>()->args[1].as<TupleGetItem>());
    // A projection of a dotted name: `%a.b.0` is item 0 of `%a.b`, and prints so.
    auto ab = make_var("a.b", make_tuple_type({tensor({2}), tensor({2})}));
    std::string t2 = expect_round_trip(
        module_of(make_function({ab}, call("negative", {make_tuple_get_item(ab, 0)}))));
    EXPECT_NE(t2.find("= %a.b.0 "), std::string::npos) << t2;
}

TEST(GraphText, TvmSpellingsOfAttributesParse) {
    // As TVM prints them: suffixed numbers and pad_width as one [before, after] pair per axis.
    IRModule m = parse_module(
        "def @main(%x: Tensor[(1, 2, 3), uint8]) {\n"
        "  %0 = nn.pad(%x, 114f, pad_width=[[0, 0], [1, 2], [3, 0]], pad_mode=\"constant\");\n"
        "  clip(%0, a_min=0f, a_max=2.5e2f32)\n}\n",
        ops::op_table());
    const auto* clip = m.main()->body.as<Call>();
    ASSERT_TRUE(clip);
    const auto& bounds = static_cast<const ops::ClipAttrs&>(*clip->attrs);
    EXPECT_EQ(bounds.a_min, 0.0);
    EXPECT_EQ(bounds.a_max, 250.0);
    const auto* pad = clip->args[0].as<Call>();
    const auto& pads = static_cast<const ops::PadAttrs&>(*pad->attrs);
    EXPECT_EQ(pads.pad_width, (std::vector<int64_t>{0, 0, 1, 2, 3, 0}));
    EXPECT_EQ(type_str(pad->type), "Tensor[(1, 5, 6), uint8]");
}

TEST(GraphText, ConstantsRoundTripBitExact) {
    float nan_payload;
    uint32_t bits = 0x7fc01234u;
    std::memcpy(&nan_payload, &bits, 4);
    std::vector<float> floats = {1.5f,
                                 -0.0f,
                                 std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(),
                                 std::numeric_limits<float>::quiet_NaN(),
                                 nan_payload,
                                 std::numeric_limits<float>::denorm_min(),
                                 3.0e38f};
    std::vector<int64_t> ints = {0, -1, std::numeric_limits<int64_t>::min(),
                                 std::numeric_limits<int64_t>::max(), 42};
    std::vector<uint8_t> bools = {1, 0, 0, 1, 1, 0};
    Expr cf = constant({2, 4}, DataType::float32(), floats);
    Expr ci = constant({5}, DataType::int64(), ints);
    Expr cb = constant({2, 3}, DataType::bool_(), bools);
    Expr ch = constant<uint8_t>({3}, DataType::uint(8), {0, 255, 7});
    auto x = make_var("x", tensor({2, 4}));
    auto y = make_var("y", tensor({5}, DataType::int64()));
    Expr body = make_tuple({call("add", {x, cf}), call("multiply", {y, ci}),
                            call("logical_not", {cb}), call("abs", {ch}), cf});
    IRModule m = module_of(make_function({x, y}, body));
    std::string text = expect_round_trip(m);
    EXPECT_NE(text.find("#[metadata]\nmeta[Constant][0]: Tensor[(2, 4), float32] = \""),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("meta[Constant][2]: Tensor[(2, 3), bool]"), std::string::npos) << text;

    IRModule back = parse_module(text, ops::op_table());
    auto* tuple = back.main()->body.as<Tuple>();
    ASSERT_TRUE(tuple);
    auto f = tuple->fields[4].as<Constant>()->data;
    ASSERT_EQ(f.nbytes(), floats.size() * 4);
    EXPECT_EQ(std::memcmp(f.raw_data(), floats.data(), f.nbytes()), 0);
    auto i = tuple->fields[1].as<Call>()->args[1].as<Constant>()->data;
    EXPECT_EQ(i.to_vector<int64_t>(), ints);
    auto b = tuple->fields[2].as<Call>()->args[0].as<Constant>()->data;
    EXPECT_EQ(b.to_vector<uint8_t>(), bools);
    EXPECT_EQ(dtype_of(b.dtype()), DataType::bool_());
    // The constant used twice is one node after parsing too.
    EXPECT_TRUE(tuple->fields[4].same_as(tuple->fields[0].as<Call>()->args[1]));
}

TEST(GraphText, StructuralEqualityComparesConstantBits) {
    float nan_a = std::numeric_limits<float>::quiet_NaN(), nan_b;
    uint32_t bits = 0x7fc00001u;
    std::memcpy(&nan_b, &bits, 4);
    Expr a = constant<float>({1}, DataType::float32(), {nan_a});
    Expr b = constant<float>({1}, DataType::float32(), {nan_b});
    Expr c = constant<float>({1}, DataType::float32(), {nan_a});
    EXPECT_FALSE(structural_equal(a, b));
    EXPECT_TRUE(structural_equal(a, c));
    EXPECT_FALSE(structural_equal(constant<float>({1}, DataType::float32(), {0.0f}),
                                  constant<float>({1}, DataType::float32(), {-0.0f})));
    EXPECT_FALSE(structural_equal(constant<int32_t>({2}, DataType::int32(), {1, 2}),
                                  constant<int32_t>({2, 1}, DataType::int32(), {1, 2})));
}

TEST(GraphText, StructuralEqualityMatchesBoundVarsByPosition) {
    auto x = make_var("x", tensor({2}));
    auto y = make_var("y", tensor({2}));
    auto f1 = make_function({x, y}, call("subtract", {x, y}));
    auto a = make_var("a", tensor({2}));
    auto b = make_var("b", tensor({2}));
    auto f2 = make_function({a, b}, call("subtract", {a, b}));
    auto f3 = make_function({a, b}, call("subtract", {b, a}));
    EXPECT_TRUE(structural_equal(Expr(f1), Expr(f2)));
    EXPECT_FALSE(structural_equal(Expr(f1), Expr(f3)));
    // Free variables must be the same objects.
    EXPECT_TRUE(structural_equal(call("exp", {x}), call("exp", {x})));
    EXPECT_FALSE(structural_equal(call("exp", {x}), call("exp", {y})));
    // Attributes and primitive flags count.
    auto to_int = make_ref<ops::CastAttrs>();
    const_cast<ops::CastAttrs*>(to_int.get())->dtype = DataType::int32();
    EXPECT_FALSE(structural_equal(call("cast", {x}, to_int), call("cast", {x})));
    EXPECT_FALSE(
        structural_equal(Expr(make_function({a}, a, true)), Expr(make_function({a}, a, false))));
}

TEST(GraphText, SymbolicDimensions) {
    auto n = anvil::make_var("n", DataType::int64());
    auto m32 = anvil::make_var("m", DataType::int32());
    Type t = make_tensor_type({PrimExpr(n), make_int(DataType::int64(), 3)}, DataType::float32());
    Type u = make_tensor_type({cast(DataType::int64(), m32) * make_int(DataType::int64(), 2)},
                              DataType::float16());
    auto x = make_var("x", t);
    auto y = make_var("y", t);
    auto z = make_var("z", u);
    Expr body = make_tuple({call("add", {x, y}), call("exp", {z})});
    std::string text = expect_round_trip(module_of(make_function({x, y, z}, body)));
    EXPECT_NE(text.find("%x: Tensor[(n, 3), float32]"), std::string::npos) << text;
    EXPECT_NE(text.find("Tensor[(cast<int64>(m) * 2i64,), float16]"), std::string::npos) << text;
}

TEST(GraphText, SymbolicShapeAttributes) {
    // A shape attribute spells its dimensions like a type; `n` is the same variable in both.
    auto n = anvil::make_var("n", DataType::int64());
    auto i64 = [](int64_t v) { return make_int(DataType::int64(), v); };
    auto x = make_var("x", make_tensor_type({PrimExpr(n), i64(32)}, DataType::float32()));
    auto attrs = make_ref<ops::ReshapeAttrs>();
    const_cast<ops::ReshapeAttrs*>(attrs.get())->dims = {PrimExpr(n) * i64(2), i64(16)};
    Expr body = make_call(ops::get_op("reshape"), {x}, attrs);
    std::string text = expect_round_trip(module_of(make_function({x}, body)));
    EXPECT_NE(text.find("dims=(n * 2i64, 16)"), std::string::npos) << text;
    EXPECT_NE(text.find("Tensor[(n * 2i64, 16), float32]"), std::string::npos) << text;
}

TEST(GraphText, KernelsPrintAfterFunctionsAndRoundTrip) {
    auto k = tir::parse_prim_func(
        "prim_func add_one(A: float32[4], B: float32[4]) {\n"
        "  for i in [0, 4) { B[i] = A[i] + 1f }\n"
        "}\n");
    IRModule m = module_of(make_function({make_var("x", tensor({4}))},
                                         constant<float>({4}, DataType::float32(), {1, 2, 3, 4})));
    m.kernels["add_one"] = k;
    std::string text = expect_round_trip(m);
    size_t def = text.find("def @main"), kernel = text.find("prim_func add_one"),
           meta = text.find("#[metadata]");
    EXPECT_LT(def, kernel);
    EXPECT_LT(kernel, meta);
}

// An op with a field of every attribute kind, in a table of its own.
struct EveryAttrs : AttrsBase<EveryAttrs> {
    static constexpr const char* kTypeName = "EveryAttrs";
    int64_t count = 1;
    double alpha = 0.5;
    bool flag = false;
    std::string mode = "nearest";
    std::vector<int64_t> axes{0};
    std::vector<double> scales{};
    DataType out_dtype = DataType::void_();
    void visit_fields(AttrVisitor& v) override {
        v.visit("count", &count);
        v.visit("alpha", &alpha);
        v.visit("flag", &flag);
        v.visit("mode", &mode);
        v.visit("axes", &axes);
        v.visit("scales", &scales);
        v.visit("out_dtype", &out_dtype);
    }
};

OpTable every_attrs_table() {
    OpTable table;
    for (const auto& op : ops::op_table().all()) table.add(op);
    auto op = make_ref<Op>();
    auto* o = const_cast<Op*>(op.get());
    o->name = "test.every_attrs";
    o->num_inputs = 1;
    o->make_default_attrs = [] { return Ref<Attrs>(new EveryAttrs()); };
    o->infer_type = [](const Op&, const std::vector<Type>& args, const Attrs&, const SourceLoc&) {
        return args[0];
    };
    table.add(op);
    return table;
}

TEST(GraphText, AttributesOfEveryKindRoundTrip) {
    OpTable table = every_attrs_table();
    const Op& op = *table.find("test.every_attrs");
    auto attrs = make_ref<EveryAttrs>();
    auto* a = const_cast<EveryAttrs*>(attrs.get());
    a->count = -9223372036854775807LL - 1;
    a->alpha = 1e-5;
    a->flag = true;
    a->mode = "linear";
    a->axes = {-1, 2};
    a->scales = {0.1, -std::numeric_limits<double>::infinity(), 2.0};
    a->out_dtype = DataType::bfloat16();
    auto x = make_var("x", tensor({2}));
    Expr body = make_tuple({make_call(op, {x}, attrs), make_call(op, {x})});
    IRModule m = module_of(make_function({x}, body));
    std::string text = print(m);
    EXPECT_NE(text.find("test.every_attrs(%x, count=-9223372036854775808, "
                        "alpha=1.0000000000000001e-05, flag=True, mode=\"linear\", axes=[-1, 2], "
                        "scales=[0.10000000000000001, -inf, 2.0], out_dtype=\"bfloat16\")"),
              std::string::npos)
        << text;
    IRModule back = parse_module(text, table);
    EXPECT_TRUE(structural_equal(m, back));
    EXPECT_EQ(print(back), text);
    // Integers are accepted where numbers are expected; dtypes may be bare names.
    Expr e =
        parse_expr("test.every_attrs(%x, alpha=2, scales=[1, 2.5], out_dtype=int8)", table, {x});
    auto* parsed = static_cast<const EveryAttrs*>(e.as<Call>()->attrs.get());
    EXPECT_EQ(parsed->alpha, 2.0);
    EXPECT_EQ(parsed->scales, (std::vector<double>{1.0, 2.5}));
    EXPECT_EQ(parsed->out_dtype, DataType::int_(8));
}

TEST(GraphText, ExpressionsPrintAsBlocksAndParseWithFreeVars) {
    auto x = make_var("x", tensor({2}));
    Expr e = call("add", {call("exp", {x}), constant<float>({2}, DataType::float32(), {1, 2})});
    std::string text = print(e);
    EXPECT_EQ(text,
              "%0 = exp(%x) /* ty=Tensor[(2,), float32] */;\n"
              "%1 = add(%0, meta[Constant][0]) /* ty=Tensor[(2,), float32] */;\n"
              "%1\n"
              "\n"
              "#[metadata]\n"
              "meta[Constant][0]: Tensor[(2,), float32] = \"AACAPwAAAEA=\"\n");
    Expr back = parse_expr(text, ops::op_table(), {x});
    EXPECT_TRUE(structural_equal(e, back));
    EXPECT_EQ(print(back), text);
    EXPECT_EQ(print(Expr(x)), "%x\n");
}

TEST(GraphText, HandWrittenTextMayNestAndOmitAnnotations) {
    auto x = make_var("x", tensor({2}));
    Expr e = parse_expr(
        "// a comment\n"
        "%t = (nn.relu(%x), exp(%x));\n"
        "let %y = add(%t.0, %t.1);\n"
        "%f = fn (%x: Tensor[(2,), float32]) { negative(%x) };\n"
        "%f(%y)",
        ops::op_table(), {x});
    Expr expected = [&] {
        Expr t = make_tuple({call("nn.relu", {x}), call("exp", {x})});
        auto y = make_var("y", tensor({2}));
        auto p = make_var("x", tensor({2}));
        auto f = make_function({p}, call("negative", {p}));
        Expr sum = call("add", {make_tuple_get_item(t, 0), make_tuple_get_item(t, 1)});
        return make_let(y, sum, make_call_function(f, {y}));
    }();
    EXPECT_TRUE(structural_equal(e, expected)) << print(e);
}

TEST(GraphText, PrintWithoutMetadataSummarizesConstants) {
    Expr c = constant<float>({2}, DataType::float32(), {1, 2});
    std::string text = print(call("exp", {c}), PrintOptions{.metadata = false});
    EXPECT_NE(text.find("// metadata omitted: 1 constant(s), 8 bytes"), std::string::npos) << text;
    EXPECT_EQ(text.find("#[metadata]"), std::string::npos) << text;
}

TEST(GraphText, RunTimeShapeValuesAndConditionsRoundTrip) {
    const char* text = R"(
def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(2,), int64]) {
  %0 = bind_values(%x, %s, vars=(a, b), checks=(a >= 0 && b >= 0, a == 1 || a == 2, select(b == 3, 1, 0) == 1, !(a < b)));
  %1 = broadcast_to(%0, dims=(a, 2, 3));
  dynamic_reshape(%1, %s, dims=(c, d))
}
)";
    IRModule m = parse_module(text, ops::op_table());
    EXPECT_EQ(type_str(m.main()->body->type), "Tensor[(c, d), float32]");
    std::string printed = expect_round_trip(m);
    EXPECT_NE(printed.find("checks=(a >= 0i64 && b >= 0i64"), std::string::npos) << printed;
}

TEST(GraphText, SequenceAndOptionalTypes) {
    auto i64 = [](int64_t v) { return make_int(DataType::int64(), v); };
    auto n = anvil::make_var("n", DataType::int64());
    Type seq =
        make_sequence_type(DataType::float32(), std::vector<int64_t>{SequenceType::kAnyDim, 3});
    auto s = make_var("s", seq);
    auto o = make_var("o", make_optional_type(tensor({5})));
    auto q = make_var("q", make_optional_type(make_sequence_type(DataType::int64(), std::nullopt)));
    auto v = make_var("v", make_sequence_type(DataType::int_(8), std::vector<int64_t>{4}));
    auto r = make_var("r", make_sequence_type(DataType::float16(), std::vector<int64_t>{}));
    auto x = make_var("x", tensor({2, 3}));
    auto p = make_var("p", tensor({}, DataType::int64()));
    Type element = make_tensor_type({PrimExpr(n), i64(3)}, DataType::float32());
    Expr body = make_tuple({
        call("seq.length", {s}),
        ops::make_sequence_at(s, p, element),
        call("seq.insert", {s, x, p}),
        call("seq.erase", {call("seq.insert", {ops::make_empty_sequence(DataType::float32()), x})}),
        ops::make_sequence_concat(
            s, 0, true, make_tensor_type({PrimExpr(n), PrimExpr(n), i64(3)}, DataType::float32())),
        call("seq.construct", {x, x}),
        call("optional.has_value", {o}),
        call("optional.get", {o}),
        call("optional.some", {s}),
        ops::make_optional_none(make_optional_type(seq)),
        call("optional.get", {q}),
        v,
        r,
    });
    std::string text = expect_round_trip(module_of(make_function({s, o, q, v, r, x, p}, body)));
    for (const char* part : {
             "def @main(%s: Sequence[(?, 3), float32], %o: Optional[Tensor[(5,), float32]], %q: "
             "Optional[Sequence[?, int64]], %v: Sequence[(4,), int8], %r: Sequence[(), float16], ",
             "%1 = seq.at(%s, %p, out_shapes=(n, 3), out_ndims=[2], out_dtypes=\"float32\") /* "
             "ty=Tensor[(n, 3), float32] */;",
             "%2 = seq.insert(%s, %x, %p) /* ty=Sequence[(?, 3), float32] */;",
             "%3 = seq.empty(out_ndims=[-2], out_dtypes=\"sequence float32\") /* "
             "ty=Sequence[empty, float32] */;",
             "%4 = seq.insert(%3, %x) /* ty=Sequence[(2, 3), float32] */;",
             "%10 = optional.some(%s) /* ty=Optional[Sequence[(?, 3), float32]] */;",
             // A dimension the elements need not share is -1 among the result's attributes.
             "%11 = optional.none(out_shapes=(-1, 3), out_ndims=[2], out_dtypes=\"optional "
             "sequence "
             "float32\") /* ty=Optional[Sequence[(?, 3), float32]] */;",
             "%12 = optional.get(%q) /* ty=Sequence[?, int64] */;",
         }) {
        EXPECT_NE(text.find(part), std::string::npos) << part << "\nin\n" << text;
    }
    // Results of every kind of sequence and optional type kept as attributes.
    for (const Type& t : {make_optional_type(make_sequence_type(DataType::int64(), std::nullopt)),
                          make_optional_type(make_empty_sequence_type(DataType::float32())),
                          make_optional_type(make_tensor_type({PrimExpr(n)}, DataType::int32())),
                          make_optional_type(make_sequence_type(
                              DataType::float32(), std::vector<int64_t>{SequenceType::kAnyDim}))}) {
        expect_round_trip(module_of(make_function({}, ops::make_optional_none(t))));
    }
}

TEST(GraphText, SequenceTypesCompareStructurally) {
    auto parse_main = [](const std::string& param) {
        return parse_module("def @main(%s: " + param + ") {\n  %s\n}\n", ops::op_table());
    };
    const char* types[] = {"Sequence[(?, 3), float32]",
                           "Sequence[(2, 3), float32]",
                           "Sequence[(?, 3), int32]",
                           "Sequence[(?, 3, 1), float32]",
                           "Sequence[?, float32]",
                           "Sequence[empty, float32]",
                           "Optional[Tensor[(5,), float32]]",
                           "Optional[Tensor[(6,), float32]]",
                           "Optional[Sequence[?, float32]]"};
    for (const char* a : types) {
        for (const char* b : types) {
            IRModule ma = parse_main(a), mb = parse_main(b);
            EXPECT_EQ(type_str(ma.main()->params[0]->type), a);
            EXPECT_EQ(structural_equal(ma, mb), std::string(a) == b) << a << " vs " << b;
        }
    }
}

TEST(GraphText, LargerGraphWithOpsThatMayExist) {
    // Uses nn.conv2d when the op table has it; the elementwise chain stands in otherwise.
    auto x = make_var("input", tensor({1, 3, 8, 8}));
    Expr h = x;
    if (ops::op_table().find("nn.conv2d")) {
        std::vector<float> w(4 * 3 * 3 * 3, 0.25f);
        h = call("nn.conv2d", {h, constant({4, 3, 3, 3}, DataType::float32(), w)});
    }
    for (int i = 0; i < 20; ++i) {
        Expr r = call("nn.relu", {h});
        h = call(i % 2 ? "add" : "multiply", {r, call("sigmoid", {r})});
    }
    expect_round_trip(module_of(make_function({x}, h)));
}

}  // namespace
}  // namespace anvil::graph

namespace anvil::graph {
namespace {

// Scalars print inline as Relay writes them (QNN's scales and zero points), in the shortest form
// that reads back bit-exactly; NaN, infinities and bool stay in the metadata.
template <typename T>
Expr scalar(DataType t, T v) {
    return constant<T>({}, t, std::vector<T>{v});
}

TEST(GraphText, ScalarConstantsPrintInline) {
    auto x = make_var("x", tensor({3}));
    auto n = make_var("n", tensor({3}, DataType::int64()));
    Expr body = make_tuple({
        call("multiply", {x, scalar(DataType::float32(), 0.0186579f)}),
        call("add", {x, scalar(DataType::float32(), -2.5e-7f)}),
        call("add", {n, scalar<int64_t>(DataType::int64(), -9007199254740993)}),
        scalar<int32_t>(DataType::int32(), 114),
        scalar<int32_t>(DataType::int32(), std::numeric_limits<int32_t>::min()),
        scalar<uint8_t>(DataType::uint(8), 255),
        scalar<int8_t>(DataType::int_(8), -128),
        scalar<int16_t>(DataType::int_(16), -7),
        scalar<uint16_t>(DataType::uint(16), 65535),
        scalar<uint32_t>(DataType::uint(32), 4294967295u),
        scalar<double>(DataType::float64(), 0.1),
        call("add", {x, scalar(DataType::float32(), std::numeric_limits<float>::infinity())}),
    });
    std::string text = expect_round_trip(module_of(make_function({x, n}, body)));
    for (const char* part :
         {"multiply(%x, 0.0186579f)", "add(%x, -2.5e-07f)", "add(%n, -9007199254740993i64)",
          "114, -2147483648, 255u8, -128i8, -7i16, 65535u16, 4294967295u32, 0.1f64",
          "meta[Constant][0]: Tensor[(), float32]"}) {
        EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
    }
}

TEST(GraphText, ScalarLiteralsParse) {
    IRModule m = parse_module(
        "def @main(%x: Tensor[(2,), float32]) {\n"
        "  (add(%x, 1.5f), add(%x, 2f), 3, -4i64, 5u8, 1e-3, -0.25f64, 7i32, 2f32)\n}\n",
        ops::op_table());
    auto* t = m.main()->body.as<Tuple>();
    ASSERT_TRUE(t);
    auto type_of = [&](size_t i) { return type_str(t->fields[i]->type); };
    EXPECT_EQ(type_of(2), "Tensor[(), int32]");
    EXPECT_EQ(type_of(3), "Tensor[(), int64]");
    EXPECT_EQ(type_of(4), "Tensor[(), uint8]");
    EXPECT_EQ(type_of(5), "Tensor[(), float32]");
    EXPECT_EQ(type_of(6), "Tensor[(), float64]");
    EXPECT_EQ(type_of(7), "Tensor[(), int32]");
    EXPECT_EQ(type_of(8), "Tensor[(), float32]");
    EXPECT_EQ(*t->fields[3].as<Constant>()->data.data<int64_t>(), -4);
    EXPECT_EQ(*t->fields[6].as<Constant>()->data.data<double>(), -0.25);
}

}  // namespace
}  // namespace anvil::graph
