// Attributes and schedules of the convolution family (ops/conv.cpp): nn.conv2d and
// nn.conv2d_transpose, NCHW data with OIHW (conv2d) / IOHW (conv2d_transpose) weights, and their
// volumetric forms nn.conv3d and nn.conv3d_transpose (NCDHW data, OIDHW / IODHW weights).
#pragma once

#include <string>
#include <vector>

#include "graph/attrs.h"
#include "te/config_space.h"
#include "te/schedule.h"

namespace anvil::ops {

// nn.conv2d(data[N, C, H, W], weight[O, C/groups, KH, KW]) -> [N, O, OH, OW]
//   OH = (H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) / stride_h + 1 (floor)
struct Conv2DAttrs : graph::AttrsBase<Conv2DAttrs> {
    static constexpr const char* kTypeName = "Conv2DAttrs";
    std::vector<int64_t> strides{1, 1};        // [h, w]
    std::vector<int64_t> padding{0, 0, 0, 0};  // [top, left, bottom, right]
    std::vector<int64_t> dilation{1, 1};       // [h, w]
    int64_t groups = 1;  // C and O divisible by it; C == O == groups: depthwise
    // void: a float convolution in the data's type; int32: integer operands (int8, uint8,
    // int16, int32, data and weight may differ) summed in int32 (ops/product_dtype.h).
    DataType out_dtype = DataType::void_();
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("dilation", &dilation);
        v.visit("groups", &groups);
        v.visit("out_dtype", &out_dtype);
    }
};

// nn.conv2d_transpose(data[N, C, H, W], weight[C, O/groups, KH, KW]) -> [N, O, OH, OW]
//   OH = (H - 1) * stride_h - pad_top - pad_bottom + dilation_h * (KH - 1) + output_padding_h + 1
// (ONNX ConvTranspose; an explicit output_shape is turned into padding by the importer).
struct Conv2DTransposeAttrs : graph::AttrsBase<Conv2DTransposeAttrs> {
    static constexpr const char* kTypeName = "Conv2DTransposeAttrs";
    std::vector<int64_t> strides{1, 1};
    std::vector<int64_t> padding{0, 0, 0, 0};  // [top, left, bottom, right]
    std::vector<int64_t> output_padding{0, 0};
    std::vector<int64_t> dilation{1, 1};
    int64_t groups = 1;
    DataType out_dtype = DataType::void_();  // as nn.conv2d's
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("output_padding", &output_padding);
        v.visit("dilation", &dilation);
        v.visit("groups", &groups);
        v.visit("out_dtype", &out_dtype);
    }
};

// nn.conv3d(data[N, C, D, H, W], weight[O, C/groups, KD, KH, KW]) -> [N, O, OD, OH, OW]
//   each output extent as nn.conv2d's.
struct Conv3DAttrs : graph::AttrsBase<Conv3DAttrs> {
    static constexpr const char* kTypeName = "Conv3DAttrs";
    std::vector<int64_t> strides{1, 1, 1};           // [d, h, w]
    std::vector<int64_t> padding{0, 0, 0, 0, 0, 0};  // [front, top, left, back, bottom, right]
    std::vector<int64_t> dilation{1, 1, 1};          // [d, h, w]
    int64_t groups = 1;                              // C and O divisible by it
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("dilation", &dilation);
        v.visit("groups", &groups);
    }
};

// nn.conv3d_transpose(data[N, C, D, H, W], weight[C, O/groups, KD, KH, KW]) -> [N, O, OD, OH, OW]
//   each output extent as nn.conv2d_transpose's.
struct Conv3DTransposeAttrs : graph::AttrsBase<Conv3DTransposeAttrs> {
    static constexpr const char* kTypeName = "Conv3DTransposeAttrs";
    std::vector<int64_t> strides{1, 1, 1};
    std::vector<int64_t> padding{0, 0, 0, 0, 0, 0};  // [front, top, left, back, bottom, right]
    std::vector<int64_t> output_padding{0, 0, 0};
    std::vector<int64_t> dilation{1, 1, 1};
    int64_t groups = 1;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("output_padding", &output_padding);
        v.visit("dilation", &dilation);
        v.visit("groups", &groups);
    }
};

