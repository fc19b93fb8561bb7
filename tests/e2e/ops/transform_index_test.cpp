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
}

TEST(StridedSlice, EmptyResult) {
    check_slice({7, 9}, {3}, {1}, {}, {});         // nothing of axis 0
    check_slice({7, 9}, {1000}, {1000}, {1}, {});  // begin past the end
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

// trilu keeps the k-th diagonal and above (upper) or below (lower) of the last two axes; k is a
// run-time tensor of one element.
TEST(Trilu, UpperLowerAndDiagonals) {
    Shape shape{2, 3, 5};
    auto x = random_tensor(shape, 11);
    for (bool upper : {true, false}) {
        for (int64_t k : {-4, -1, 0, 2, 7}) {
            auto kt = tensor_from<int64_t>({1}, std::vector<int64_t>{k}, "int64");
            auto r = run_op("trilu", {x, kt},
                            make_attrs<ops::TriluAttrs>([&](auto& a) { a.upper = upper; }));
            std::vector<float> ref;
            for_each_index(shape, [&](const Shape& idx) {
                int64_t diag = idx[2] - idx[1];
                bool keep = upper ? diag >= k : diag <= k;
                ref.push_back(keep ? x.data<float>()[offset_of(idx, shape)] : 0.0f);
            });
            expect_close(r.outputs[0], ref, 0, 0,
                         std::string(upper ? "upper" : "lower") + " k=" + std::to_string(k));
        }
    }
    auto scalar_k = tensor_from<int64_t>({}, std::vector<int64_t>{1}, "int64");
    auto r = run_op("trilu", {x, scalar_k}, nullptr);
    EXPECT_EQ(r.outputs[0].data<float>()[0], 0.0f);
    EXPECT_EQ(r.outputs[0].data<float>()[1], x.data<float>()[1]);
}

// gather_nd: index tuples of every length, negative indices and batch axes.
TEST(GatherND, TuplesAndBatchAxes) {
    Shape ds{3, 4, 5};
    auto data = random_tensor(ds, 12);
    struct Case {
        Shape is;
        std::vector<int64_t> iv;
        int64_t b;
    };
    const Case cases[] = {
        {{2, 1}, {2, -3}, 0},
        {{2, 2}, {0, 3, 2, -1}, 0},
        {{2, 2, 3}, {0, 0, 0, 1, 2, 3, 2, 3, 4, -1, -1, -1}, 0},
        {{3, 1}, {3, 0, 2}, 1},
        {{3, 2, 2}, {0, 4, 3, 0, 1, 1, 2, 2, 3, 3, 0, 0}, 1},
    };
    for (const auto& c : cases) {
        auto idx = tensor_from<int64_t>(c.is, c.iv, "int64");
        auto r = run_op("gather_nd", {data, idx},
                        make_attrs<ops::GatherNDAttrs>([&](auto& a) { a.batch_dims = c.b; }));
        int64_t m = c.is.back();
        Shape tuples(c.is.begin(), c.is.end() - 1);
        Shape rest(ds.begin() + c.b + m, ds.end());
        std::vector<float> ref;
        for_each_index(tuples, [&](const Shape& t) {
            Shape src(t.begin(), t.begin() + c.b);
            for (int64_t j = 0; j < m; ++j) {
                Shape ii = t;
                ii.push_back(j);
                int64_t v = c.iv[static_cast<size_t>(offset_of(ii, c.is))];
                src.push_back(v < 0 ? v + ds[c.b + j] : v);
            }
            for_each_index(rest, [&](const Shape& rr) {
                Shape full = src;
                full.insert(full.end(), rr.begin(), rr.end());
                ref.push_back(data.data<float>()[offset_of(full, ds)]);
            });
        });
        expect_close(r.outputs[0], ref, 0, 0, "indices of rank " + std::to_string(c.is.size()));
    }
}

TEST(GatherND, Errors) {
    auto data = random_tensor({3, 4}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("gather_nd", {data, tensor_of({2, 3}, "int64")}, nullptr);
                       }),
                       "node 'node_0'", "gather_nd: index tuples of 3 elements do not fit data");
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("gather_nd", {data, tensor_of({2, 1}, "float32")}, nullptr);
        }),
        "gather_nd: indices have type float32");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type(
                               "gather_nd", {data, tensor_of({2, 1}, "int64")},
                               make_attrs<ops::GatherNDAttrs>([](auto& a) { a.batch_dims = 1; }));
                       }),
                       "gather_nd: batch axis 0 has 3 elements in the data and 2 in the indices");
}

