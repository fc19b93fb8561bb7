// nn.conv2d_nchwc: the 2-D convolution on channel-blocked data, NCHW<b>c, which graph pass
// alter_op_layout makes of nn.conv2d with a constant weight (TVM's conv2d_NCHWc). A blocked
// output is written as it is computed: a register tile of output pixels x one block of output
// channels is stored vector by vector, with no transposition into NCHW rows, and the
// elementwise ops after it (bias, activation, a residual add) work on the same blocks.
//   <name>_pad   zero padding of H and W as its own stage
//   nn.conv2d_nchwc: out[n, ob, oh, ow, o] = sum over (icb, ry, rx, ici) of
//                data[n, icb, oh * sh + ry * dh, ow * sw + rx * dw, ici]
//                * weight[ob, icb, ry, rx, ici, o]          (groups == 1; NCHW data: channel
//                                                           icb * wi + ici of it)
//                out[n, cb, oh, ow, c] = sum over (ry, rx) of
//                data[n, cb, oh * sh + ry * dh, ow * sw + rx * dw, c] * weight[cb, 0, ry, rx, 0, c]
//                                                           (depthwise; uint8 x int8 products
//                                                           as dot_u8s8 of the zero-extended
//                                                           byte, others widened to out_dtype)
//   with the weight in words (5-D int32, uint8 or bfloat16 data): out[n, ob, oh, ow, o] = sum
//                over (rc, ry, rx) of dot(word rc of data[n, ., oh * sh + ry * dh, ...],
//                weight[ob, rc, ry, rx, o])             (ops/conv_words.cpp)
// Schedules: schedule_conv2d_nchwc_x86 (ops/conv_schedule.cpp), the generic one otherwise.
#include <optional>

#include "graph/op.h"
#include "ir/intrinsics.h"
#include "ops/axes.h"
#include "ops/conv.h"
#include "ops/op_spec.h"
#include "ops/op_table.h"
#include "ops/tensor_shape.h"
#include "ops/tile_schedule.h"
#include "support/error.h"
#include "te/reduction.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::Type;

