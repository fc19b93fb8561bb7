// The VM's string instructions (vm_string.h) and string tensors (string_tensor.h): StringNormalizer
// with and without stopwords, case changes beyond ASCII and malformed UTF-8, numbers spelled as
// NumPy spells them for every element type, strings read back as numbers (specials, exact
// integers, truncation, range and syntax errors naming the node), joining string tensors, and
// the instructions in a program's JSON, its validation and a run.
#include "runtime/vm_string.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "e2e/vm_test_util.h"
#include "runtime/string_tensor.h"
#include "runtime/unicode_case.h"
#include "runtime/vm.h"
#include "runtime/vm_program.h"
#include "runtime/vm_sequence.h"

namespace anvil::runtime {
namespace {

using anvil::testing::contains;
using anvil::testing::error_of;
using anvil::testing::NoKernels;

NDArray strings(std::vector<int64_t> shape, std::vector<std::string> values) {
    return make_string_tensor(shape, std::move(values));
}

std::vector<std::string> values_of(const NDArray& t) {
    std::vector<std::string> out;
    for (std::string_view s : string_values(t, "the result")) out.emplace_back(s);
    return out;
}

std::vector<int64_t> shape_of(const NDArray& t) {
    return {t.shape().begin(), t.shape().end()};
}

template <typename T>
NDArray numbers(std::vector<T> values, const char* dtype) {
    NDArray a = NDArray::empty({static_cast<int64_t>(values.size())}, dl_dtype_from_string(dtype));
    a.copy_from(values);
    return a;
}

TEST(StringTensor, HoldsItsStringsAndRefusesAWrongCount) {
    NDArray t = strings({2, 2}, {"a", "", "long string with\0nul", "é"});
    EXPECT_EQ(dl_dtype_to_string(t.dtype()), "string");
    EXPECT_EQ(t.str(), "string[2, 2]");
    EXPECT_EQ(values_of(t), (std::vector<std::string>{"a", "", "long string with", "é"}));
    // A view (the VM's reshape) keeps the strings alive after the tensor is gone.
    NDArray view = t.view({4}, t.dtype());
    t = NDArray();
    EXPECT_EQ(values_of(view)[3], "é");
    EXPECT_TRUE(contains(error_of([] { strings({3}, {"a"}); }),
                         "a string tensor of 3 element(s) given 1 string(s)"));
    EXPECT_TRUE(contains(error_of([] {
                             string_values(NDArray::empty({1}, {kDLFloat, 32, 1}), "x");
                         }),
                         "x is float32[1], expected a string tensor"));
    // Allocated string tensors start as empty strings, never garbage.
    EXPECT_EQ(values_of(NDArray::empty({2}, kStringDType)), (std::vector<std::string>{"", ""}));
    EXPECT_TRUE(dl_dtype_equal(dl_dtype_from_string("string"), kStringDType));
}

TEST(UnicodeCase, MapsLatinGreekAndCyrillicAndKeepsTheRest) {
    EXPECT_EQ(utf8_to_upper("Hello, wörld! ÿ"), "HELLO, WÖRLD! Ÿ");
    EXPECT_EQ(utf8_to_lower("ÉCOLE ÀÖØÞ Ā Ž"), "école àöøþ ā ž");
    EXPECT_EQ(utf8_to_upper("σοφία ς"), "ΣΟΦΊΑ Σ");
    EXPECT_EQ(utf8_to_lower("ΣΟΦΊΑ Ώ"), "σοφία ώ");
    EXPECT_EQ(utf8_to_upper("привет ёж"), "ПРИВЕТ ЁЖ");
    EXPECT_EQ(utf8_to_lower("ПРИВЕТ ЁЖ"), "привет ёж");
    // ß has no one-letter uppercase; CJK and emoji have no case.
    EXPECT_EQ(utf8_to_upper("straße 東京 🙂"), "STRAßE 東京 🙂");
    EXPECT_EQ(utf8_to_lower("İ"), "i");
    EXPECT_EQ(utf8_to_upper("ı"), "I");
    // Malformed UTF-8 (a lone continuation byte, a truncated sequence, an overlong form) passes
    // through byte for byte, and the letters around it still change.
    EXPECT_EQ(utf8_to_upper("a\x80"
                            "b\xC3"),
              "A\x80"
              "B\xC3");
    EXPECT_EQ(utf8_to_upper("\xC0\xA1z"), "\xC0\xA1Z");
}

TEST(VMString, NormalizeDropsStopwordsThenChangesCase) {
    NDArray x = strings({5}, {"Monday", "tuesday", "MONDAY", "Straße", "monday "});
    NDArray y = normalize_strings(x, CaseChange::upper, false, {"monday"}, "norm");
    EXPECT_EQ(values_of(y), (std::vector<std::string>{"TUESDAY", "STRAßE", "MONDAY "}));
    y = normalize_strings(x, CaseChange::none, true, {"monday", "MONDAY"}, "norm");
    EXPECT_EQ(values_of(y), (std::vector<std::string>{"Monday", "tuesday", "Straße", "monday "}));
    // Case-insensitive stopwords match beyond ASCII.
    y = normalize_strings(strings({1, 3}, {"ÉTÉ", "été", "hiver"}), CaseChange::lower, false,
                          {"Été"}, "norm");
    EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 1}));
    EXPECT_EQ(values_of(y), std::vector<std::string>{"hiver"});
    // Nothing left: one empty string, in the input's rank.
    y = normalize_strings(strings({2}, {"a", "A"}), CaseChange::none, false, {"a"}, "norm");
    EXPECT_EQ(shape_of(y), std::vector<int64_t>{1});
    EXPECT_EQ(values_of(y), std::vector<std::string>{""});
    y = normalize_strings(strings({1, 1}, {"a"}), CaseChange::none, false, {"a"}, "norm");
    EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 1}));
    EXPECT_TRUE(contains(error_of([] {
                             normalize_strings(strings({2, 2}, {"a", "b", "c", "d"}),
                                               CaseChange::none, false, {}, "norm_3");
                         }),
                         "node 'norm_3': StringNormalizer takes a [C] or [1, C] tensor, not "
                         "string[2, 2]"));
    EXPECT_TRUE(contains(error_of([] { case_change_from_string("lower"); }),
                         "case_change_action must be NONE, LOWER or UPPER, not 'lower'"));
}

