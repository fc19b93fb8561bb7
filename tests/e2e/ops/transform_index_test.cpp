// Indexing ops (ops/transform_index.cpp) against naive references: ONNX Slice semantics with
// negative and clamped values and negative steps, Gather with negative indices, GatherElements,
// and every pad mode; plus their type-rule errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>

#include "op_runner.h"
#include "ops/transform.h"

namespace anvil::op_testing {
namespace {

using ops::PadAttrs;
using ops::StridedSliceAttrs;

// The indices ONNX Slice selects along one axis of `n` elements.
std::vector<int64_t> slice_reference(int64_t begin, int64_t end, int64_t step, int64_t n) {
    auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); };
    if (begin < 0) begin += n;
    if (end < 0) end += n;
    std::vector<int64_t> out;
    if (step > 0) {
        begin = clamp(begin, 0, n);
        end = clamp(end, 0, n);
        for (int64_t i = begin; i < end; i += step) out.push_back(i);
    } else {
        begin = clamp(begin, 0, n - 1);
        end = clamp(end, -1, n - 1);
        for (int64_t i = begin; i > end; i += step) out.push_back(i);
    }
    return out;
}

void check_slice(const Shape& shape, const std::vector<int64_t>& begin,
                 const std::vector<int64_t>& end, const std::vector<int64_t>& strides,
                 const std::vector<int64_t>& axes) {
    auto x = random_tensor(shape, 50);
    auto r = run_op("strided_slice", {x}, make_attrs<StridedSliceAttrs>([&](auto& a) {
                        a.begin = begin;
                        a.end = end;
                        a.strides = strides;
                        a.axes = axes;
                    }));
    std::vector<std::vector<int64_t>> picks(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
        for (int64_t i = 0; i < shape[d]; ++i) picks[d].push_back(i);
    }
    for (size_t k = 0; k < begin.size(); ++k) {
        int64_t axis = axes.empty() ? static_cast<int64_t>(k) : axes[k];
        if (axis < 0) axis += static_cast<int64_t>(shape.size());
        picks[axis] =
            slice_reference(begin[k], end[k], strides.empty() ? 1 : strides[k], shape[axis]);
    }
    Shape out_shape;
    for (const auto& p : picks) out_shape.push_back(static_cast<int64_t>(p.size()));
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    std::vector<float> expected(num_elements(out_shape));
    for_each_index(out_shape, [&](const Shape& o) {
        Shape i(o.size());
        for (size_t d = 0; d < o.size(); ++d) i[d] = picks[d][o[d]];
        expected[offset_of(o, out_shape)] = x.data<float>()[offset_of(i, shape)];
    });
    expect_close(r.outputs[0], expected, 0, 0);
}

TEST(StridedSlice, OnnxSemantics) {
    check_slice({7, 9}, {1, 2}, {5, 9}, {}, {});                            // plain
    check_slice({7, 9}, {-3}, {INT64_MAX}, {}, {1});                        // negative begin
    check_slice({7, 9}, {-1}, {INT64_MIN}, {-1}, {0});                      // reverse an axis
    check_slice({7, 9, 5}, {8, -100}, {-100, 100}, {-3, 2}, {1, -1});       // clamped, steps
    check_slice({2, 11, 3}, {1}, {-1}, {3}, {-2});                          // stride 3
    check_slice({4, 5, 6, 7}, {0, 1, 2}, {4, 5, 6}, {2, 2, 2}, {1, 2, 3});  // several axes
}

TEST(StridedSlice, Errors) {
    auto x = random_tensor({4, 5}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("strided_slice", {x},
                                         make_attrs<StridedSliceAttrs>([](auto& a) {
                                             a.begin = {0};
                                             a.end = {3};
                                             a.strides = {0};
                                         }));
                       }),
                       "strided_slice", "strides[0] is 0");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("strided_slice", {x},
                                         make_attrs<StridedSliceAttrs>([](auto& a) {
                                             a.begin = {0};
                                             a.end = {3};
                                             a.axes = {2};
                                         }));
                       }),
                       "strided_slice", "axes[0] 2 is out of range");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("strided_slice", {x},
                                         make_attrs<StridedSliceAttrs>([](auto& a) {
                                             a.begin = {3};
                                             a.end = {1};
                                         }));
                       }),
                       "strided_slice", "select no element");
}

template <typename I>
void check_take(const Shape& data_shape, const Shape& index_shape, const std::vector<I>& idx,
                int64_t axis, const std::string& dtype) {
    auto data = random_tensor(data_shape, 60);
    auto indices = tensor_from(index_shape, idx, dtype);
    auto r = run_op("take", {data, indices},
                    make_attrs<ops::TakeAttrs>([&](auto& a) { a.axis = axis; }));
    int64_t ax = axis < 0 ? axis + static_cast<int64_t>(data_shape.size()) : axis;
    Shape out_shape(data_shape.begin(), data_shape.begin() + ax);
    out_shape.insert(out_shape.end(), index_shape.begin(), index_shape.end());
    out_shape.insert(out_shape.end(), data_shape.begin() + ax + 1, data_shape.end());
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    std::vector<float> expected(num_elements(out_shape));
    for_each_index(out_shape, [&](const Shape& o) {
        Shape pos(o.begin() + ax, o.begin() + ax + index_shape.size());
        int64_t v = static_cast<int64_t>(idx[offset_of(pos, index_shape)]);
        if (v < 0) v += data_shape[ax];
        Shape i(o.begin(), o.begin() + ax);
        i.push_back(v);
        i.insert(i.end(), o.begin() + ax + index_shape.size(), o.end());
        expected[offset_of(o, out_shape)] = data.data<float>()[offset_of(i, data_shape)];
    });
    expect_close(r.outputs[0], expected, 0, 0);
}

