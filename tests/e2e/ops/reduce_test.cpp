// Reductions (ops/reduce.cpp) against naive references: every reducer over leading, middle,
// trailing and all axes, keepdims, exclude, and shapes big enough for the vectorized and
// parallel schedule paths; argmax/argmin with ties; type-rule errors.
#include "ops/reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "op_runner.h"
#include "tir/printer.h"

namespace anvil::op_testing {
namespace {

using ops::ArgReduceAttrs;
using ops::ReduceAttrs;

double init_of(const std::string& op) {
    if (op == "max") return -std::numeric_limits<double>::infinity();
    if (op == "min") return std::numeric_limits<double>::infinity();
    if (op == "prod") return 1;
    return 0;
}

double combine(const std::string& op, double a, double b) {
    if (op == "max") return std::max(a, b);
    if (op == "min") return std::min(a, b);
    if (op == "prod") return a * b;
    return a + b;
}

void check_reduce(const std::string& op, const Shape& shape, const std::vector<int64_t>& axes,
                  bool keepdims, bool exclude = false) {
    // prod of many values leaves float range unless they stay near 1.
    auto x = op == "prod" ? random_tensor(shape, 80, 0.9f, 1.1f) : random_tensor(shape, 80);
    auto r = run_op(op, {x}, make_attrs<ReduceAttrs>([&](auto& a) {
                        a.axes = axes;
                        a.keepdims = keepdims;
                        a.exclude = exclude;
                    }));
    std::vector<bool> reduced(shape.size(), axes.empty());
    for (int64_t a : axes) reduced[a < 0 ? a + static_cast<int64_t>(shape.size()) : a] = true;
    if (exclude && !axes.empty()) reduced.flip();
    Shape out_shape, kept_shape;  // kept_shape: keepdims layout, for indexing
    int64_t count = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
        kept_shape.push_back(reduced[d] ? 1 : shape[d]);
        if (reduced[d]) count *= shape[d];
        if (!reduced[d] || keepdims) out_shape.push_back(reduced[d] ? 1 : shape[d]);
    }
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    std::vector<double> acc(num_elements(kept_shape), init_of(op));
    for_each_index(shape, [&](const Shape& i) {
        Shape o = i;
        for (size_t d = 0; d < i.size(); ++d) o[d] = reduced[d] ? 0 : i[d];
        double& a = acc[offset_of(o, kept_shape)];
        a = combine(op, a, x.data<float>()[offset_of(i, shape)]);
    });
    std::vector<float> expected;
    for (double v : acc) expected.push_back(static_cast<float>(op == "mean" ? v / count : v));
    expect_close(r.outputs[0], expected, 1e-5f, 2e-5f, op);
}

TEST(Reduce, EveryReducerAndAxisSet) {
    for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
        SCOPED_TRACE(op);
        check_reduce(op, {3, 5, 7}, {1}, false);
        check_reduce(op, {3, 5, 7}, {0, 2}, true);
        check_reduce(op, {3, 5, 7}, {-1}, true);
        check_reduce(op, {3, 5, 7}, {}, true);  // every axis
        check_reduce(op, {3, 5, 7}, {1}, false, /*exclude=*/true);
    }
}

TEST(Reduce, ToAScalar) {
    check_reduce("sum", {4, 9}, {}, false);
    check_reduce("max", {13}, {0}, false);
}

TEST(Reduce, ScheduledShapes) {
    // Global average pooling (NCHW, trailing axes reduced): parallel over N*C.
    check_reduce("mean", {2, 96, 7, 7}, {2, 3}, true);
    check_reduce("mean", {1, 1280, 7, 7}, {-2, -1}, false);
    // Leading axis reduced, trailing axis contiguous: vectorized, parallel.
    check_reduce("sum", {37, 1000}, {0}, false);
    check_reduce("max", {5, 33, 67}, {1}, true);
    // Transformer-style reduction over the hidden size.
    check_reduce("mean", {3, 17, 768}, {-1}, true);
}

