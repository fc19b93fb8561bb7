// to_mixed_precision beyond its golden file: an error without a half type, float16 as well as
// bfloat16, calls of functions, the ops the table misses reported, integer and float64 products
// left alone, let bindings and function results keeping their types, constants cast when nothing
// evaluates, and the error for another type.
#include "errors/expect_message.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "ops/op_table.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

IRModule parsed(const std::string& params, const std::string& body) {
    return parse_module("def @main(" + params + ") {\n" + body + "\n}\n", ops::op_table());
}

MixedPrecisionResult convert(const IRModule& m, DataType half = DataType::bfloat16()) {
    return convert_to_mixed_precision(m, half, test_context());
}

// The dtype of the tensor `e`.
DataType dtype(const Expr& e) {
    return e->type.as<TensorType>()->dtype;
}

const Call* find_call(const Expr& body, const std::string& op) {
    for (const Call* c : op_calls(body)) {
        if (c->op->name == op) return c;
    }
    return nullptr;
}

const std::string kConvParams =
    "%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32]";

TEST(ToMixedPrecision, NeedsAHalfType) {
    IRModule m = parsed(kConvParams, "  nn.conv2d(%x, %w)");
    EXPECT_MESSAGE(to_mixed_precision(m, test_context()),
                   "to_mixed_precision needs the half type to compute in (anvil compile "
                   "--mixed-precision bf16");
    PassContext ctx = test_context();
    ctx.mixed_precision = DataType::bfloat16();
    EXPECT_FALSE(to_mixed_precision(m, ctx).main().same_as(m.main()));
}

TEST(ToMixedPrecision, ProductsTakeTheHalfTypeAndSumInFloat32) {
    IRModule m = parsed(kConvParams,
                        "  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);\n"
                        "  %1 = nn.relu(%0);\n  %1");
    for (DataType half : {DataType::bfloat16(), DataType::float16()}) {
        MixedPrecisionResult r = convert(m, half);
        const Expr& body = r.module.main()->body;
        const Call* conv = find_call(body, "nn.conv2d");
        ASSERT_NE(conv, nullptr);
        EXPECT_EQ(dtype(conv->args[0]), half);
        EXPECT_EQ(dtype(conv->args[1]), half);
        EXPECT_EQ(conv->type.as<TensorType>()->dtype, DataType::float32());
        // The relu follows in the half type; the result is float32 again.
        EXPECT_EQ(dtype(find_call(body, "nn.relu")->args[0]), half);
        EXPECT_TRUE(type_equal(body->type, m.main()->body->type));
        EXPECT_TRUE(r.missing_ops.empty());
    }
}

TEST(ToMixedPrecision, ReportsOpsTheTableMisses) {
    IRModule m =
        parsed("%x: Tensor[(1, 8), float32]", "  %0 = nn.relu(%x);\n  %1 = trilu(%0, 0);\n  %1");
    MixedPrecisionResult r = convert(m);
    EXPECT_EQ(r.missing_ops, std::vector<std::string>{"trilu"});
    // It stays float32.
    EXPECT_EQ(dtype(find_call(r.module.main()->body, "trilu")->args[0]), DataType::float32());
}

TEST(ToMixedPrecision, LeavesIntegerAndFloat64ProductsAlone) {
    IRModule m = parsed(
        "%q: Tensor[(1, 4, 6, 6), uint8], %k: Tensor[(8, 4, 3, 3), int8], "
        "%d: Tensor[(1, 4, 6, 6), float64], %e: Tensor[(8, 4, 3, 3), float64]",
        "  %0 = nn.conv2d(%q, %k, out_dtype=\"int32\");\n"
        "  %1 = nn.conv2d(%d, %e);\n  (%0, %1)");
    MixedPrecisionResult r = convert(m);
    EXPECT_TRUE(r.module.main().same_as(m.main())) << print(r.module);
    EXPECT_TRUE(r.missing_ops.empty());
}

