// ONNX integer arithmetic run through the whole pipeline (import, graph passes, fusion, LLVM, the
// VM): Div and Mod of integer tensors by 0 and INT_MIN by -1, which ONNX leaves undefined and
// which trap in machine code, give the values ops/elementwise.cpp documents (x / 0 = 0,
// x % 0 = 0, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0) instead of killing the process.
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

}  // namespace
}  // namespace anvil
