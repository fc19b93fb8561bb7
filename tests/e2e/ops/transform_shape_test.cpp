// Layout ops (ops/transform_shape.cpp) against naive index-mapping references, at odd shapes,
// and their type-rule errors.
#include <gtest/gtest.h>

#include "op_runner.h"
#include "ops/transform.h"

namespace anvil::op_testing {
namespace {

using ops::ConcatenateAttrs;
using ops::DepthToSpaceAttrs;
using ops::ExpandDimsAttrs;
using ops::FlattenAttrs;
using ops::ReshapeAttrs;
using ops::SpaceToDepthAttrs;
using ops::SplitAttrs;
using ops::SqueezeAttrs;
using ops::TransposeAttrs;

// The output must hold the input's elements in row-major order (reshape-like ops).
void expect_same_elements(const OpResult& r, const runtime::NDArray& x, const Shape& shape) {
    ASSERT_EQ(shape_of(r.outputs[0]), shape);
    std::vector<float> expected(x.data<float>(), x.data<float>() + x.num_elements());
    expect_close(r.outputs[0], expected, 0, 0);
}

TEST(Reshape, InferAndCopy) {
    auto x = random_tensor({2, 3, 5, 7}, 1);
    auto r = run_op("reshape", {x}, make_attrs<ReshapeAttrs>([](auto& a) {
                        a.newshape = {0, -1, 7};
                    }));
    expect_same_elements(r, x, {2, 15, 7});
    r = run_op("reshape", {x}, make_attrs<ReshapeAttrs>([](auto& a) { a.newshape = {-1}; }));
    expect_same_elements(r, x, {210});
    r = run_op("reshape", {x}, make_attrs<ReshapeAttrs>([](auto& a) {
                   a.newshape = {5, 0, 14};  // 0 copies input dimension 1 (3)
               }));
    expect_same_elements(r, x, {5, 3, 14});
}

TEST(Reshape, AllowZeroKeepsZeroAsAValue) {
    auto x = random_tensor({3, 4}, 2);
    auto t = infer_op_type("reshape", {x}, make_attrs<ReshapeAttrs>([](auto& a) {
                               a.newshape = {0, 4};
                           }));
    EXPECT_EQ(graph::type_str(t), "Tensor[(3, 4), float32]");
    std::string m = user_error_of([&] {
        infer_op_type("reshape", {x}, make_attrs<ReshapeAttrs>([](auto& a) {
                          a.newshape = {0, 4};
                          a.allowzero = true;
                      }));
    });
    EXPECT_MESSAGE_HAS(m, "reshape", "12 elements", "0 elements");
}

TEST(Reshape, Errors) {
    auto x = random_tensor({2, 3, 5}, 3);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("reshape", {x}, make_attrs<ReshapeAttrs>([](auto& a) {
                                             a.newshape = {4, 7};
                                         }));
                       }),
                       "node 'node_0'", "reshape", "(2, 3, 5) (30 elements)", "28 elements");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("reshape", {x}, make_attrs<ReshapeAttrs>([](auto& a) {
                                             a.newshape = {-1, 4};
                                         }));
                       }),
                       "reshape", "-1");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("reshape", {x}, make_attrs<ReshapeAttrs>([](auto& a) {
                                             a.newshape = {-1, -1};
                                         }));
                       }),
                       "reshape", "at most one");
}

TEST(Flatten, Axes) {
    auto x = random_tensor({2, 3, 5, 7}, 4);
    for (int64_t axis : {0, 1, 2, -1, 4}) {
        auto r = run_op("flatten", {x}, make_attrs<FlattenAttrs>([&](auto& a) { a.axis = axis; }));
        int64_t k = axis < 0 ? axis + 4 : axis;
        Shape s = {1, 1};
        for (int64_t d = 0; d < 4; ++d) s[d < k ? 0 : 1] *= shape_of(x)[d];
        expect_same_elements(r, x, s);
    }
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("flatten", {x},
                                         make_attrs<FlattenAttrs>([](auto& a) { a.axis = 5; }));
                       }),
                       "flatten", "axis 5");
}

