// Broadcasting of dimensions known only at run time: an elementwise op (Add) and Where over
// inputs with symbolic dimensions, compiled once and run with shapes that broadcast each way
// (equal, a 1 on either side) and with shapes that do not fit, which is an error naming the node.
#include <gtest/gtest.h>

#include "conformance/node_model.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::ModelBuilder;
using runtime::NDArray;
using testing::array;
using testing::CompiledNodeModel;
using testing::error_of;
using testing::shape_of;

NDArray floats(std::vector<float> v) {
    auto n = static_cast<int64_t>(v.size());
    return array<float>({n}, std::move(v), "float32");
}

TEST(RunTimeBroadcast, AddOfSymbolicDims) {
    ModelBuilder b(17);
    b.input("x", {1}, ::onnx::TensorProto::FLOAT, {"N"});
    b.input("y", {1}, ::onnx::TensorProto::FLOAT, {"M"});
    b.node("Add", {"x", "y"}, {"z"}, "add_3");
    b.output("z");
    CompiledNodeModel m(b.import());
    EXPECT_EQ(m.run({floats({1, 2, 3}), floats({10, 20, 30})})[0].to_vector<float>(),
              (std::vector<float>{11, 22, 33}));
    EXPECT_EQ(m.run({floats({5}), floats({10, 20, 30, 40})})[0].to_vector<float>(),
              (std::vector<float>{15, 25, 35, 45}));
    EXPECT_EQ(m.run({floats({1, 2, 3, 4}), floats({100})})[0].to_vector<float>(),
              (std::vector<float>{101, 102, 103, 104}));
    EXPECT_EQ(shape_of(m.run({floats({}), floats({7})})[0]), std::vector<int64_t>{0});
    EXPECT_EQ(shape_of(m.run({floats({1}), floats({})})[0]), std::vector<int64_t>{0});
    for (auto [n, k] : std::vector<std::pair<int, int>>{{3, 4}, {2, 0}, {4, 3}}) {
        std::string message = error_of([&] {
            m.run({floats(std::vector<float>(n, 1)), floats(std::vector<float>(k, 1))});
        });
        EXPECT_NE(message.find("node 'add_3'"), std::string::npos) << n << ", " << k << message;
        EXPECT_NE(message.find("the operands' shapes do not fit together"), std::string::npos)
            << message;
    }
    // It still works after an error.
    EXPECT_EQ(m.run({floats({1, 2}), floats({1, 2})})[0].to_vector<float>(),
              (std::vector<float>{2, 4}));
}

TEST(RunTimeBroadcast, RanksAlignFromTheBack) {
    ModelBuilder b(17);
    b.input("x", {1, 1}, ::onnx::TensorProto::FLOAT, {"A", "B"});
    b.input("y", {1}, ::onnx::TensorProto::FLOAT, {"C"});
    b.node("Mul", {"x", "y"}, {"z"}, "mul_1");
    b.output("z");
    CompiledNodeModel m(b.import());
    NDArray x = array<float>({2, 1}, {1, 2}, "float32");
    NDArray z = m.run({x, floats({10, 20, 30})})[0];
    EXPECT_EQ(shape_of(z), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{10, 20, 30, 20, 40, 60}));
    NDArray x23 = array<float>({2, 3}, {1, 2, 3, 4, 5, 6}, "float32");
    EXPECT_EQ(m.run({x23, floats({2})})[0].to_vector<float>(),
              (std::vector<float>{2, 4, 6, 8, 10, 12}));
    EXPECT_NE(error_of([&] {
                  m.run({x23, floats({1, 2})});
              }).find("node 'mul_1'"),
              std::string::npos);
}

TEST(RunTimeBroadcast, WhereOfSymbolicDims) {
    ModelBuilder b(17);
    b.input("c", {1}, ::onnx::TensorProto::BOOL, {"N"});
    b.input("x", {1}, ::onnx::TensorProto::FLOAT, {"M"});
    b.input("y", {1}, ::onnx::TensorProto::FLOAT, {"K"});
    b.node("Where", {"c", "x", "y"}, {"z"}, "where_2");
    b.output("z");
    CompiledNodeModel m(b.import());
    auto bools = [](std::vector<uint8_t> v) {
        auto n = static_cast<int64_t>(v.size());
        return array<uint8_t>({n}, std::move(v), "bool");
    };
    EXPECT_EQ(
        m.run({bools({1, 0, 1}), floats({1, 2, 3}), floats({-1, -2, -3})})[0].to_vector<float>(),
        (std::vector<float>{1, -2, 3}));
    EXPECT_EQ(
        m.run({bools({0, 1, 1, 0}), floats({9}), floats({-1, -2, -3, -4})})[0].to_vector<float>(),
        (std::vector<float>{-1, 9, 9, -4}));
    EXPECT_EQ(m.run({bools({1}), floats({1, 2}), floats({-1})})[0].to_vector<float>(),
              (std::vector<float>{1, 2}));
    EXPECT_EQ(m.run({bools({0}), floats({5}), floats({-1, -2, -3})})[0].to_vector<float>(),
              (std::vector<float>{-1, -2, -3}));
    std::string message = error_of([&] {
        m.run({bools({1, 0, 1}), floats({1, 2, 3, 4}), floats({0})});
    });
    EXPECT_NE(message.find("node 'where_2'"), std::string::npos) << message;
    EXPECT_NE(message.find("the operands' shapes do not fit together"), std::string::npos)
        << message;
    EXPECT_NE(error_of([&] {
                  m.run({bools({1, 0}), floats({1}), floats({1, 2, 3})});
              }).find("node 'where_2'"),
              std::string::npos);
}

}  // namespace
}  // namespace anvil
