#include "graph/attr_fields.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

Expr simplify(const std::vector<Ref<Var>>& params, const Expr& body) {
    return simplify_expr(module_of(make_function(params, body)), test_context()).main()->body;
}

TEST(SimplifyExpr, AddZeroAndMultiplyOneAreIdentities) {
    auto x = tensor_var("x", {2, 3});
    Expr body = call(
        "exp", {call("multiply", {constant({3}, {1.0f}), call("add", {x, constant({}, {0.0f})})})});
    Expr out = simplify({x}, body);
    EXPECT_EQ(op_names(out), (std::vector<std::string>{"exp"}));
    EXPECT_TRUE(out.as<Call>()->args[0].same_as(Expr(x)));
}

TEST(SimplifyExpr, SubtractAndDivideOnlyOnTheRight) {
    auto x = tensor_var("x", {3});
    Expr right =
        call("divide", {call("subtract", {x, constant({}, {0.0f})}), constant({}, {1.0f})});
    EXPECT_TRUE(simplify({x}, right).same_as(Expr(x)));
    Expr left = call("subtract", {constant({3}, {0.0f}), x});
    EXPECT_EQ(op_names(simplify({x}, left)), (std::vector<std::string>{"subtract"}));
}

TEST(SimplifyExpr, IdentityThatBroadcastsStays) {
    auto x = tensor_var("x", {3});
    Expr body = call("add", {x, constant({2, 3}, {0.0f})});  // result (2, 3), not x's (3,)
    EXPECT_EQ(op_names(simplify({x}, body)), (std::vector<std::string>{"add"}));
    Expr nonuniform = call("multiply", {x, constant({3}, {1, 1, 2})});
    EXPECT_EQ(op_names(simplify({x}, nonuniform)), (std::vector<std::string>{"multiply"}));
}

TEST(SimplifyExpr, PowerOfTwoIsASquareAndOfOneIsTheBase) {
    auto x = tensor_var("x", {2, 3});
    Expr square = simplify({x}, call("power", {x, constant({}, {2.0f})}));
    EXPECT_EQ(op_names(square), (std::vector<std::string>{"multiply"}));
    EXPECT_TRUE(square.as<Call>()->args[0].same_as(Expr(x)));
    EXPECT_TRUE(square.as<Call>()->args[1].same_as(Expr(x)));
    EXPECT_TRUE(simplify({x}, call("power", {x, constant({3}, {1, 1, 1})})).same_as(Expr(x)));
    // Other exponents, and one that broadcasts x to a larger shape, stay.
    EXPECT_EQ(op_names(simplify({x}, call("power", {x, constant({}, {3.0f})}))),
              (std::vector<std::string>{"power"}));
    EXPECT_EQ(op_names(simplify({x}, call("power", {x, constant({4, 2, 3}, {2.0f})}))),
              (std::vector<std::string>{"power"}));
}

TEST(SimplifyExpr, CastToTheSameDtypeIsRemoved) {
    auto x = tensor_var("x", {3});
    auto same = make_ref<ops::CastAttrs>();  // float32
    auto other = make_ref<ops::CastAttrs>();
    const_cast<ops::CastAttrs*>(other.get())->dtype = DataType::int32();
    EXPECT_TRUE(simplify({x}, call("cast", {x}, same)).same_as(Expr(x)));
    EXPECT_EQ(op_names(simplify({x}, call("cast", {x}, other))),
              (std::vector<std::string>{"cast"}));
}

Expr cast_to(const Expr& x, DataType t) {
    ops::CastAttrs a;
    a.dtype = t;
    return call("cast", {x}, make_ref<ops::CastAttrs>(a));
}

Expr clip(const Expr& x, double lo, double hi) {
    ops::ClipAttrs a;
    a.a_min = lo;
    a.a_max = hi;
    return call("clip", {x}, make_ref<ops::ClipAttrs>(a));
}

