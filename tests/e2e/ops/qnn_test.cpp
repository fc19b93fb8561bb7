// The QNN ops' type rules and errors (ops/qnn.cpp, ops/qnn_conv.cpp), the fixed-point form of a
// scale ratio, and fixed_point_multiply's kernel against TFLite's reference functions written out
// in int32 as TFLite writes them. python/tests/test_qnn.py runs every QNN op end to end against
// NumPy integer references.
#include "ops/qnn.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "op_runner.h"
#include "ops/pool.h"
#include "ops/transform.h"

namespace anvil::op_testing {
namespace {

using graph::make_tensor_type;
using graph::Type;

// ---- TFLite's reference definitions (gemmlowp / tensorflow/lite/kernels/internal/common.h) ----

int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
    bool overflow = a == b && a == std::numeric_limits<int32_t>::min();
    int64_t ab = int64_t(a) * int64_t(b);
    int32_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    auto high = static_cast<int32_t>((ab + nudge) / (int64_t(1) << 31));
    return overflow ? std::numeric_limits<int32_t>::max() : high;
}

int32_t rounding_divide_by_pot(int32_t x, int exponent) {
    int32_t mask = static_cast<int32_t>((int64_t(1) << exponent) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t multiply_by_quantized_multiplier(int32_t x, int32_t m, int shift) {
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x * (1 << left), m), right);
}

// One rounding of x * m * 2^(shift - 31): half up, or half away from zero.
int32_t one_step(int32_t x, int32_t m, int shift, bool away) {
    int total = 31 - shift;
    int64_t v = int64_t(x) * m;
    int64_t half = (int64_t(1) << (total - 1)) - (away && v < 0 ? 1 : 0);
    int64_t r = (v + half) >> total;
    return static_cast<int32_t>(std::clamp<int64_t>(r, INT32_MIN, INT32_MAX));
}

TEST(FixedPoint, OfARatio) {
    SourceLoc loc;
    auto f = [&](double r) {
        ops::FixedPoint p = ops::fixed_point_of(r, "ratio", loc);
        return std::pair<int64_t, int64_t>{p.multiplier, p.shift};
    };
    EXPECT_EQ(f(0.5), (std::pair<int64_t, int64_t>{1 << 30, 0}));
    EXPECT_EQ(f(0.75), (std::pair<int64_t, int64_t>{3 << 29, 0}));
    EXPECT_EQ(f(2.0), (std::pair<int64_t, int64_t>{1 << 30, 2}));
    EXPECT_EQ(f(0.001), (std::pair<int64_t, int64_t>{1099511628, -9}));
    // A significand that rounds up to 2^31 moves to the next exponent.
    EXPECT_EQ(f(1.0 - std::ldexp(1.0, -40)), (std::pair<int64_t, int64_t>{1 << 30, 1}));
    EXPECT_EQ(f(1e-12), (std::pair<int64_t, int64_t>{0, 0}));
    // Just below 2^30 the significand rounds up to 2^31: the largest multiplier, shift 30.
    EXPECT_EQ(f(std::nextafter(std::ldexp(1.0, 30), 0.0)),
              (std::pair<int64_t, int64_t>{INT32_MAX, 30}));
    for (double bad :
         {0.0, -1.0, std::nan(""), std::ldexp(1.0, 30), std::numeric_limits<double>::infinity()}) {
        EXPECT_MESSAGE(ops::fixed_point_of(bad, "qnn.requantize: input scale / output scale", loc),
                       "qnn.requantize: input scale / output scale = ",
                       "cannot be a fixed-point multiplier (it must be in (0, 2^30))");
    }
}

TEST(FixedPointMultiply, MatchesTfliteAndTheOneStepRoundings) {
    // Per-element multipliers and shifts over the whole range fixed_point_of produces, and x
    // with exact ties: multiples of powers of two, negative ones included.
    const int64_t n = 4099;
    std::mt19937 rng(5);
    std::vector<int32_t> xs(n), ms(n), ss(n);
    for (int64_t i = 0; i < n; ++i) {
        ss[i] = static_cast<int32_t>(rng() % 62) - 31;
        ms[i] = static_cast<int32_t>((1u << 30) + rng() % (1u << 30));
        int32_t x = static_cast<int32_t>(rng());
        if (i % 3 == 0) x = (static_cast<int32_t>(rng() % 2001) - 1000) << (rng() % 12);
        if (ss[i] > 0) x >>= ss[i] + 1;  // TFLite's int32 left shift must not overflow
        xs[i] = x;
    }
    xs[0] = INT32_MIN + 1;
    xs[1] = INT32_MAX;
    ss[0] = ss[1] = -31;
    auto x = tensor_from<int32_t>({n}, xs, "int32");
    auto m = tensor_from<int32_t>({n}, ms, "int32");
    auto s = tensor_from<int32_t>({n}, ss, "int32");
    for (const char* rounding : {"TFLITE", "UPWARD", "TONEAREST"}) {
        auto attrs =
            make_attrs<ops::FixedPointMultiplyAttrs>([&](auto& a) { a.rounding = rounding; });
        auto r = run_op("fixed_point_multiply", {x, m, s}, attrs);
        const int32_t* got = r.outputs[0].data<int32_t>();
        int mismatches = 0;
        for (int64_t i = 0; i < n && mismatches < 5; ++i) {
            int32_t want =
                std::string(rounding) == "TFLITE"
                    ? multiply_by_quantized_multiplier(xs[i], ms[i], ss[i])
                    : one_step(xs[i], ms[i], ss[i], std::string(rounding) == "TONEAREST");
            if (got[i] != want) {
                ++mismatches;
                ADD_FAILURE() << rounding << " x=" << xs[i] << " m=" << ms[i] << " shift=" << ss[i]
                              << ": got " << got[i] << ", want " << want;
            }
        }
    }
}

TEST(FixedPointMultiply, WithoutLeftShiftsMatchesTflite) {
    // is_lshift_required=false: one rounding of SRDHM's high half instead of TFLite's remainder
    // and threshold, so every corner: the int32 extremes, exact ties of both roundings (x a
    // multiple of a power of two, m = 2^30), x = -1 where SRDHM gives 0, m = 0, shift 0 and -31.
    const int64_t n = 6007;
    std::mt19937 rng(7);
    std::vector<int32_t> xs(n), ms(n), ss(n);
    const int32_t corners[] = {INT32_MIN, INT32_MIN + 1, INT32_MAX, -1, 0, 1, -(1 << 30), 1 << 30};
    for (int64_t i = 0; i < n; ++i) {
        ss[i] = -static_cast<int32_t>(rng() % 32);
        ms[i] = i % 5 == 0 ? (1 << 30) : static_cast<int32_t>((1u << 30) + rng() % (1u << 30));
        if (i % 97 == 0) ms[i] = i % 2 ? INT32_MAX : 0;
        int32_t x = static_cast<int32_t>(rng());
        if (i % 3 == 0) x = (static_cast<int32_t>(rng() % 2001) - 1000) * (1 << (rng() % 21));
        if (i % 7 == 0) x = corners[rng() % 8];
        xs[i] = x;
    }
    auto attrs =
        ops::fixed_point_multiply_attrs("TFLITE", std::vector<int32_t>(ss.begin(), ss.end()));
    EXPECT_FALSE(attrs->is_lshift_required);
    auto r = run_op("fixed_point_multiply",
                    {tensor_from<int32_t>({n}, xs, "int32"), tensor_from<int32_t>({n}, ms, "int32"),
                     tensor_from<int32_t>({n}, ss, "int32")},
                    attrs);
    const int32_t* got = r.outputs[0].data<int32_t>();
    int mismatches = 0;
    for (int64_t i = 0; i < n && mismatches < 5; ++i) {
        int32_t want = multiply_by_quantized_multiplier(xs[i], ms[i], ss[i]);
        if (got[i] != want) {
            ++mismatches;
            ADD_FAILURE() << "x=" << xs[i] << " m=" << ms[i] << " shift=" << ss[i] << ": got "
                          << got[i] << ", want " << want;
        }
    }
    // Broadcast scalars, the form a uniform ratio takes (the code generator folds the shift).
    for (int32_t shift : {0, -1, -2, -31}) {
        auto x = tensor_from<int32_t>({8}, {INT32_MIN, -6, -5, -3, 3, 5, 6, INT32_MAX}, "int32");
        auto one = run_op("fixed_point_multiply",
                          {x, tensor_from<int32_t>({}, {1 << 30}, "int32"),
                           tensor_from<int32_t>({}, {shift}, "int32")},
                          ops::fixed_point_multiply_attrs("TFLITE", {shift}));
        const int32_t* v = one.outputs[0].data<int32_t>();
        const int32_t* in = x.data<int32_t>();
        for (int i = 0; i < 8; ++i) {
            EXPECT_EQ(v[i], multiply_by_quantized_multiplier(in[i], 1 << 30, shift))
                << "x=" << in[i] << " shift=" << shift;
        }
    }
}

TEST(FixedPointMultiply, AskedForALeftShiftOnlyByAPositiveShift) {
    EXPECT_FALSE(ops::fixed_point_multiply_attrs("TFLITE", {0, -3, -31})->is_lshift_required);
    EXPECT_TRUE(ops::fixed_point_multiply_attrs("TFLITE", {-3, 1})->is_lshift_required);
    // Told there is none, a positive shift counts as 0: x * m * 2^-31, rounded once.
    auto attrs = make_attrs<ops::FixedPointMultiplyAttrs>([](auto& a) {
        a.rounding = "TFLITE";
        a.is_lshift_required = false;
    });
    auto r = run_op(
        "fixed_point_multiply",
        {tensor_from<int32_t>({2}, {5, -5}, "int32"), tensor_from<int32_t>({}, {1 << 30}, "int32"),
         tensor_from<int32_t>({}, {3}, "int32")},
        attrs);
    const int32_t* got = r.outputs[0].data<int32_t>();
    EXPECT_EQ(got[0], multiply_by_quantized_multiplier(5, 1 << 30, 0));
    EXPECT_EQ(got[1], multiply_by_quantized_multiplier(-5, 1 << 30, 0));
}

TEST(FixedPointMultiply, ClampsShiftsOutsideItsRange) {
    // Shifts 40 and -50 act as 30 and -31: defined results, not shifts past the word.
    auto x = tensor_from<int32_t>({4}, {3, -3, 1 << 20, -(1 << 20)}, "int32");
    auto m = tensor_from<int32_t>({}, {1 << 30}, "int32");
    auto s = tensor_from<int32_t>({4}, {40, 40, -50, -50}, "int32");
    auto attrs = make_attrs<ops::FixedPointMultiplyAttrs>([](auto& a) { a.rounding = "UPWARD"; });
    auto r = run_op("fixed_point_multiply", {x, m, s}, attrs);
    const int32_t* got = r.outputs[0].data<int32_t>();
    EXPECT_EQ(
        std::vector<int32_t>(got, got + 4),
        (std::vector<int32_t>{one_step(3, 1 << 30, 30, false), one_step(-3, 1 << 30, 30, false),
                              one_step(1 << 20, 1 << 30, -31, false),
                              one_step(-(1 << 20), 1 << 30, -31, false)}));
    EXPECT_EQ(got[0], 3 << 29);  // 3 * 2^30 * 2^-1
    // TFLite's rounding clamps them too, and saturates its left shift to int32: 3 << 30 and
    // -3 << 30 become INT32_MAX and INT32_MIN, then halved by the multiplier 2^30 * 2^-31.
    auto tflite = make_attrs<ops::FixedPointMultiplyAttrs>([](auto& a) { a.rounding = "TFLITE"; });
    auto t = run_op("fixed_point_multiply", {x, m, s}, tflite);
    const int32_t* saturated = t.outputs[0].data<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(saturated, saturated + 4),
              (std::vector<int32_t>{1 << 30, -(1 << 30), 0, 0}));
}

