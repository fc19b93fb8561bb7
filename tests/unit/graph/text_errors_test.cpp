// Parse errors of the graph IR's text form: each is a UserError that starts with line:column and
// says what was expected and what was found.
#include "graph_test_util.h"

namespace anvil::graph {
namespace {

using testing::user_error_of;

std::string module_error(const std::string& text) {
    return user_error_of([&] { parse_module(text, ops::op_table()); });
}

const char* kHeader = "def @main(%x: Tensor[(2,), float32]) {\n";

TEST(GraphTextErrors, UnknownOp) {
    EXPECT_EQ(module_error(std::string(kHeader) + "  nn.frobnicate(%x)\n}\n"),
              "2:3: unknown op 'nn.frobnicate'");
}

TEST(GraphTextErrors, UnknownAttribute) {
    EXPECT_EQ(module_error(std::string(kHeader) + "  cast(%x, dtyp=\"int8\")\n}\n"),
              "2:12: cast has no attribute 'dtyp' (it has dtype)");
    EXPECT_EQ(module_error(std::string(kHeader) + "  nn.relu(%x, alpha=1.0)\n}\n"),
              "2:15: nn.relu has no attribute 'alpha' (it has none)");
}

TEST(GraphTextErrors, WrongAttributeValueKind) {
    EXPECT_EQ(module_error(std::string(kHeader) + "  cast(%x, dtype=3)\n}\n"),
              "2:18: attribute 'dtype' of cast takes a type name such as \"float32\", found an "
              "integer");
    EXPECT_EQ(module_error(std::string(kHeader) + "  cast(%x, dtype=\"float33\")\n}\n"),
              "2:18: attribute 'dtype' of cast: unknown type 'float33'");
    EXPECT_EQ(
        module_error(std::string(kHeader) + "  cast(%x, dtype=\"int8\", dtype=\"int8\")\n}\n"),
        "2:26: attribute 'dtype' of cast is given twice");
    EXPECT_EQ(module_error(std::string(kHeader) + "  cast(dtype=\"int8\", %x)\n}\n"),
              "2:22: arguments of cast come before its attributes");
}

TEST(GraphTextErrors, BadTypes) {
    EXPECT_EQ(module_error("def @main(%x: Tensor[(2,), float33]) {\n  %x\n}\n"),
              "1:28: unknown element type 'float33'");
    EXPECT_EQ(module_error("def @main(%x: Tensor[2, float32]) {\n  %x\n}\n"),
              "1:22: expected '(' to open the tensor's shape, found '2'");
    EXPECT_EQ(module_error("def @main(%x: Tensr[(2,), float32]) {\n  %x\n}\n"),
              "1:15: expected a type such as Tensor[(1, 3), float32], found 'Tensr'");
    EXPECT_EQ(module_error("def @main(%x: Tensor[(2.5,), float32]) {\n  %x\n}\n"),
              "1:23: a dimension must be an integer, found '2.5'");
    EXPECT_EQ(module_error("def @main(%x: Tensor[(2,), float32]) -> Tensor[(3,), float32] {\n"
                           "  %x\n}\n"),
              "1:41: the function is declared to return Tensor[(3,), float32] but its body has "
              "type Tensor[(2,), float32]");
}

// The error of a function whose parameter has type `type` (column 15 is where it starts).
std::string param_type_error(const std::string& type) {
    return module_error("def @main(%x: " + type + ") {\n  %x\n}\n");
}

TEST(GraphTextErrors, BadSequenceAndOptionalTypes) {
    EXPECT_EQ(param_type_error("Optional[(1,)]"),
              "1:25: expected a type such as Tensor[(1, 3), float32], found '1'");
    EXPECT_EQ(param_type_error("Optional[]"),
              "1:24: expected a type such as Tensor[(1, 3), float32], found ']'");
    EXPECT_EQ(param_type_error("Optional[Optional[Tensor[(1,), float32]]]"),
              "1:24: an Optional holds a tensor or a sequence");
    EXPECT_EQ(param_type_error("Optional[(Tensor[(1,), float32], Tensor[(1,), float32])]"),
              "1:24: an Optional holds a tensor or a sequence");
    // A sequence's dimensions are constants or '?', never names (its elements bind none).
    EXPECT_EQ(param_type_error("Sequence[(a, 3), float32]"),
              "1:25: a sequence's dimension is an integer or '?'");
    EXPECT_EQ(param_type_error("Sequence[(3, -1), float32]"),
              "1:28: a sequence's dimension is an integer or '?'");
    EXPECT_EQ(param_type_error("Sequence[(2.5,), float32]"),
              "1:25: a dimension must be an integer, found '2.5'");
    EXPECT_EQ(param_type_error("Sequence[float32]"),
              "1:24: expected '(' to open the elements' shape (or '?' for any rank), found "
              "'float32'");
    EXPECT_EQ(param_type_error("Sequence(?, float32)"),
              "1:23: expected '[' after 'Sequence', found '('");
    EXPECT_EQ(param_type_error("Sequence[(2 3), float32]"),
              "1:27: expected ',' between dimensions, found '3'");
    EXPECT_EQ(param_type_error("Sequence[(2,) float32]"),
              "1:29: expected ',' before the sequence's element type, found 'float32'");
    EXPECT_EQ(param_type_error("Sequence[?]"),
              "1:25: expected ',' before the sequence's element type, found ']'");
    EXPECT_EQ(param_type_error("Sequence[(2,), float33]"), "1:30: unknown element type 'float33'");
    EXPECT_EQ(param_type_error("Sequence[empty, float32"),
              "1:38: expected ']' to close the sequence type, found ')'");
    // Negative literals parse (result attributes spell a sequence's '?' as -1), but no tensor
    // has a negative dimension.
    EXPECT_EQ(param_type_error("Tensor[(-1,), float32]"),
              "1:23: a tensor's dimension cannot be negative");
    EXPECT_EQ(param_type_error("Tensor[(2, -3), float32]"),
              "1:26: a tensor's dimension cannot be negative");
}

TEST(GraphTextErrors, UnbalancedBraces) {
    EXPECT_EQ(module_error(std::string(kHeader) + "  %x\n"),
              "3:1: expected '}' to close the function's body, found end of input");
    EXPECT_EQ(module_error(std::string(kHeader) + "  %x\n}\n}\n"),
              "4:1: expected 'def' or 'prim_func', found '}'");
    EXPECT_EQ(module_error(std::string(kHeader) + "  %0 = {\n    exp(%x);\n  %0\n}\n"),
              "3:12: expected '}' to close the block, found ';'");
    EXPECT_EQ(module_error("prim_func k(A: float32[4]) {\n  for i in [0, 4) { A[i] = 1f\n}\n"),
              "1:1: unbalanced braces: the kernel is not closed");
}

TEST(GraphTextErrors, UndefinedAndRedefinedNames) {
    EXPECT_EQ(module_error(std::string(kHeader) + "  add(%x, %y)\n}\n"),
              "2:11: undefined variable '%y'");
    EXPECT_EQ(module_error(std::string(kHeader) + "  %0 = exp(%x);\n  %0 = exp(%0);\n  %0\n}\n"),
              "3:3: '%0' is already defined at 2:3");
    EXPECT_EQ(module_error(std::string(kHeader) + "  let %x = exp(%x);\n  %x\n}\n"),
              "2:7: '%x' is already defined at 1:11");
    // A block's let variables end with it (its named nodes do not); a function does not see
    // the enclosing names.
    EXPECT_EQ(module_error(std::string(kHeader) + "  %1 = { let %v = exp(%x); %v };\n  %v\n}\n"),
              "3:3: undefined variable '%v'");
    EXPECT_EQ(
        module_error(std::string(kHeader) + "  %1 = { %0 = exp(%x); %0 };\n  %0 = %x;\n  %0\n}\n"),
        "3:3: '%0' is already defined at 2:10");
    EXPECT_EQ(module_error(std::string(kHeader) +
                           "  %0 = fn (%p: Tensor[(2,), float32]) { add(%p, %x) };\n  %0(%x)\n}\n"),
              "2:49: undefined variable '%x'");
    EXPECT_EQ(module_error(std::string(kHeader) + "  %x\n}\ndef @main() { meta }\n"),
              "4:5: function @main is defined twice");
}

TEST(GraphTextErrors, IllTypedNodes) {
    EXPECT_EQ(
        module_error(std::string(kHeader) + "  %0 = add(%x, %x, %x);\n  %0\n}\n").substr(0, 38),
        "2:8: add: add takes 2 input(s), got 3");
    std::string broadcast = module_error(
        "def @main(%x: Tensor[(2,), float32], %y: Tensor[(3,), float32]) {\n  add(%x, %y)\n}\n");
    EXPECT_EQ(broadcast.substr(0, 10), "2:3: add: ") << broadcast;
    EXPECT_EQ(module_error(std::string(kHeader) + "  %x(%x)\n}\n"),
              "2:5: only a function can be called; this is a Var");
    EXPECT_EQ(module_error(std::string(kHeader) + "  (%x, %x).2\n}\n"),
              "2:11: tuple projection: item 2 of a tuple of 2");
    EXPECT_EQ(
        module_error(std::string(kHeader) + "  let %y: Tensor[(3,), float32] = %x;\n  %y\n}\n"),
        "2:3: let %y: let %y: Tensor[(3,), float32] bound to a Tensor[(2,), float32]");
}

TEST(GraphTextErrors, Metadata) {
    EXPECT_EQ(module_error(std::string(kHeader) + "  add(%x, meta[Constant][0])\n}\n"),
              "2:11: meta[Constant][0] is not in the metadata section (#[metadata] at the end of "
              "the text)");
    EXPECT_EQ(module_error(std::string(kHeader) +
                           "  add(%x, meta[Constant][0])\n}\n#[metadata]\n"
                           "meta[Constant][0]: Tensor[(2,), float32] = \"AACAPw==\"\n"),
              "5:44: constant 0 of type Tensor[(2,), float32] needs 8 bytes, the data has 4");
    EXPECT_EQ(module_error(std::string(kHeader) +
                           "  %x\n}\n#[metadata]\n"
                           "meta[Constant][0]: Tensor[(1,), float32] = \"AAC*Pw==\"\n"),
              "5:44: invalid base64 character '*' in constant");
    EXPECT_EQ(module_error(std::string(kHeader) +
                           "  %x\n}\n#[metadata]\n"
                           "meta[Constant][0]: Tensor[(n,), float32] = \"AACAPw==\"\n"),
              "5:20: a constant needs a static tensor type");
}

TEST(GraphTextErrors, LexicalErrors) {
    EXPECT_EQ(module_error(std::string(kHeader) + "  /* never closed\n  %x\n}\n"),
              "2:3: unterminated comment");
    EXPECT_EQ(module_error(std::string(kHeader) + "  cast(%x, dtype=\"int8)\n}\n"),
              "2:18: unterminated string");
    EXPECT_EQ(module_error(std::string(kHeader) + "  cast(%x, dtype=\"int8\\q\")\n}\n"),
              "2:23: unknown escape '\\q' in string (expected \\n, \\t, \\\" or \\\\)");
}

TEST(GraphTextErrors, KernelErrorsKeepModulePositions) {
    std::string err = module_error(std::string(kHeader) +
                                   "  %x\n}\n\nprim_func k(A: float32[4]) {\n"
                                   "  for i in [0, 4) { A[j] = 1f }\n}\n");
    EXPECT_EQ(err, "6:23: undefined variable 'j'") << err;
}

TEST(GraphTextErrors, ExpressionText) {
    auto x = make_var("x", testing::tensor({2}));
    EXPECT_EQ(user_error_of([&] { parse_expr("exp(%x) exp(%x)", ops::op_table(), {x}); }),
              "1:9: expected end of input after the result, found 'exp'");
    EXPECT_EQ(user_error_of([&] { parse_expr("exp(%x)", ops::op_table()); }),
              "1:5: undefined variable '%x'");
    EXPECT_EQ(user_error_of([&] { parse_expr("let %x = exp(%x);\n%x", ops::op_table(), {x}); }),
              "1:5: '%x' is already defined (a free variable)");
}

}  // namespace
}  // namespace anvil::graph