TEST(ToMixedPrecision, LetValuesAndFunctionResultsKeepTheirTypes) {
    IRModule m = parsed(kConvParams,
                        "  let %y: Tensor[(1, 8, 4, 4), float32] = nn.conv2d(%x, %w);\n"
                        "  %0 = nn.relu(%y);\n  (%0, %y)");
    MixedPrecisionResult r = convert(m);
    EXPECT_TRUE(type_equal(r.module.main()->body->type, m.main()->body->type)) << print(r.module);
    const auto* let = r.module.main()->body.as<Let>();
    ASSERT_NE(let, nullptr) << print(r.module);
    EXPECT_TRUE(type_equal(let->value->type, let->var->type));
    // The product inside is in the half type.
    EXPECT_EQ(dtype(find_call(let->value, "nn.conv2d")->args[0]), DataType::bfloat16());
}

TEST(ToMixedPrecision, FollowersWithAFloat32OperandStayFloat32) {
    // %r is a float32 input, no constant: the add computes in float32.
    IRModule m = parsed(kConvParams + ", %r: Tensor[(1, 8, 4, 4), float32]",
                        "  %0 = nn.conv2d(%x, %w);\n  %1 = add(%0, %r);\n  %1");
    MixedPrecisionResult r = convert(m);
    const Call* add = find_call(r.module.main()->body, "add");
    EXPECT_EQ(dtype(add->args[0]), DataType::float32());
    EXPECT_EQ(dtype(add->args[1]), DataType::float32());
}

TEST(ToMixedPrecision, ConstantsAreCastWhenNothingEvaluates) {
    // test_context() has no evaluator: the weight's cast stays in the graph (fold_constants
    // folds it in the pipeline).
    IRModule m = parse_module(
        "def @main(%x: Tensor[(1, 2), float32]) {\n  nn.dense(%x, meta[Constant][0])\n}\n"
        "#[metadata]\nmeta[Constant][0]: Tensor[(3, 2), float32] = "
        "\"AACAPwAAAEAAAEBAAACAQAAAoEAAAMBA\"\n",
        ops::op_table());
    MixedPrecisionResult r = convert(m);
    const Call* dense = find_call(r.module.main()->body, "nn.dense");
    const Call* cast = dense->args[1].as<Call>();
    ASSERT_NE(cast, nullptr);
    EXPECT_EQ(cast->op->name, "cast");
    EXPECT_TRUE(cast->args[0].is<Constant>());
}

TEST(ToMixedPrecision, FunctionParametersKeepTheirTypes) {
    // A call of a (composite-like) function of float32 parameters, fed by a converted relu.
    IRModule m = parse_module(
        "def @main(%x: Tensor[(1, 4, 6, 6), float32], %w: Tensor[(8, 4, 3, 3), float32]) {\n"
        "  %0 = nn.conv2d(%x, %w);\n  %1 = nn.relu(%0);\n"
        "  %2 = fn (%a: Tensor[(1, 8, 4, 4), float32]) { exp(%a) };\n  %2(%1)\n}\n",
        ops::op_table());
    MixedPrecisionResult r = convert(m);
    const Call* call = r.module.main()->body.as<Call>();
    ASSERT_NE(call, nullptr) << print(r.module);
    EXPECT_EQ(dtype(call->args[0]), DataType::float32()) << print(r.module);
    EXPECT_TRUE(type_equal(r.module.main()->body->type, m.main()->body->type));
}

TEST(ToMixedPrecision, RefusesOtherTypes) {
    IRModule m = parsed(kConvParams, "  nn.conv2d(%x, %w)");
    EXPECT_MESSAGE(convert(m, DataType::int_(8)),
                   "to_mixed_precision: the mixed precision type must be bfloat16 or float16, "
                   "got int8");
    EXPECT_MESSAGE(convert(m, DataType::float64()), "got float64");
}

}  // namespace
}  // namespace anvil::graph::testing
