// canonicalize_qnn's errors and what it leaves: no QNN op, constant zero points of zero dropped,
// one fixed-point multiplier where every channel shares it.
#include <algorithm>

#include "errors/expect_message.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "ops/op_table.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

IRModule canonical(const std::string& body, const std::string& params,
                   const std::string& metadata = "") {
    IRModule m =
        parse_module("def @main(" + params + ") {\n" + body + "\n}\n" + metadata, ops::op_table());
    return canonicalize_qnn(m, test_context());
}

TEST(CanonicalizeQnn, LeavesNoQnnOp) {
    IRModule m = canonical(
        "  %0 = qnn.requantize(%q, 0.5f, 0, 0.25f, 0, out_dtype=\"int32\");\n"
        "  %1 = qnn.dequantize(%0, 0.25f, 0);\n  %1",
        "%q: Tensor[(4,), int8]");
    EXPECT_EQ(op_names(m.main()->body),
              (std::vector<std::string>{"cast", "fixed_point_multiply", "cast", "multiply"}));
    // The ratio 2 is 2^30 * 2^(2 - 31).
    std::string text = print(m);
    EXPECT_NE(text.find("fixed_point_multiply(%0, 1073741824, 2)"), std::string::npos) << text;
}

// int8 data of a convolution is read as uint8 data x + 128 (x XOR 0x80 as a byte) with zero point
// + 128 (the type of the blocked convolutions' words); an activation after a ReLU (zero point
// -128) then needs no zero-point correction. Grouped and depthwise convolutions keep int8 data.
TEST(CanonicalizeQnn, ConvolutionsReadInt8DataAsUint8) {
    const std::string params = "%x: Tensor[(1, 3, 4, 4), int8], %w: Tensor[(4, 3, 1, 1), int8]";
    IRModule relu = canonical(
        "  qnn.conv2d(%x, %w, -128, 0, 0.5f, 0.25f, channels=4, kernel_size=[1, 1])", params);
    EXPECT_EQ(op_names(relu.main()->body),
              (std::vector<std::string>{"bitwise_xor", "cast", "nn.conv2d"}));
    EXPECT_NE(print(relu).find("bitwise_xor(%x, -128i8)"), std::string::npos) << print(relu);
    EXPECT_NE(print(relu).find("Tensor[(1, 3, 4, 4), uint8]"), std::string::npos) << print(relu);
    IRModule padded = canonical(
        "  qnn.conv2d(%x, %w, 5, 0, 0.5f, 0.25f, padding=[1, 1, 1, 1], "
        "channels=4, kernel_size=[1, 1])",
        params);
    EXPECT_EQ(op_names(padded.main()->body),
              (std::vector<std::string>{"bitwise_xor", "cast", "cast", "nn.pad", "nn.conv2d",
                                        "cast", "sum", "reshape", "multiply", "subtract"}));
    EXPECT_NE(print(padded).find("133"), std::string::npos) << print(padded);  // 5 + 128
    // A zero point known only at run time is shifted by an add.
    IRModule dynamic =
        canonical("  qnn.conv2d(%x, %w, %z, 0, 0.5f, 0.25f, channels=4, kernel_size=[1, 1])",
                  params + ", %z: Tensor[(), int32]");
    std::vector<std::string> ops = op_names(dynamic.main()->body);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "add"), 1) << print(dynamic);
    EXPECT_NE(print(dynamic).find("uint8"), std::string::npos) << print(dynamic);
    IRModule depthwise = canonical(
        "  qnn.conv2d(%x, %w, 5, 0, 0.5f, 0.25f, groups=3, channels=3, "
        "kernel_size=[1, 1])",
        "%x: Tensor[(1, 3, 4, 4), int8], %w: Tensor[(3, 1, 1, 1), int8]");
    EXPECT_EQ(print(depthwise).find("uint8"), std::string::npos) << print(depthwise);
}

TEST(CanonicalizeQnn, Errors) {
    const std::string q = "%q: Tensor[(2, 3), int8], %s: Tensor[(), float32]";
    EXPECT_MESSAGE(canonical("  qnn.requantize(%q, %s, 0, 0.5f, 0)", q),
                   "qnn.requantize: the input scale must be a constant (a compile-time value) to "
                   "become a fixed-point multiplier");
    EXPECT_MESSAGE(canonical("  qnn.add(%q, %q, 0.5f, 0, 0.5f, 0, %s, 0)", q),
                   "qnn.add: the output scale must be a constant");
    EXPECT_MESSAGE(canonical("  qnn.requantize(%q, 1e9f, 0, 0.5f, 0)", q),
                   "qnn.requantize: a scale ratio = 2e+09 cannot be a fixed-point multiplier");
    EXPECT_MESSAGE(canonical("  qnn.mul(%q, %q, meta[Constant][0], 0, meta[Constant][0], 0, 0.5f, "
                             "0, lhs_axis=1, rhs_axis=1)",
                             q,
                             "#[metadata]\nmeta[Constant][0]: Tensor[(3,), float32] = "
                             "\"AACAPwAAgD8AAIA/\"\n"),
                   "qnn.mul: per-axis scales on both operands are not supported");
    // Scales that are not constants are never taken for the output's (only the same one is).
    EXPECT_MESSAGE(canonical("  qnn.concatenate((%q, %q), (%s, %s), (0, 0), %o, 0)",
                             q + ", %o: Tensor[(), float32]"),
                   "qnn.concatenate: the input scale must be a constant");
    IRModule same = canonical("  qnn.concatenate((%q, %q), (%s, %s), (0, 0), %s, 0)", q);
    EXPECT_EQ(op_names(same.main()->body), (std::vector<std::string>{"concatenate"}));
    EXPECT_MESSAGE(canonical("  qnn.concatenate(%t, (0.5f, 0.5f), (0, 0), 0.5f, 0)",
                             "%t: (Tensor[(2, 3), int8], Tensor[(2, 3), int8])"),
                   "qnn.concatenate: the data, scales and zero points must be written as tuples");
}

}  // namespace
}  // namespace anvil::graph::testing