TEST(FixedPointMultiply, BroadcastsAScalarMultiplier) {
    auto x = tensor_from<int32_t>({2, 3}, {-6, -5, -2, 2, 5, 6}, "int32");
    auto m = tensor_from<int32_t>({}, {1 << 30}, "int32");
    auto s = tensor_from<int32_t>({3}, {-1, -1, 0}, "int32");
    auto attrs = make_attrs<ops::FixedPointMultiplyAttrs>([](auto& a) { a.rounding = "TFLITE"; });
    auto r = run_op("fixed_point_multiply", {x, m, s}, attrs);
    const int32_t* got = r.outputs[0].data<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(got, got + 6), (std::vector<int32_t>{-2, -1, -1, 1, 2, 3}));
}

TEST(FixedPointMultiply, AChainInlinedIntoOneKernelStaysOneCallPerStep) {
    // Thirty TFLite-rounded steps inlined into one kernel, as a fused chain of qnn.add and
    // requantize is. Each step's arithmetic uses its input a dozen times: written out as one
    // expression, the chain would need 12^30 nodes (a regression once ran out of memory on
    // three). The code generator expands each call with its input evaluated once.
    const int steps = 30;
    const int64_t n = 37;
    std::mt19937 rng(11);
    std::vector<int32_t> xs(n);
    for (auto& x : xs) x = static_cast<int32_t>(rng() % 200001) - 100000;
    // Alternately x 1.2 (m = 0.6 * 2^31, shift 1) and x 0.75 (m = 0.75 * 2^31, shift 0).
    const int32_t ms[2] = {1288490189, 1610612736}, ss[2] = {1, 0};
    const graph::Op& op = ops::get_op("fixed_point_multiply");
    auto attrs = make_attrs<ops::FixedPointMultiplyAttrs>([](auto& a) { a.rounding = "TFLITE"; });
    Type vector_type = make_tensor_type(std::vector<int64_t>{n}, DataType::int32());
    te::Tensor x = te::placeholder(ops::te_shape(vector_type), DataType::int32(), "x");
    std::vector<te::Tensor> params = {x}, chain = {x};
    for (int k = 0; k < 2; ++k) {
        params.push_back(te::placeholder({}, DataType::int32(), "m" + std::to_string(k)));
        params.push_back(te::placeholder({}, DataType::int32(), "s" + std::to_string(k)));
    }
    for (int i = 0; i < steps; ++i) {
        const te::Tensor& m = params[1 + 2 * (i % 2)];
        const te::Tensor& s = params[2 + 2 * (i % 2)];
        chain.push_back(op.compute({chain.back(), m, s}, *attrs, vector_type)[0]);
    }
    te::Schedule sch = te::create_schedule({chain.back()});
    for (int i = 1; i < steps; ++i) sch[chain[i]].compute_inline();
    // On 16 lanes, and a scalar tail.
    auto [outer, inner] = sch[chain.back()].split(sch[chain.back()].op_axis()[0], 16);
    sch[chain.back()].vectorize(inner);
    std::vector<runtime::NDArray> args = {tensor_from<int32_t>({n}, xs, "int32")};
    for (int k = 0; k < 2; ++k) {
        args.push_back(tensor_from<int32_t>({}, {ms[k]}, "int32"));
        args.push_back(tensor_from<int32_t>({}, {ss[k]}, "int32"));
    }
    args.push_back(tensor_from<int32_t>({n}, std::vector<int32_t>(n, 0), "int32"));
    params.push_back(chain.back());
    build_and_run(sch, params, args);
    const int32_t* got = args.back().data<int32_t>();
    for (int64_t j = 0; j < n; ++j) {
        int32_t want = xs[j];
        for (int i = 0; i < steps; ++i) {
            want = multiply_by_quantized_multiplier(want, ms[i % 2], ss[i % 2]);
        }
        ASSERT_EQ(got[j], want) << "element " << j;
    }
}

