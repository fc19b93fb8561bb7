// Shapes computed from tensor values at run time: ONNX Reshape, Expand, Tile, Range,
// ConstantOfShape, Slice, Split, Squeeze/Unsqueeze, ReduceSum, Pad, Resize, OneHot and TopK
// whose shape operands are model inputs, and NonZero/Compress/Unique whose result sizes come
// from the data. One compilation serves any values (the
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

NDArray i64s(std::vector<int64_t> values) {
    auto n = static_cast<int64_t>(values.size());
    return array<int64_t>({n}, values, "int64");
}

TEST_F(ValueShapes, SliceByRunTimeStartsEndsAxesSteps) {
    CompiledNodeModel m("test_slice");  // x [20, 10, 5], starts/ends/axes/steps [2]
    NDArray x = iota_float({20, 10, 5});
    // x[2:-3:3, :, 4:0:-2] = axes 0 and 2
    NDArray out = m.run({x, i64s({2, 4}), i64s({-3, 0}), i64s({0, 2}), i64s({3, -2})})[0];
    EXPECT_EQ(shape_of(out), (std::vector<int64_t>{5, 10, 2}));
    std::vector<float> v = out.to_vector<float>();
    // out[1, 7, 1] = x[5, 7, 2]
    EXPECT_EQ(v[(1 * 10 + 7) * 2 + 1], static_cast<float>((5 * 10 + 7) * 5 + 2));
    // Out of range starts clamp to an empty result; a zero step and a repeated axis are errors.
    NDArray empty = m.run({x, i64s({100, 0}), i64s({200, 5}), i64s({1, 2}), i64s({1, 1})})[0];
    EXPECT_EQ(shape_of(empty), (std::vector<int64_t>{20, 0, 5}));
    EXPECT_NE(error_of([&] {
                  m.run({x, i64s({0, 0}), i64s({1, 1}), i64s({0, 1}), i64s({1, 0})});
              }).find("do not fit"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  m.run({x, i64s({0, 0}), i64s({1, 1}), i64s({1, -2}), i64s({1, 1})});
              }).find("do not fit"),
              std::string::npos);
}

TEST_F(ValueShapes, SplitSqueezeUnsqueezeReduceByRunTimeValues) {
    CompiledNodeModel split("test_split_variable_parts_1d");  // input [6], split [2]
    NDArray x = iota_float({6});
    auto parts = split.run({x, i64s({1, 5})});
    EXPECT_EQ(parts[0].to_vector<float>(), (std::vector<float>{0}));
    EXPECT_EQ(parts[1].to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5}));
    EXPECT_NE(error_of([&] {
                  split.run({x, i64s({2, 2})});
              }).find("do not fit"),
              std::string::npos);

    CompiledNodeModel unsqueeze("test_unsqueeze_two_axes");  // x [3, 4, 5], axes [2]
    NDArray y = iota_float({3, 4, 5});
    EXPECT_EQ(shape_of(unsqueeze.run({y, i64s({0, -1})})[0]),
              (std::vector<int64_t>{1, 3, 4, 5, 1}));
    EXPECT_EQ(shape_of(unsqueeze.run({y, i64s({3, 1})})[0]), (std::vector<int64_t>{3, 1, 4, 1, 5}));

    CompiledNodeModel squeeze("test_squeeze");  // x [1, 3, 4, 5], axes [1]
    EXPECT_NE(error_of([&] {
                  squeeze.run({iota_float({1, 3, 4, 5}), i64s({1})});
              }).find("do not fit"),
              std::string::npos);  // axis 1 has 3 elements

    CompiledNodeModel sum("test_reduce_sum_do_not_keepdims_example");  // data [3, 2, 2], axes [1]
    NDArray d = iota_float({3, 2, 2});
    NDArray over0 = sum.run({d, i64s({0})})[0];
    EXPECT_EQ(over0.to_vector<float>(), (std::vector<float>{12, 15, 18, 21}));
    NDArray over2 = sum.run({d, i64s({-1})})[0];
    EXPECT_EQ(shape_of(over2), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(over2.to_vector<float>(), (std::vector<float>{1, 5, 9, 13, 17, 21}));
}

TEST_F(ValueShapes, PadAndResizeByRunTimeValues) {
    CompiledNodeModel pad("test_constant_pad");  // x [1, 3, 4, 5], pads [8], value []
    NDArray x = iota_float({1, 3, 4, 5});
    NDArray out =
        pad.run({x, i64s({0, 0, 1, -1, 0, 0, 0, 2}), array<float>({}, {-7.0f}, "float32")})[0];
    EXPECT_EQ(shape_of(out), (std::vector<int64_t>{1, 3, 5, 6}));
    std::vector<float> v = out.to_vector<float>();
    EXPECT_EQ(v[0], -7.0f);                  // the padded row
    EXPECT_EQ(v[6], static_cast<float>(1));  // out[0,0,1,0] = x[0,0,0,1]
    EXPECT_EQ(v[6 + 4], -7.0f);              // padded at the end of axis 3

    CompiledNodeModel resize("test_resize_upsample_sizes_nearest");  // X [1, 1, 2, 2], sizes [4]
    NDArray img = array<float>({1, 1, 2, 2}, {1, 2, 3, 4}, "float32");
    NDArray big = resize.run({img, i64s({1, 1, 3, 5})})[0];
    EXPECT_EQ(shape_of(big), (std::vector<int64_t>{1, 1, 3, 5}));
    EXPECT_NE(error_of([&] {
                  resize.run({img, i64s({2, 1, 3, 5})});
              }).find("do not fit"),
              std::string::npos);  // N must stay
}

TEST_F(ValueShapes, DataDependentResultSizes) {
    CompiledNodeModel nonzero("test_nonzero_example");  // condition [2, 2] bool
    NDArray c = array<uint8_t>({2, 2}, {0, 1, 1, 1}, "bool");
    NDArray where = nonzero.run({c})[0];
    EXPECT_EQ(shape_of(where), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(where.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 1, 0, 1}));
    NDArray none = nonzero.run({array<uint8_t>({2, 2}, {0, 0, 0, 0}, "bool")})[0];
    EXPECT_EQ(shape_of(none), (std::vector<int64_t>{2, 0}));

    CompiledNodeModel unique("test_unique_sorted_without_axis");  // X [6]
    auto u = unique.run({array<float>({6}, {3, 1, 3, 2, 1, 3}, "float32")});
    EXPECT_EQ(u[0].to_vector<float>(), (std::vector<float>{1, 2, 3}));
    EXPECT_EQ(u[1].to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 0}));           // first index
    EXPECT_EQ(u[2].to_vector<int64_t>(), (std::vector<int64_t>{2, 0, 2, 1, 0, 2}));  // inverse
    EXPECT_EQ(u[3].to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 3}));           // counts

    CompiledNodeModel top_k("test_top_k");  // x [3, 4], k [1]
    NDArray t = array<float>({3, 4}, {0, 1, 2, 3, 7, 6, 5, 4, 8, 10, 9, 10}, "float32");
    auto best = top_k.run({t, i64s({2})});
    EXPECT_EQ(best[0].to_vector<float>(), (std::vector<float>{3, 2, 7, 6, 10, 10}));
    EXPECT_EQ(best[1].to_vector<int64_t>(), (std::vector<int64_t>{3, 2, 0, 1, 1, 3}));
    EXPECT_NE(error_of([&] {
                  top_k.run({t, i64s({5})});
              }).find("do not fit"),
              std::string::npos);  // k > 4
}

}  // namespace
}  // namespace anvil
