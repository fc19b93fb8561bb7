// nn.conv2d on 32-bit words of input channels: each int32 of the staged input holds consecutive
// channels of one pixel, each int32 of the packed weight the matching weights of one output
// channel, and one intrinsic sums their products per word:
//   uint8 data x int8 weights, int32 sums (a quantized convolution after canonicalize_qnn):
//     four channels per word, dot_u8s8, one AVX-512 VNNI vpdpbusd per 16 output channels (64
//     multiply-adds, where the widened form of ops/conv.cpp takes a vpmovsxbd, a vpmulld and a
//     vpaddd per 16);
//   bfloat16 data x bfloat16 weights, float32 sums (to_mixed_precision's convolutions):
//     two channels per word, dot_bf16, one AVX-512 BF16 vdpbf16ps per 16 output channels (32
//     multiply-adds, where a float32 FMA does 16).
// The result has the blocked form [N, O/16, OH, OW, 16] the x86 schedule tiles
// (schedule_conv2d_x86), then NCHW. nn.conv2d_nchwc's words form (conv2d_nchwc_words) reads
// the same words straight from NCHW<b>c data (a word is P adjacent channels of a block, no
// staging), with the weight in blocks of 8 or 16 output channels, and stays blocked; on AMX
// targets its schedule makes tile products of it (tdpbf16ps / tdpbusd: tir's tensorize_amx).
#include <array>

#include "ir/intrinsics.h"
#include "ops/conv.h"
#include "ops/tile_schedule.h"
#include "te/math.h"
#include "te/reduction.h"

