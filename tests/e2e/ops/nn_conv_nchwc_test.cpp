// nn.conv2d_nchwc (ops/conv_nchwc.cpp) against the NCHW reference: the data and weight are put
// into their blocked layouts by layout_transform, the result taken back to NCHW, with the x86
// and the generic schedule, fused with a per-channel bias and relu; plus its type errors.
#include "conv_reference.h"
#include "nn_op_runner.h"

namespace anvil {
namespace {

using ops::Conv2DAttrs;
using ops::Conv2DNCHWcAttrs;
using runtime::NDArray;
using testing::conv2d_reference;
using testing::random_tensor;
using testing::relayout;
using testing::run_op;

struct NCHWcCase {
    const char* name;
    std::vector<int64_t> x, w;  // NCHW data, OIHW weight
    int64_t data_block;         // 0: the data stays NCHW
    int64_t out_block;
    std::vector<int64_t> strides, padding, dilation;
    int64_t groups;
};

std::vector<NCHWcCase> nchwc_cases() {
    return {
        {"3x3", {1, 32, 9, 10}, {48, 32, 3, 3}, 16, 16, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
        // Odd kernel, strides, dilation and padding; a batch of 2; 32-channel output blocks
        // from 8-channel input blocks.
        {"odd", {2, 16, 13, 11}, {32, 16, 3, 2}, 8, 32, {2, 1}, {1, 0, 2, 1}, {2, 1}, 1},
        // A 7-pixel row: tiles of two channel blocks.
        {"1x1_row7", {1, 64, 7, 7}, {64, 64, 1, 1}, 16, 16, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
        // NCHW data (a stem over RGB): the weight's input block is the 3 channels.
        {"stem", {1, 3, 20, 22}, {16, 3, 7, 7}, 0, 16, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1},
        {"depthwise", {1, 32, 12, 13}, {32, 1, 3, 3}, 16, 16, {1, 1}, {1, 1, 1, 1}, {1, 1}, 32},
        {"depthwise_s2", {2, 24, 15, 14}, {24, 1, 3, 3}, 8, 8, {2, 2}, {1, 1, 1, 1}, {1, 1}, 24},
        {"depthwise_5x5_dil",
         {1, 16, 11, 9},
         {16, 1, 5, 5},
         16,
         16,
         {1, 2},
         {2, 3, 2, 1},
         {2, 1},
         16},
    };
}

Conv2DNCHWcAttrs blocked_attrs(const NCHWcCase& c) {
    Conv2DNCHWcAttrs a;
    a.strides = c.strides;
    a.padding = c.padding;
    a.dilation = c.dilation;
    a.groups = c.groups;
    return a;
}

Conv2DAttrs plain_attrs(const NCHWcCase& c) {
    Conv2DAttrs a;
    a.strides = c.strides;
    a.padding = c.padding;
    a.dilation = c.dilation;
    a.groups = c.groups;
    return a;
}

std::string block_str(int64_t b, char axis) {
    return std::to_string(b) + axis;
}

// The case's data and weight in the blocked layouts nn.conv2d_nchwc reads.
std::pair<NDArray, NDArray> blocked_operands(const NCHWcCase& c, const NDArray& x,
                                             const NDArray& w) {
    NDArray xb = c.data_block ? relayout(x, "NCHW", "NCHW" + block_str(c.data_block, 'c')) : x;
    int64_t wi = c.groups != 1 ? 1 : c.data_block ? c.data_block : c.x[1];
    NDArray wb = relayout(w, "OIHW", "OIHW" + block_str(wi, 'i') + block_str(c.out_block, 'o'));
    return {xb, wb};
}

class Conv2DNCHWc : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(Conv2DNCHWc, MatchesReference) {
    const NCHWcCase c = nchwc_cases()[std::get<0>(GetParam())];
    bool generic = std::get<1>(GetParam());
    auto x = random_tensor(c.x, 1), w = random_tensor(c.w, 2);
    auto [xb, wb] = blocked_operands(c, x, w);
    NDArray yb = run_op("nn.conv2d_nchwc", blocked_attrs(c), {xb, wb}, {},
                        generic ? ops::schedule_conv2d_generic : nullptr);
    ASSERT_EQ(yb.shape().size(), 5u) << c.name;
    EXPECT_EQ(yb.shape()[4], c.out_block) << c.name;
    NDArray y = relayout(yb, "NCHW" + block_str(c.out_block, 'c'), "NCHW");
    testing::expect_close(y, conv2d_reference(x, w, plain_attrs(c)), 1e-4, c.name);
}

INSTANTIATE_TEST_SUITE_P(Cases, Conv2DNCHWc,
                         ::testing::Combine(::testing::Range(0, int(nchwc_cases().size())),
                                            ::testing::Bool()),
                         [](const auto& info) {
                             return std::string(nchwc_cases()[std::get<0>(info.param)].name) +
                                    (std::get<1>(info.param) ? "_generic" : "_x86");
                         });

// The tail alter_op_layout leaves in the convolution's group: a bias in the output's blocks,
// then relu, for the blocked and the depthwise form.
TEST(Conv2DNCHWc, FusedBiasRelu) {
    for (int index : {0, 4}) {
        const NCHWcCase c = nchwc_cases()[index];
        auto x = random_tensor(c.x, 3), w = random_tensor(c.w, 4);
        auto bias = random_tensor({1, c.w[0], 1, 1}, 5);
        auto [xb, wb] = blocked_operands(c, x, w);
        std::string out_layout = "NCHW" + block_str(c.out_block, 'c');
        NDArray yb = run_op("nn.conv2d_nchwc", blocked_attrs(c), {xb, wb},
                            {{"add", {relayout(bias, "NCHW", out_layout)}}, {"nn.relu", {}}});
        NDArray y = relayout(yb, out_layout, "NCHW");
        std::vector<double> want = conv2d_reference(x, w, plain_attrs(c));
        int64_t plane = static_cast<int64_t>(want.size()) / c.w[0];
        for (size_t i = 0; i < want.size(); ++i) {
            want[i] = std::max(0.0, want[i] + bias.data<float>()[i / plane]);
        }
        testing::expect_close(y, want, 1e-4, std::string(c.name) + "+add+relu");
    }
}

TEST(Conv2DNCHWcErrors, OperandsMustMatchTheirBlocks) {
    Conv2DNCHWcAttrs a;
    // The weight's input block (8) is not the data's (16).
    std::string e =
        testing::type_error("nn.conv2d_nchwc", a, {{1, 2, 8, 8, 16}, {2, 4, 3, 3, 8, 16}});
    EXPECT_NE(e.find("does not read the channels"), std::string::npos) << e;
    e = testing::type_error("nn.conv2d_nchwc", a, {{1, 2, 8, 8, 16}, {32, 32, 3, 3}});
    EXPECT_NE(e.find("the weight must be OIHW<i>i<o>o"), std::string::npos) << e;
    e = testing::type_error("nn.conv2d_nchwc", a, {{1, 32, 8}, {2, 2, 3, 3, 16, 16}});
    EXPECT_NE(e.find("the data must be NCHW or NCHW<b>c"), std::string::npos) << e;
    // Depthwise with a weight block other than the data's.
    a.groups = 32;
    e = testing::type_error("nn.conv2d_nchwc", a, {{1, 2, 8, 8, 16}, {4, 1, 3, 3, 1, 8}});
    EXPECT_NE(e.find("groups=32 takes blocked data"), std::string::npos) << e;
    // The window checks of nn.conv2d, under this op's name.
    a.groups = 1;
    a.strides = {0, 1};
    e = testing::type_error("nn.conv2d_nchwc", a, {{1, 2, 8, 8, 16}, {2, 2, 3, 3, 16, 16}});
    EXPECT_NE(e.find("nn.conv2d_nchwc"), std::string::npos) << e;
    EXPECT_NE(e.find("strides"), std::string::npos) << e;
}

}  // namespace
}  // namespace anvil