TEST(VMString, FormatsNumbersAsNumPyDoes) {
    auto format = [](const NDArray& x) { return values_of(format_strings(x, "fmt")); };
    float inf = INFINITY;
    EXPECT_EQ(format(numbers<float>({0.1f, 100.0f, 1e-5f, 1.5e20f, 0.039187793f, -0.0f, 1e-4f, NAN,
                                     -inf, 16777216.0f},
                                    "float32")),
              (std::vector<std::string>{"0.1", "100.0", "1e-05", "1.5e+20", "0.039187793", "-0.0",
                                        "0.0001", "NaN", "-INF", "16777216.0"}));
    EXPECT_EQ(format(numbers<double>({0.1, 1.0 / 3, 1e16}, "float64")),
              (std::vector<std::string>{"0.1", "0.3333333333333333", "1e+16"}));
    // 16-bit floats print their own shortest digits, not their float32 value's.
    EXPECT_EQ(
        format(numbers<_Float16>({_Float16(0.1f), _Float16(65504.0f), _Float16(-2.5f)}, "float16")),
        (std::vector<std::string>{"0.1", "65500.0", "-2.5"}));
    // bfloat16 0x3DCD is 0.10009765625, and "0.1" is the shortest text that reads back to it.
    EXPECT_EQ(format(numbers<uint16_t>({0x3DCD, 0x4049}, "bfloat16")),
              (std::vector<std::string>{"0.1", "3.14"}));
    EXPECT_EQ(format(numbers<int64_t>({-42, INT64_MIN}, "int64")),
              (std::vector<std::string>{"-42", "-9223372036854775808"}));
    EXPECT_EQ(format(numbers<uint8_t>({255, 0}, "uint8")), (std::vector<std::string>{"255", "0"}));
    EXPECT_EQ(format(numbers<int8_t>({-128}, "int8")), std::vector<std::string>{"-128"});
    EXPECT_EQ(format(numbers<uint8_t>({1, 0}, "bool")),
              (std::vector<std::string>{"True", "False"}));
    // Every formatted float32 reads back to itself.
    std::vector<float> many;
    for (int i = -40; i <= 40; ++i) many.push_back(std::ldexp(1.2345678f, i) * (i % 2 ? -1 : 1));
    NDArray back =
        parse_strings(format_strings(numbers(many, "float32"), "fmt"), {kDLFloat, 32, 1}, "parse");
    EXPECT_EQ(back.to_vector<float>(), many);
}

