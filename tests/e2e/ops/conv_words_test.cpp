// The word-packed convolutions (ops/conv_words.cpp): uint8 x int8 four input channels per word,
// bfloat16 x bfloat16 two per word. nn.conv2d and nn.conv2d_packed of a weight packed in words
// (nn.conv2d_pack_weight, words=True) at odd shapes (input channels not a multiple of 4 or 2,
// output channels not a multiple of 16, strides, dilation, padding, 1x1 to 7x7 windows,
// batches), with the x86 and the generic schedules: the integer form exact against the float
// reference of the same integers, the bfloat16 form within float32 rounding of the double
// reference of the same bfloat16 values; and the packed form's type errors.
#include <bit>
#include <cmath>
#include <random>

#include "conv_reference.h"
#include "errors/expect_message.h"
#include "nn_op_runner.h"
#include "ops/conv.h"
#include "ops/op_table.h"

namespace anvil {
namespace {

using runtime::NDArray;
using testing::run_op;
using Shape = std::vector<int64_t>;

struct Case {
    std::string name;
    Shape x, w;
    std::vector<int64_t> strides, padding, dilation;
};

const std::vector<Case>& cases() {
    static const std::vector<Case> all = {
        {"3x3, 8 channels", {2, 8, 9, 11}, {16, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
        {"rgb stem 7x7 s2", {1, 3, 23, 19}, {20, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}},
        {"13 channels, 40 outputs", {1, 13, 8, 9}, {40, 13, 3, 3}, {1, 1}, {0, 1, 2, 1}, {1, 1}},
        {"pointwise 5 outputs", {1, 32, 17, 19}, {5, 32, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}},
        {"strided dilated", {1, 12, 15, 13}, {48, 12, 3, 2}, {2, 1}, {1, 0, 2, 1}, {2, 2}},
        {"short rows, 64 outputs", {1, 64, 7, 7}, {64, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
        {"odd channels", {1, 7, 6, 5}, {17, 7, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
    };
    return all;
}

// Runs every case through nn.conv2d and nn.conv2d_packed (both schedules); `check` compares
// an output (of `dtype`) with the reference.
template <class Check>
void run_cases(bool bf16, Check check) {
    for (const auto& c : cases()) {
        auto [x, xf] =
            bf16 ? testing::random_bfloat16(c.x, 41) : testing::random_bytes(c.x, 41, false);
        auto [w, wf] =
            bf16 ? testing::random_bfloat16(c.w, 42) : testing::random_bytes(c.w, 42, true);
        ops::Conv2DAttrs a;
        a.strides = c.strides;
        a.padding = c.padding;
        a.dilation = c.dilation;
        a.out_dtype = bf16 ? DataType::float32() : DataType::int32();
        std::vector<double> want = testing::conv2d_reference(xf, wf, a);
        std::vector<double> magnitude =
            testing::conv2d_reference(testing::abs_of(xf), testing::abs_of(wf), a);
        ops::Conv2DPackWeightAttrs pa;
        pa.words = true;
        NDArray packed = run_op("nn.conv2d_pack_weight", pa, {w});
        const int64_t per = bf16 ? 2 : 4;
        ASSERT_EQ(packed.dtype().bits, 32) << c.name;
        ASSERT_EQ(packed.shape()[1], (c.w[1] + per - 1) / per) << c.name;
        ops::Conv2DPackedAttrs pk;
        pk.strides = c.strides;
        pk.padding = c.padding;
        pk.dilation = c.dilation;
        pk.channels = c.w[0];
        pk.words = per;
        for (bool generic : {false, true}) {
            auto schedule = generic ? ops::schedule_conv2d_generic : nullptr;
            for (bool prepacked : {false, true}) {
                NDArray y = prepacked ? run_op("nn.conv2d_packed", pk, {x, packed}, {}, schedule)
                                      : run_op("nn.conv2d", a, {x, w}, {}, schedule);
                std::string what =
                    c.name + (prepacked ? " packed" : "") + (generic ? " generic" : " x86");
                ASSERT_EQ(size_t(y.num_elements()), want.size()) << what;
                for (size_t i = 0; i < want.size(); ++i) check(y, i, want[i], magnitude[i], what);
            }
        }
    }
}

TEST(ConvWords, Uint8Int8EveryShapeExact) {
    run_cases(false, [](const NDArray& y, size_t i, double want, double, const std::string& what) {
        ASSERT_EQ(double(y.data<int32_t>()[i]), want) << what << " element " << i;
    });
}

TEST(ConvWords, Bfloat16EveryShapeWithinFloat32Rounding) {
    run_cases(true, [](const NDArray& y, size_t i, double want, double magnitude,
                       const std::string& what) {
        ASSERT_EQ(y.dtype().bits, 32);
        // float32 sums of exact products: a few ulps of the sum of magnitudes.
        ASSERT_NEAR(double(y.data<float>()[i]), want, 1e-5 * magnitude + 1e-30)
            << what << " element " << i;
    });
}

TEST(ConvWords, PackedWordsMustFitTheData) {
    graph::Type x = graph::make_tensor_type(std::vector<int64_t>{1, 8, 5, 5}, DataType::uint(8));
    graph::Type packed =  // words of 12 int8 channels
        graph::make_tensor_type(std::vector<int64_t>{1, 3, 3, 3, 16}, DataType::int32());
    std::vector<graph::Type> args{x, packed};
    ops::Conv2DPackedAttrs pk;
    pk.channels = 16;
    pk.words = 4;
    const graph::Op& op = ops::get_op("nn.conv2d_packed");
    EXPECT_MESSAGE(op.infer_type(op, args, pk, SourceLoc{}),
                   "nn.conv2d_packed: the weight packed in words",
                   "does not fit the data Tensor[(1, 8, 5, 5), uint8] with channels=16");
    // bfloat16 data: two channels per word, so 8 channels are 4 words, not 3.
    args[0] = graph::make_tensor_type(std::vector<int64_t>{1, 8, 5, 5}, DataType::bfloat16());
    pk.words = 2;
    EXPECT_MESSAGE(op.infer_type(op, args, pk, SourceLoc{}),
                   "nn.conv2d_packed: the weight packed in words",
                   "Tensor[(1, 8, 5, 5), bfloat16] with channels=16");
    // Words of one kind never read data of the other, even where the word counts agree (2
    // channels: one word either way), nor float32 data.
    graph::Type one_word =
        graph::make_tensor_type(std::vector<int64_t>{1, 1, 3, 3, 16}, DataType::int32());
    args = {graph::make_tensor_type(std::vector<int64_t>{1, 2, 5, 5}, DataType::uint(8)), one_word};
    pk.words = 2;
    EXPECT_MESSAGE(op.infer_type(op, args, pk, SourceLoc{}),
                   "nn.conv2d_packed: the weight packed in words",
                   "and words=2 (4 channels "
                   "per word of uint8 data, 2 of bfloat16 data)");
    args[0] = graph::make_tensor_type(std::vector<int64_t>{1, 2, 5, 5}, DataType::float32());
    pk.words = 4;
    EXPECT_MESSAGE(op.infer_type(op, args, pk, SourceLoc{}),
                   "nn.conv2d_packed: the weight packed in words", "float32] with channels=16");
}

TEST(ConvWords, WordsPackOnlyInt8AndBfloat16WeightsOfOneGroup) {
    graph::Type w = graph::make_tensor_type(std::vector<int64_t>{8, 4, 3, 3}, DataType::float32());
    ops::Conv2DPackWeightAttrs pa;
    pa.words = true;
    const graph::Op& op = ops::get_op("nn.conv2d_pack_weight");
    std::vector<graph::Type> args{w};
    EXPECT_MESSAGE(op.infer_type(op, args, pa, SourceLoc{}),
                   "nn.conv2d_pack_weight: words pack an int8 or bfloat16 weight of one group",
                   "Tensor[(8, 4, 3, 3), float32] with groups=1");
    args[0] = graph::make_tensor_type(std::vector<int64_t>{8, 4, 3, 3}, DataType::bfloat16());
    pa.groups = 2;
    EXPECT_MESSAGE(op.infer_type(op, args, pa, SourceLoc{}), "nn.conv2d_pack_weight: words pack",
                   "bfloat16] with groups=2");
}

}  // namespace
}  // namespace anvil
