// ONNX integer arithmetic run through the whole pipeline (import, graph passes, fusion, LLVM, the
// VM): Div and Mod of integer tensors by 0 and INT_MIN by -1, which ONNX leaves undefined and
// which trap in machine code, give the values ops/elementwise.cpp documents (x / 0 = 0,
// x % 0 = 0, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0) instead of killing the process; the
// bitwise ops of opset 18 (BitwiseAnd/Or/Xor/Not, which Debian's backend test data predates) and
// BitShift, also by amounts of the type's width or more.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "conformance/node_model.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::ModelBuilder;
using runtime::NDArray;
using testing::array;
using testing::CompiledNodeModel;

// Div, Mod (fmod=0, floored) and Mod (fmod=1, truncated) of a [6] by b [6], one model.
ModelBuilder division_model(int elem_type) {
    ModelBuilder b(13);
    b.input("a", {6}, elem_type).input("b", {6}, elem_type);
    b.node("Div", {"a", "b"}, {"q"}, "div_0");
    b.node("Mod", {"a", "b"}, {"r"}, "mod_floor");
    ModelBuilder::attr_int(b.node("Mod", {"a", "b"}, {"t"}, "mod_trunc"), "fmod", 1);
    b.output("q").output("r").output("t");
    return b;
}

template <typename T>
void check_division(int elem_type, const char* dtype) {
    const T lo = std::numeric_limits<T>::min();
    CompiledNodeModel m(division_model(elem_type).import(), false);
    // 7 / 0, INT_MIN / -1, INT_MIN / 0, -7 / 2, 7 / -2, 0 / -1
    std::vector<T> a = {7, lo, lo, -7, 7, 0}, b = {0, -1, 0, 2, -2, -1};
    std::vector<NDArray> out = m.run({array<T>({6}, a, dtype), array<T>({6}, b, dtype)});
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].to_vector<T>(), (std::vector<T>{0, lo, 0, -3, -3, 0})) << dtype << " Div";
    EXPECT_EQ(out[1].to_vector<T>(), (std::vector<T>{0, 0, 0, 1, -1, 0})) << dtype << " Mod";
    EXPECT_EQ(out[2].to_vector<T>(), (std::vector<T>{0, 0, 0, -1, 1, 0})) << dtype << " fmod";
}

TEST(OnnxIntegerDivision, ByZeroAndIntMinByMinusOneDoNotTrap) {
    check_division<int32_t>(::onnx::TensorProto::INT32, "int32");
    check_division<int64_t>(::onnx::TensorProto::INT64, "int64");
}

TEST(OnnxIntegerDivision, UnsignedByZero) {
    CompiledNodeModel m(division_model(::onnx::TensorProto::UINT8).import(), false);
    std::vector<uint8_t> a = {7, 255, 0, 9, 200, 1}, b = {0, 0, 0, 2, 255, 1};
    std::vector<NDArray> out =
        m.run({array<uint8_t>({6}, a, "uint8"), array<uint8_t>({6}, b, "uint8")});
    EXPECT_EQ(out[0].to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 4, 0, 1}));
    EXPECT_EQ(out[1].to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 1, 200, 0}));
    EXPECT_EQ(out[2].to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 0, 1, 200, 0}));
}

// BitwiseAnd/Or/Xor of a [2, 4] and a broadcast [4], BitwiseNot of the first, one model.
template <typename T>
void check_bitwise(int elem_type, const char* dtype, std::vector<T> a, std::vector<T> b) {
    ModelBuilder m(18);
    m.input("a", {2, 4}, elem_type).input("b", {4}, elem_type);
    m.node("BitwiseAnd", {"a", "b"}, {"and"}, "and_0");
    m.node("BitwiseOr", {"a", "b"}, {"or"}, "or_0");
    m.node("BitwiseXor", {"a", "b"}, {"xor"}, "xor_0");
    m.node("BitwiseNot", {"a"}, {"not"}, "not_0");
    m.output("and").output("or").output("xor").output("not");
    CompiledNodeModel model(m.import(), false);
    std::vector<NDArray> out = model.run({array<T>({2, 4}, a, dtype), array<T>({4}, b, dtype)});
    ASSERT_EQ(out.size(), 4u);
    std::vector<T> want_and, want_or, want_xor, want_not;
    for (size_t i = 0; i < a.size(); ++i) {
        T x = a[i], y = b[i % 4];
        want_and.push_back(T(x & y));
        want_or.push_back(T(x | y));
        want_xor.push_back(T(x ^ y));
        want_not.push_back(T(~x));
    }
    EXPECT_EQ(out[0].to_vector<T>(), want_and) << dtype;
    EXPECT_EQ(out[1].to_vector<T>(), want_or) << dtype;
    EXPECT_EQ(out[2].to_vector<T>(), want_xor) << dtype;
    EXPECT_EQ(out[3].to_vector<T>(), want_not) << dtype;
}

