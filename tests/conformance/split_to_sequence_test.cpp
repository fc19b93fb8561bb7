// ONNX SplitToSequence where the number of parts is known only at run time: a 1-D split whose
// length is symbolic, a scalar split given as a model input, and no split over an axis of
// symbolic size (keepdims on and off). The executor splits (seq.split, the VM's seq_split); each
// model is compiled once and run at several sizes and splits against slices taken directly.
#include <gtest/gtest.h>

#include <numeric>

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
using runtime::VMValue;
using testing::array;
using testing::CompiledNodeModel;
using testing::contains;
using testing::error_of;
using testing::shape_of;

// A float32 tensor of `shape` holding 0, 1, 2, ...
NDArray iota(std::vector<int64_t> shape) {
    int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
    std::vector<float> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), 0.0f);
    return array(std::move(shape), v, "float32");
}

NDArray int64s(std::vector<int64_t> shape, std::vector<int64_t> values) {
    return array(std::move(shape), std::move(values), "int64");
}

// The parts of x along `axis` of the given sizes, sliced directly; `squeeze` drops the axis.
std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> slices(
    const NDArray& x, int64_t axis, const std::vector<int64_t>& sizes, bool squeeze = false) {
    std::vector<int64_t> shape(x.shape().begin(), x.shape().end());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
    for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
    std::vector<float> xs = x.to_vector<float>();
    std::vector<std::pair<std::vector<int64_t>, std::vector<float>>> parts;
    int64_t start = 0;
    for (int64_t len : sizes) {
        std::vector<int64_t> s = shape;
        s[axis] = len;
        if (squeeze) s.erase(s.begin() + axis);
        std::vector<float> v;
        for (int64_t o = 0; o < outer; ++o) {
            for (int64_t k = start; k < start + len; ++k) {
                for (int64_t i = 0; i < inner; ++i)
                    v.push_back(xs[(o * shape[axis] + k) * inner + i]);
            }
        }
        parts.emplace_back(s, v);
        start += len;
    }
    return parts;
}

void expect_parts(const VMValue& seq, const NDArray& x, int64_t axis,
                  const std::vector<int64_t>& sizes, bool squeeze = false) {
    auto want = slices(x, axis, sizes, squeeze);
    ASSERT_EQ(seq.kind, VMValue::Kind::tuple);
    ASSERT_EQ(seq.fields.size(), want.size()) << x.str();
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(shape_of(seq.fields[i].tensor), want[i].first) << "part " << i;
        EXPECT_EQ(seq.fields[i].tensor.to_vector<float>(), want[i].second) << "part " << i;
    }
}

// The module's text (with seq.split) reads back as the same module.
void expect_text_round_trip(const graph::IRModule& m) {
    std::string text = graph::print(m);
    EXPECT_NE(text.find("seq.split("), std::string::npos) << text;
    EXPECT_TRUE(
        graph::structural_equal(graph::parse_module(text, ops::op_table()).main(), m.main()))
        << text;
}

TEST(SplitToSequenceAtRunTime, SizesOfSymbolicLength) {
    ModelBuilder b(17);
    b.input("x", {6, 2}, ::onnx::TensorProto::FLOAT, {"n"});
    b.input("split", {3}, ::onnx::TensorProto::INT64, {"k"});
    b.node("SplitToSequence", {"x", "split"}, {"parts"}, "split_1");
    b.node("ConcatFromSequence", {"parts"}, {"back"}, "cat_2");
    b.output("parts");
    b.output("back");
    CompiledNodeModel m(b.import());
    expect_text_round_trip(m.imported());
    for (const auto& [n, sizes] : std::vector<std::pair<int64_t, std::vector<int64_t>>>{
             {6, {1, 0, 5}}, {6, {6}}, {7, {2, 2, 2, 1}}, {1, {1}}, {9, {3, 0, 1, 0, 4, 1}}}) {
        NDArray x = iota({n, 2});
        auto split = int64s({static_cast<int64_t>(sizes.size())}, sizes);
        std::vector<VMValue> out = m.vm().run_values({x, split});
        expect_parts(out[0], x, 0, sizes);
        EXPECT_EQ(out[1].tensor.to_vector<float>(), x.to_vector<float>());  // joined back
    }
    // Sizes that do not add up to the axis, or a negative one.
    std::string message = error_of([&] { m.vm().run_values({iota({6, 2}), int64s({2}, {2, 3})}); });
    EXPECT_TRUE(contains(message,
                         "node 'split_1': the split sizes [2, 3] add up to 5; they do not "
                         "fit axis 0 of float32[6, 2]"));
    message = error_of([&] { m.vm().run_values({iota({2, 2}), int64s({2}, {3, -1})}); });
    EXPECT_TRUE(contains(message, "node 'split_1': split size -1 is negative"));
}