TEST(VMString, ParsesNumbersAndNamesTheNodeAndElementItCannotRead) {
    NDArray x = strings({7}, {"3.5", " +INF ", "-inf", "nan", "1E-5", "-0", "1e39"});
    std::vector<float> f = parse_strings(x, {kDLFloat, 32, 1}, "p").to_vector<float>();
    EXPECT_EQ(f[0], 3.5f);
    EXPECT_EQ(f[1], INFINITY);
    EXPECT_EQ(f[2], -INFINITY);
    EXPECT_TRUE(std::isnan(f[3]));
    EXPECT_EQ(f[4], 1e-5f);
    EXPECT_TRUE(std::signbit(f[5]));
    EXPECT_EQ(f[6], INFINITY);  // beyond float32, as strtof
    // Integers: literals exactly, decimals truncated toward zero.
    NDArray ints = strings({5}, {"12345678901234567", "2.7", "-2.7", "+8", "1e3"});
    EXPECT_EQ(parse_strings(ints, {kDLInt, 64, 1}, "p").to_vector<int64_t>(),
              (std::vector<int64_t>{12345678901234567, 2, -2, 8, 1000}));
    EXPECT_EQ(parse_strings(strings({2}, {"255", "0"}), {kDLUInt, 8, 1}, "p").to_vector<uint8_t>(),
              (std::vector<uint8_t>{255, 0}));
    EXPECT_EQ(parse_strings(strings({4}, {"True", "false", "0", "2.5"}), {kDLUInt, 1, 1}, "p")
                  .to_vector<uint8_t>(),
              (std::vector<uint8_t>{1, 0, 0, 1}));
    EXPECT_EQ(parse_strings(strings({1}, {"0.1"}), {kDLBfloat, 16, 1}, "p").to_vector<uint16_t>(),
              std::vector<uint16_t>{0x3DCD});
    EXPECT_EQ(parse_strings(strings({1}, {"0.1"}), {kDLFloat, 16, 1}, "p").to_vector<_Float16>(),
              std::vector<_Float16>{_Float16(0.1f)});
    EXPECT_TRUE(contains(error_of([] {
                             parse_strings(strings({2}, {"1", "one"}), {kDLFloat, 32, 1}, "cast_4");
                         }),
                         "node 'cast_4': cannot convert the string \"one\" (element 1) to float32: "
                         "not a number"));
    EXPECT_TRUE(contains(error_of([] {
                             parse_strings(strings({1}, {"300"}), {kDLInt, 8, 1}, "cast_5");
                         }),
                         "node 'cast_5': cannot convert the string \"300\" (element 0) to int8: "
                         "out of range"));
    EXPECT_TRUE(contains(error_of([] {
                             parse_strings(strings({1}, {"-1.5e30"}), {kDLInt, 64, 1}, "c");
                         }),
                         "out of range"));
    EXPECT_TRUE(contains(error_of([] {
                             parse_strings(strings({1}, {""}), {kDLInt, 32, 1}, "c");
                         }),
                         "not a number"));
    EXPECT_TRUE(contains(error_of([] {
                             parse_strings(numbers<float>({1}, "float32"), {kDLInt, 32, 1}, "c");
                         }),
                         "node 'c': the input is float32[1], expected a string tensor"));
}