// Weight pre-packing (graph pass prepack_weights, folded at compile time):
//   nn.conv2d_pack_weight(weight[O, C/groups, KH, KW]) -> [ceil(O/VB), C/groups, KH, KW, VB]
//     VB output channels contiguous, zero past O; VB is `block` when given (a tuning choice,
//     one of conv2d_weight_block_choices), else chosen like nn.conv2d's compute does
//     (conv2d_weight_block); the weight unchanged when that is 0 (depthwise, narrow groups).
//   nn.conv2d_packed(data[N, C, H, W], packed weight) -> [N, channels, OH, OW]
//     nn.conv2d reading the packed weight: no packing stage in the kernel. A weight still
//     [O, C/groups, KH, KW] (O == channels) is the direct form, unblocked.
struct Conv2DPackWeightAttrs : graph::AttrsBase<Conv2DPackWeightAttrs> {
    static constexpr const char* kTypeName = "Conv2DPackWeightAttrs";
    int64_t groups = 1;
    int64_t block = -1;  // the output-channel block; -1: nn.conv2d's rule
    // The weight of a uint8 x int8 or bfloat16 convolution in words of input channels (int32,
    // pack_weight_words), as prepack_weights packs those (block -1: kWordBlock; alter_op_layout
    // asks 8 or 16, the output block of nn.conv2d_nchwc).
    bool words = false;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("groups", &groups);
        v.visit("block", &block);
        v.visit("words", &words);
    }
};

// The nn.conv2d attributes (window and groups) of an op that computes nn.conv2d in another
// form: nn.conv2d_packed, nn.conv2d_nchwc.
template <class A>
Conv2DAttrs conv2d_attrs_of(const A& a) {
    Conv2DAttrs c;
    c.strides = a.strides;
    c.padding = a.padding;
    c.dilation = a.dilation;
    c.groups = a.groups;
    if constexpr (requires { a.out_dtype; }) c.out_dtype = a.out_dtype;
    return c;
}

// The output-channel block nn.conv2d's compute gives a weight [oc, icg, kh, kw] with `groups`
// (0: the direct form, which computes rows as they are stored), and every block a tuning record
// may choose instead: 0, and 8, 16, 32 (padded past oc with one group; dividing oc / groups
// with several, so that a block stays inside one group).
int64_t conv2d_weight_block(int64_t groups, int64_t oc, int64_t icg, int64_t kh, int64_t kw);
std::vector<int64_t> conv2d_weight_block_choices(int64_t groups, int64_t oc);

struct Conv2DPackedAttrs : graph::AttrsBase<Conv2DPackedAttrs> {
    static constexpr const char* kTypeName = "Conv2DPackedAttrs";
    std::vector<int64_t> strides{1, 1};        // as Conv2DAttrs
    std::vector<int64_t> padding{0, 0, 0, 0};  // [top, left, bottom, right]
    std::vector<int64_t> dilation{1, 1};
    int64_t groups = 1;
    int64_t channels = 0;  // O, the output channels (the packed weight may pad them)
    // The weight packed in words (pack_weight_words): 4 channels per word for uint8 data and an
    // int8 weight (int32 sums), 2 for bfloat16 data and weight (float32 sums); 0: not in words
    int64_t words = 0;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("dilation", &dilation);
        v.visit("groups", &groups);
        v.visit("channels", &channels);
        v.visit("words", &words);
    }
};

// nn.conv2d_nchwc: nn.conv2d on channel-blocked data (graph pass alter_op_layout), the
// output in blocks of the weight's `ob` channels:
//   data [N, C/ib, H, W, ib] (NCHW<ib>c) or [N, C, H, W] (NCHW, for few input channels: a stem)
//   weight [O/ob, C/wi, KH, KW, wi, ob] (OIHW<wi>i<ob>o, wi == ib for blocked data),
//     or for depthwise convolutions (groups == C == O, blocked data) [C/ob, 1, KH, KW, 1, ob]
//     with ob == ib
//   -> [N, O/ob, OH, OW, ob] (NCHW<ob>c), OH and OW as nn.conv2d's.
// A quantized convolution (uint8 data, int8 weight, out_dtype int32) and a bfloat16 one
// (out_dtype float32, to_mixed_precision's) are blocked too: depthwise with the weight as above,
// products in the sum's type; one group with the weight in words of P input channels (P = 4
// for int8, 2 for bfloat16; pack_weight_words with block ob): int32 [O/ob, ceil(C/P), KH, KW,
// ob], data NCHW<ib>c with ib a multiple of P (a word is P channels of one block) or NCHW,
// summed by dot_u8s8 (vpdpbusd) or dot_bf16 (vdpbf16ps), or by AMX tile products on targets
// with them (schedule_conv2d_nchwc_amx, tir's tensorize_amx).
// Other groups are not blocked (nn.conv2d keeps them).
struct Conv2DNCHWcAttrs : graph::AttrsBase<Conv2DNCHWcAttrs> {
    static constexpr const char* kTypeName = "Conv2DNCHWcAttrs";
    std::vector<int64_t> strides{1, 1};        // as Conv2DAttrs
    std::vector<int64_t> padding{0, 0, 0, 0};  // [top, left, bottom, right]
    std::vector<int64_t> dilation{1, 1};
    int64_t groups = 1;                      // 1, or the channel count (depthwise)
    DataType out_dtype = DataType::void_();  // as nn.conv2d's
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("dilation", &dilation);
        v.visit("groups", &groups);
        v.visit("out_dtype", &out_dtype);
    }
};