TEST(Reduce, Errors) {
    auto x = random_tensor({3, 4}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("sum", {x},
                                         make_attrs<ReduceAttrs>([](auto& a) { a.axes = {2}; }));
                       }),
                       "node 'node_0'", "sum", "axes[0] 2 is out of range", "2 dimensions");
    EXPECT_MESSAGE_HAS(
        user_error_of([&] {
            infer_op_type("mean", {x}, make_attrs<ReduceAttrs>([](auto& a) { a.axes = {1, -1}; }));
        }),
        "mean", "twice");
    auto b = tensor_of({3}, "bool");
    EXPECT_MESSAGE_HAS(user_error_of([&] { infer_op_type("max", {b}, nullptr); }), "max", "bool");
}

void check_arg_reduce(const std::string& op, const runtime::NDArray& x, int64_t axis, bool keepdims,
                      bool last) {
    Shape shape = shape_of(x);
    auto r = run_op(op, {x}, make_attrs<ArgReduceAttrs>([&](auto& a) {
                        a.axis = axis;
                        a.keepdims = keepdims;
                        a.select_last_index = last;
                    }));
    int64_t ax = axis < 0 ? axis + static_cast<int64_t>(shape.size()) : axis;
    Shape out_shape;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (static_cast<int64_t>(d) != ax || keepdims) {
            out_shape.push_back(static_cast<int64_t>(d) == ax ? 1 : shape[d]);
        }
    }
    ASSERT_EQ(shape_of(r.outputs[0]), out_shape);
    Shape kept = shape;
    kept[ax] = 1;
    const int64_t* got = r.outputs[0].data<int64_t>();
    for_each_index(kept, [&](const Shape& o) {
        int64_t best = 0;
        Shape i = o;
        for (int64_t k = 0; k < shape[ax]; ++k) {
            i[ax] = k;
            float v = x.data<float>()[offset_of(i, shape)];
            i[ax] = best;
            float b = x.data<float>()[offset_of(i, shape)];
            bool better = op == "argmax" ? v > b : v < b;
            if (better || (last && v == b)) best = k;
        }
        EXPECT_EQ(got[offset_of(o, kept)], best) << op << " at output " << offset_of(o, kept);
    });
}

TEST(ArgReduce, FirstAndLastIndex) {
    auto x = random_tensor({4, 9, 5}, 90);
    // Ties: quantize so that equal values are common.
    for (int64_t i = 0; i < x.num_elements(); ++i) {
        x.data<float>()[i] = std::round(x.data<float>()[i] * 2);
    }
    for (const char* op : {"argmax", "argmin"}) {
        for (bool last : {false, true}) {
            SCOPED_TRACE(std::string(op) + (last ? " last" : " first"));
            check_arg_reduce(op, x, 1, true, last);
            check_arg_reduce(op, x, -1, false, last);
            check_arg_reduce(op, x, 0, false, last);
        }
    }
    auto big = random_tensor({8, 1000}, 91);  // classifier logits
    check_arg_reduce("argmax", big, -1, false, false);
    auto wide = random_tensor({3, 50, 40}, 92);  // vectorized and parallel
    check_arg_reduce("argmin", wide, 1, true, false);
    check_arg_reduce("argmax", wide, -1, true, true);
}

TEST(ArgReduce, Errors) {
    auto x = random_tensor({3, 4}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("argmax", {x},
                                         make_attrs<ArgReduceAttrs>([](auto& a) { a.axis = -3; }));
                       }),
                       "argmax", "axis -3 is out of range");
    auto t = infer_op_type("argmin", {x}, nullptr);
    EXPECT_EQ(graph::type_str(t), "Tensor[(1, 4), int64]");
}

// cumsum against a running sum along each axis, in all four exclusive/reverse combinations.
TEST(Cumsum, AxesExclusiveReverse) {
    Shape shape{3, 4, 5};
    auto x = random_tensor(shape, 7);
    for (int64_t axis : {0, 1, 2, -1}) {
        for (bool exclusive : {false, true}) {
            for (bool reverse : {false, true}) {
                auto r = run_op("cumsum", {x}, make_attrs<ops::CumsumAttrs>([&](auto& a) {
                                    a.axis = axis;
                                    a.exclusive = exclusive;
                                    a.reverse = reverse;
                                }));
                size_t ax = static_cast<size_t>(axis < 0 ? axis + 3 : axis);
                std::vector<float> ref;
                for_each_index(shape, [&](const Shape& idx) {
                    float acc = 0;
                    for (int64_t k = 0; k < shape[ax]; ++k) {
                        bool in = reverse ? (exclusive ? k > idx[ax] : k >= idx[ax])
                                          : (exclusive ? k < idx[ax] : k <= idx[ax]);
                        Shape src = idx;
                        src[ax] = k;
                        if (in) acc += x.data<float>()[offset_of(src, shape)];
                    }
                    ref.push_back(acc);
                });
                expect_close(r.outputs[0], ref, 1e-5f, 1e-5f,
                             "axis " + std::to_string(axis) + (exclusive ? " exclusive" : "") +
                                 (reverse ? " reverse" : ""));
            }
        }
    }
    auto i = tensor_from<int64_t>({4}, std::vector<int64_t>{1, 2, 3, 4}, "int64");
    auto ri = run_op("cumsum", {i}, nullptr);
    EXPECT_EQ(ri.outputs[0].data<int64_t>()[3], 10);
}