TEST(VMString, JoiningStringTensorsCopiesTheStrings) {
    MemoryPool pool;
    NDArray a = strings({1, 2}, {"a", "b"});
    NDArray b = strings({1, 1}, {"c"});
    NDArray y = concat_tensors({a, b}, 1, false, pool, "cat", "element");
    a = NDArray();
    b = NDArray();
    EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(values_of(y), (std::vector<std::string>{"a", "b", "c"}));
    NDArray s = concat_tensors({strings({2}, {"x", "y"}), strings({2}, {"z", "w"})}, 1, true, pool,
                               "stack", "iteration");
    EXPECT_EQ(shape_of(s), (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(values_of(s), (std::vector<std::string>{"x", "z", "y", "w"}));
}

// normalize → parse of a string constant and of the input, through a program's JSON.
TEST(VMString, InstructionsRoundTripJsonAndRun) {
    const char* json = R"({"version": 1, "outputs": ["output0"], "params": {},
      "functions": [{"name": "main", "params": ["x"], "num_registers": 5, "num_slots": 1,
        "slot_names": ["n"],
        "code": [
          {"op": "match_shape", "reg": 0, "dims": [{"any": true}], "dtype": "string", "what": "input 'x'"},
          {"op": "str_normalize", "dst": 1, "reg": 0, "name": "LOWER", "index": 0,
           "strings": ["skip"], "node": "norm"},
          {"op": "str_parse", "dst": 2, "reg": 1, "dtype": "int32", "node": "cast"},
          {"op": "str_const", "dst": 3, "shape": [[2]], "strings": ["7", "8"]},
          {"op": "str_format", "dst": 4, "reg": 2, "node": "fmt"},
          {"op": "tuple", "dst": 3, "args": [4, 3]},
          {"op": "ret", "reg": 3}]}]})";
    VMProgram p = program_from_json(json);
    VMProgram again = program_from_json(program_to_json(p));
    EXPECT_EQ(again.functions[0].code[1].strings, std::vector<std::string>{"skip"});
    EXPECT_EQ(again.functions[0].code[1].name, "LOWER");
    EXPECT_EQ(dl_dtype_to_string(again.functions[0].code[2].dtype), "int32");
    VirtualMachine vm(again, {}, Module(make_ref<NoKernels>()));
    VMValue out = vm.invoke("main", {strings({4}, {"12", "SKIP", "-3", "7"})});
    EXPECT_EQ(values_of(out.fields[0].tensor), (std::vector<std::string>{"12", "-3", "7"}));
    EXPECT_EQ(values_of(out.fields[1].tensor), (std::vector<std::string>{"7", "8"}));
    EXPECT_TRUE(contains(error_of([&] { vm.invoke("main", {strings({1}, {"x"})}); }),
                         "node 'cast': cannot convert the string \"x\" (element 0) to int32"));
    EXPECT_TRUE(contains(error_of([&] { vm.invoke("main", {numbers<float>({1}, "float32")}); }),
                         "input 'x'"));
}

TEST(VMString, ValidationRefusesBadStringInstructions) {
    auto program = [](const std::string& instruction) {
        return R"({"version": 1, "outputs": [], "params": {}, "functions": [{"name": "main",
          "params": ["x"], "num_registers": 2, "num_slots": 0, "code": [)" +
               instruction + R"(, {"op": "ret", "reg": 0}]}]})";
    };
    EXPECT_TRUE(contains(
        error_of([&] {
            program_from_json(
                program(R"({"op": "str_normalize", "dst": 1, "reg": 0, "name": "lower"})"));
        }),
        "the case change must be NONE, LOWER or UPPER, not 'lower'"));
    EXPECT_TRUE(contains(
        error_of([&] {
            program_from_json(
                program(R"({"op": "alloc", "dst": 1, "shape": [[2]], "dtype": "string"})"));
        }),
        "string tensors are made by string instructions, not allocated"));
    EXPECT_TRUE(contains(error_of([&] {
                             program_from_json(program(
                                 R"({"op": "str_parse", "dst": 1, "reg": 0, "dtype": "string"})"));
                         }),
                         "parses strings into numbers, not strings"));
    EXPECT_TRUE(contains(
        error_of([&] {
            program_from_json(
                program(R"({"op": "str_const", "dst": 1, "shape": [[1]], "strings": [3]})"));
        }),
        "'strings' must hold strings"));
}

}  // namespace
}  // namespace anvil::runtime