// Winograd convolution F(m, 3) (Lavin & Gray) for 3x3 stride-1 convolutions on channel-blocked
// data (ops/conv_winograd.cpp), alpha = m + 2:
//   nn.winograd_weight_transform(weight[O, C, 3, 3]) -> U[alpha, alpha, O/ob, C, ob]
//     U[xi, nu, kb, c, ki] = sum over (i, j) of G[xi, i] * w[kb * ob + ki, c, i, j] * G[nu, j]
//     (computed in float64, rounded once; constant-folded at compile time: O % ob == 0)
//   nn.conv2d_winograd_nchwc(data[N, C/ib, H, W, ib], U) -> [N, O/ob, OH, OW, ob]
//     OH = H + top + bottom - 2, OW = W + left + right - 2; the convolution of nn.conv2d_nchwc
//     with the 3x3 weight U was made from, stride 1, dilation 1, groups 1.
// Error bound (float32, tests/e2e/ops/nn_conv_winograd_test.cpp), per output element y with
// exact value y_ref over its receptive field of data x and weight w:
//   |y - y_ref| <= c_m * sum(|x| * |w|),  c_2 = 5e-7, c_4 = 6e-6
// measured: at most 9.5e-8 (1.6 * 2^-24) for F(2,3) and 1.3e-6 (22 * 2^-24) for F(4,3) on
// uniform data in [-1, 1) with 8 to 64 channels; the constants leave about 4-5x of margin.
// F(4,3)'s transforms have entries up to 8 (A^T) and 5 (B^T), hence its larger error.
struct Conv2DWinogradWeightAttrs : graph::AttrsBase<Conv2DWinogradWeightAttrs> {
    static constexpr const char* kTypeName = "Conv2DWinogradWeightAttrs";
    int64_t tile_size = 4;   // m: 2 or 4
    int64_t out_block = 16;  // ob: the output channel block of the convolution's result
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("tile_size", &tile_size);
        v.visit("out_block", &out_block);
    }
};

struct Conv2DWinogradAttrs : graph::AttrsBase<Conv2DWinogradAttrs> {
    static constexpr const char* kTypeName = "Conv2DWinogradAttrs";
    std::vector<int64_t> padding{0, 0, 0, 0};  // [top, left, bottom, right]
    std::vector<int64_t> strides{1, 1};        // must be 1 (kept so a wrong use is an error)
    std::vector<int64_t> dilation{1, 1};       // must be 1
    int64_t tile_size = 4;                     // m: 2 or 4, as the weight transform's
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("padding", &padding);
        v.visit("strides", &strides);
        v.visit("dilation", &dilation);
        v.visit("tile_size", &tile_size);
    }
};

// Zero padding of the spatial dimensions 2 .. 2 + nd of `x` (nd = p.size() / 2; dimensions
// after them, such as the channel block of NCHW16c data, are kept) as its own stage
// "<name>_pad", or `x` itself when every pad is 0. `p` holds the begins, then the ends
// ([top, left, bottom, right] for 2-D data).
te::Tensor pad_input(const std::string& name, const te::Tensor& x, const std::vector<int64_t>& p);

// Input channels per 32-bit word of nn.conv2d's word-packed form (ops/conv_words.cpp) for
// these data, weight and sum types: 4 for uint8 x int8 summed in int32 (dot_u8s8), 2 for
// bfloat16 x bfloat16 summed in float32 (dot_bf16); 0 where the form does not apply (other
// types, several groups). Input channels past a multiple of it are zero in the last word.
int64_t conv_channels_per_word(DataType data, DataType weight, DataType acc, int64_t groups);
// The NCHW result `out_shape` of a channel-blocked result [N, O/vb, OH, OW, vb] (stage
// `name`): how both blocked convolution forms end.
te::Tensor unblock_channels(const std::string& name, const te::Tensor& blocked, int64_t vb,
                            const std::vector<PrimExpr>& out_shape);

// Output channels per block of that form: an AVX-512 register of int32 or float32.
inline constexpr int64_t kWordBlock = 16;
// The OIHW int8 or bfloat16 weight `w` in words: int32 [ceil(O/B), ceil(C/P), KH, KW, B] for
// the block B (kWordBlock by default; nn.conv2d_nchwc's blocks 8 and 16 too), each int32 the
// weights of P consecutive input channels (P = 4 for int8, 2 for bfloat16; zero past O and C);
// stage "<name>_pack".
te::Tensor pack_weight_words(const std::string& name, const te::Tensor& w,
                             int64_t block = kWordBlock);