namespace anvil::graph {
namespace {

TEST(GraphTextErrors, ScalarLiterals) {
    auto body = [](const std::string& e) {
        return module_error(std::string(kHeader) + "  " + e + "\n}\n");
    };
    EXPECT_EQ(body("3q8"),
              "2:3: unknown suffix 'q8' on a number (f, f32, f64, i8, i16, i32, i64, u8, u16, u32, "
              "u64)");
    EXPECT_EQ(body("256u8"), "2:3: 256u8 is out of the range of uint8");
    EXPECT_EQ(body("-129i8"), "2:4: -129i8 is out of the range of int8");
    EXPECT_EQ(body("-1u32"), "2:4: -1u32 is out of the range of uint32");
    EXPECT_EQ(body("2147483648"), "2:3: 2147483648 is out of the range of int32");
    EXPECT_EQ(body("1.5i32"), "2:3: 1.5i32: an integer type cannot hold a fraction");
    EXPECT_EQ(body("1e39f"), "2:3: 1e39f overflows float32");
    EXPECT_EQ(body("1e400f64"), "2:3: 1e400f64 overflows float64");
}

TEST(GraphTextErrors, SuffixedAndNestedAttributeValues) {
    auto body = [](const std::string& e) {
        return module_error(std::string(kHeader) + "  " + e + "\n}\n");
    };
    // Attribute numbers take the suffixes inline constants take, checked alike.
    EXPECT_EQ(body("clip(%x, a_min=0q)"),
              "2:18: unknown suffix 'q' on a number (f, f32, f64, i8, i16, i32, i64, u8, u16, u32, "
              "u64)");
    EXPECT_EQ(body("clip(%x, a_min=300u8)"), "2:18: 300u8 is out of the range of uint8");
    // A nested list reads row by row, but its leaves must still be integers.
    EXPECT_EQ(body("nn.pad(%x, pad_width=[[0, 0], [1]])"),
              "2:33: a list of rows must have rows of one length, as [[0, 0], [1, 1]]");
    EXPECT_EQ(body("nn.pad(%x, pad_width=[[0, 1.5]])"),
              "2:29: attribute 'pad_width' of nn.pad takes a list of integers, found a "
              "floating-point number");
}

}  // namespace
}  // namespace anvil::graph