void check_transpose(const Shape& shape, const std::vector<int64_t>& axes) {
    auto x = random_tensor(shape, 5);
    auto r = run_op("transpose", {x}, make_attrs<TransposeAttrs>([&](auto& a) { a.axes = axes; }));
    std::vector<int64_t> p = axes;
    if (p.empty()) {
        for (size_t d = shape.size(); d-- > 0;) p.push_back(static_cast<int64_t>(d));
    }
    for (auto& a : p) a = a < 0 ? a + static_cast<int64_t>(shape.size()) : a;
    Shape out_shape;
    for (int64_t a : p) out_shape.push_back(shape[a]);
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    std::vector<float> expected(x.num_elements());
    for_each_index(out_shape, [&](const Shape& o) {
        Shape i(shape.size());
        for (size_t k = 0; k < p.size(); ++k) i[p[k]] = o[k];
        expected[offset_of(o, out_shape)] = x.data<float>()[offset_of(i, shape)];
    });
    expect_close(r.outputs[0], expected, 0, 0);
}

TEST(Transpose, Permutations) {
    check_transpose({3, 5, 7}, {});
    check_transpose({2, 3, 5, 7}, {0, 2, 3, 1});
    check_transpose({2, 3, 5, 7}, {0, -1, 1, -2});
    check_transpose({17, 33}, {1, 0});
    auto x = random_tensor({2, 3}, 6);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("transpose", {x}, make_attrs<TransposeAttrs>([](auto& a) {
                                             a.axes = {0, 0};
                                         }));
                       }),
                       "transpose", "twice");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("transpose", {x}, make_attrs<TransposeAttrs>([](auto& a) {
                                             a.axes = {0, 2};
                                         }));
                       }),
                       "transpose", "axes[1] 2 is out of range");
}

TEST(Squeeze, ExplicitAndAllAxes) {
    auto x = random_tensor({1, 3, 1, 5, 1}, 7);
    auto r = run_op("squeeze", {x});
    expect_same_elements(r, x, {3, 5});
    r = run_op("squeeze", {x}, make_attrs<SqueezeAttrs>([](auto& a) { a.axes = {0, -1}; }));
    expect_same_elements(r, x, {3, 1, 5});
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("squeeze", {x},
                                         make_attrs<SqueezeAttrs>([](auto& a) { a.axes = {1}; }));
                       }),
                       "squeeze", "axis 1", "has size 3, not 1");
}

TEST(ExpandDims, Positions) {
    auto x = random_tensor({3, 5}, 8);
    auto r = run_op("expand_dims", {x}, make_attrs<ExpandDimsAttrs>([](auto& a) {
                        a.axis = 1;
                        a.num_newaxis = 2;
                    }));
    expect_same_elements(r, x, {3, 1, 1, 5});
    r = run_op("expand_dims", {x}, make_attrs<ExpandDimsAttrs>([](auto& a) { a.axis = -1; }));
    expect_same_elements(r, x, {3, 5, 1});
    r = run_op("expand_dims", {x}, make_attrs<ExpandDimsAttrs>([](auto& a) { a.axis = 0; }));
    expect_same_elements(r, x, {1, 3, 5});
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("expand_dims", {x},
                                         make_attrs<ExpandDimsAttrs>([](auto& a) { a.axis = 3; }));
                       }),
                       "expand_dims", "axis 3 is out of range");
}

void check_concatenate(const std::vector<Shape>& shapes, int64_t axis) {
    std::vector<runtime::NDArray> inputs;
    for (size_t k = 0; k < shapes.size(); ++k) {
        inputs.push_back(random_tensor(shapes[k], 10 + static_cast<uint32_t>(k)));
    }
    auto r = run_op("concatenate", inputs,
                    make_attrs<ConcatenateAttrs>([&](auto& a) { a.axis = axis; }));
    size_t rank = shapes[0].size();
    int64_t ax = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
    Shape out_shape = shapes[0];
    out_shape[ax] = 0;
    for (const auto& s : shapes) out_shape[ax] += s[ax];
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    std::vector<float> expected(num_elements(out_shape));
    for_each_index(out_shape, [&](const Shape& o) {
        Shape i = o;
        size_t k = 0;
        while (i[ax] >= shapes[k][ax]) i[ax] -= shapes[k++][ax];
        expected[offset_of(o, out_shape)] = inputs[k].data<float>()[offset_of(i, shapes[k])];
    });
    expect_close(r.outputs[0], expected, 0, 0);
}