// reverse_sequence with time and batch on either of the first two axes.
TEST(ReverseSequence, BatchAndTimeAxes) {
    Shape xs{4, 3, 2};
    auto x = random_tensor(xs, 13);
    for (int64_t batch_axis : {0, 1}) {
        int64_t time_axis = 1 - batch_axis;
        std::vector<int64_t> lens =
            batch_axis == 0 ? std::vector<int64_t>{1, 3, 2, 0} : std::vector<int64_t>{4, 1, 3};
        auto lt = tensor_from<int64_t>({xs[batch_axis]}, lens, "int64");
        auto r =
            run_op("reverse_sequence", {x, lt}, make_attrs<ops::ReverseSequenceAttrs>([&](auto& a) {
                       a.batch_axis = batch_axis;
                       a.time_axis = time_axis;
                   }));
        std::vector<float> ref;
        for_each_index(xs, [&](const Shape& idx) {
            Shape src = idx;
            int64_t len = lens[static_cast<size_t>(idx[batch_axis])], t = idx[time_axis];
            if (t < len) src[time_axis] = len - 1 - t;
            ref.push_back(x.data<float>()[offset_of(src, xs)]);
        });
        expect_close(r.outputs[0], ref, 0, 0, "batch_axis " + std::to_string(batch_axis));
    }
}

TEST(ReverseSequence, Errors) {
    auto x = random_tensor({4, 3}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("reverse_sequence", {x, tensor_of({4}, "int64")}, nullptr);
                       }),
                       "node 'node_0'", "reverse_sequence: 4 sequence lengths for a batch of 3");
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("reverse_sequence", {x, tensor_of({3}, "int64")},
                          make_attrs<ops::ReverseSequenceAttrs>([](auto& a) { a.time_axis = 1; }));
        }),
        "batch_axis 1 and time_axis 1 must be 0 and 1 in some order");
}

// scatter_elements against a sequential reference (later updates overwrite earlier ones), along
// each axis, with indices smaller than the data and negative, and the add and mul reductions.
TEST(ScatterElements, AxesAndReductions) {
    Shape ds{4, 5}, is{3, 2};
    auto data = random_tensor(ds, 14);
    auto updates = random_tensor(is, 15);
    for (int64_t axis : {0, 1, -1}) {
        size_t ax = static_cast<size_t>(axis < 0 ? axis + 2 : axis);
        std::vector<int64_t> iv = {1, -1, 0, 1, 3, 1};  // duplicates along either axis
        auto idx = tensor_from<int64_t>(is, iv, "int64");
        for (const char* reduction : {"none", "add", "mul"}) {
            auto r = run_op("scatter_elements", {data, idx, updates},
                            make_attrs<ops::ScatterAttrs>([&](auto& a) {
                                a.axis = axis;
                                a.reduction = reduction;
                            }));
            std::vector<float> ref(data.data<float>(), data.data<float>() + 20);
            for_each_index(is, [&](const Shape& i) {
                Shape dst = i;
                int64_t v = iv[static_cast<size_t>(offset_of(i, is))];
                dst[ax] = v < 0 ? v + ds[ax] : v;
                float u = updates.data<float>()[offset_of(i, is)];
                float& o = ref[static_cast<size_t>(offset_of(dst, ds))];
                o = std::string(reduction) == "none"  ? u
                    : std::string(reduction) == "add" ? o + u
                                                      : o * u;
            });
            expect_close(r.outputs[0], ref, 1e-6f, 1e-6f,
                         std::string(reduction) + " axis " + std::to_string(axis));
        }
    }
}

// scatter_nd with whole-row and single-element index tuples.
TEST(ScatterND, TuplesAndReductions) {
    Shape ds{4, 3, 2};
    auto data = random_tensor(ds, 16);
    struct Case {
        Shape is;
        std::vector<int64_t> iv;
    };
    const Case cases[] = {
        {{2, 1}, {3, -4}}, {{3, 2}, {0, 1, 3, 2, 0, 1}}, {{2, 3}, {1, 1, 1, 2, 0, 0}}};
    for (const auto& c : cases) {
        int64_t m = c.is.back();
        Shape tuples(c.is.begin(), c.is.end() - 1), rest(ds.begin() + m, ds.end());
        Shape us = tuples;
        us.insert(us.end(), rest.begin(), rest.end());
        auto updates = random_tensor(us, 17);
        auto idx = tensor_from<int64_t>(c.is, c.iv, "int64");
        for (const char* reduction : {"none", "add", "mul"}) {
            auto r =
                run_op("scatter_nd", {data, idx, updates},
                       make_attrs<ops::ScatterAttrs>([&](auto& a) { a.reduction = reduction; }));
            std::vector<float> ref(data.data<float>(), data.data<float>() + 24);
            for_each_index(tuples, [&](const Shape& t) {
                Shape dst;
                for (int64_t j = 0; j < m; ++j) {
                    Shape ii = t;
                    ii.push_back(j);
                    int64_t v = c.iv[static_cast<size_t>(offset_of(ii, c.is))];
                    dst.push_back(v < 0 ? v + ds[j] : v);
                }
                for_each_index(rest, [&](const Shape& rr) {
                    Shape full = dst, ui = t;
                    full.insert(full.end(), rr.begin(), rr.end());
                    ui.insert(ui.end(), rr.begin(), rr.end());
                    float u = updates.data<float>()[offset_of(ui, us)];
                    float& o = ref[static_cast<size_t>(offset_of(full, ds))];
                    o = std::string(reduction) == "none"  ? u
                        : std::string(reduction) == "add" ? o + u
                                                          : o * u;
                });
            });
            expect_close(r.outputs[0], ref, 1e-6f, 1e-6f,
                         std::string(reduction) + " m=" + std::to_string(m));
        }
    }
}