// A scalar split given at run time: parts of that size along axis 1, the last smaller.
TEST(SplitToSequenceAtRunTime, ARunTimeScalarSize) {
    ModelBuilder b(17);
    b.input("x", {2, 6}, ::onnx::TensorProto::FLOAT, {"", "m"});
    b.input("size", {}, ::onnx::TensorProto::INT64);
    ModelBuilder::attr_int(b.node("SplitToSequence", {"x", "size"}, {"parts"}, "split_3"), "axis",
                           -1);
    b.node("SequenceLength", {"parts"}, {"count"}, "length_4");
    b.output("parts");
    b.output("count");
    CompiledNodeModel m(b.import());
    for (const auto& [cols, size] :
         std::vector<std::pair<int64_t, int64_t>>{{6, 4}, {6, 1}, {6, 7}, {5, 5}, {7, 3}}) {
        NDArray x = iota({2, cols});
        std::vector<int64_t> sizes;
        for (int64_t at = 0; at < cols; at += size) sizes.push_back(std::min(size, cols - at));
        std::vector<VMValue> out = m.vm().run_values({x, int64s({}, {size})});
        expect_parts(out[0], x, 1, sizes);
        EXPECT_EQ(out[1].tensor.to_vector<int64_t>(),
                  std::vector<int64_t>{static_cast<int64_t>(sizes.size())});
    }
    EXPECT_TRUE(contains(error_of([&] {
                             m.vm().run_values({iota({2, 6}), int64s({}, {0})});
                         }),
                         "node 'split_3': the split size must be positive, not 0"));
}

// No split over an axis of symbolic size: parts of size 1, without the axis when keepdims = 0.
TEST(SplitToSequenceAtRunTime, NoSplitOverASymbolicAxis) {
    for (int64_t keepdims : {1, 0}) {
        ModelBuilder b(17);
        b.input("x", {3, 4}, ::onnx::TensorProto::FLOAT, {"", "m"});
        auto* node = b.node("SplitToSequence", {"x"}, {"parts"}, "split_5");
        ModelBuilder::attr_int(node, "axis", 1);
        ModelBuilder::attr_int(node, "keepdims", keepdims);
        b.output("parts");
        CompiledNodeModel m(b.import());
        if (keepdims == 0) expect_text_round_trip(m.imported());
        for (int64_t cols : {4, 1, 6, 0}) {
            NDArray x = iota({3, cols});
            std::vector<VMValue> out = m.vm().run_values({x});
            expect_parts(out[0], x, 1, std::vector<int64_t>(static_cast<size_t>(cols), 1),
                         keepdims == 0);
        }
    }
}

// String tensors split too (their elements are copied as strings).
TEST(SplitToSequenceAtRunTime, StringTensors) {
    ModelBuilder b(17);
    b.input("x", {4}, ::onnx::TensorProto::STRING, {"n"});
    b.input("size", {}, ::onnx::TensorProto::INT64);
    b.node("SplitToSequence", {"x", "size"}, {"parts"}, "split_6");
    b.output("parts");
    CompiledNodeModel m(b.import());
    NDArray x = runtime::make_string_tensor({5}, {"a", "bb", "", "dddd", "e"});
    std::vector<VMValue> out = m.vm().run_values({x, int64s({}, {2})});
    ASSERT_EQ(out[0].fields.size(), 3u);
    std::vector<std::vector<std::string_view>> want = {{"a", "bb"}, {"", "dddd"}, {"e"}};
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(runtime::string_values(out[0].fields[i].tensor, "a part"), want[i]);
    }
}

}  // namespace
}  // namespace anvil