TEST(Concatenate, Axes) {
    check_concatenate({{2, 3, 5}, {2, 4, 5}, {2, 1, 5}}, 1);
    check_concatenate({{3, 7}, {3, 9}}, -1);
    check_concatenate({{3, 7}, {5, 7}, {1, 7}, {2, 7}}, 0);
    check_concatenate({{1, 17, 3, 3}}, 1);
}

TEST(Concatenate, Errors) {
    auto a = random_tensor({2, 3}, 1), b = random_tensor({2, 3, 1}, 2),
         c = random_tensor({4, 3}, 3);
    auto attrs = make_attrs<ConcatenateAttrs>([](auto& x) { x.axis = 1; });
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("concatenate", {a, b}, attrs);
                       }),
                       "concatenate", "input 1 (2, 3, 1) has 3 dimensions", "has 2");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("concatenate", {a, c}, attrs);
                       }),
                       "concatenate", "differs from input 0", "axis 0");
    auto i = tensor_of({2, 3}, "int32");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("concatenate", {a, i}, attrs);
                       }),
                       "concatenate", "int32");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type(
                               "concatenate", {a, a},
                               make_attrs<ConcatenateAttrs>([](auto& x) { x.axis = -3; }));
                       }),
                       "concatenate", "axis -3");
}

void check_split(const Shape& shape, int64_t axis, const std::vector<int64_t>& indices,
                 int64_t sections, const std::vector<int64_t>& sizes) {
    auto x = random_tensor(shape, 20);
    auto r = run_op("split", {x}, make_attrs<SplitAttrs>([&](auto& a) {
                        a.axis = axis;
                        a.indices = indices;
                        a.sections = sections;
                    }));
    ASSERT_EQ(r.outputs.size(), sizes.size());
    int64_t ax = axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis;
    int64_t begin = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
        Shape part = shape;
        part[ax] = sizes[k];
        ASSERT_EQ(shape_of(r.outputs[k]), part);
        std::vector<float> expected(num_elements(part));
        for_each_index(part, [&](const Shape& o) {
            Shape i = o;
            i[ax] += begin;
            expected[offset_of(o, part)] = x.data<float>()[offset_of(i, shape)];
        });
        expect_close(r.outputs[k], expected, 0, 0, "part " + std::to_string(k));
        begin += sizes[k];
    }
}

TEST(Split, IndicesAndSections) {
    check_split({4, 10, 3}, 1, {2, 7}, 0, {2, 5, 3});
    check_split({4, 9}, -1, {}, 3, {3, 3, 3});
    check_split({7, 5}, 0, {}, 3, {3, 3, 1});  // ONNX Split-18: the last part is smaller
    check_split({6, 5}, 1, {1}, 0, {1, 4});
}

TEST(Split, Errors) {
    auto x = random_tensor({4, 9}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("split", {x}, make_attrs<SplitAttrs>([](auto& a) {
                                             a.axis = 1;
                                             a.indices = {5, 3};
                                         }));
                       }),
                       "split", "indices[1] = 3");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("split", {x},
                                         make_attrs<SplitAttrs>([](auto& a) { a.axis = 0; }));
                       }),
                       "split", "sections is 0");
    // Empty parts are tensors with a zero dimension.
    graph::Type parts = infer_op_type("split", {x}, make_attrs<SplitAttrs>([](auto& a) {
                                          a.axis = 1;
                                          a.indices = {0, 9};
                                      }));
    EXPECT_EQ(graph::type_str(parts),
              "(Tensor[(4, 0), float32], Tensor[(4, 9), float32], "
              "Tensor[(4, 0), float32])");
}

