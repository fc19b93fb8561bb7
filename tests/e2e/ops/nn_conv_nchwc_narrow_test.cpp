// The narrow-type forms of nn.conv2d_nchwc (ops/conv_nchwc.cpp, ops/conv_words.cpp), which
// alter_op_layout makes of uint8 x int8 convolutions summed in int32 and of bfloat16 ones summed
// in float32: one group with the weight in words of 4 or 2 input channels
// (nn.conv2d_pack_weight words=True, blocks of 8 or 16), on blocked data (blocks 8 and 16, as
// the output's or not) and on NCHW data (an RGB stem, channels not a multiple of a word), and
// the depthwise form on blocked uint8, int8 and bfloat16 data, at odd shapes (strides, dilation,
// padding, batches, 7-pixel rows), with the x86 and the generic schedules: the integer forms
// exact against the float reference of the same integers, the bfloat16 ones within float32
// rounding of the double reference of the same values. Plus the words form's type errors.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "codegen/llvm/llvm_module.h"
#include "conv_reference.h"
#include "driver/pipeline.h"
#include "errors/expect_message.h"
#include "nn_op_runner.h"
#include "ops/op_table.h"

namespace anvil {
namespace {

using runtime::NDArray;
using testing::relayout;
using testing::run_op;
using Shape = std::vector<int64_t>;

struct Int8Case {
    const char* name;
    Shape x, w;          // NCHW data, OIHW weight
    int64_t data_block;  // 0: NCHW data
    int64_t out_block;
    std::vector<int64_t> strides, padding, dilation;
    int64_t groups;
    bool int8_data = false;  // else uint8
};

std::vector<Int8Case> int8_cases() {
    return {
        {"3x3", {1, 32, 9, 10}, {48, 32, 3, 3}, 16, 16, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
        {"odd", {2, 16, 13, 11}, {24, 16, 3, 2}, 8, 8, {2, 1}, {1, 0, 2, 1}, {2, 1}, 1},
        // 16-channel data blocks into 8-channel output blocks and the reverse; 7-pixel rows.
        {"1x1_row7", {1, 64, 7, 7}, {24, 64, 1, 1}, 16, 8, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
        {"1x1_wide", {1, 24, 14, 14}, {32, 24, 1, 1}, 8, 16, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
        // 32-channel data blocks (8 words of uint8, 16 of bfloat16 per block).
        {"block32", {1, 64, 6, 9}, {16, 64, 3, 3}, 32, 16, {1, 2}, {1, 1, 1, 1}, {1, 1}, 1},
        // NCHW data: 3 channels (one word, zero past them), and 13.
        {"stem", {1, 3, 20, 22}, {16, 3, 7, 7}, 0, 16, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1},
        {"nchw_13", {1, 13, 8, 9}, {8, 13, 3, 3}, 0, 8, {1, 1}, {0, 1, 2, 1}, {1, 1}, 1},
        {"depthwise", {1, 32, 12, 13}, {32, 1, 3, 3}, 16, 16, {1, 1}, {1, 1, 1, 1}, {1, 1}, 32},
        {"depthwise_s2", {2, 24, 15, 14}, {24, 1, 3, 3}, 8, 8, {2, 2}, {1, 1, 1, 1}, {1, 1}, 24},
        {"depthwise_int8",
         {1, 16, 7, 7},
         {16, 1, 5, 5},
         16,
         16,
         {1, 2},
         {2, 2, 2, 2},
         {2, 1},
         16,
         true},
    };
}

ops::Conv2DNCHWcAttrs blocked_attrs(const Int8Case& c, bool bf16) {
    ops::Conv2DNCHWcAttrs a;
    a.strides = c.strides;
    a.padding = c.padding;
    a.dilation = c.dilation;
    a.groups = c.groups;
    a.out_dtype = bf16 ? DataType::float32() : DataType::int32();
    return a;
}

// The same convolution as nn.conv2d computes it (the reference's attributes).
ops::Conv2DAttrs plain_attrs(const Int8Case& c, bool bf16) {
    return ops::conv2d_attrs_of(blocked_attrs(c, bf16));
}

// The weight as alter_op_layout gives it: in words for one group, OIHW1i<b>o for depthwise.
NDArray blocked_weight(const Int8Case& c, const NDArray& w) {
    if (c.groups != 1) {
        return relayout(w, "OIHW", "OIHW1i" + std::to_string(c.out_block) + "o");
    }
    ops::Conv2DPackWeightAttrs pa;
    pa.words = true;
    pa.block = c.out_block;
    return run_op("nn.conv2d_pack_weight", pa, {w});
}

// (case, bfloat16 or not): every case as integers, the cases of unsigned data as bfloat16.
std::vector<std::pair<int, bool>> typed_cases() {
    std::vector<std::pair<int, bool>> all;
    for (int i = 0; i < int(int8_cases().size()); ++i) {
        all.push_back({i, false});
        if (!int8_cases()[i].int8_data) all.push_back({i, true});
    }
    return all;
}

class Conv2DNCHWcNarrow : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(Conv2DNCHWcNarrow, MatchesTheReference) {
    const auto [index, bf16] = typed_cases()[std::get<0>(GetParam())];
    const Int8Case c = int8_cases()[index];
    const bool generic = std::get<1>(GetParam());
    auto [x, xf] =
        bf16 ? testing::random_bfloat16(c.x, 11) : testing::random_bytes(c.x, 11, c.int8_data);
    auto [w, wf] = bf16 ? testing::random_bfloat16(c.w, 12) : testing::random_bytes(c.w, 12, true);
    const std::string data_layout = "NCHW" + std::to_string(c.data_block) + "c";
    NDArray xb = c.data_block ? relayout(x, "NCHW", data_layout) : x;
    NDArray yb = run_op("nn.conv2d_nchwc", blocked_attrs(c, bf16), {xb, blocked_weight(c, w)}, {},
                        generic ? ops::schedule_conv2d_generic : nullptr);
    ASSERT_EQ(yb.shape().size(), 5u) << c.name;
    ASSERT_EQ(yb.shape()[4], c.out_block) << c.name;
    ASSERT_EQ(yb.dtype().code, bf16 ? kDLFloat : kDLInt) << c.name;
    ASSERT_EQ(yb.dtype().bits, 32) << c.name;
    NDArray y = relayout(yb, "NCHW" + std::to_string(c.out_block) + "c", "NCHW");
    std::vector<double> want = testing::conv2d_reference(xf, wf, plain_attrs(c, bf16));
    ASSERT_EQ(size_t(y.num_elements()), want.size()) << c.name;
    if (!bf16) {
        for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_EQ(double(y.data<int32_t>()[i]), want[i]) << c.name << " element " << i;
        }
        return;
    }
    // float32 sums of exact products: a few ulps of the sum of magnitudes.
    std::vector<double> magnitude =
        testing::conv2d_reference(testing::abs_of(xf), testing::abs_of(wf), plain_attrs(c, true));
    for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(double(y.data<float>()[i]), want[i], 1e-5 * magnitude[i] + 1e-30)
            << c.name << " element " << i;
    }
}

// "<case>_<int8|bf16>_<x86|generic>".
std::string case_name(const ::testing::TestParamInfo<std::tuple<int, bool>>& info) {
    const std::pair<int, bool> typed = typed_cases()[std::get<0>(info.param)];
    return std::string(int8_cases()[typed.first].name) + (typed.second ? "_bf16" : "_int8") +
           (std::get<1>(info.param) ? "_generic" : "_x86");
}

INSTANTIATE_TEST_SUITE_P(Cases, Conv2DNCHWcNarrow,
                         ::testing::Combine(::testing::Range(0, int(typed_cases().size())),
                                            ::testing::Bool()),
                         case_name);

// On a CPU with AMX the cases with whole 32-byte tile rows (16-channel bfloat16 blocks,
// 32-channel uint8 ones) and at least 4 pixels per row compile to tile products (the AMX
// schedule, matched by tensorize_amx); the others, and every case elsewhere, to vdpbf16ps /
// vpdpbusd. Checked for a Sapphire Rapids target on every machine (compiled, not run) and for
// this machine, where MatchesTheReference runs whichever form it gets.
TEST(Conv2DNCHWcNarrowAmx, TileProductsWhereTheCpuHasAmx) {
    const bool host_amx = Target::host().has_feature("amx-tile");
    // Checked builds keep the loops (tensorize_amx does not run: its checks would see a tile's
    // first element only).
    const bool checked = driver::checked_by_default() != tir::BoundChecks::off;
    const std::vector<std::tuple<std::string, bool, bool>> cases = {
        {"3x3", true, true},   {"block32", true, true}, {"block32", false, true},
        {"3x3", false, false},  // uint8 in 16-channel blocks: 16-byte rows
        {"odd", true, false},   // 8-channel blocks
        {"stem", true, false},  // NCHW data
    };
    const std::vector<Int8Case> all = int8_cases();
    for (const std::string target :
         {"llvm -mtriple=x86_64-pc-linux-gnu -mcpu=sapphirerapids", "llvm -mcpu=native"}) {
        const bool amx = target != "llvm -mcpu=native" || host_amx;
        for (const auto& [name, bf16, tiles] : cases) {
            auto it = std::find_if(all.begin(), all.end(),
                                   [&](const Int8Case& k) { return k.name == name; });
            ASSERT_NE(it, all.end()) << name;
            const Int8Case& c = *it;
            auto x = bf16 ? testing::random_bfloat16(c.x, 1).first
                          : testing::random_bytes(c.x, 1, false).first;
            auto w = bf16 ? testing::random_bfloat16(c.w, 2).first
                          : testing::random_bytes(c.w, 2, true).first;
            NDArray xb =
                c.data_block ? relayout(x, "NCHW", "NCHW" + std::to_string(c.data_block) + "c") : x;
            testing::OpKernel k =
                testing::compile_op("nn.conv2d_nchwc", blocked_attrs(c, bf16),
                                    {xb, blocked_weight(c, w)}, {}, nullptr, target);
            const std::string text = codegen::get_source(k.module, "asm");
            EXPECT_EQ(text.find(bf16 ? "tdpbf16ps" : "tdpbusd") != std::string::npos,
                      tiles && amx && !checked)
                << target << ": " << name << (bf16 ? " bf16" : " int8");
        }
    }
}

graph::Type tensor(const Shape& shape, DataType t) {
    return graph::make_tensor_type(shape, t);
}

TEST(Conv2DNCHWcNarrowErrors, WordsTakeWholeWordsOfUint8OrBfloat16Data) {
    const graph::Op& op = ops::get_op("nn.conv2d_nchwc");
    ops::Conv2DNCHWcAttrs a;
    a.out_dtype = DataType::int32();
    auto type_of = [&](const Shape& data, DataType t, const Shape& weight) {
        std::vector<graph::Type> args{tensor(data, t), tensor(weight, DataType::int32())};
        return op.infer_type(op, args, a, SourceLoc{});
    };
    const DataType u8 = DataType::uint(8);
    const char* head = "nn.conv2d_nchwc: a weight in words";
    // float32 data; a data block of 6 channels, which splits words; 24 channels, which are 6
    // words, not the weight's 8.
    EXPECT_MESSAGE(type_of({1, 2, 8, 8, 16}, DataType::float32(), {2, 8, 3, 3, 16}), head,
                   "Tensor[(1, 2, 8, 8, 16), float32]");
    EXPECT_MESSAGE(type_of({1, 5, 8, 8, 6}, u8, {2, 8, 3, 3, 16}), head,
                   "Tensor[(1, 5, 8, 8, 6), uint8]");
    EXPECT_MESSAGE(type_of({1, 3, 8, 8, 8}, u8, {2, 8, 3, 3, 16}), head,
                   "Tensor[(1, 3, 8, 8, 8), uint8] and Tensor[(2, 8, 3, 3, 16), int32]");
    // bfloat16 data (words of 2 channels) summed in int32, and in blocks of 3 channels.
    EXPECT_MESSAGE(type_of({1, 2, 8, 8, 16}, DataType::bfloat16(), {2, 16, 3, 3, 16}), head,
                   "bfloat16] and Tensor[(2, 16, 3, 3, 16), int32] with groups=1, out_dtype=int32");
    a.out_dtype = DataType::float32();
    EXPECT_MESSAGE(type_of({1, 6, 8, 8, 3}, DataType::bfloat16(), {2, 9, 3, 3, 16}), head,
                   "Tensor[(1, 6, 8, 8, 3), bfloat16]");
    // Sums in the data's type, and several groups.
    a.out_dtype = DataType::void_();
    EXPECT_MESSAGE(type_of({1, 2, 8, 8, 16}, u8, {2, 8, 3, 3, 16}), head, "out_dtype=void");
    a.out_dtype = DataType::int32();
    a.groups = 2;
    EXPECT_MESSAGE(type_of({1, 2, 8, 8, 16}, u8, {2, 8, 3, 3, 16}), head, "groups=2");
    // The pack op's blocks: 8 and 16.
    ops::Conv2DPackWeightAttrs pa;
    pa.words = true;
    pa.block = 32;
    const graph::Op& pack = ops::get_op("nn.conv2d_pack_weight");
    std::vector<graph::Type> weight{tensor({32, 32, 3, 3}, DataType::int_(8))};
    EXPECT_MESSAGE(pack.infer_type(pack, weight, pa, SourceLoc{}),
                   "nn.conv2d_pack_weight: words pack an int8 or bfloat16 weight of one group "
                   "in blocks of 8 or 16",
                   "block=32");
}

}  // namespace
}  // namespace anvil