TEST(Scatter, Errors) {
    auto data = random_tensor({4, 5}, 1);
    auto idx = tensor_of({3, 2}, "int64");
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("scatter_elements", {data, idx, random_tensor({2, 2}, 2)}, nullptr);
        }),
        "node 'node_0'", "scatter_elements: the updates have shape (2, 2), expected (3, 2)");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type(
                               "scatter_elements", {data, idx, random_tensor({3, 2}, 2)},
                               make_attrs<ops::ScatterAttrs>([](auto& a) { a.reduction = "max"; }));
                       }),
                       "scatter_elements: reduction 'max' is not supported");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("scatter_nd",
                                         {data, tensor_of({2, 3}, "int64"), random_tensor({2}, 2)},
                                         nullptr);
                       }),
                       "scatter_nd: index tuples (2, 3) do not fit data (4, 5)");
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("scatter_nd",
                          {data, tensor_of({2, 1}, "int64"), random_tensor({2, 4}, 2)}, nullptr);
        }),
        "scatter_nd: the updates have shape (2, 4), expected (2, 5)");
}

TEST(Trilu, Errors) {
    auto k = tensor_from<int64_t>({1}, std::vector<int64_t>{0}, "int64");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("trilu", {random_tensor({5}, 1), k}, nullptr);
                       }),
                       "node 'node_0'", "trilu: the input must have rank 2 or more");
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("trilu", {random_tensor({3, 3}, 1), tensor_of({2}, "int64")}, nullptr);
        }),
        "trilu: k must have one element");
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("trilu", {random_tensor({3, 3}, 1), tensor_of({1}, "float32")}, nullptr);
        }),
        "trilu: k must be an integer tensor, got float32");
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
    auto r = run_op("nn.pad", {x}, make_attrs<PadAttrs>([&](auto& a) {
                        a.pad_width = pads;
                        a.pad_mode = mode;
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
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("nn.pad", {x}, make_attrs<PadAttrs>([](auto& a) {
                                             a.pad_width = {1, 1};
                                         }));
                       }),
                       "pad", "pad_width has 2 entries", "needs 4");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("nn.pad", {x}, make_attrs<PadAttrs>([](auto& a) {
                                             a.pad_width = {1, 1, 1, 1};
                                             a.pad_mode = "symmetric";
                                         }));
                       }),
                       "pad", "\"symmetric\"");
    auto two = random_tensor({2}, 2);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("nn.pad", {x, two}, make_attrs<PadAttrs>([](auto& a) {
                                             a.pad_width = {1, 1, 1, 1};
                                         }));
                       }),
                       "nn.pad: the constant must be one element (constant mode)",
                       "Tensor[(2,), float32]");
}

TEST(Pad, ConstantOperandOfAnotherTypeIsConverted) {
    // TVM's nn.pad(%q, 114f, ...) pads uint8 data with a float32 constant.
    runtime::NDArray x = runtime::NDArray::empty({1, 2}, runtime::dl_dtype_from_string("uint8"));
    x.data<uint8_t>()[0] = 7;
    x.data<uint8_t>()[1] = 9;
    runtime::NDArray v = runtime::NDArray::empty({}, runtime::dl_dtype_from_string("float32"));
    *v.data<float>() = 114.0f;
    auto r = run_op("nn.pad", {x, v}, make_attrs<PadAttrs>([](auto& a) {
                        a.pad_width = {0, 0, 1, 2};
                    }));
    ASSERT_EQ(r.outputs[0].dtype().code, kDLUInt);
    const uint8_t* y = r.outputs[0].data<uint8_t>();
    EXPECT_EQ(std::vector<int>(y, y + 5), (std::vector<int>{114, 7, 9, 114, 114}));
}

}  // namespace
}  // namespace anvil::op_testing