// ---- type rules -----------------------------------------------------------------------------

const SourceLoc kLoc{.file = "q.onnx", .node_name = "q0", .op_type = "QuantizeLinear", .opset = 13};

Type tensor(const std::vector<int64_t>& shape, DataType t) {
    return make_tensor_type(shape, t);
}

Type type_of(const std::string& op, const std::vector<Type>& args, Ref<graph::Attrs> attrs = {}) {
    const graph::Op& o = ops::get_op(op);
    if (!attrs) attrs = o.make_default_attrs();
    return o.infer_type(o, args, *attrs, kLoc);
}

const Type kF32 = tensor({}, DataType::float32());
const Type kI32 = tensor({}, DataType::int32());

TEST(QnnTypes, ResultsOfEveryOp) {
    Type x = tensor({2, 3, 5, 5}, DataType::float32());
    Type q = tensor({2, 3, 5, 5}, DataType::uint(8));
    auto out_u8 = make_attrs<ops::QuantizeAttrs>([](auto& a) { a.out_dtype = DataType::uint(8); });
    EXPECT_EQ(graph::type_str(type_of("qnn.quantize", {x, kF32, kI32}, out_u8)),
              "Tensor[(2, 3, 5, 5), uint8]");
    EXPECT_EQ(graph::type_str(type_of("qnn.dequantize", {q, kF32, kI32})),
              "Tensor[(2, 3, 5, 5), float32]");
    Type per_channel_f = tensor({3}, DataType::float32()),
         per_channel_i = tensor({3}, DataType::int32());
    auto axis1 = make_attrs<ops::RequantizeAttrs>([](auto& a) { a.axis = 1; });
    EXPECT_EQ(graph::type_str(
                  type_of("qnn.requantize", {q, per_channel_f, per_channel_i, kF32, kI32}, axis1)),
              "Tensor[(2, 3, 5, 5), int8]");
    Type w = tensor({4, 3, 3, 3}, DataType::int_(8));
    auto conv = make_attrs<ops::QnnConv2DAttrs>([](auto& a) {
        a.strides = {2, 2};
        a.padding = {1, 1, 1, 1};
        a.channels = 4;
        a.kernel_size = {3, 3};
    });
    EXPECT_EQ(graph::type_str(type_of("qnn.conv2d",
                                      {q, w, kI32, tensor({4}, DataType::int32()), kF32,
                                       tensor({4}, DataType::float32())},
                                      conv)),
              "Tensor[(2, 4, 3, 3), int32]");
    Type lhs = tensor({2, 3, 5, 5}, DataType::int_(8)), rhs = tensor({5}, DataType::int_(8));
    EXPECT_EQ(graph::type_str(type_of("qnn.add", {lhs, rhs, kF32, kI32, kF32, kI32, kF32, kI32})),
              "Tensor[(2, 3, 5, 5), int8]");
    auto pool = make_attrs<ops::Pool2DAttrs>([](auto& a) { a.pool_size = {2, 2}; });
    EXPECT_EQ(graph::type_str(type_of("qnn.avg_pool2d", {q, kF32, kI32, kF32, kI32}, pool)),
              "Tensor[(2, 3, 4, 4), uint8]");
    Type tuple = graph::make_tuple_type({q, tensor({2, 1, 5, 5}, DataType::uint(8))});
    auto cat = make_attrs<ops::ConcatenateAttrs>([](auto& a) { a.axis = 1; });
    EXPECT_EQ(graph::type_str(type_of("qnn.concatenate",
                                      {tuple, graph::make_tuple_type({kF32, kF32}),
                                       graph::make_tuple_type({kI32, kI32}), kF32, kI32},
                                      cat)),
              "Tensor[(2, 4, 5, 5), uint8]");
}