TEST(BroadcastTo, OnnxExpand) {
    auto x = random_tensor({3, 1, 5}, 30);
    auto r = run_op("broadcast_to", {x}, make_attrs<ops::BroadcastToAttrs>([](auto& a) {
                        a.shape = {2, 1, 4, 1};  // bidirectional: 1s keep the input's dims
                    }));
    Shape out_shape = {2, 3, 4, 5};
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    std::vector<float> expected(num_elements(out_shape));
    for_each_index(out_shape, [&](const Shape& o) {
        expected[offset_of(o, out_shape)] = x.data<float>()[offset_of({o[1], 0, o[3]}, {3, 1, 5})];
    });
    expect_close(r.outputs[0], expected, 0, 0);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("broadcast_to", {x},
                                         make_attrs<ops::BroadcastToAttrs>([](auto& a) {
                                             a.shape = {4, 6};
                                         }));
                       }),
                       "broadcast_to", "cannot be broadcast");
}

TEST(Tile, Reps) {
    auto x = random_tensor({2, 3}, 31);
    auto r = run_op("tile", {x}, make_attrs<ops::TileAttrs>([](auto& a) { a.reps = {2, 1, 3}; }));
    Shape out_shape = {2, 2, 9};
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    std::vector<float> expected(num_elements(out_shape));
    for_each_index(out_shape, [&](const Shape& o) {
        expected[offset_of(o, out_shape)] =
            x.data<float>()[offset_of({o[1] % 2, o[2] % 3}, {2, 3})];
    });
    expect_close(r.outputs[0], expected, 0, 0);
    r = run_op("tile", {x}, make_attrs<ops::TileAttrs>([](auto& a) { a.reps = {3}; }));
    ASSERT_EQ(shape_of(r.outputs[0]), (Shape{2, 9}));
}

TEST(DepthToSpace, DcrAndCrd) {
    const int64_t n = 2, c = 8, h = 3, w = 5, b = 2;
    auto x = random_tensor({n, c, h, w}, 40);
    for (const char* mode : {"DCR", "CRD"}) {
        auto r = run_op("depth_to_space", {x}, make_attrs<DepthToSpaceAttrs>([&](auto& a) {
                            a.blocksize = b;
                            a.mode = mode;
                        }));
        Shape out_shape = {n, c / (b * b), h * b, w * b};
        ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
        std::vector<float> expected(num_elements(out_shape));
        // ONNX's definition: reshape, transpose, reshape.
        for_each_index(out_shape, [&](const Shape& o) {
            int64_t bh = o[2] % b, bw = o[3] % b, cc = o[1];
            int64_t ci = std::string(mode) == "DCR" ? (bh * b + bw) * (c / (b * b)) + cc
                                                    : cc * b * b + bh * b + bw;
            expected[offset_of(o, out_shape)] =
                x.data<float>()[offset_of({o[0], ci, o[2] / b, o[3] / b}, {n, c, h, w})];
        });
        expect_close(r.outputs[0], expected, 0, 0, mode);
    }
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type(
                               "depth_to_space", {x},
                               make_attrs<DepthToSpaceAttrs>([](auto& a) { a.blocksize = 3; }));
                       }),
                       "depth_to_space", "channels 8", "not a multiple of 9");
}

TEST(SpaceToDepth, InvertsDepthToSpaceDcr) {
    auto x = random_tensor({2, 3, 6, 9}, 41);
    auto s2d = run_op("space_to_depth", {x},
                      make_attrs<SpaceToDepthAttrs>([](auto& a) { a.blocksize = 3; }));
    ASSERT_EQ(shape_of(s2d.outputs[0]), (Shape{2, 27, 2, 3}));
    auto back = run_op("depth_to_space", {s2d.outputs[0]},
                       make_attrs<DepthToSpaceAttrs>([](auto& a) { a.blocksize = 3; }));
    expect_same_elements(back, x, {2, 3, 6, 9});
}

}  // namespace
}  // namespace anvil::op_testing
