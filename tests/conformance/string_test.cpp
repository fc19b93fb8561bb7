// ONNX string tensors: models that take, make and give strings, compiled once and run through
// the VM with other values than the suite's: StringNormalizer over inputs of run-time length
// (stopwords leaving any number of strings, none included), Cast between numbers and strings
// both ways, a string initializer, strings passed through unchanged, the text format of the
// string ops, and the errors naming the node (a string fed to an op that cannot take one, text
// that is not a number).
#include <gtest/gtest.h>

#include <random>

#include "conformance/node_model.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/structural_equal.h"
#include "ops/op_table.h"
#include "runtime/string_tensor.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::ModelBuilder;
using runtime::NDArray;
using testing::array;
using testing::CompiledNodeModel;
using testing::contains;
using testing::error_of;
using testing::shape_of;
constexpr int kString = ::onnx::TensorProto::STRING;

NDArray strings(std::vector<int64_t> shape, std::vector<std::string> values) {
    return runtime::make_string_tensor(shape, std::move(values));
}

std::vector<std::string> values_of(const NDArray& t) {
    std::vector<std::string> out;
    for (std::string_view s : runtime::string_values(t, "the result")) out.emplace_back(s);
    return out;
}

// StringNormalizer(x) of a [n] (or [1, n]) string input.
ModelBuilder normalizer(bool two_d, const std::string& change, bool case_sensitive,
                        const std::vector<std::string>& stopwords) {
    ModelBuilder b(17);
    if (two_d) {
        b.input("x", {1, 0}, kString, {"", "n"});
    } else {
        b.input("x", {0}, kString, {"n"});
    }
    auto* n = b.node("StringNormalizer", {"x"}, {"y"}, "norm_1");
    ModelBuilder::attr_string(n, "case_change_action", change);
    ModelBuilder::attr_int(n, "is_case_sensitive", case_sensitive ? 1 : 0);
    if (!stopwords.empty()) ModelBuilder::attr_strings(n, "stopwords", stopwords);
    b.output("y");
    return b;
}

TEST(StringModels, StringNormalizerRunsOnInputsOfAnyLength) {
    CompiledNodeModel m(normalizer(false, "LOWER", false, {"the", "A"}).import());
    std::vector<NDArray> out = m.run({strings({6}, {"The", "Quick", "a", "brown", "THE", "Fox"})});
    EXPECT_EQ(values_of(out[0]), (std::vector<std::string>{"quick", "brown", "fox"}));
    out = m.run({strings({1}, {"Élan"})});
    EXPECT_EQ(values_of(out[0]), std::vector<std::string>{"élan"});
    // Only stopwords: one empty string.
    out = m.run({strings({3}, {"a", "the", "A"})});
    EXPECT_EQ(shape_of(out[0]), std::vector<int64_t>{1});
    EXPECT_EQ(values_of(out[0]), std::vector<std::string>{""});
    // A string tensor is what the model takes.
    EXPECT_TRUE(
        contains(error_of([&] { m.run({array<float>({1}, {1}, "float32")}); }), "input 'x'"));
}

TEST(StringModels, StringNormalizerKeepsTheLeadingOneOfA2DInput) {
    CompiledNodeModel m(normalizer(true, "UPPER", true, {"Monday"}).import());
    std::vector<NDArray> out = m.run({strings({1, 4}, {"Monday", "monday", "friday", "Monday"})});
    EXPECT_EQ(shape_of(out[0]), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(values_of(out[0]), (std::vector<std::string>{"MONDAY", "FRIDAY"}));
    // Without stopwords nothing is removed and the shape is the input's.
    CompiledNodeModel same(normalizer(true, "NONE", false, {}).import());
    out = same.run({strings({1, 3}, {"x", "Y", "z"})});
    EXPECT_EQ(values_of(out[0]), (std::vector<std::string>{"x", "Y", "z"}));
}

TEST(StringModels, CastToStringAndBackRoundTripsEveryFloat) {
    ModelBuilder b(13);
    b.input("x", {2, 0}, ::onnx::TensorProto::FLOAT, {"", "n"});
    ModelBuilder::attr_int(b.node("Cast", {"x"}, {"s"}, "to_string"), "to", kString);
    ModelBuilder::attr_int(b.node("Cast", {"s"}, {"y"}, "to_float"), "to",
                           ::onnx::TensorProto::FLOAT);
    ModelBuilder::attr_int(b.node("Cast", {"s"}, {"i"}, "to_int"), "to",
                           ::onnx::TensorProto::INT64);
    b.output("s").output("y").output("i");
    CompiledNodeModel m(b.import());
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1000, 1000);
    std::vector<float> values(10);
    for (float& v : values) v = dist(rng);
    values[0] = 0.5f;
    values[1] = -2.75f;
    std::vector<NDArray> out = m.run({array<float>({2, 5}, values, "float32")});
    EXPECT_EQ(shape_of(out[0]), (std::vector<int64_t>{2, 5}));
    EXPECT_EQ(values_of(out[0])[0], "0.5");
    EXPECT_EQ(values_of(out[0])[1], "-2.75");
    EXPECT_EQ(out[1].to_vector<float>(), values);
    std::vector<int64_t> truncated = out[2].to_vector<int64_t>();
    for (size_t i = 0; i < values.size(); ++i) {
        EXPECT_EQ(truncated[i], static_cast<int64_t>(values[i])) << values_of(out[0])[i];
    }
}

