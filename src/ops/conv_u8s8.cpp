// nn.conv2d of uint8 data and int8 weights summed in int32 (a quantized convolution after
// canonicalize_qnn) four input channels at a time: each int32 of the staged input holds the
// bytes of four consecutive channels of one pixel, each int32 of the packed weight the four
// matching weights of one output channel, and intrinsic dot_u8s8 sums their products, which is
// one AVX-512 VNNI vpdpbusd per 16 output channels (codegen/llvm), 64 multiply-adds where the
// widened form (ops/conv.cpp) takes a vpmovsxbd, a vpmulld and a vpaddd per 16. The result has
// the blocked form [N, O/16, OH, OW, 16] the x86 schedule tiles (schedule_conv2d_x86).
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

// One int32 of four bytes (byte k from bytes[k], of an 8-bit integer type), little-endian.
PrimExpr quad(const std::array<PrimExpr, 4>& bytes) {
    DataType i32 = DataType::int32();
    PrimExpr v;
    for (int k = 0; k < 4; ++k) {
        PrimExpr b = make_call(i32, intrin::kBitwiseAnd, {cast(i32, bytes[k]), I(255)});
        if (k > 0) b = make_call(i32, intrin::kShiftLeft, {b, I(8 * k)});
        v = v.defined() ? make_call(i32, intrin::kBitwiseOr, {v, b}) : b;
    }
    return v;
}

}  // namespace

bool is_u8s8_conv(DataType data, DataType weight, DataType acc, int64_t groups) {
    return data == DataType::uint(8) && weight == DataType::int_(8) && acc == DataType::int32() &&
           groups == 1;
}

te::Tensor pack_u8s8_weight(const std::string& name, const te::Tensor& w) {
    int64_t oc = const_dim(w.shape()[0], "conv2d output channels");
    int64_t c = const_dim(w.shape()[1], "conv2d input channels");
    int64_t kh = const_dim(w.shape()[2], "conv2d kernel height");
    int64_t kw = const_dim(w.shape()[3], "conv2d kernel width");
    int64_t ocb = (oc + kU8S8Block - 1) / kU8S8Block;
    return te::set_tag(
        te::compute(
            {I(ocb), I((c + 3) / 4), I(kh), I(kw), I(kU8S8Block)},
            [&](std::span<const PrimExpr> i) {
                PrimExpr o = i[0] * I(kU8S8Block) + i[4];
                std::array<PrimExpr, 4> b;
                for (int k = 0; k < 4; ++k) {
                    PrimExpr ch = i[1] * I(4) + I(k);
                    PrimExpr v = w(o, ch, i[2], i[3]);
                    PrimExpr inside;
                    if (ocb * kU8S8Block != oc) inside = o < I(oc);
                    if (c % 4 != 0) {
                        inside = inside.defined() ? (inside && ch < I(c)) : ch < I(c);
                    }
                    b[k] = inside.defined() ? te::if_then_else(inside, v, make_const(v.dtype(), 0))
                                            : v;
                }
                return quad(b);
            },
            name + "_pack"),
        kPackedWeightTag);
}

te::Tensor conv2d_u8s8(const std::string& name, const te::Tensor& xp, const te::Tensor& wq,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& dilation,
                       const std::vector<PrimExpr>& out_shape) {
    constexpr int64_t vb = kU8S8Block;
    const auto& s = xp.shape();
    int64_t c = const_dim(s[1], "conv2d input channels");
    int64_t c4 = (c + 3) / 4;  // quads, the last one zero past c (an RGB image's 3 channels)
    int64_t ocb = const_dim(wq.shape()[0], "conv2d output channel blocks");
    int64_t kh = const_dim(wq.shape()[2], "conv2d kernel height");
    int64_t kw = const_dim(wq.shape()[3], "conv2d kernel width");
    te::Tensor xq = te::set_tag(
        te::compute(
            {s[0], I(c4), s[2], s[3]},
            [&](std::span<const PrimExpr> i) {
                std::array<PrimExpr, 4> b;
                for (int k = 0; k < 4; ++k) {
                    PrimExpr ch = i[1] * I(4) + I(k);
                    b[k] = c % 4 == 0 ? xp(i[0], ch, i[2], i[3])
                                      : te::if_then_else(ch < I(c), xp(i[0], ch, i[2], i[3]),
                                                         make_const(xp.dtype(), 0));
                }
                return quad(b);
            },
            name + "_quads"),
        kByteQuadsTag);
    auto rc = te::reduce_axis(I(c4), "rc");
    auto rh = te::reduce_axis(I(kh), "ry");
    auto rw = te::reduce_axis(I(kw), "rx");
    te::Tensor blocked = te::compute(
        {out_shape[0], I(ocb), out_shape[2], out_shape[3], I(vb)},
        [&](std::span<const PrimExpr> i) {
            PrimExpr x = xq(i[0], rc->var, i[2] * I(strides[0]) + rh->var * I(dilation[0]),
                            i[3] * I(strides[1]) + rw->var * I(dilation[1]));
            PrimExpr k = wq(i[1], rc->var, rh->var, rw->var, i[4]);
            return te::sum(make_call(DataType::int32(), intrin::kDotU8S8, {x, k}), {rc, rh, rw});
        },
        name + "_blocked");
    return unblock_channels(name, blocked, vb, out_shape);
}

}  // namespace anvil::ops
