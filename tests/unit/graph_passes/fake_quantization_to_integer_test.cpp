// fake_quantization_to_integer's element movers one by one: Q(op(DQ(x))) with the same scale and
// zero point is op on the integers themselves (no dequantize, no quantize, no requantize left);
// with another output scale, the integers are requantized after the op. Per-channel data and
// a float operand in between stay in floats.
#include "graph/parser.h"
#include "graph/printer.h"
#include "ops/op_table.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

IRModule converted(const std::string& body) {
    IRModule m = parse_module("def @main(%x: Tensor[(1, 4, 6, 1), uint8]) {\n" + body + "\n}\n",
                              ops::op_table());
    return fake_quantization_to_integer(m, test_context());
}

struct Mover {
    std::string op;  // the call, reading %0
    std::string result_type;
};

const std::vector<Mover> kMovers = {
    {"transpose(%0, axes=[0, 2, 1, 3])", "Tensor[(1, 6, 4, 1), uint8]"},
    {"squeeze(%0, axes=[3])", "Tensor[(1, 4, 6), uint8]"},
    {"expand_dims(%0, axis=1)", "Tensor[(1, 1, 4, 6, 1), uint8]"},
    {"strided_slice(%0, begin=[0, 1, 0, 0], end=[1, 4, 6, 1], strides=[1, 2, 1, 1])",
     "Tensor[(1, 2, 6, 1), uint8]"},
    {"reshape(%0, newshape=[4, 6])", "Tensor[(4, 6), uint8]"},
    {"flatten(%0)", "Tensor[(1, 24), uint8]"},
};

TEST(FakeQuantizationToInteger, EachMoverWorksOnTheIntegers) {
    for (const auto& m : kMovers) {
        SCOPED_TRACE(m.op);
        IRModule out = converted("  %0 = qnn.dequantize(%x, 0.5f, 3);\n  %1 = " + m.op +
                                 ";\n  qnn.quantize(%1, 0.5f, 3, out_dtype=\"uint8\")");
        const Expr& body = out.main()->body;
        std::vector<std::string> ops = op_names(body);
        ASSERT_EQ(ops.size(), 1u) << print(out);
        EXPECT_EQ(ops[0] + "(", m.op.substr(0, m.op.find('(') + 1)) << print(out);
        // It reads %x itself: uint8 in, uint8 out.
        EXPECT_TRUE(body.as<Call>()->args[0].is<Var>()) << print(out);
        EXPECT_EQ(type_str(body->type), m.result_type);
    }
}

TEST(FakeQuantizationToInteger, AnotherOutputScaleRequantizesAfterTheMover) {
    IRModule out = converted(
        "  %0 = qnn.dequantize(%x, 0.5f, 3);\n  %1 = transpose(%0, axes=[0, 2, 1, 3]);\n"
        "  qnn.quantize(%1, 0.25f, 0, out_dtype=\"uint8\")");
    std::vector<std::string> ops = op_names(out.main()->body);
    ASSERT_FALSE(ops.empty());
    EXPECT_EQ(ops[0], "transpose") << print(out);
    EXPECT_NE(std::find(ops.begin(), ops.end(), "qnn.requantize"), ops.end()) << print(out);
    EXPECT_EQ(std::find(ops.begin(), ops.end(), "qnn.dequantize"), ops.end()) << print(out);
}

TEST(FakeQuantizationToInteger, AFloatOpInBetweenStaysInFloats) {
    IRModule m = parse_module(
        "def @main(%x: Tensor[(1, 4, 6, 1), uint8]) {\n"
        "  %0 = qnn.dequantize(%x, 0.5f, 3);\n  %1 = exp(%0);\n  %2 = transpose(%1, axes=[0, 2, "
        "1, 3]);\n  qnn.quantize(%2, 0.5f, 3, out_dtype=\"uint8\")\n}\n",
        ops::op_table());
    IRModule out = fake_quantization_to_integer(m, test_context());
    EXPECT_TRUE(out.main().same_as(m.main())) << print(out);
}

}  // namespace
}  // namespace anvil::graph::testing
