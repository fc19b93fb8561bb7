// Hostile graph text (issue 18): huge or overflowing dimensions, nesting deep enough to exhaust
// the stack of a recursive reader, unterminated strings and comments, giant numbers, constants
// whose data does not fit their type. Each is one UserError at a line and column, never a
// crash, a hang or an allocation of the size the text claims.
#include <gtest/gtest.h>

#include <string>

#include "errors/expect_message.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "ops/op_table.h"

namespace anvil::graph {
namespace {

IRModule parse(const std::string& text) {
    return parse_module(text, ops::op_table());
}

std::string repeat(const std::string& s, int n) {
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

TEST(GraphTextHostile, DimensionsThatOverflow) {
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(99999999999999999999,), float32]) { %x }"),
                   "1:23:", "dimension 99999999999999999999 is out of range");
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(4294967296, 4294967296), float32]) { %x }"),
                   "1:15:", "the tensor type's size overflows 64 bits");
    // 2^61 float32s: the element count fits, the byte size does not.
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2305843009213693952,), float32]) { %x }"),
                   "the tensor type's size overflows 64 bits");
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(4611686018427387904 * 4,), float32]) { %x }"),
                   "1:43:", "dimension arithmetic overflows 64 bits");
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2, -3), float32]) { %x }"),
                   "a tensor's dimension cannot be negative");
}

TEST(GraphTextHostile, ConstantDataIsComparedBeforeItIsAllocated) {
    // 4 TiB declared, 4 bytes of data: refused without allocating the 4 TiB.
    std::string text =
        "def @main() { meta[Constant][0] }\n"
        "#[metadata]\n"
        "meta[Constant][0]: Tensor[(1099511627776,), float32] = \"AAAAAA==\"\n";
    EXPECT_MESSAGE(parse(text), "3:", "constant 0 of type Tensor[(1099511627776,), float32]",
                   "needs 4398046511104 bytes, the data has 4");
}

TEST(GraphTextHostile, DeepNestingIsAnErrorNotAStackOverflow) {
    int deep = 100000;
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2,), float32]) { " + repeat("(", deep) + "%x" +
                         repeat(")", deep) + " }"),
                   "1:", "nested more than 256 levels deep");
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2,), float32]) { " + repeat("{ ", deep) + "%x" +
                         repeat(" }", deep) + " }"),
                   "nested more than 256 levels deep");
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2,), float32]) { " + repeat("fn () { ", deep)),
                   "nested more than 256 levels deep");
    EXPECT_MESSAGE(parse("def @main(%x: " + repeat("Optional[", deep) + "Tensor[(2,), float32]" +
                         repeat("]", deep) + ") { %x }"),
                   "nested more than 256 levels deep");
    EXPECT_MESSAGE(parse("def @main(%x: " + repeat("(", deep) + "Tensor[(2,), float32]" +
                         repeat(",)", deep) + ") { %x }"),
                   "nested more than 256 levels deep");
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(" + repeat("(", deep) + "2" + repeat(")", deep) +
                         ",), float32]) { %x }"),
                   "nested more than 256 levels deep");
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(" + repeat("!", deep) + "2,), float32]) { %x }"),
                   "nested more than 256 levels deep");
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2,), float32]) { nn.relu(%x, axes=" +
                         repeat("[", deep) + repeat("]", deep) + ") }"),
                   "nested more than 256 levels deep");
    // Nesting within the limit still reads.
    EXPECT_NO_THROW(parse("def @main(%x: Tensor[(2,), float32]) { " + repeat("(", 100) + "%x" +
                          repeat(")", 100) + " }"));
}

TEST(GraphTextHostile, LongLetChainsDoNotRecurse) {
    // A let's body is the rest of its block: 20000 lets are a chain, not 20000 nested reads.
    int n = 20000;
    std::string text = "def @main(%x0: Tensor[(2,), float32]) {\n";
    for (int i = 1; i <= n; ++i) {
        text += "  let %x" + std::to_string(i) + " = %x" + std::to_string(i - 1) + ";\n";
    }
    text += "  %x" + std::to_string(n) + "\n}\n";
    IRModule m = parse(text);
    const Expr* e = &m.main()->body;
    int lets = 0;
    while (const auto* let = e->as<Let>()) {
        ++lets;
        e = &let->body;
    }
    EXPECT_EQ(lets, n);
}

TEST(GraphTextHostile, UnterminatedStringsAndComments) {
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2,), float32]) { call_packed(\"env.f"),
                   "1:52:", "unterminated string");
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2,), float32]) { %x /* never closed"),
                   "unterminated comment");
    EXPECT_MESSAGE(parse("def @\"unterminated(%x: Tensor[(2,), float32]) { %x }"),
                   "1:5:", "unterminated string");
}

TEST(GraphTextHostile, GiantNumbers) {
    std::string digits(5000, '9');
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2,), float32]) { %x." + digits + " }"),
                   "is out of range");
    std::string integer = "integer " + digits.substr(0, 20);
    EXPECT_MESSAGE(
        parse("def @main(%x: Tensor[(2, 3), float32]) { sum(%x, axis=[" + digits + "]) }"),
        integer.c_str());
    EXPECT_MESSAGE(parse("def @main(%x: Tensor[(2,), float32]) { meta[Constant][" + digits + "] }"),
                   "is out of range");
    // A float attribute of 5000 digits is a float (inf), not an error or a hang.
    EXPECT_NO_THROW(parse(
        "def @main(%x: Tensor[(2,), float32]) { nn.leaky_relu(%x, alpha=" + digits + ".0) }"));
}

TEST(GraphTextHostile, TruncatedTextAtEveryPoint) {
    // Every prefix of a valid module is an error at a position, never a crash.
    std::string text =
        "def @main(%x: Tensor[(1, 4), float32], %w: Tensor[(3, 4), float32]) -> Tensor[(1, 3), "
        "float32] {\n  %0 = nn.dense(%x, %w);\n  let %y = nn.relu(%0);\n  %y\n}\n";
    ASSERT_NO_THROW(parse(text));
    for (size_t cut = 0; cut + 1 < text.size(); ++cut) {
        std::string prefix = text.substr(0, cut);
        try {
            parse(prefix);
        } catch (const UserError&) {
        }
    }
}

}  // namespace
}  // namespace anvil::graph
