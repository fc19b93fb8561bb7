// The elementwise family (ops/elementwise.cpp) against references computed here: every binary
// op under numpy broadcasting at odd shapes, every unary op, cast and where; and the type-rule
// errors, which name the model node.
#include "ops/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "op_runner.h"

namespace anvil::op_testing {
namespace {

// Broadcast reference: out[i] = f(a[bcast i], b[bcast i]) for right-aligned shapes.
std::vector<double> broadcast_reference(const runtime::NDArray& a, const runtime::NDArray& b,
                                        const Shape& out_shape,
                                        const std::function<double(double, double)>& f) {
    Shape sa = shape_of(a), sb = shape_of(b);
    std::vector<double> out;
    for_each_index(out_shape, [&](const Shape& idx) {
        auto operand = [&](const Shape& s) {
            Shape i(s.size());
            for (size_t d = 0; d < s.size(); ++d) {
                i[d] = s[d] == 1 ? 0 : idx[d + idx.size() - s.size()];
            }
            return offset_of(i, s);
        };
        out.push_back(f(a.data<float>()[operand(sa)], b.data<float>()[operand(sb)]));
    });
    return out;
}

struct BinaryCase {
    const char* op;
    std::function<double(double, double)> f;
    bool returns_bool;
};

class BinaryOps : public ::testing::TestWithParam<int> {};

const std::vector<BinaryCase>& binary_cases() {
    static const std::vector<BinaryCase> cases = {
        {"add", [](double x, double y) { return float(x) + float(y); }, false},
        {"subtract", [](double x, double y) { return float(x) - float(y); }, false},
        {"multiply", [](double x, double y) { return float(x) * float(y); }, false},
        {"divide", [](double x, double y) { return float(x) / float(y); }, false},
        {"power", [](double x, double y) { return std::pow(std::abs(x), y); }, false},
        {"maximum", [](double x, double y) { return std::max(x, y); }, false},
        {"minimum", [](double x, double y) { return std::min(x, y); }, false},
        {"equal", [](double x, double y) { return x == y; }, true},
        {"not_equal", [](double x, double y) { return x != y; }, true},
        {"less", [](double x, double y) { return x < y; }, true},
        {"less_equal", [](double x, double y) { return x <= y; }, true},
        {"greater", [](double x, double y) { return x > y; }, true},
        {"greater_equal", [](double x, double y) { return x >= y; }, true},
    };
    return cases;
}

TEST_P(BinaryOps, BroadcastAtOddShapes) {
    const BinaryCase& c = binary_cases()[GetParam()];
    // [3, 1, 5] against [4, 1]: both sides broadcast; [7] against [2, 3, 7]: rank differs.
    for (auto [sa, sb] :
         {std::pair<Shape, Shape>{{3, 1, 5}, {4, 1}}, {{7}, {2, 3, 7}}, {{1}, {5, 3}}}) {
        auto a = testing::random_tensor(sa, 51, 0.5f, 2.0f),
             b = testing::random_tensor(sb, 52, 0.5f, 2.0f);
        // Equal elements make the comparisons interesting.
        a.data<float>()[0] = b.data<float>()[0];
        if (std::string(c.op) == "power") {
            for (int64_t i = 0; i < a.num_elements(); ++i)
                a.data<float>()[i] = std::abs(a.data<float>()[i]);
        }
        OpResult r = run_op(c.op, {a, b});
        const auto& t = *r.type.as<graph::TensorType>();
        std::vector<double> ref = broadcast_reference(a, b, t.static_shape(), c.f);
        ASSERT_EQ(r.outputs[0].num_elements(), static_cast<int64_t>(ref.size()));
        for (size_t i = 0; i < ref.size(); ++i) {
            double got = c.returns_bool ? static_cast<const uint8_t*>(r.outputs[0].raw_data())[i]
                                        : r.outputs[0].data<float>()[i];
            ASSERT_NEAR(got, ref[i], 1e-6 * std::max(1.0, std::abs(ref[i])))
                << c.op << " element " << i;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Elementwise, BinaryOps, ::testing::Range(0, 13), [](const auto& info) {
    return std::string(binary_cases()[info.param].op);
});

TEST(UnaryOps, MatchTheStandardLibrary) {
    struct Case {
        const char* op;
        double (*f)(double);
        float lo, hi;
    };
    const Case cases[] = {
        {"negative", [](double x) { return -x; }, -3, 3},
        {"abs", [](double x) { return std::abs(x); }, -3, 3},
        {"exp", [](double x) { return std::exp(x); }, -5, 5},
        {"log", [](double x) { return std::log(x); }, 0.1f, 9},
        {"sqrt", [](double x) { return std::sqrt(x); }, 0, 9},
        {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.1f, 9},
        {"tanh", [](double x) { return std::tanh(x); }, -4, 4},
        {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -6, 6},
        {"erf", [](double x) { return std::erf(x); }, -3, 3},
        {"floor", [](double x) { return std::floor(x); }, -3, 3},
        {"ceil", [](double x) { return std::ceil(x); }, -3, 3},
        {"round", [](double x) { return std::nearbyint(x); }, -3, 3},
        {"nn.relu", [](double x) { return std::max(x, 0.0); }, -3, 3},
        {"sign", [](double x) { return double((x > 0) - (x < 0)); }, -3, 3},
        {"sin", [](double x) { return std::sin(x); }, -7, 7},
        {"cos", [](double x) { return std::cos(x); }, -7, 7},
        {"tan", [](double x) { return std::tan(x); }, -1.2f, 1.2f},
        {"asin", [](double x) { return std::asin(x); }, -0.95f, 0.95f},
        {"acos", [](double x) { return std::acos(x); }, -0.95f, 0.95f},
        {"atan", [](double x) { return std::atan(x); }, -9, 9},
        {"sinh", [](double x) { return std::sinh(x); }, -4, 4},
        {"cosh", [](double x) { return std::cosh(x); }, -4, 4},
        {"asinh", [](double x) { return std::asinh(x); }, -9, 9},
        {"acosh", [](double x) { return std::acosh(x); }, 1.05f, 9},
        {"atanh", [](double x) { return std::atanh(x); }, -0.95f, 0.95f},
    };
    for (const auto& c : cases) {
        auto x = testing::random_tensor({3, 7, 5}, 53, c.lo, c.hi);
        OpResult r = run_op(c.op, {x});
        for (int64_t i = 0; i < x.num_elements(); ++i) {
            double ref = static_cast<float>(c.f(x.data<float>()[i]));
            ASSERT_NEAR(r.outputs[0].data<float>()[i], ref, 2e-6 * std::max(1.0, std::abs(ref)))
                << c.op << "(" << x.data<float>()[i] << ")";
        }
    }
}

TEST(CastAndWhere, MatchReferences) {
    auto x = testing::random_tensor({5, 3}, 54, -50, 50);
    auto cast = run_op("cast", {x},
                       make_attrs<ops::CastAttrs>([](auto& a) { a.dtype = DataType::int32(); }));
    for (int64_t i = 0; i < x.num_elements(); ++i) {
        EXPECT_EQ(cast.outputs[0].data<int32_t>()[i], static_cast<int32_t>(x.data<float>()[i]));
    }
    auto y = testing::random_tensor({3}, 55);
    auto cond = run_op("less", {x, y}).outputs[0];
    auto w = run_op("where", {cond, x, y});
    for (int64_t i = 0; i < 15; ++i) {
        float a = x.data<float>()[i], b = y.data<float>()[i % 3];
        EXPECT_EQ(w.outputs[0].data<float>()[i], a < b ? a : b);
    }
}

// mod truncates (the dividend's sign, C fmod); floor_mod floors (the divisor's sign, Python %).
TEST(ModOps, MatchTruncatedAndFlooredReferences) {
    std::vector<int32_t> av = {7, -7, 7, -7, 0, 5, -13, 13};
    std::vector<int32_t> bv = {3, 3, -3, -3, 4, 5, 4, -4};
    auto a = tensor_from<int32_t>({8}, av, "int32"), b = tensor_from<int32_t>({8}, bv, "int32");
    auto m = run_op("mod", {a, b}), fm = run_op("floor_mod", {a, b});
    for (size_t i = 0; i < av.size(); ++i) {
        int32_t trunc = av[i] % bv[i];
        int32_t floored = (trunc != 0 && ((trunc < 0) != (bv[i] < 0))) ? trunc + bv[i] : trunc;
        EXPECT_EQ(m.outputs[0].data<int32_t>()[i], trunc) << av[i] << " mod " << bv[i];
        EXPECT_EQ(fm.outputs[0].data<int32_t>()[i], floored) << av[i] << " floor_mod " << bv[i];
    }
    auto x = testing::random_tensor({4, 5}, 58, -10, 10), y = testing::random_tensor({5}, 59, 1, 3);
    for (int64_t j = 0; j < 5; j += 2) y.data<float>()[j] = -y.data<float>()[j];
    auto fx = run_op("mod", {x, y}), ffx = run_op("floor_mod", {x, y});
    for (int64_t i = 0; i < 20; ++i) {
        float p = x.data<float>()[i], q = y.data<float>()[i % 5];
        float r = std::fmod(p, q);
        float fr = (r != 0 && ((r < 0) != (q < 0))) ? r + q : r;
        EXPECT_FLOAT_EQ(fx.outputs[0].data<float>()[i], r);
        EXPECT_NEAR(ffx.outputs[0].data<float>()[i], fr, 1e-6f);
    }
    auto u = tensor_from<uint8_t>({3}, std::vector<uint8_t>{200, 7, 9}, "uint8");
    auto v = tensor_from<uint8_t>({3}, std::vector<uint8_t>{7, 200, 3}, "uint8");
    auto um = run_op("floor_mod", {u, v});
    EXPECT_EQ(um.outputs[0].data<uint8_t>()[0], 200 % 7);
    EXPECT_EQ(um.outputs[0].data<uint8_t>()[1], 7);
    EXPECT_EQ(um.outputs[0].data<uint8_t>()[2], 0);
}

TEST(ElementwiseErrors, NameTheNodeAndWhatIsWrong) {
    auto f = testing::random_tensor({3, 4}, 56);
    auto i = tensor_of({3, 4}, "int32");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("add", {f, i}, nullptr);
                       }),
                       "node 'node_0'", "add: operand types float32 and int32 differ");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("add", {f, testing::random_tensor({5}, 57)}, nullptr);
                       }),
                       "add: shapes cannot be broadcast together");
    EXPECT_MESSAGE_HAS(user_error_of([&] { infer_op_type("exp", {i}, nullptr); }),
                       "exp needs a floating-point input, got int32");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("logical_and", {f, f}, nullptr);
                       }),
                       "logical_and needs bool inputs");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("where", {f, f, f}, nullptr);
                       }),
                       "where: the condition has type float32, not bool");
    EXPECT_MESSAGE_HAS(user_error_of([&] { infer_op_type("asin", {i}, nullptr); }), "node 'node_0'",
                       "asin needs a floating-point input, got int32");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("mod", {f, i}, nullptr);
                       }),
                       "node 'node_0'", "mod: operand types float32 and int32 differ");
    // Bitwise ops take integers or bools, shifts integers only.
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("bitwise_and", {f, f}, nullptr);
                       }),
                       "node 'node_0'", "bitwise_and needs integer or bool inputs, got float32");
    EXPECT_MESSAGE_HAS(user_error_of([&] { infer_op_type("bitwise_not", {f}, nullptr); }),
                       "bitwise_not needs an integer or bool input, got float32");
    auto b = tensor_of({3, 4}, "bool");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("left_shift", {b, b}, nullptr);
                       }),
                       "left_shift needs integer inputs, got bool");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("right_shift", {f, f}, nullptr);
                       }),
                       "right_shift needs integer inputs, got float32");
    EXPECT_MESSAGE_HAS(user_error_of([&] {
                           infer_op_type("bitwise_xor", {i, tensor_of({3, 4}, "int64")}, nullptr);
                       }),
                       "bitwise_xor: operand types int32 and int64 differ");
}

}  // namespace
}  // namespace anvil::op_testing