TEST(QnnTypes, Errors) {
    Type x = tensor({2, 3}, DataType::float32());
    Type q = tensor({2, 3}, DataType::int_(8));
    EXPECT_MESSAGE(type_of("qnn.quantize", {q, kF32, kI32}), "node 'q0'",
                   "qnn.quantize needs a floating-point input, got int8");
    auto to_f = make_attrs<ops::QuantizeAttrs>([](auto& a) { a.out_dtype = DataType::float32(); });
    EXPECT_MESSAGE(type_of("qnn.quantize", {x, kF32, kI32}, to_f),
                   "qnn.quantize: out_dtype must be int8, uint8, int16 or int32, got float32");
    EXPECT_MESSAGE(type_of("qnn.dequantize", {q, kI32, kI32}),
                   "qnn.dequantize: the scale must be float32, got int32");
    EXPECT_MESSAGE(type_of("qnn.dequantize", {q, kF32, tensor({}, DataType::int64())}),
                   "qnn.dequantize: the zero point must be int32, got int64");
    auto axis1 = make_attrs<ops::DequantizeAttrs>([](auto& a) { a.axis = 1; });
    EXPECT_MESSAGE(type_of("qnn.dequantize", {q, tensor({2}, DataType::float32()), kI32}, axis1),
                   "qnn.dequantize: the scale has 2 values, but axis 1 of the data has length 3");
    EXPECT_MESSAGE(type_of("qnn.dequantize", {q, tensor({2, 3}, DataType::float32()), kI32}, axis1),
                   "the scale must be a scalar or a 1-D tensor of static length");
    EXPECT_MESSAGE(
        type_of("qnn.requantize", {q, kF32, kI32, tensor({3}, DataType::float32()), kI32}),
        "qnn.requantize: the output scale must be a scalar, got Tensor[(3,), float32]");
    auto bad_round = make_attrs<ops::RequantizeAttrs>([](auto& a) { a.rounding = "NEAREST"; });
    EXPECT_MESSAGE(type_of("qnn.requantize", {q, kF32, kI32, kF32, kI32}, bad_round),
                   "qnn.requantize: rounding \"NEAREST\" is not one of \"UPWARD\", \"TONEAREST\", "
                   "\"TFLITE\"");
    Type data = tensor({1, 3, 5, 5}, DataType::uint(8)),
         w = tensor({4, 3, 3, 3}, DataType::int_(8));
    std::vector<Type> conv_args{data, w, kI32, kI32, kF32, kF32};
    auto out_i8 = make_attrs<ops::QnnConv2DAttrs>([](auto& a) { a.out_dtype = DataType::int_(8); });
    EXPECT_MESSAGE(type_of("qnn.conv2d", conv_args, out_i8),
                   "qnn.conv2d: out_dtype must be int32, got int8");
    auto channels = make_attrs<ops::QnnConv2DAttrs>([](auto& a) { a.channels = 8; });
    EXPECT_MESSAGE(type_of("qnn.conv2d", conv_args, channels),
                   "qnn.conv2d: channels=8 but the weight gives 4 output channels");
    auto kernel = make_attrs<ops::QnnConv2DAttrs>([](auto& a) { a.kernel_size = {5, 5}; });
    EXPECT_MESSAGE(type_of("qnn.conv2d", conv_args, kernel),
                   "qnn.conv2d: kernel_size does not match the weight Tensor[(4, 3, 3, 3), int8]");
    EXPECT_MESSAGE(type_of("qnn.conv2d",
                           {data, tensor({4, 2, 3, 3}, DataType::int_(8)), kI32, kI32, kF32, kF32}),
                   "qnn.conv2d: the weight Tensor[(4, 2, 3, 3), int8] has 2 input channels");
    EXPECT_MESSAGE(
        type_of("qnn.conv2d", {data, w, kI32, tensor({3}, DataType::int32()), kF32, kF32}),
        "qnn.conv2d: the kernel zero point has 3 values, but axis 1 of the data has "
        "length 4");
    auto units = make_attrs<ops::QnnDenseAttrs>([](auto& a) { a.units = 7; });
    EXPECT_MESSAGE(type_of("qnn.dense",
                           {tensor({2, 5}, DataType::int_(8)), tensor({6, 5}, DataType::int_(8)),
                            kI32, kI32, kF32, kF32},
                           units),
                   "qnn.dense: units=7 but the weight has 6 rows");
    EXPECT_MESSAGE(
        type_of("qnn.batch_matmul", {tensor({2, 3, 5}, DataType::float32()),
                                     tensor({2, 4, 5}, DataType::int_(8)), kI32, kI32, kF32, kF32}),
        "qnn.batch_matmul: the lhs must be int8, uint8, int16 or int32, got float32");
    EXPECT_MESSAGE(type_of("qnn.concatenate", {q, q, q, kF32, kI32}),
                   "qnn.concatenate: the data must be a tuple, got Tensor[(2, 3), int8]");
    Type two = graph::make_tuple_type({q, q});
    EXPECT_MESSAGE(
        type_of("qnn.concatenate", {two, graph::make_tuple_type({kF32}), two, kF32, kI32}),
        "qnn.concatenate: 2 tensors but 1 scales and 2 zero points");
    EXPECT_MESSAGE(type_of("fixed_point_multiply", {q, kI32, kI32}),
                   "fixed_point_multiply: x must be int32, got int8");
}

}  // namespace
}  // namespace anvil::op_testing