TEST(SimplifyExpr, RequantizeSaturationsMerge) {
    // round(y) saturated to int32, cast, clipped to uint8's range, cast: one clip, one cast.
    auto y = tensor_var("y", {5});
    Expr chain =
        cast_to(clip(cast_to(clip(y, -2147483648.0, 2147483520.0), DataType::int32()), 0, 255),
                DataType::uint(8));
    Expr out = simplify({y}, chain);
    ASSERT_EQ(op_names(out), (std::vector<std::string>{"clip", "cast"}));
    const Call* c = op_calls(out)[0];
    EXPECT_TRUE(c->args[0].same_as(Expr(y)));
    EXPECT_EQ(*attr_float(*c->attrs, "a_min"), 0.0);
    EXPECT_EQ(*attr_float(*c->attrs, "a_max"), 255.0);
    EXPECT_TRUE(type_equal(out->type, chain->type));
    // Bounds that are not whole numbers stay after the cast; a widening cast of the narrow value
    // stays (other users read that value); disjoint clips stay.
    Expr halves = clip(cast_to(y, DataType::int32()), 0.5, 255);
    EXPECT_EQ(op_names(simplify({y}, halves)), (std::vector<std::string>{"cast", "clip"}));
    Expr widened = cast_to(cast_to(clip(y, 0, 255), DataType::uint(8)), DataType::int32());
    EXPECT_EQ(op_names(simplify({y}, widened)), (std::vector<std::string>{"clip", "cast", "cast"}));
    Expr disjoint = clip(clip(y, 0, 1), 2, 3);
    EXPECT_EQ(op_names(simplify({y}, disjoint)), (std::vector<std::string>{"clip", "clip"}));
}

TEST(SimplifyExpr, SaturationsThatWouldChangeValuesStay) {
    auto y = tensor_var("y", {5});
    auto names = [&](const Expr& e) { return op_names(simplify({y}, e)); };
    const std::vector<std::string> kept{"clip", "cast", "clip"};
    // A cast to uint8 wraps (-8.5 -> 248, then 100 after the clip; clipping first gives 0): no
    // first clip keeps it inside uint8, so the clip stays after it.
    EXPECT_EQ(names(clip(cast_to(clip(y, -1000, 1000), DataType::uint(8)), 0, 100)), kept);
    EXPECT_EQ(names(clip(cast_to(y, DataType::uint(8)), 0, 100)),
              (std::vector<std::string>{"cast", "clip"}));
    // A bound float32 cannot hold (16777217 rounds to 16777216 as a float clip bound).
    EXPECT_EQ(names(clip(cast_to(clip(y, -1e9, 1e9), DataType::int32()), 0, 16777217)), kept);
    // float16 values: bounds this rule does not round.
    auto h = tensor_var("h", {5}, DataType::float16());
    EXPECT_EQ(op_names(simplify({h}, clip(cast_to(clip(h, -100, 100), DataType::int32()), 0, 9))),
              kept);
    // A negative bound uint32 does not hold: the casts stay.
    Expr negative = cast_to(cast_to(clip(y, -5, 5), DataType::uint(32)), DataType::uint(8));
    EXPECT_EQ(names(negative), (std::vector<std::string>{"clip", "cast", "cast"}));
}

Expr int32_constant(std::vector<int64_t> shape, int32_t value) {
    auto a = runtime::NDArray::empty(shape, DLDataType{kDLInt, 32, 1});
    std::fill_n(a.data<int32_t>(), a.num_elements(), value);
    return make_constant(a);
}

TEST(SimplifyExpr, IntegerConstantTermsMerge) {
    // A quantized convolution's zero-point term, then its bias: one add of their difference.
    auto x = tensor_var("x", {1, 4, 2, 2}, DataType::int32());
    Expr sum = call("nn.bias_add",
                    {call("subtract", {x, int32_constant({4, 1, 1}, 7)}), int32_constant({4}, 3)});
    Expr out = simplify({x}, sum);
    ASSERT_EQ(op_names(out), (std::vector<std::string>{"expand_dims", "subtract", "add"}));
    EXPECT_TRUE(out.as<Call>()->args[0].same_as(Expr(x)));
    EXPECT_TRUE(type_equal(out->type, sum->type));
    Expr added = call("add", {call("subtract", {x, int32_constant({}, 7)}), int32_constant({}, 3)});
    Expr merged = simplify({x}, added);  // x + (3 - 7)
    EXPECT_EQ(op_names(merged), (std::vector<std::string>{"subtract", "add"}));
    EXPECT_TRUE(merged.as<Call>()->args[0].same_as(Expr(x)));
    // A bias along another axis, and constants whose difference would be larger than both
    // ([1, 1, 2, 2] and [1, 4, 1, 1] make [1, 4, 2, 2]), stay.
    Ref<Attrs> last_axis = attr_with(*ops::get_op("nn.bias_add").make_default_attrs(), "axis", 3);
    Expr other_axis =
        call("nn.bias_add",
             {call("subtract", {x, int32_constant({1, 1, 1, 2}, 7)}), int32_constant({2}, 3)},
             last_axis);
    EXPECT_EQ(op_names(simplify({x}, other_axis)),
              (std::vector<std::string>{"subtract", "nn.bias_add"}));
    Expr larger = call("add", {call("subtract", {x, int32_constant({1, 1, 2, 2}, 7)}),
                               int32_constant({1, 4, 1, 1}, 3)});
    Expr kept = simplify({x}, larger);
    EXPECT_TRUE(op_calls(kept)[0]->args[0].same_as(Expr(x)));
    // float32 would round differently: stays.
    auto f = tensor_var("f", {4});
    Expr floats = call("add", {call("subtract", {f, constant({}, {0.1f})}), constant({}, {0.2f})});
    EXPECT_EQ(op_names(simplify({f}, floats)), (std::vector<std::string>{"subtract", "add"}));
    EXPECT_TRUE(op_calls(simplify({f}, floats))[0]->args[0].same_as(Expr(f)));
}