TEST(StringModels, TextThatIsNotANumberNamesTheNode) {
    ModelBuilder b(13);
    b.input("s", {3}, kString);
    ModelBuilder::attr_int(b.node("Cast", {"s"}, {"y"}, "parse_7"), "to",
                           ::onnx::TensorProto::INT32);
    b.output("y");
    CompiledNodeModel m(b.import());
    EXPECT_EQ(m.run({strings({3}, {"1", " -22 ", "3e2"})})[0].to_vector<int32_t>(),
              (std::vector<int32_t>{1, -22, 300}));
    EXPECT_TRUE(contains(error_of([&] {
                             m.run({strings({3}, {"1", "2", "three"})});
                         }),
                         "node 'parse_7': cannot convert the string \"three\" (element 2) to "
                         "int32: not a number"));
}

TEST(StringModels, AStringInitializerAndAPassedThroughInput) {
    ModelBuilder b(13);
    b.input("names", {2}, kString);
    auto* init = b.graph->add_initializer();
    init->set_name("digits");
    init->set_data_type(kString);
    init->add_dims(3);
    for (const char* s : {"4", "5.5", "-6"}) init->add_string_data(s);
    ModelBuilder::attr_int(b.node("Cast", {"digits"}, {"d"}, "cast_1"), "to",
                           ::onnx::TensorProto::DOUBLE);
    b.node("Identity", {"names"}, {"same"}, "id_2");
    b.output("d").output("same");
    CompiledNodeModel m(b.import());
    std::vector<NDArray> out = m.run({strings({2}, {"α", "β"})});
    EXPECT_EQ(out[0].to_vector<double>(), (std::vector<double>{4, 5.5, -6}));
    EXPECT_EQ(values_of(out[1]), (std::vector<std::string>{"α", "β"}));
}

TEST(StringModels, StringOpsPrintAndParseBack) {
    graph::IRModule m = normalizer(false, "UPPER", false, {"a \"quoted\" word", "b\\c"}).import();
    std::string text = graph::print(m);
    EXPECT_TRUE(contains(text, "string.normalize")) << text;
    graph::IRModule back = graph::parse_module(text, ops::op_table());
    EXPECT_TRUE(graph::structural_equal(back, m)) << text;
}

// Kernel ops refuse strings wherever a module comes from (here its text), never reaching the
// code generator.
TEST(StringModels, KernelOpsRefuseStringsInModuleText) {
    auto parse_error = [](const std::string& text) {
        return error_of([&] { graph::parse_module(text, ops::op_table()); });
    };
    EXPECT_TRUE(contains(parse_error("def @main(%s: Tensor[(2,), string]) { add(%s, %s) }"),
                         "add does not take string tensors"));
    EXPECT_TRUE(
        contains(parse_error("def @main(%x: Tensor[(2,), float32]) { cast(%x, dtype=\"string\") }"),
                 "cast cannot make string tensors"));
    EXPECT_EQ(parse_error("def @main(%x: Tensor[(2,), float32]) { string.format(%x) }"), "");
}

TEST(StringModels, OpsThatCannotTakeStringsSaySoAtImport) {
    ModelBuilder b(13);
    b.input("s", {2}, kString);
    b.node("Add", {"s", "s"}, {"y"}, "add_3");
    b.output("y");
    EXPECT_TRUE(contains(frontend::testing::user_error_of([&] { b.import(); }),
                         "node 'add_3' (Add, opset 13): op Add does not take string tensors"));
    ModelBuilder e(9);
    e.input("x", {2, 2});
    ModelBuilder::attr_int(e.node("EyeLike", {"x"}, {"y"}, "eye_4"), "dtype", kString);
    e.output("y");
    EXPECT_TRUE(contains(frontend::testing::user_error_of([&] { e.import(); }),
                         "op EyeLike cannot make string tensors"));
}

}  // namespace
}  // namespace anvil