namespace {

PrimExpr I(int64_t v) {
    return make_int(DataType::int32(), v);
}

// The blocked result [N, blocks, OH, OW, block] of nn.conv2d over the same values (its checks
// included): data `d` read as NCHW with `channels` channels, a weight OIHW of `oihw` extents and
// type `weight`.
Type blocked_conv2d_type(const Op& op, const graph::TensorType& d, const PrimExpr& channels,
                         const std::vector<int64_t>& oihw, DataType weight, int64_t blocks,
                         int64_t block, const Conv2DNCHWcAttrs& a, const SourceLoc& loc) {
    auto dim = [&](int64_t v) { return make_int(d.shape[1].dtype(), v); };
    Type nchw = graph::make_tensor_type({d.shape[0], channels, d.shape[2], d.shape[3]}, d.dtype);
    Type w =
        graph::make_tensor_type({dim(oihw[0]), dim(oihw[1]), dim(oihw[2]), dim(oihw[3])}, weight);
    Type plain = get_op("nn.conv2d").infer_type(op, {nchw, w}, conv2d_attrs_of(a), loc);
    const auto& p = *plain.as<graph::TensorType>();
    return graph::make_tensor_type({p.shape[0], dim(blocks), p.shape[2], p.shape[3], dim(block)},
                                   p.dtype);
}

// The form with the weight in words of P input channels (pack_weight_words): uint8 data with
// P = 4 and out_dtype int32 (an int8 weight), or bfloat16 data with P = 2 and out_dtype float32;
// NCHW or NCHW<ib>c data (ib a multiple of P), an int32 weight [O/ob, ceil(C/P), KH, KW, ob],
// one group.
Type conv2d_nchwc_words_type(const Op& op, const std::vector<Type>& args, const Conv2DNCHWcAttrs& a,
                             const SourceLoc& loc) {
    const auto& d = *args[0].as<graph::TensorType>();
    const auto& w = *args[1].as<graph::TensorType>();
    const bool blocked = d.ndim() == 5;
    const bool u8 = d.dtype == DataType::uint(8);
    const int64_t per = u8 ? 4 : 2;
    std::optional<int64_t> c = static_dim(d.shape[1]);
    std::optional<int64_t> ib = blocked ? static_dim(d.shape[4]) : std::optional<int64_t>(1);
    std::vector<int64_t> ws = w.is_static() ? w.static_shape() : std::vector<int64_t>{};
    if (c && ib) *c *= *ib;
    const bool types = (u8 && a.out_dtype == DataType::int32()) ||
                       (d.dtype == DataType::bfloat16() && a.out_dtype == DataType::float32());
    if (!types || w.dtype != DataType::int32() || !w.is_static() || a.groups != 1 || !c || !ib ||
        (blocked && *ib % per != 0) || ws[1] != (*c + per - 1) / per) {
        user_error(loc) << op.name << ": a weight in words (int32 [O/ob, ceil(C/P), KH, KW, ob]) "
                        << "takes uint8 data (P = 4, out_dtype int32) or bfloat16 data (P = 2, "
                        << "out_dtype float32) of static channels, NCHW or blocked by a multiple "
                        << "of P, and one group; got " << graph::type_str(args[0]) << " and "
                        << graph::type_str(args[1]) << " with groups=" << a.groups
                        << ", out_dtype=" << a.out_dtype.str();
    }
    return blocked_conv2d_type(op, d, make_int(d.shape[1].dtype(), *c),
                               {ws[0] * ws[4], *c, ws[2], ws[3]}, u8 ? DataType::int_(8) : d.dtype,
                               ws[0], ws[4], a, loc);
}

Type conv2d_nchwc_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                       const SourceLoc& loc) {
    const auto& a = attrs_as<Conv2DNCHWcAttrs>(attrs);
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    const auto& w = graph::expect_tensor(args[1], loc, "the weight of " + op.name);
    if (d.ndim() != 4 && d.ndim() != 5) {
        user_error(loc) << op.name << ": the data must be NCHW or NCHW<b>c, got "
                        << graph::type_str(args[0]);
    }
    if (w.ndim() == 5) return conv2d_nchwc_words_type(op, args, a, loc);
    if (w.ndim() != 6 || !w.is_static()) {
        user_error(loc) << op.name << ": the weight must be OIHW<i>i<o>o with a static shape, got "
                        << graph::type_str(args[1]);
    }
    std::vector<int64_t> ws = w.static_shape();  // [O/ob, C/wi, KH, KW, wi, ob]
    bool blocked = d.ndim() == 5;
    int64_t ib = 0;  // the data's channel block
    if (blocked) {
        auto v = static_dim(d.shape[4]);
        if (!v) {
            user_error(loc) << op.name << ": the data's channel block must be static, got "
                            << graph::type_str(args[0]);
        }
        ib = *v;
    }
    std::optional<int64_t> c = static_dim(d.shape[1]);
    if (c && blocked) *c *= ib;
    PrimExpr channels = c         ? make_int(d.shape[1].dtype(), *c)
                        : blocked ? d.shape[1] * make_int(d.shape[1].dtype(), ib)
                                  : d.shape[1];
    bool depthwise = a.groups != 1;
    if (depthwise) {
        if (!blocked || !c || a.groups != *c || ws[1] != 1 || ws[4] != 1 || ws[5] != ib ||
            ws[0] * ws[5] != *c) {
            user_error(loc) << op.name << ": groups=" << a.groups << " takes blocked data whose "
                            << "channels groups equals and a weight [C/b, 1, KH, KW, 1, b] of "
                            << "the data's block b; got " << graph::type_str(args[0]) << " and "
                            << graph::type_str(args[1]);
        }
    } else if ((blocked && ws[4] != ib) || (c && ws[1] * ws[4] != *c)) {
        user_error(loc) << op.name << ": the weight " << graph::type_str(args[1])
                        << " does not read the channels of " << graph::type_str(args[0])
                        << " (its input block must be the data's, blocks x block = channels)";
    }
    return blocked_conv2d_type(op, d, channels,
                               {ws[0] * ws[5], depthwise ? 1 : ws[1] * ws[4], ws[2], ws[3]},
                               w.dtype, ws[0], ws[5], a, loc);
}