TEST(OnnxBitwise, AndOrXorNotOfEachIntegerType) {
    check_bitwise<int8_t>(::onnx::TensorProto::INT8, "int8", {1, -1, 0x5a, -128, 0, 127, -37, 6},
                          {3, -2, 0x0f, -1});
    check_bitwise<uint8_t>(::onnx::TensorProto::UINT8, "uint8", {1, 255, 0x5a, 128, 0, 127, 37, 6},
                           {3, 254, 0x0f, 255});
    check_bitwise<int32_t>(::onnx::TensorProto::INT32, "int32",
                           {1, -1, 0x5a5a5a5a, INT32_MIN, 0, INT32_MAX, -37, 6},
                           {3, -2, 0x0f0f0f0f, -1});
    check_bitwise<int64_t>(::onnx::TensorProto::INT64, "int64",
                           {1, -1, 0x5a5a5a5a5a5a5a5a, INT64_MIN, 0, INT64_MAX, -37, 6},
                           {3, -2, 0x0f0f0f0f0f0f0f0f, -1});
    check_bitwise<uint64_t>(::onnx::TensorProto::UINT64, "uint64",
                            {1, UINT64_MAX, 0x5a5a5a5a5a5a5a5a, uint64_t{1} << 63, 0, 7, 37, 6},
                            {3, UINT64_MAX - 1, 0x0f0f0f0f0f0f0f0f, 1});
}

// BitShift LEFT and RIGHT; amounts of the width or more shift every bit out (numpy's values).
template <typename T>
void check_bit_shift(int elem_type, const char* dtype) {
    constexpr T bits = sizeof(T) * 8;
    ModelBuilder m(11);
    m.input("x", {6}, elem_type).input("n", {6}, elem_type);
    ModelBuilder::attr_string(m.node("BitShift", {"x", "n"}, {"l"}, "shl"), "direction", "LEFT");
    ModelBuilder::attr_string(m.node("BitShift", {"x", "n"}, {"r"}, "shr"), "direction", "RIGHT");
    m.output("l").output("r");
    CompiledNodeModel model(m.import(), false);
    const T top = T(T(1) << (bits - 1));
    std::vector<T> x = {1, 3, top, T(~T(0)), 5, 200};
    std::vector<T> n = {0, T(bits - 1), 1, bits, T(bits + 1), 255};
    std::vector<NDArray> out = model.run({array<T>({6}, x, dtype), array<T>({6}, n, dtype)});
    EXPECT_EQ(out[0].to_vector<T>(), (std::vector<T>{1, top, 0, 0, 0, 0})) << dtype;
    EXPECT_EQ(out[1].to_vector<T>(), (std::vector<T>{1, 0, T(top >> 1), 0, 0, 0})) << dtype;
}

TEST(OnnxBitwise, BitShiftIncludingAmountsOfTheWidthOrMore) {
    check_bit_shift<uint8_t>(::onnx::TensorProto::UINT8, "uint8");
    check_bit_shift<uint16_t>(::onnx::TensorProto::UINT16, "uint16");
    check_bit_shift<uint32_t>(::onnx::TensorProto::UINT32, "uint32");
    check_bit_shift<uint64_t>(::onnx::TensorProto::UINT64, "uint64");
}

TEST(OnnxBitwise, ImportsAsTheBitwiseOps) {
    ModelBuilder m(18);
    m.input("a", {4}, ::onnx::TensorProto::INT32).input("b", {4}, ::onnx::TensorProto::INT32);
    m.node("BitwiseAnd", {"a", "b"}, {"c"});
    m.node("BitwiseNot", {"c"}, {"d"});
    m.output("d");
    auto ops = frontend::testing::op_histogram(*m.import().main());
    EXPECT_EQ(ops["bitwise_and"], 1);
    EXPECT_EQ(ops["bitwise_not"], 1);
    // BitShift is a shift, not the multiply/divide by a power of two it was.
    ModelBuilder s(11);
    s.input("x", {4}, ::onnx::TensorProto::UINT32).input("n", {4}, ::onnx::TensorProto::UINT32);
    ModelBuilder::attr_string(s.node("BitShift", {"x", "n"}, {"y"}), "direction", "RIGHT");
    s.output("y");
    auto shift_ops = frontend::testing::op_histogram(*s.import().main());
    EXPECT_EQ(shift_ops["right_shift"], 1);
    EXPECT_EQ(shift_ops.size(), 1u);
}

TEST(OnnxBitwise, FloatInputsAreAnErrorNamingTheNode) {
    ModelBuilder m(18);
    m.input("a", {4}).input("b", {4});
    m.node("BitwiseXor", {"a", "b"}, {"c"}, "xor_7");
    m.output("c");
    std::string message = testing::error_of([&] { m.import(); });
    EXPECT_NE(message.find("node 'xor_7' (BitwiseXor, opset 18)"), std::string::npos) << message;
    EXPECT_NE(message.find("bitwise_xor needs integer or bool inputs, got float32"),
              std::string::npos)
        << message;
}

}  // namespace
}  // namespace anvil