// nn.conv2d_nchwc of uint8 or bfloat16 data `xp` (padded; NCHW<ib>c with ib a multiple of P,
// or NCHW) and the weight in words `wq` [O/ob, ceil(C/P), KH, KW, ob] (P = 4 for int8, 2 for
// bfloat16): [N, O/ob, OH, OW, ob] int32 (dot_u8s8) or float32 (dot_bf16) sums, each data word
// read from its P adjacent channels.
te::Tensor conv2d_nchwc_words(const std::string& name, const te::Tensor& xp, const te::Tensor& wq,
                              const std::vector<int64_t>& strides,
                              const std::vector<int64_t>& dilation,
                              const std::vector<PrimExpr>& out_shape);
// That convolution of the padded uint8 or bfloat16 input `xp` and the packed weight `wq`:
// staged words of the input ("<name>_words", tag kChannelWordsTag), the blocked reduction
// "<name>_blocked" [N, O/16, OH, OW, 16] (int32 or float32 sums), then NCHW (`out_shape`).
te::Tensor conv2d_words(const std::string& name, const te::Tensor& xp, const te::Tensor& wq,
                        const std::vector<int64_t>& strides, const std::vector<int64_t>& dilation,
                        const std::vector<PrimExpr>& out_shape);

// The input of a transposed convolution as that of a stride-1 one: spread out by `strides`
// (zeros between), after `lead` zeros and extended to `extents` (the spatial extents), as its
// own stage "<name>_dilate".
te::Tensor dilate_input(const std::string& name, const te::Tensor& x,
                        const std::vector<PrimExpr>& extents, const std::vector<int64_t>& lead,
                        const std::vector<int64_t>& strides);

// The schedules of both ops (the computes share one structure: an optional padded/dilated
// input stage, then either a channel-blocked reduction over packed weights, unpacked to NCHW,
// or a direct reduction for depthwise/narrow-group convolutions).
//   x86: register-blocked micro-kernel (rows of output pixels x a vector block of output
//        channels, reduction outermost), parallel over (n, channel block, output row).
//   generic: every stage at root, in the order of the compute.
void schedule_conv2d_x86(te::Schedule& s, const te::Tensor& anchor,
                         const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);
void schedule_conv2d_generic(te::Schedule& s, const te::Tensor& anchor,
                             const std::vector<te::Tensor>& outputs,
                             const te::ScheduleContext& ctx);

// The schedule of nn.conv2d_nchwc (its generic one is schedule_conv2d_generic).
//   x86: register tile of output pixels of a row x one or two channel blocks, vectors along
//        the block, reduction outermost inside it; parallel over (n, block tiles, output row).
void schedule_conv2d_nchwc_x86(te::Schedule& s, const te::Tensor& anchor,
                               const std::vector<te::Tensor>& outputs,
                               const te::ScheduleContext& ctx);

// The schedules of nn.conv2d_winograd_nchwc (ops/conv_winograd_schedule.cpp).
//   x86: input transform at root (parallel over tiles, vectors along the channels); the batched
//        product register-tiled (tile_p tiles x tile_kb channel blocks, vectors along the block,
//        the channel reduction inside), parallel over (alpha, alpha, block tiles); the output
//        transform as the output stage (fused epilogue inlined), parallel over (n, block, row).
//   generic: every stage at root.
void schedule_conv2d_winograd_x86(te::Schedule& s, const te::Tensor& anchor,
                                  const std::vector<te::Tensor>& outputs,
                                  const te::ScheduleContext& ctx);
void schedule_conv2d_winograd_generic(te::Schedule& s, const te::Tensor& anchor,
                                      const std::vector<te::Tensor>& outputs,
                                      const te::ScheduleContext& ctx);
// The weight transform's: x86 unrolls the alpha x alpha outputs of a weight so that the
// transform's zero and unit coefficients fold; generic leaves it at root.
void schedule_winograd_weight_x86(te::Schedule& s, const te::Tensor& anchor,
                                  const std::vector<te::Tensor>& outputs,
                                  const te::ScheduleContext& ctx);
void schedule_winograd_weight_generic(te::Schedule& s, const te::Tensor& anchor,
                                      const std::vector<te::Tensor>& outputs,
                                      const te::ScheduleContext& ctx);

// The schedules of nn.conv3d and nn.conv3d_transpose, whose computes are a direct reduction
// over (input channel, kd, kh, kw) after an optional padded/dilated input stage.
//   x86: a vector along the output row per tap, parallel over (n, channel, depth, row).
//   generic: every stage at root.
void schedule_conv3d_x86(te::Schedule& s, const te::Tensor& anchor,
                         const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);
void schedule_conv3d_generic(te::Schedule& s, const te::Tensor& anchor,
                             const std::vector<te::Tensor>& outputs,
                             const te::ScheduleContext& ctx);

}  // namespace anvil::ops