// einsum against explicit loops: matmul, batch diagonal with an ellipsis, implicit output,
// transpose and a three-operand contraction.
TEST(Einsum, Equations) {
    auto a = random_tensor({3, 4}, 21), b = random_tensor({4, 5}, 22), c = random_tensor({5}, 23);
    auto at = [](const runtime::NDArray& t, int64_t i) { return t.data<float>()[i]; };
    auto mm = run_op("einsum", {a, b},
                     make_attrs<ops::EinsumAttrs>([](auto& e) { e.equation = "ij,jk->ik"; }));
    std::vector<float> ref;
    for (int64_t i = 0; i < 3; ++i) {
        for (int64_t k = 0; k < 5; ++k) {
            float acc = 0;
            for (int64_t j = 0; j < 4; ++j) acc += at(a, i * 4 + j) * at(b, j * 5 + k);
            ref.push_back(acc);
        }
    }
    expect_close(mm.outputs[0], ref, 1e-5f, 1e-5f, "ij,jk->ik");
    // Implicit output: the letters used once, sorted ("ik").
    auto implicit = run_op("einsum", {a, b},
                           make_attrs<ops::EinsumAttrs>([](auto& e) { e.equation = "ij, jk"; }));
    expect_close(implicit.outputs[0], ref, 1e-5f, 1e-5f, "ij,jk");
    auto three = run_op("einsum", {a, b, c},
                        make_attrs<ops::EinsumAttrs>([](auto& e) { e.equation = "ij,jk,k->i"; }));
    std::vector<float> ref3;
    for (int64_t i = 0; i < 3; ++i) {
        float acc = 0;
        for (int64_t k = 0; k < 5; ++k) acc += ref[static_cast<size_t>(i * 5 + k)] * at(c, k);
        ref3.push_back(acc);
    }
    expect_close(three.outputs[0], ref3, 1e-5f, 1e-5f, "ij,jk,k->i");
    auto d = random_tensor({2, 3, 3}, 24);
    auto diag = run_op("einsum", {d},
                       make_attrs<ops::EinsumAttrs>([](auto& e) { e.equation = "...ii->...i"; }));
    std::vector<float> refd;
    for (int64_t n = 0; n < 2; ++n) {
        for (int64_t i = 0; i < 3; ++i) refd.push_back(at(d, n * 9 + i * 3 + i));
    }
    expect_close(diag.outputs[0], refd, 0, 0, "...ii->...i");
    auto tr =
        run_op("einsum", {a}, make_attrs<ops::EinsumAttrs>([](auto& e) { e.equation = "ij->ji"; }));
    EXPECT_EQ(graph::type_str(tr.type), "Tensor[(4, 3), float32]");
    EXPECT_EQ(tr.outputs[0].data<float>()[1], at(a, 4));
}

TEST(Einsum, Errors) {
    auto a = random_tensor({3, 4}, 1), b = random_tensor({5, 2}, 2);
    auto eq = [](const char* s) {
        return make_attrs<ops::EinsumAttrs>([s](auto& e) { e.equation = s; });
    };
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("einsum", {a, b}, eq("ij,jk->ik"));
                       }),
                       "node 'node_0'", "einsum: the axes labelled j have different lengths");
    EXPECT_MESSAGE_HAS(user_error_of([&] { infer_op_type("einsum", {a}, eq("ij,jk->ik")); }),
                       "einsum: equation 'ij,jk->ik' has 2 operands, the op 1 inputs");
    EXPECT_MESSAGE_HAS(user_error_of([&] { infer_op_type("einsum", {a}, eq("ijk->i")); }),
                       "einsum: operand 0 'ijk' does not match its rank 2");
    EXPECT_MESSAGE_HAS(user_error_of([&] { infer_op_type("einsum", {a}, eq("ij->iz")); }),
                       "einsum: the output label 'z' names no input axis");
}