TEST(SimplifyExpr, HalvingIsAShiftAndTheDroppedBit) {
    // TFLite's ADD rescales its larger-scale operand by 1/2 = 2^30 * 2^(0 - 31).
    auto y = tensor_var("y", {2, 8}, DataType::int32());
    auto fpm = [&](const std::string& rounding, int32_t m, int32_t s) {
        Ref<Attrs> a = attr_with(*ops::get_op("fixed_point_multiply").make_default_attrs(),
                                 "rounding", rounding);
        return call("fixed_point_multiply", {y, int32_constant({}, m), int32_constant({}, s)}, a);
    };
    for (const char* rounding : {"TFLITE", "UPWARD"}) {
        Expr out = simplify({y}, fpm(rounding, 1 << 30, 0));
        EXPECT_EQ(op_names(out), (std::vector<std::string>{"right_shift", "bitwise_and", "add"}));
        EXPECT_TRUE(op_calls(out)[0]->args[0].same_as(Expr(y)));
        EXPECT_TRUE(type_equal(out->type, fpm(rounding, 1 << 30, 0)->type));
    }
    // Half away from zero differs at negative odd values (-3 / 2 is -2, the shift gives -1);
    // other ratios need the multiply.
    EXPECT_EQ(op_names(simplify({y}, fpm("TONEAREST", 1 << 30, 0))),
              (std::vector<std::string>{"fixed_point_multiply"}));
    EXPECT_EQ(op_names(simplify({y}, fpm("TFLITE", 1 << 30, -1))),
              (std::vector<std::string>{"fixed_point_multiply"}));
    EXPECT_EQ(op_names(simplify({y}, fpm("TFLITE", 1431655765, 0))),
              (std::vector<std::string>{"fixed_point_multiply"}));
}

Ref<Attrs> with_ints(const std::string& op, const std::string& field, std::vector<int64_t> v) {
    return attr_with(*ops::get_op(op).make_default_attrs(), field, std::move(v));
}

TEST(SimplifyExpr, ReshapeChainsCollapse) {
    auto x = tensor_var("x", {2, 3, 4});
    Expr r1 = call("reshape", {x}, with_ints("reshape", "newshape", {6, 4}));
    Expr r2 = call("reshape", {r1}, with_ints("reshape", "newshape", {4, -1}));
    Expr out = simplify({x}, call("exp", {r2}));
    EXPECT_EQ(op_names(out), (std::vector<std::string>{"reshape", "exp"}));
    EXPECT_TRUE(op_calls(out)[0]->args[0].same_as(Expr(x)));
    EXPECT_TRUE(
        type_equal(out->type, make_tensor_type(std::vector<int64_t>{4, 6}, DataType::float32())));
    // Back to the input's shape: nothing left.
    Expr back = call("reshape", {r1}, with_ints("reshape", "newshape", {2, 3, 4}));
    EXPECT_TRUE(simplify({x}, back).same_as(Expr(x)));
}

TEST(SimplifyExpr, TransposeChainsCompose) {
    auto x = tensor_var("x", {2, 3, 4});
    Expr t1 = call("transpose", {x}, with_ints("transpose", "axes", {1, 2, 0}));   // (3, 4, 2)
    Expr t2 = call("transpose", {t1}, with_ints("transpose", "axes", {0, 2, 1}));  // (3, 2, 4)
    Expr out = simplify({x}, t2);
    ASSERT_EQ(op_names(out), (std::vector<std::string>{"transpose"}));
    EXPECT_TRUE(out.as<Call>()->args[0].same_as(Expr(x)));
    EXPECT_EQ(*attr_ints(*out.as<Call>()->attrs, "axes"), (std::vector<int64_t>{1, 0, 2}));
    Expr inverse = call("transpose", {t1}, with_ints("transpose", "axes", {2, 0, 1}));
    EXPECT_TRUE(simplify({x}, inverse).same_as(Expr(x)));
}

}  // namespace
}  // namespace anvil::graph::testing
