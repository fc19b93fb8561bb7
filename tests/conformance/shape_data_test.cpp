// Symbolic dimensions used as data: Shape → Gather (a 0-D shape value), Size and ReduceProd of a
// Shape, with a symbolic dimension, feeding arithmetic, comparisons and outputs. The VM computes
// them from its shape slots at run time (a 0-D shape_tensor), so one compilation serves every
// size; each model runs at several sizes against a direct computation.
#include <gtest/gtest.h>

#include <cmath>

#include "conformance/node_model.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/structural_equal.h"
#include "ops/op_table.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::ModelBuilder;
using runtime::NDArray;
using testing::array;
using testing::CompiledNodeModel;
using testing::random_array;
using testing::shape_of;

// x: [n, 3] float (or `dtype`); g = Shape(x)[0], a 0-D int64 of n.
ModelBuilder with_length(int dtype = ::onnx::TensorProto::FLOAT) {
    ModelBuilder b(13);
    b.input("x", {4, 3}, dtype, {"n"});
    b.node("Shape", {"x"}, {"s"}, "shape_1");
    b.int64_init("zero", {}, {0});
    b.node("Gather", {"s", "zero"}, {"g"}, "gather_2");
    return b;
}

void cast(ModelBuilder& b, const std::string& in, const std::string& out, int to) {
    ModelBuilder::attr_int(b.node("Cast", {in}, {out}, "cast_" + out), "to", to);
}

// Attention's scaling by the square root of a run-time length.
TEST(SymbolicShapeData, ScaleByTheSquareRootOfALength) {
    ModelBuilder b = with_length();
    cast(b, "g", "gf", ::onnx::TensorProto::FLOAT);
    b.node("Sqrt", {"gf"}, {"r"}, "sqrt_3");
    b.node("Div", {"x", "r"}, {"y"}, "div_4");
    b.output("y");
    CompiledNodeModel m(b.import());
    for (int64_t n : {1, 4, 7}) {
        NDArray x = random_array({n, 3}, static_cast<unsigned>(n));
        NDArray y = m.run({x})[0];
        ASSERT_EQ(shape_of(y), shape_of(x));
        std::vector<float> xs = x.to_vector<float>(), ys = y.to_vector<float>();
        for (size_t i = 0; i < xs.size(); ++i) {
            EXPECT_FLOAT_EQ(ys[i], xs[i] / std::sqrt(static_cast<float>(n))) << "n=" << n;
        }
    }
}

// Integer arithmetic: x + n (a 0-D operand broadcast), Shape(x) * n, and 2n as an output.
TEST(SymbolicShapeData, IntegerArithmeticAndOutputs) {
    ModelBuilder b = with_length(::onnx::TensorProto::INT64);
    b.node("Add", {"x", "g"}, {"y"}, "add_3");
    b.node("Mul", {"s", "g"}, {"z"}, "mul_4");
    b.int64_init("two", {}, {2});
    b.node("Mul", {"g", "two"}, {"twice"}, "mul_5");
    b.output("y");
    b.output("z");
    b.output("twice");
    CompiledNodeModel m(b.import());
    // The 0-D shape value's text round-trips.
    std::string text = graph::print(m.imported());
    EXPECT_NE(text.find("shape_tensor(%x, values=(n,)) /* ty=Tensor[(), int64] */"),
              std::string::npos)
        << text;
    EXPECT_TRUE(graph::structural_equal(graph::parse_module(text, ops::op_table()).main(),
                                        m.imported().main()))
        << text;
    for (int64_t n : {2, 5}) {
        std::vector<int64_t> xs(static_cast<size_t>(n * 3));
        for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<int64_t>(i) - 4;
        std::vector<NDArray> out = m.run({array({n, 3}, xs, "int64")});
        ASSERT_EQ(out.size(), 3u);
        std::vector<int64_t> want = xs;
        for (int64_t& v : want) v += n;
        EXPECT_EQ(out[0].to_vector<int64_t>(), want);
        EXPECT_EQ(out[1].to_vector<int64_t>(), (std::vector<int64_t>{n * n, 3 * n}));
        EXPECT_EQ(shape_of(out[2]), std::vector<int64_t>{});
        EXPECT_EQ(out[2].to_vector<int64_t>(), std::vector<int64_t>{2 * n});
    }
}

// A mean over every element: ReduceSum / Size, and the same with ReduceProd(Shape) as the count.
TEST(SymbolicShapeData, SizeAndProductOfTheShapeCountElements) {
    ModelBuilder b(13);
    b.input("x", {4, 3}, ::onnx::TensorProto::FLOAT, {"n", "m"});
    b.node("Size", {"x"}, {"size"}, "size_1");
    b.node("Shape", {"x"}, {"s"}, "shape_2");
    ModelBuilder::attr_int(b.node("ReduceProd", {"s"}, {"prod"}, "prod_3"), "keepdims", 0);
    ModelBuilder::attr_int(b.node("ReduceSum", {"x"}, {"sum"}, "sum_4"), "keepdims", 0);
    cast(b, "size", "size_f", ::onnx::TensorProto::FLOAT);
    cast(b, "prod", "prod_f", ::onnx::TensorProto::FLOAT);
    b.node("Div", {"sum", "size_f"}, {"mean"}, "div_5");
    b.node("Div", {"sum", "prod_f"}, {"mean2"}, "div_6");
    b.output("size");
    b.output("mean");
    b.output("mean2");
    CompiledNodeModel m(b.import());
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 5}, {6, 3}}) {
        NDArray x = random_array({n, k}, static_cast<unsigned>(n * 10 + k));
        std::vector<NDArray> out = m.run({x});
        EXPECT_EQ(out[0].to_vector<int64_t>(), std::vector<int64_t>{n * k});
        double sum = 0;
        for (float v : x.to_vector<float>()) sum += v;
        auto mean = static_cast<float>(sum / static_cast<double>(n * k));
        EXPECT_NEAR(out[1].to_vector<float>()[0], mean, 1e-5f) << n << "x" << k;
        EXPECT_NEAR(out[2].to_vector<float>()[0], mean, 1e-5f) << n << "x" << k;
    }
}

// A comparison of a run-time length chooses the data: Where(n == 4, x, -x).
TEST(SymbolicShapeData, AComparisonOfALengthSelects) {
    ModelBuilder b = with_length();
    b.int64_init("four", {}, {4});
    b.node("Equal", {"g", "four"}, {"c"}, "eq_3");
    b.node("Neg", {"x"}, {"nx"}, "neg_4");
    b.node("Where", {"c", "x", "nx"}, {"y"}, "where_5");
    b.output("y");
    b.output("c");
    CompiledNodeModel m(b.import());
    for (int64_t n : {3, 4, 5}) {
        NDArray x = random_array({n, 3}, static_cast<unsigned>(n));
        std::vector<NDArray> out = m.run({x});
        float sign = n == 4 ? 1.0f : -1.0f;
        std::vector<float> xs = x.to_vector<float>(), ys = out[0].to_vector<float>();
        for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(ys[i], sign * xs[i]) << "n=" << n;
        EXPECT_EQ(out[1].to_vector<uint8_t>(), std::vector<uint8_t>{n == 4});
    }
}

}  // namespace
}  // namespace anvil