TEST(Take, AxesAndIndexTypes) {
    check_take<int64_t>({5, 3}, {2, 2}, {0, 4, -1, 2}, 0, "int64");  // embedding lookup
    check_take<int32_t>({2, 7, 3}, {3}, {6, -7, 1}, 1, "int32");
    check_take<int64_t>({2, 7, 3}, {}, {-2}, -1, "int64");  // scalar index drops the axis
}

TEST(Take, Errors) {
    auto data = random_tensor({5, 3}, 1);
    auto f = tensor_of({2}, "float32");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("take", {data, f}, nullptr);
                       }),
                       "take", "indices have type float32");
}

TEST(GatherElements, Axes) {
    auto data = random_tensor({3, 4}, 61);
    auto indices = tensor_from<int64_t>({2, 4}, {0, -1, 2, 1, 2, 0, 1, 0}, "int64");
    for (int64_t axis : {0, -1}) {
        auto r = run_op("gather_elements", {data, indices},
                        make_attrs<ops::GatherElementsAttrs>([&](auto& a) { a.axis = axis; }));
        int64_t ax = axis < 0 ? axis + 2 : axis;
        std::vector<float> expected(8);
        for_each_index({2, 4}, [&](const Shape& o) {
            Shape i = o;
            int64_t v = indices.data<int64_t>()[offset_of(o, {2, 4})];
            i[ax] = v < 0 ? v + (ax == 0 ? 3 : 4) : v;
            expected[offset_of(o, {2, 4})] = data.data<float>()[offset_of(i, {3, 4})];
        });
        expect_close(r.outputs[0], expected, 0, 0, "axis " + std::to_string(axis));
    }
    auto bad = tensor_of({2}, "int64");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("gather_elements", {data, bad}, nullptr);
                       }),
                       "gather_elements", "same rank");
}

// numpy.pad's modes on one index: the input position that output `i` reads, or -1 for the
// constant.
int64_t pad_source(int64_t i, int64_t before, int64_t n, const std::string& mode) {
    int64_t j = i - before;
    if (j >= 0 && j < n) return j;
    if (mode == "constant") return -1;
    if (mode == "edge") return j < 0 ? 0 : n - 1;
    if (mode == "wrap") return ((j % n) + n) % n;
    if (n == 1) return 0;
    while (j < 0 || j >= n) j = j < 0 ? -j : 2 * (n - 1) - j;  // reflect
    return j;
}

void check_pad(const Shape& shape, const std::vector<int64_t>& pads, const std::string& mode,
               float value = 0) {
    auto x = random_tensor(shape, 70);
    auto r = run_op("pad", {x}, make_attrs<PadAttrs>([&](auto& a) {
                        a.pad_width = pads;
                        a.mode = mode;
                        a.pad_value = value;
                    }));
    Shape out_shape;
    for (size_t d = 0; d < shape.size(); ++d) {
        out_shape.push_back(shape[d] + pads[2 * d] + pads[2 * d + 1]);
    }
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    std::vector<float> expected(num_elements(out_shape));
    for_each_index(out_shape, [&](const Shape& o) {
        Shape i(o.size());
        bool inside = true;
        for (size_t d = 0; d < o.size(); ++d) {
            i[d] = pad_source(o[d], pads[2 * d], shape[d], mode);
            inside = inside && i[d] >= 0;
        }
        expected[offset_of(o, out_shape)] = inside ? x.data<float>()[offset_of(i, shape)] : value;
    });
    expect_close(r.outputs[0], expected, 0, 0, mode);
}

TEST(Pad, Modes) {
    check_pad({1, 3, 5, 7}, {0, 0, 0, 0, 1, 2, 3, 1}, "constant", 0.5f);
    check_pad({3, 4}, {2, 3, 3, 2}, "reflect");
    check_pad({3, 4}, {5, 6, 7, 8}, "reflect");  // wider than the axis: repeated reflection
    check_pad({1, 4}, {1, 2, 0, 0}, "reflect");  // reflecting one element
    check_pad({3, 4}, {2, 1, 0, 5}, "edge");
    check_pad({3, 4}, {4, 1, 2, 7}, "wrap");
    check_pad({5, 6}, {-1, 2, 1, -2}, "constant", -1.0f);  // negative pads crop
}

TEST(Pad, Errors) {
    auto x = random_tensor({3, 4}, 1);
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("pad", {x}, make_attrs<PadAttrs>([](auto& a) { a.pad_width = {1, 1}; }));
        }),
        "pad", "pad_width has 2 entries", "needs 4");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("pad", {x}, make_attrs<PadAttrs>([](auto& a) {
                                             a.pad_width = {1, 1, 1, 1};
                                             a.mode = "symmetric";
                                         }));
                       }),
                       "pad", "\"symmetric\"");
}

}  // namespace
}  // namespace anvil::op_testing