std::vector<te::Tensor> conv2d_nchwc_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                             const Type& out) {
    const auto& a = attrs_as<Conv2DNCHWcAttrs>(attrs);
    const te::Tensor &x = in[0], &w = in[1];
    const auto& ws = w.shape();
    int64_t kh = const_dim(ws[2], "nn.conv2d_nchwc kernel height");
    int64_t kw = const_dim(ws[3], "nn.conv2d_nchwc kernel width");
    te::Tensor xp = pad_input("conv2d_nchwc", x, a.padding);
    if (w.ndim() == 5) {
        return {conv2d_nchwc_words("conv2d_nchwc", xp, w, a.strides, a.dilation, te_shape(out))};
    }
    // Integer products (uint8 x int8) are summed in the result's type.
    const DataType acc = out.as<graph::TensorType>()->dtype;
    auto widen = [&](const PrimExpr& e) { return e.dtype() == acc ? e : cast(acc, e); };
    auto ry = te::reduce_axis(I(kh), "ry");
    auto rx = te::reduce_axis(I(kw), "rx");
    auto row = [&](const PrimExpr& oh) {
        return oh * I(a.strides[0]) + ry->var * I(a.dilation[0]);
    };
    auto col = [&](const PrimExpr& ow) {
        return ow * I(a.strides[1]) + rx->var * I(a.dilation[1]);
    };
    if (a.groups != 1) {
        // uint8 x int8: each product as dot_u8s8 of the data byte zero-extended (its word's
        // other bytes zero) and the weight: one vpdpbusd multiplies and accumulates, where the
        // widened product takes a vpmaddwd and a vpaddd.
        const bool u8s8 = xp.dtype() == DataType::uint(8) && w.dtype() == DataType::int_(8) &&
                          acc == DataType::int32();
        return {te::compute(
            te_shape(out),
            [&](std::span<const PrimExpr> i) {
                PrimExpr x = widen(xp(i[0], i[1], row(i[2]), col(i[3]), i[4]));
                PrimExpr k = widen(w(i[1], I(0), ry->var, rx->var, I(0), i[4]));
                PrimExpr product = u8s8 ? make_call(acc, intrin::kDotU8S8, {x, k}) : x * k;
                return te::sum(product, {ry, rx});
            },
            "conv2d_nchwc")};
    }
    int64_t wi = const_dim(ws[4], "nn.conv2d_nchwc input block");
    auto rco = te::reduce_axis(I(const_dim(ws[1], "nn.conv2d_nchwc input blocks")), "rc");
    auto rci = te::reduce_axis(I(wi), "rci");
    bool blocked = x.ndim() == 5;
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            PrimExpr v = blocked ? xp(i[0], rco->var, row(i[2]), col(i[3]), rci->var)
                                 : xp(i[0], rco->var * I(wi) + rci->var, row(i[2]), col(i[3]));
            return te::sum(widen(v) * widen(w(i[1], rco->var, ry->var, rx->var, rci->var, i[4])),
                           {rco, ry, rx, rci});
        },
        "conv2d_nchwc")};
}

}  // namespace

Ref<Op> make_conv2d_nchwc_op() {
    return make_op(
        {.name = "nn.conv2d_nchwc",
         .num_inputs = 2,
         .make_default_attrs = default_attrs<Conv2DNCHWcAttrs>,
         .infer_type = conv2d_nchwc_type,
         .compute = conv2d_nchwc_compute,
         .schedule = schedule_by_target<schedule_conv2d_nchwc_x86, schedule_conv2d_generic>,
         .pattern = OpPattern::OutEWiseFusable,
         .description = "2-D convolution on NCHW<b>c data, OIHW<i>i<o>o weight (alter_op_layout)"});
}

}  // namespace anvil::ops
