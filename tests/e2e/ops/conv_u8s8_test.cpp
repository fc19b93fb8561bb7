// The uint8 x int8 convolution four input channels at a time (ops/conv_u8s8.cpp): nn.conv2d and
// nn.conv2d_packed of a weight packed in quads (nn.conv2d_pack_weight of an int8 weight) at odd
// shapes (input channels not a multiple of 4, output channels not a multiple of 16, strides,
// dilation, padding, 1x1 to 7x7 windows, batches), with the x86 and the generic schedules, exact
// against the float reference of the same integers; and the packed form's type errors.
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

std::pair<NDArray, NDArray> random_bytes(const Shape& shape, uint32_t seed, bool is_signed) {
    auto t = NDArray::empty(shape, runtime::dl_dtype_from_string(is_signed ? "int8" : "uint8"));
    auto f = NDArray::empty(shape, runtime::dl_dtype_from_string("float32"));
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(is_signed ? -128 : 0, is_signed ? 127 : 255);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
        int v = dist(rng);
        f.data<float>()[i] = float(v);
        if (is_signed) {
            t.data<int8_t>()[i] = int8_t(v);
        } else {
            t.data<uint8_t>()[i] = uint8_t(v);
        }
    }
    return {t, f};
}

struct Case {
    std::string name;
    Shape x, w;
    std::vector<int64_t> strides, padding, dilation;
};

TEST(ConvU8S8, EveryShapeExact) {
    const std::vector<Case> cases = {
        {"3x3, 8 channels", {2, 8, 9, 11}, {16, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
        {"rgb stem 7x7 s2", {1, 3, 23, 19}, {20, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}},
        {"13 channels, 40 outputs", {1, 13, 8, 9}, {40, 13, 3, 3}, {1, 1}, {0, 1, 2, 1}, {1, 1}},
        {"pointwise 5 outputs", {1, 32, 17, 19}, {5, 32, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}},
        {"strided dilated", {1, 12, 15, 13}, {48, 12, 3, 2}, {2, 1}, {1, 0, 2, 1}, {2, 2}},
        {"short rows, 64 outputs", {1, 64, 7, 7}, {64, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
    };
    for (const auto& c : cases) {
        auto [x, xf] = random_bytes(c.x, 41, false);
        auto [w, wf] = random_bytes(c.w, 42, true);
        ops::Conv2DAttrs a;
        a.strides = c.strides;
        a.padding = c.padding;
        a.dilation = c.dilation;
        a.out_dtype = DataType::int32();
        std::vector<double> want = testing::conv2d_reference(xf, wf, a);
        ops::Conv2DPackWeightAttrs pa;
        pa.quads = true;
        NDArray packed = run_op("nn.conv2d_pack_weight", pa, {w});
        ASSERT_EQ(packed.dtype().bits, 32) << c.name;
        ASSERT_EQ(packed.shape()[1], (c.w[1] + 3) / 4) << c.name;
        ops::Conv2DPackedAttrs pk;
        pk.strides = c.strides;
        pk.padding = c.padding;
        pk.dilation = c.dilation;
        pk.channels = c.w[0];
        pk.quads = true;
        for (bool generic : {false, true}) {
            auto schedule = generic ? ops::schedule_conv2d_generic : nullptr;
            for (bool prepacked : {false, true}) {
                NDArray y = prepacked ? run_op("nn.conv2d_packed", pk, {x, packed}, {}, schedule)
                                      : run_op("nn.conv2d", a, {x, w}, {}, schedule);
                std::string what =
                    c.name + (prepacked ? " packed" : "") + (generic ? " generic" : " x86");
                ASSERT_EQ(size_t(y.num_elements()), want.size()) << what;
                for (size_t i = 0; i < want.size(); ++i) {
                    ASSERT_EQ(double(y.data<int32_t>()[i]), want[i]) << what << " element " << i;
                }
            }
        }
    }
}

TEST(ConvU8S8, PackedQuadsMustFitTheData) {
    graph::Type x = graph::make_tensor_type(std::vector<int64_t>{1, 8, 5, 5}, DataType::uint(8));
    graph::Type packed =  // quads of 12 channels
        graph::make_tensor_type(std::vector<int64_t>{1, 3, 3, 3, 16}, DataType::int32());
    std::vector<graph::Type> args{x, packed};
    ops::Conv2DPackedAttrs pk;
    pk.channels = 16;
    pk.quads = true;
    const graph::Op& op = ops::get_op("nn.conv2d_packed");
    EXPECT_MESSAGE(op.infer_type(op, args, pk, SourceLoc{}),
                   "nn.conv2d_packed: the int8 weight packed in quads",
                   "does not fit the data Tensor[(1, 8, 5, 5), uint8] with channels=16");
}

TEST(ConvU8S8, QuadsPackOnlyInt8WeightsOfOneGroup) {
    graph::Type w = graph::make_tensor_type(std::vector<int64_t>{8, 4, 3, 3}, DataType::float32());
    ops::Conv2DPackWeightAttrs pa;
    pa.quads = true;
    const graph::Op& op = ops::get_op("nn.conv2d_pack_weight");
    std::vector<graph::Type> args{w};
    EXPECT_MESSAGE(op.infer_type(op, args, pa, SourceLoc{}),
                   "nn.conv2d_pack_weight: quads pack an int8 weight of one group",
                   "Tensor[(8, 4, 3, 3), float32] with groups=1");
}

}  // namespace
}  // namespace anvil
