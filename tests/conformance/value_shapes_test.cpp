// Shapes computed from tensor values at run time: ONNX Reshape, Expand, Tile, Range and
// ConstantOfShape whose shape operands are model inputs. One compilation serves any values (the
// model is not specialized on a test's values); values that do not fit are clear errors naming
// the node. The models are the ONNX backend tests' (Debian's libonnx-testdata), run here with
// other values than the tests use.
#include <gtest/gtest.h>

#include "conformance/node_model.h"

namespace anvil {
namespace {

using runtime::NDArray;
using testing::bytes_of;
using testing::error_of;

using testing::array;
using testing::CompiledNodeModel;
using testing::shape_of;

NDArray iota_float(std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
    return array(std::move(shape), v, "float32");
}

using ValueShapes = testing::NodeModelTest;

TEST_F(ValueShapes, ReshapeToRunTimeShapes) {
    CompiledNodeModel m("test_reshape_reordered_all_dims");  // data [2, 3, 4], shape [3]
    NDArray x = iota_float({2, 3, 4});
    for (auto [target, want] : std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
             {{4, 2, 3}, {4, 2, 3}}, {{3, -1, 2}, {3, 4, 2}}, {{0, 0, 4}, {2, 3, 4}}}) {
        NDArray out = m.run({x, array<int64_t>({3}, target, "int64")})[0];
        EXPECT_EQ(shape_of(out), want);
        EXPECT_EQ(out.to_vector<float>(), x.to_vector<float>());  // the same data, in order
    }
    EXPECT_NE(error_of([&] {
                  m.run({x, array<int64_t>({3}, {5, 5, 1}, "int64")});
              }).find("cannot reshape float32[2, 3, 4] (24 elements) into [5, 5, 1]"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  m.run({x, array<int64_t>({3}, {-1, -1, 6}, "int64")});
              }).find("the shape has more than one -1"),
              std::string::npos);
}

TEST_F(ValueShapes, ExpandToRunTimeShapes) {
    CompiledNodeModel m("test_expand_dim_changed");  // data [3, 1], new_shape [3]
    NDArray x = array<float>({3, 1}, {1, 2, 3}, "float32");
    NDArray out = m.run({x, array<int64_t>({3}, {2, 1, 4}, "int64")})[0];
    EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 3, 4}));
    std::vector<float> v = out.to_vector<float>();
    EXPECT_EQ(v[0], 1.0f);
    EXPECT_EQ(v[4 * 2 + 3], 3.0f);
    EXPECT_EQ(v[12 + 4 + 1], 2.0f);
    std::string message = error_of([&] { m.run({x, array<int64_t>({3}, {1, 2, 5}, "int64")}); });
    EXPECT_NE(message.find("the values of its shape operands do not fit its input"),
              std::string::npos)
        << message;
}

TEST_F(ValueShapes, TileByRunTimeRepeats) {
    CompiledNodeModel m("test_tile");  // x [2, 3, 4, 5], repeats [4]
    NDArray x = iota_float({2, 3, 4, 5});
    NDArray out = m.run({x, array<int64_t>({4}, {1, 2, 1, 3}, "int64")})[0];
    EXPECT_EQ(shape_of(out), (std::vector<int64_t>{2, 6, 4, 15}));
    std::vector<float> v = out.to_vector<float>();
    // out[1, 4, 2, 11] = x[1, 1, 2, 1]
    EXPECT_EQ(v[((1 * 6 + 4) * 4 + 2) * 15 + 11],
              static_cast<float>(((1 * 3 + 1) * 4 + 2) * 5 + 1));
}

TEST_F(ValueShapes, RangeOfRunTimeBounds) {
    CompiledNodeModel m("test_range_int32_type_negative_delta");  // int32 scalars
    auto scalar = [](int32_t v) { return array<int32_t>({}, {v}, "int32"); };
    NDArray up = m.run({scalar(0), scalar(10), scalar(3)})[0];
    EXPECT_EQ(up.to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 6, 9}));
    NDArray down = m.run({scalar(5), scalar(-2), scalar(-2)})[0];
    EXPECT_EQ(down.to_vector<int32_t>(), (std::vector<int32_t>{5, 3, 1, -1}));
    NDArray empty = m.run({scalar(5), scalar(1), scalar(1)})[0];
    EXPECT_EQ(shape_of(empty), (std::vector<int64_t>{0}));
    EXPECT_NE(error_of([&] {
                  m.run({scalar(0), scalar(4), scalar(0)});
              }).find("the values of its shape operands do not fit its input"),
              std::string::npos);
}

TEST_F(ValueShapes, ConstantOfRunTimeShape) {
    CompiledNodeModel m("test_constantofshape_int_zeros");  // shape [2]
    NDArray out = m.run({array<int64_t>({2}, {3, 7}, "int64")})[0];
    EXPECT_EQ(shape_of(out), (std::vector<int64_t>{3, 7}));
    EXPECT_EQ(out.to_vector<int32_t>(), std::vector<int32_t>(21, 0));
    std::string message = error_of([&] { m.run({array<int64_t>({2}, {3, -7}, "int64")}); });
    EXPECT_NE(message.find("do not fit"), std::string::npos) << message;
}

}  // namespace
}  // namespace anvil
