// Integer products (ops/product_dtype.h): nn.conv2d, nn.conv2d_transpose, nn.dense and
// nn.batch_matmul on int8 / uint8 / int16 operands with out_dtype int32, through each form of
// the kernels (direct, channel-blocked, pointwise over a plane, depthwise, grouped) with the x86
// and the generic schedules, against the float references on the same integers (exact: every sum
// is an integer far below 2^53); and the type errors.
#include <random>

#include "conv_reference.h"
#include "nn_op_runner.h"
#include "ops/conv.h"
#include "ops/dense.h"

namespace anvil {
namespace {

using runtime::NDArray;
using testing::run_op;
using Shape = std::vector<int64_t>;

// Integers in [lo, hi] of `dtype`, and the same values as float32 (for the references).
std::pair<NDArray, NDArray> random_ints(const Shape& shape, uint32_t seed, int lo, int hi,
                                        const std::string& dtype) {
    auto t = NDArray::empty(shape, runtime::dl_dtype_from_string(dtype));
    auto f = NDArray::empty(shape, runtime::dl_dtype_from_string("float32"));
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(lo, hi);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
        int v = dist(rng);
        f.data<float>()[i] = float(v);
        if (dtype == "uint8") t.data<uint8_t>()[i] = uint8_t(v);
        if (dtype == "int8") t.data<int8_t>()[i] = int8_t(v);
        if (dtype == "int16") t.data<int16_t>()[i] = int16_t(v);
    }
    return {t, f};
}

void expect_exact(const NDArray& got, const std::vector<double>& want, const std::string& what) {
    ASSERT_EQ(got.dtype().code, kDLInt) << what;
    ASSERT_EQ(got.dtype().bits, 32) << what;
    ASSERT_EQ(size_t(got.num_elements()), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) {
        if (double(got.data<int32_t>()[i]) != want[i]) {
            FAIL() << what << ": element " << i << " is " << got.data<int32_t>()[i] << ", want "
                   << want[i];
        }
    }
}

struct IntConvCase {
    std::string name;
    Shape x, w;
    std::vector<int64_t> strides, padding, dilation;
    int64_t groups;
    std::string data_dtype, weight_dtype;
};

TEST(IntegerProducts, Conv2DEveryForm) {
    const std::vector<IntConvCase> cases = {
        {"blocked 3x3",
         {2, 8, 9, 11},
         {16, 8, 3, 3},
         {1, 1},
         {1, 1, 1, 1},
         {1, 1},
         1,
         "uint8",
         "int8"},
        {"blocked strided dilated",
         {1, 8, 13, 11},
         {24, 8, 3, 2},
         {2, 1},
         {1, 0, 2, 1},
         {1, 2},
         1,
         "int8",
         "int8"},
        {"direct rgb stem",
         {1, 3, 15, 17},
         {8, 3, 5, 5},
         {2, 2},
         {2, 2, 2, 2},
         {1, 1},
         1,
         "uint8",
         "int8"},
        {"pointwise plane",
         {1, 8, 17, 19},
         {12, 8, 1, 1},
         {1, 1},
         {0, 0, 0, 0},
         {1, 1},
         1,
         "uint8",
         "int8"},
        {"depthwise",
         {1, 16, 13, 11},
         {16, 1, 3, 3},
         {2, 2},
         {1, 1, 1, 1},
         {1, 1},
         16,
         "uint8",
         "int8"},
        {"grouped",
         {1, 4, 9, 10},
         {32, 2, 3, 3},
         {1, 1},
         {1, 1, 1, 1},
         {1, 1},
         2,
         "int16",
         "int16"},
    };
    for (const auto& c : cases) {
        int dlo = c.data_dtype == "uint8" ? 0 : c.data_dtype == "int8" ? -128 : -300;
        int dhi = c.data_dtype == "uint8" ? 255 : c.data_dtype == "int8" ? 127 : 300;
        auto [x, xf] = random_ints(c.x, 11, dlo, dhi, c.data_dtype);
        auto [w, wf] = random_ints(c.w, 12, c.weight_dtype == "int8" ? -128 : -300,
                                   c.weight_dtype == "int8" ? 127 : 300, c.weight_dtype);
        ops::Conv2DAttrs a;
        a.strides = c.strides;
        a.padding = c.padding;
        a.dilation = c.dilation;
        a.groups = c.groups;
        a.out_dtype = DataType::int32();
        std::vector<double> want = testing::conv2d_reference(xf, wf, a);
        for (bool generic : {false, true}) {
            NDArray y = run_op("nn.conv2d", a, {x, w}, {},
                               generic ? ops::schedule_conv2d_generic : nullptr);
            expect_exact(y, want, c.name + (generic ? " generic" : " x86"));
        }
    }
}

TEST(IntegerProducts, Conv2DTranspose) {
    auto [x, xf] = random_ints({1, 4, 5, 6}, 21, -255, 255, "int16");
    auto [w, wf] = random_ints({4, 3, 3, 3}, 22, -128, 127, "int8");
    ops::Conv2DTransposeAttrs a;
    a.strides = {2, 2};
    a.padding = {1, 0, 1, 1};
    a.output_padding = {1, 0};
    a.out_dtype = DataType::int32();
    ops::Conv2DTransposeAttrs f = a;
    f.out_dtype = DataType::void_();
    NDArray want = run_op("nn.conv2d_transpose", f, {xf, wf});
    NDArray got = run_op("nn.conv2d_transpose", a, {x, w});
    std::vector<double> values(want.data<float>(), want.data<float>() + want.num_elements());
    expect_exact(got, values, "conv2d_transpose int16 x int8");
}

TEST(IntegerProducts, DenseAndBatchMatmul) {
    for (bool generic : {false, true}) {
        auto schedule = generic ? ops::schedule_matmul_generic : nullptr;
        auto [x, xf] = random_ints({3, 5, 67}, 31, 0, 255, "uint8");
        auto [w, wf] = random_ints({37, 67}, 32, -128, 127, "int8");
        ops::DenseAttrs da;
        da.out_dtype = DataType::int32();
        NDArray want = run_op("nn.dense", ops::DenseAttrs(), {xf, wf}, {}, schedule);
        expect_exact(
            run_op("nn.dense", da, {x, w}, {}, schedule),
            std::vector<double>(want.data<float>(), want.data<float>() + want.num_elements()),
            generic ? "dense generic" : "dense x86");
        auto [a, af] = random_ints({2, 7, 19}, 33, -128, 127, "int8");
        auto [b, bf] = random_ints({2, 11, 19}, 34, -128, 127, "int8");
        ops::MatmulAttrs ma;
        ma.transpose_b = true;
        ops::MatmulAttrs mi = ma;
        mi.out_dtype = DataType::int32();
        NDArray want_mm = run_op("nn.batch_matmul", ma, {af, bf}, {}, schedule);
        expect_exact(run_op("nn.batch_matmul", mi, {a, b}, {}, schedule),
                     std::vector<double>(want_mm.data<float>(),
                                         want_mm.data<float>() + want_mm.num_elements()),
                     generic ? "batch_matmul generic" : "batch_matmul x86");
    }
}

graph::Type tensor(const Shape& s, DataType t) {
    return graph::make_tensor_type(s, t);
}

std::string error_of(const std::string& op, const graph::Attrs& attrs,
                     const std::vector<graph::Type>& args) {
    const graph::Op& o = ops::get_op(op);
    try {
        o.infer_type(o, args, attrs, SourceLoc{.node_name = "n"});
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(IntegerProducts, TypeErrors) {
    graph::Type u8 = tensor({1, 3, 5, 5}, DataType::uint(8)),
                i8 = tensor({4, 3, 3, 3}, DataType::int_(8));
    graph::Type f32 = tensor({1, 3, 5, 5}, DataType::float32()),
                wf = tensor({4, 3, 3, 3}, DataType::float32());
    ops::Conv2DAttrs plain;
    EXPECT_NE(error_of("nn.conv2d", plain, {u8, i8})
                  .find("nn.conv2d needs floating-point data, got uint8 (an integer product states "
                        "out_dtype=\"int32\")"),
              std::string::npos);
    ops::Conv2DAttrs int_out;
    int_out.out_dtype = DataType::int32();
    EXPECT_NE(
        error_of("nn.conv2d", int_out, {f32, wf})
            .find("nn.conv2d with out_dtype=\"int32\" needs int8, uint8, int16 or int32 data, got "
                  "float32"),
        std::string::npos);
    ops::Conv2DAttrs f64_out;
    f64_out.out_dtype = DataType::float64();
    EXPECT_NE(
        error_of("nn.conv2d", f64_out, {u8, i8})
            .find("nn.conv2d: out_dtype float64 is not supported (int32 for integer operands, "
                  "float32 for float16 or bfloat16 ones, or the operands' own floating type)"),
        std::string::npos);
    // Half-precision operands summed in float32 (to_mixed_precision): of one type.
    ops::Conv2DAttrs f32_out;
    f32_out.out_dtype = DataType::float32();
    graph::Type bf = tensor({1, 3, 5, 5}, DataType::bfloat16()),
                wbf = tensor({4, 3, 3, 3}, DataType::bfloat16());
    EXPECT_EQ(error_of("nn.conv2d", f32_out, {bf, wbf}), "");
    EXPECT_NE(error_of("nn.conv2d", f32_out, {bf, tensor({4, 3, 3, 3}, DataType::float16())})
                  .find("nn.conv2d: data and weight types bfloat16 and float16 differ; insert a "
                        "cast"),
              std::string::npos);
    EXPECT_NE(
        error_of("nn.conv2d", plain, {f32, tensor({4, 3, 3, 3}, DataType::float64())})
            .find("nn.conv2d: data and weight types float32 and float64 differ; insert a cast"),
        std::string::npos);
    ops::MatmulAttrs mm;
    mm.out_dtype = DataType::int32();
    EXPECT_NE(
        error_of("nn.batch_matmul", mm,
                 {tensor({2, 3, 4}, DataType::int_(8)), tensor({2, 4, 5}, DataType::float32())})
            .find("nn.batch_matmul with out_dtype=\"int32\" needs int8, uint8, int16 or "
                  "int32 operand b, got float32"),
        std::string::npos);
}

}  // namespace
}  // namespace anvil