TEST(Cumsum, Errors) {
    auto x = random_tensor({3, 4}, 1);
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("cumsum", {x},
                                         make_attrs<ops::CumsumAttrs>([](auto& a) { a.axis = 2; }));
                       }),
                       "node 'node_0'", "cumsum", "axis 2 is out of range");
    EXPECT_MESSAGE_HAS(
        user_error_of([&] { infer_op_type("cumsum", {tensor_of({3}, "bool")}, nullptr); }),
        "cumsum of a bool tensor");
}

}  // namespace
}  // namespace anvil::op_testing

namespace anvil::op_testing {
namespace {

// The loop IR of op `name` scheduled by its own schedule for the host.
std::string lowered(const std::string& name, const Shape& shape, Ref<graph::Attrs> attrs) {
    const graph::Op& op = ops::get_op(name);
    auto type = graph::make_tensor_type(shape, DataType::float32());
    te::Tensor x = te::placeholder(ops::te_shape(type), DataType::float32(), "x");
    auto out_type = op.infer_type(op, {type}, *attrs, {});
    auto outs = op.compute({x}, *attrs, out_type);
    te::Schedule s = te::create_schedule(outs);
    op.schedule(s, outs[0], outs, te::ScheduleContext{make_lower_context(Target::host())});
    std::vector<te::Tensor> args{x};
    args.insert(args.end(), outs.begin(), outs.end());
    return tir::print(driver::lower(s, args, name, Target::host()));
}

TEST(ReduceSchedule, VectorizesContiguousAxisAndParallelizes) {
    std::string ir =
        lowered("sum", {37, 1000}, make_attrs<ReduceAttrs>([](auto& a) { a.axes = {0}; }));
    EXPECT_NE(ir.find("parallel"), std::string::npos) << ir;
    EXPECT_NE(ir.find("ramp"), std::string::npos) << ir;
}

TEST(ReduceSchedule, InlinesMeanDivisionIntoAFusedTail) {
    // mean over the last axis, then an elementwise tail, as lower_graph composes a fused group.
    const graph::Op& op = ops::get_op("mean");
    auto attrs = make_attrs<ReduceAttrs>([](auto& a) { a.axes = {-1}; });
    auto type = graph::make_tensor_type(Shape{6, 35}, DataType::float32());
    te::Tensor x = te::placeholder(ops::te_shape(type), DataType::float32(), "x");
    auto mean = op.compute({x}, *attrs, op.infer_type(op, {type}, *attrs, {}))[0];
    te::Tensor tail = te::compute(
        mean.shape(), [&](PrimExpr i) { return mean(i) * 2.0f; }, "tail");
    te::Schedule s = te::create_schedule({tail});
    op.schedule(s, mean, {tail}, te::ScheduleContext{make_lower_context(Target::host())});
    std::string ir = tir::print(driver::lower(s, {x, tail}, "mean_tail", Target::host()));
    EXPECT_EQ(ir.find("allocate mean:"), std::string::npos) << ir;
    auto in = random_tensor({6, 35}, 3), out = zeros({6});
    build_and_run(s, {x, tail}, {in, out});
    for (int64_t r = 0; r < 6; ++r) {
        double sum = 0;
        for (int64_t c = 0; c < 35; ++c) sum += in.data<float>()[r * 35 + c];
        EXPECT_NEAR(out.data<float>()[r], 2 * sum / 35, 1e-5);
    }
}

TEST(ReduceSchedule, ParallelizesGlobalPooling) {
    std::string ir = lowered("mean", {1, 1280, 7, 7}, make_attrs<ReduceAttrs>([](auto& a) {
                                 a.axes = {2, 3};
                                 a.keepdims = true;
                             }));
    EXPECT_NE(ir.find("parallel"), std::string::npos) << ir;
}

}  // namespace
}  // namespace anvil::op_testing