namespace anvil::ops {

namespace {

PrimExpr I(int64_t v) {
    return make_int(DataType::int32(), v);
}

// Channels per word of an element type: 4 bytes or 2 bfloat16.
int64_t per_word(DataType t) {
    return t.is_bfloat() ? 2 : 4;
}

// One int32 of `parts` (element k in bits [k * w, (k + 1) * w) for w = 32 / parts.size()).
PrimExpr word(const std::vector<PrimExpr>& parts) {
    DataType i32 = DataType::int32();
    const int64_t bits = 32 / static_cast<int64_t>(parts.size());
    PrimExpr v;
    for (size_t k = 0; k < parts.size(); ++k) {
        const PrimExpr& e = parts[k];
        // The element's bits, zero-extended: bfloat16 through uint16, bytes masked.
        PrimExpr b = e.dtype().is_bfloat()
                         ? cast(i32, make_call(DataType::uint(16), intrin::kReinterpret, {e}))
                         : make_call(i32, intrin::kBitwiseAnd, {cast(i32, e), I(255)});
        if (k > 0) b = make_call(i32, intrin::kShiftLeft, {b, I(bits * int64_t(k))});
        v = v.defined() ? make_call(i32, intrin::kBitwiseOr, {v, b}) : b;
    }
    return v;
}

// The NCHW data `xp` in words of `per_word(xp)` channels: [N, ceil(C/P), H, W] int32, zero
// past C; its own stage "<name>_words" (tag kChannelWordsTag: the schedule makes it first).
te::Tensor channel_words(const std::string& name, const te::Tensor& xp) {
    const auto& s = xp.shape();
    const int64_t per = per_word(xp.dtype());
    const int64_t c = const_dim(s[1], "conv2d input channels");
    return te::set_tag(
        te::compute(
            {s[0], I((c + per - 1) / per), s[2], s[3]},
            [&](std::span<const PrimExpr> i) {
                std::vector<PrimExpr> parts;
                for (int64_t k = 0; k < per; ++k) {
                    PrimExpr ch = i[1] * I(per) + I(k);
                    parts.push_back(c % per == 0
                                        ? xp(i[0], ch, i[2], i[3])
                                        : te::if_then_else(ch < I(c), xp(i[0], ch, i[2], i[3]),
                                                           make_const(xp.dtype(), 0)));
                }
                return word(parts);
            },
            name + "_words"),
        kChannelWordsTag);
}

}  // namespace

int64_t conv_channels_per_word(DataType data, DataType weight, DataType acc, int64_t groups) {
    if (groups != 1) return 0;
    if (data == DataType::uint(8) && weight == DataType::int_(8) && acc == DataType::int32()) {
        return 4;
    }
    if (data.is_bfloat() && weight.is_bfloat() && acc == DataType::float32()) return 2;
    return 0;
}

te::Tensor pack_weight_words(const std::string& name, const te::Tensor& w, int64_t block) {
    int64_t oc = const_dim(w.shape()[0], "conv2d output channels");
    int64_t c = const_dim(w.shape()[1], "conv2d input channels");
    int64_t kh = const_dim(w.shape()[2], "conv2d kernel height");
    int64_t kw = const_dim(w.shape()[3], "conv2d kernel width");
    const int64_t per = per_word(w.dtype());
    int64_t ocb = (oc + block - 1) / block;
    return te::set_tag(
        te::compute(
            {I(ocb), I((c + per - 1) / per), I(kh), I(kw), I(block)},
            [&](std::span<const PrimExpr> i) {
                PrimExpr o = i[0] * I(block) + i[4];
                std::vector<PrimExpr> parts;
                for (int64_t k = 0; k < per; ++k) {
                    PrimExpr ch = i[1] * I(per) + I(k);
                    PrimExpr v = w(o, ch, i[2], i[3]);
                    PrimExpr inside;
                    if (ocb * block != oc) inside = o < I(oc);
                    if (c % per != 0) {
                        inside = inside.defined() ? (inside && ch < I(c)) : ch < I(c);
                    }
                    parts.push_back(inside.defined()
                                        ? te::if_then_else(inside, v, make_const(v.dtype(), 0))
                                        : v);
                }
                return word(parts);
            },
            name + "_pack"),
        kPackedWeightTag);
}

te::Tensor conv2d_words(const std::string& name, const te::Tensor& xp, const te::Tensor& wq,
                        const std::vector<int64_t>& strides, const std::vector<int64_t>& dilation,
                        const std::vector<PrimExpr>& out_shape) {
    constexpr int64_t vb = kWordBlock;
    const auto& s = xp.shape();
    const bool bf16 = xp.dtype().is_bfloat();
    const int64_t per = per_word(xp.dtype());
    int64_t c = const_dim(s[1], "conv2d input channels");
    int64_t cw = (c + per - 1) / per;  // words, the last one zero past c (an RGB image's 3)
    int64_t kh = const_dim(wq.shape()[2], "conv2d kernel height");
    int64_t kw = const_dim(wq.shape()[3], "conv2d kernel width");
    int64_t ocb = const_dim(wq.shape()[0], "conv2d output channel blocks");
    te::Tensor xw = channel_words(name, xp);
    auto rc = te::reduce_axis(I(cw), "rc");
    auto rh = te::reduce_axis(I(kh), "ry");
    auto rw = te::reduce_axis(I(kw), "rx");
    te::Tensor blocked = te::compute(
        {out_shape[0], I(ocb), out_shape[2], out_shape[3], I(vb)},
        [&](std::span<const PrimExpr> i) {
            PrimExpr x = xw(i[0], rc->var, i[2] * I(strides[0]) + rh->var * I(dilation[0]),
                            i[3] * I(strides[1]) + rw->var * I(dilation[1]));
            PrimExpr k = wq(i[1], rc->var, rh->var, rw->var, i[4]);
            PrimExpr dot = bf16 ? make_call(DataType::float32(), intrin::kDotBF16, {x, k})
                                : make_call(DataType::int32(), intrin::kDotU8S8, {x, k});
            return te::sum(dot, {rc, rh, rw});
        },
        name + "_blocked");
    return unblock_channels(name, blocked, vb, out_shape);
}

te::Tensor conv2d_nchwc_words(const std::string& name, const te::Tensor& xp, const te::Tensor& wq,
                              const std::vector<int64_t>& strides,
                              const std::vector<int64_t>& dilation,
                              const std::vector<PrimExpr>& out_shape) {
    const bool blocked = xp.ndim() == 5;
    const bool bf16 = xp.dtype().is_bfloat();
    const int64_t per = per_word(xp.dtype());
    // Words per block of blocked data; NCHW data (a stem's few channels) staged in words.
    const int64_t block_words =
        blocked ? const_dim(xp.shape()[4], "conv2d_nchwc data block") / per : 0;
    te::Tensor xw = blocked ? te::Tensor() : channel_words(name, xp);
    auto rc = te::reduce_axis(I(const_dim(wq.shape()[1], "conv2d_nchwc input words")), "rc");
    auto rh = te::reduce_axis(I(const_dim(wq.shape()[2], "conv2d_nchwc kernel height")), "ry");
    auto rw = te::reduce_axis(I(const_dim(wq.shape()[3], "conv2d_nchwc kernel width")), "rx");
    return te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            PrimExpr h = i[2] * I(strides[0]) + rh->var * I(dilation[0]);
            PrimExpr w = i[3] * I(strides[1]) + rw->var * I(dilation[1]);
            // A word of blocked data: P adjacent channels of a block (one 32-bit load once
            // combined).
            PrimExpr x;
            if (blocked) {
                std::vector<PrimExpr> parts;
                for (int64_t k = 0; k < per; ++k) {
                    parts.push_back(xp(i[0], floordiv(rc->var, I(block_words)), h, w,
                                       floormod(rc->var, I(block_words)) * I(per) + I(k)));
                }
                x = word(parts);
            } else {
                x = xw(i[0], rc->var, h, w);
            }
            PrimExpr k = wq(i[1], rc->var, rh->var, rw->var, i[4]);
            PrimExpr dot = bf16 ? make_call(DataType::float32(), intrin::kDotBF16, {x, k})
                                : make_call(DataType::int32(), intrin::kDotU8S8, {x, k});
            return te::sum(dot, {rc, rh, rw});
        },
        name);
}

}  // namespace anvil::ops
