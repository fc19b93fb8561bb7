// Convolutions: nn.conv2d and nn.conv2d_transpose (NCHW). Both are OutEWiseFusable anchors.
//
// The compute has the shape the x86 schedule needs, so that no layout pass is required:
//   <name>_pad      zero padding as its own stage (if_then_else reads the input only inside);
//                   conv2d_transpose instead dilates the input by the stride ("_dilate") and
//                   convolves it with the flipped kernel.
//   <name>_pack     weights as [O/VB, C/groups, KH, KW, VB]: VB (8, 16 or 32) output channels
//                   contiguous, zero-filled past O.
//   <name>_blocked  the reduction into [N, O/VB, OH, OW, VB].
//   <name>          the NCHW result, read out of the blocked one.
// The register tile then is (output pixels of a row) x (VB channels): per reduction step one
// broadcast input value per row times one packed weight vector, like the GEMM micro-kernel of
// examples/matmul. Depthwise and other groups whose per-group output channels are not a
// multiple of 8 use a direct reduction instead, vectorized along the output row.
#include "ops/conv.h"

#include <functional>
#include <optional>

#include "graph/op.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/tensor_shape.h"
#include "ops/tile_schedule.h"
#include "support/error.h"
#include "te/math.h"
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

// ---- type rules ---------------------------------------------------------------------------

int64_t kernel_dim(const SourceLoc& loc, const std::string& op, const PrimExpr& d) {
    auto v = static_dim(d);
    if (!v) user_error(loc) << op << ": the kernel size " << d << " must be a constant";
    return *v;
}

// Checks rank and dtype of the two operands.
void check_operands(const SourceLoc& loc, const std::string& op, const std::vector<Type>& args,
                    const graph::TensorType& d, const graph::TensorType& w,
                    const char* weight_layout) {
    if (d.ndim() != 4) {
        user_error(loc) << op << ": the data must be 4-D (NCHW), got " << graph::type_str(args[0]);
    }
    if (w.ndim() != 4) {
        user_error(loc) << op << ": the weight must be 4-D (" << weight_layout << "), got "
                        << graph::type_str(args[1]);
    }
    if (!d.dtype.is_floating()) {
        user_error(loc) << op << " needs floating-point data, got " << d.dtype.str();
    }
    if (d.dtype != w.dtype) {
        user_error(loc) << op << ": data and weight types " << d.dtype.str() << " and "
                        << w.dtype.str() << " differ; insert a cast";
    }
}

void check_groups(const SourceLoc& loc, const std::string& op, int64_t groups) {
    if (groups < 1) user_error(loc) << op << ": groups must be >= 1, got " << groups;
}

// `channels` (of the data, when static) must split into `groups`.
void check_groups_divide_channels(const SourceLoc& loc, const std::string& op, int64_t groups,
                                  std::optional<int64_t> channels, const Type& data) {
    if (channels && *channels % groups != 0) {
        user_error(loc) << op << ": groups=" << groups << " does not divide the " << *channels
                        << " input channels of " << graph::type_str(data);
    }
}

// The output extent of a strided window over an input of `in` (padding included).
PrimExpr window_out(const SourceLoc& loc, const std::string& op, const char* what,
                    const PrimExpr& in, int64_t pad, int64_t k, int64_t stride, int64_t dil) {
    int64_t span = dil * (k - 1) + 1;
    if (auto v = static_dim(in)) {
        if (*v + pad < span) {
            user_error(loc) << op << ": the dilated kernel " << what << " " << span
                            << " is larger than the padded input " << what << " " << *v + pad;
        }
        return make_int(in.dtype(), (*v + pad - span) / stride + 1);
    }
    return floordiv(in + make_int(in.dtype(), pad - span), make_int(in.dtype(), stride)) +
           make_int(in.dtype(), 1);
}

Type conv2d_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    const auto& a = static_cast<const Conv2DAttrs&>(attrs);
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    const auto& w = graph::expect_tensor(args[1], loc, "the weight of " + op.name);
    check_operands(loc, op.name, args, d, w, "OIHW");
    check_int_list(loc, op.name, "strides", a.strides, 2, 1);
    check_int_list(loc, op.name, "padding", a.padding, 4, 0);
    check_int_list(loc, op.name, "dilation", a.dilation, 2, 1);
    check_groups(loc, op.name, a.groups);
    auto c = static_dim(d.shape[1]), o = static_dim(w.shape[0]), cw = static_dim(w.shape[1]);
    check_groups_divide_channels(loc, op.name, a.groups, c, args[0]);
    if (o && *o % a.groups != 0) {
        user_error(loc) << op.name << ": groups=" << a.groups << " does not divide the " << *o
                        << " output channels (weight " << graph::type_str(args[1]) << ")";
    }
    if (c && cw && *cw * a.groups != *c) {
        user_error(loc) << op.name << ": the weight " << graph::type_str(args[1]) << " has " << *cw
                        << " input channels per group, but the data has " << *c << " channels in "
                        << a.groups << " group(s)";
    }
    int64_t kh = kernel_dim(loc, op.name, w.shape[2]), kw = kernel_dim(loc, op.name, w.shape[3]);
    PrimExpr oh = window_out(loc, op.name, "height", d.shape[2], a.padding[0] + a.padding[2], kh,
                             a.strides[0], a.dilation[0]);
    PrimExpr ow = window_out(loc, op.name, "width", d.shape[3], a.padding[1] + a.padding[3], kw,
                             a.strides[1], a.dilation[1]);
    return graph::make_tensor_type({d.shape[0], w.shape[0], oh, ow}, d.dtype);
}

Type conv2d_transpose_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                           const SourceLoc& loc) {
    const auto& a = static_cast<const Conv2DTransposeAttrs&>(attrs);
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    const auto& w = graph::expect_tensor(args[1], loc, "the weight of " + op.name);
    check_operands(loc, op.name, args, d, w, "IOHW");
    check_int_list(loc, op.name, "strides", a.strides, 2, 1);
    check_int_list(loc, op.name, "padding", a.padding, 4, 0);
    check_int_list(loc, op.name, "output_padding", a.output_padding, 2, 0);
    check_int_list(loc, op.name, "dilation", a.dilation, 2, 1);
    check_groups(loc, op.name, a.groups);
    for (int i = 0; i < 2; ++i) {
        if (a.output_padding[i] >= std::max(a.strides[i], a.dilation[i])) {
            user_error(loc) << op.name << ": output_padding " << list_str(a.output_padding)
                            << " must be smaller than the stride or the dilation";
        }
    }
    auto c = static_dim(d.shape[1]), cw = static_dim(w.shape[0]), og = static_dim(w.shape[1]);
    check_groups_divide_channels(loc, op.name, a.groups, c, args[0]);
    if (c && cw && *cw != *c) {
        user_error(loc) << op.name << ": the weight " << graph::type_str(args[1])
                        << " has dimension 0 = " << *cw << ", but the data has " << *c
                        << " channels (the weight is [C, O/groups, KH, KW])";
    }
    int64_t kh = kernel_dim(loc, op.name, w.shape[2]), kw = kernel_dim(loc, op.name, w.shape[3]);
    std::vector<PrimExpr> out{d.shape[0], w.shape[1] * make_int(w.shape[1].dtype(), a.groups)};
    if (og) out[1] = make_int(w.shape[1].dtype(), *og * a.groups);
    for (int i = 0; i < 2; ++i) {
        const PrimExpr& in = d.shape[2 + i];
        int64_t k = i == 0 ? kh : kw;
        int64_t extra =
            a.dilation[i] * (k - 1) + a.output_padding[i] + 1 - a.padding[i] - a.padding[i + 2];
        if (auto v = static_dim(in)) {
            int64_t e = (*v - 1) * a.strides[i] + extra;
            if (e < 1) {
                user_error(loc) << op.name << ": the padding " << list_str(a.padding)
                                << " removes the whole output " << (i == 0 ? "height" : "width");
            }
            out.push_back(make_int(in.dtype(), e));
        } else {
            out.push_back((in - make_int(in.dtype(), 1)) * make_int(in.dtype(), a.strides[i]) +
                          make_int(in.dtype(), extra));
        }
    }
    return graph::make_tensor_type(out, d.dtype);
}

// Blocking of nn.conv2d's weight, shared by the compute and nn.conv2d_pack_weight.
struct ConvGeom {
    int64_t groups, oc, icg, kh, kw, sh, sw, dh, dw;
};
int64_t conv_block(const ConvGeom& g);

Type conv2d_pack_weight_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                             const SourceLoc& loc) {
    const auto& a = static_cast<const Conv2DPackWeightAttrs&>(attrs);
    const auto& w = graph::expect_tensor(args[0], loc, "the weight of " + op.name);
    check_groups(loc, op.name, a.groups);
    if (w.ndim() != 4 || !w.is_static() || w.static_shape()[0] % a.groups != 0) {
        user_error(loc) << op.name << ": the weight must be OIHW with a static shape whose "
                        << "output channels groups=" << a.groups << " divides, got "
                        << graph::type_str(args[0]);
    }
    std::vector<int64_t> s = w.static_shape();
    int64_t vb = conv_block({a.groups, s[0], s[1], s[2], s[3], 1, 1, 1, 1});
    if (vb == 0) return args[0];
    auto D = [&](int64_t v) { return make_int(w.shape[0].dtype(), v); };
    return graph::make_tensor_type(
        {D((s[0] + vb - 1) / vb), w.shape[1], w.shape[2], w.shape[3], D(vb)}, w.dtype);
}

Type conv2d_packed_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                        const SourceLoc& loc) {
    const auto& a = static_cast<const Conv2DPackedAttrs&>(attrs);
    const auto& w = graph::expect_tensor(args[1], loc, "the weight of " + op.name);
    if (w.ndim() != 5 || !w.is_static()) {
        user_error(loc) << op.name << ": the weight must be packed [O/VB, C/groups, KH, KW, VB] "
                        << "with a static shape, got " << graph::type_str(args[1]);
    }
    std::vector<int64_t> s = w.static_shape();
    if (a.channels <= (s[0] - 1) * s[4] || a.channels > s[0] * s[4]) {
        user_error(loc) << op.name << ": channels=" << a.channels << " does not fit the packed "
                        << "weight " << graph::type_str(args[1]);
    }
    // The type of nn.conv2d with the unpacked weight.
    auto oihw = graph::make_tensor_type(
        {make_int(w.shape[0].dtype(), a.channels), w.shape[1], w.shape[2], w.shape[3]}, w.dtype);
    Conv2DAttrs ca;
    ca.strides = a.strides;
    ca.padding = a.padding;
    ca.dilation = a.dilation;
    ca.groups = a.groups;
    return conv2d_type(op, {args[0], oihw}, ca, loc);
}

// ---- computes -----------------------------------------------------------------------------

// The weight of output channel oc, input channel ric of its group, kernel tap (kh, kw).
using WeightFn = std::function<PrimExpr(PrimExpr, PrimExpr, PrimExpr, PrimExpr)>;

// Vector block over output channels, or 0 for the direct (unblocked) reduction: a block must
// stay inside one group so that all its lanes read the same input channel.
int64_t conv_block(const ConvGeom& g) {
    if (g.groups == 1) return pick_block(g.oc);
    int64_t ocg = g.oc / g.groups;
    for (int64_t b : {32, 16, 8}) {
        if (ocg % b == 0) return b;
    }
    return 0;
}

// The weight as [O/VB, C/groups, KH, KW, VB]: VB output channels contiguous, zero past O.
te::Tensor pack_conv_weight(const std::string& name, const WeightFn& w, const ConvGeom& g,
                            int64_t vb) {
    int64_t ocb = (g.oc + vb - 1) / vb;
    bool padded = ocb * vb != g.oc;
    return te::compute(
        {I(ocb), I(g.icg), I(g.kh), I(g.kw), I(vb)},
        [&](std::span<const PrimExpr> i) {
            PrimExpr oc = i[0] * I(vb) + i[4];
            PrimExpr v = w(oc, i[1], i[2], i[3]);
            return padded ? te::if_then_else(oc < I(g.oc), v, make_const(v.dtype(), 0)) : v;
        },
        name + "_pack");
}

// out[n, oc, oh, ow] = sum xp[n, group(oc) * icg + rc, oh * sh + kh * dh, ow * sw + kw * dw]
//                          * w(oc, rc, kh, kw)
// `prepacked`: the weight already in the blocked layout [O/VB, C/groups, KH, KW, VB] (by
// nn.conv2d_pack_weight, folded at compile time); then `w` is unused and no pack stage is made.
te::Tensor conv_core(const std::string& name, const te::Tensor& xp, const WeightFn& w,
                     const ConvGeom& g, const std::vector<PrimExpr>& out_shape,
                     const std::optional<te::Tensor>& prepacked = std::nullopt) {
    auto rc = te::reduce_axis(I(g.icg), "rc");
    auto rh = te::reduce_axis(I(g.kh), "ry");
    auto rw = te::reduce_axis(I(g.kw), "rx");
    int64_t ocg = g.oc / g.groups;
    auto input = [&](PrimExpr n, PrimExpr c, PrimExpr oh, PrimExpr ow) {
        return xp(n, c, oh * I(g.sh) + rh->var * I(g.dh), ow * I(g.sw) + rw->var * I(g.dw));
    };
    int64_t vb =
        prepacked ? const_dim(prepacked->shape()[4], "conv2d channel block") : conv_block(g);
    if (vb == 0) {
        return te::compute(
            out_shape,
            [&](std::span<const PrimExpr> i) {
                PrimExpr c = floordiv(i[1], I(ocg)) * I(g.icg) + rc->var;
                return te::sum(input(i[0], c, i[2], i[3]) * w(i[1], rc->var, rh->var, rw->var),
                               {rc, rh, rw});
            },
            name);
    }
    te::Tensor pack = prepacked ? *prepacked : pack_conv_weight(name, w, g, vb);
    int64_t ocb = const_dim(pack.shape()[0], "conv2d channel blocks");
    te::Tensor blocked = te::compute(
        {out_shape[0], I(ocb), out_shape[2], out_shape[3], I(vb)},
        [&](std::span<const PrimExpr> i) {
            PrimExpr c =
                g.groups == 1 ? rc->var : floordiv(i[1] * I(vb), I(ocg)) * I(g.icg) + rc->var;
            return te::sum(input(i[0], c, i[2], i[3]) * pack(i[1], rc->var, rh->var, rw->var, i[4]),
                           {rc, rh, rw});
        },
        name + "_blocked");
    return te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            return blocked(i[0], floordiv(i[1], I(vb)), i[2], i[3], floormod(i[1], I(vb)));
        },
        name);
}

// Zero padding [top, left, bottom, right] as its own stage (none when all are 0).
te::Tensor pad_input(const std::string& name, const te::Tensor& x, const std::vector<int64_t>& p) {
    if (p[0] == 0 && p[1] == 0 && p[2] == 0 && p[3] == 0) return x;
    const auto& s = x.shape();
    // Constant extents stay constants: the schedule vectorizes rows of known length only.
    auto grow = [](const PrimExpr& d, int64_t by) {
        if (auto* v = as_const_int(d)) return make_int(d.dtype(), *v + by);
        return d + make_int(d.dtype(), by);
    };
    return te::compute(
        {s[0], s[1], grow(s[2], p[0] + p[2]), grow(s[3], p[1] + p[3])},
        [&](std::span<const PrimExpr> i) {
            PrimExpr y = i[2] - I(p[0]), xx = i[3] - I(p[1]);
            PrimExpr inside = y >= I(0) && y < s[2] && xx >= I(0) && xx < s[3];
            return te::if_then_else(inside, x(i[0], i[1], y, xx), make_const(x.dtype(), 0));
        },
        name + "_pad");
}

std::vector<te::Tensor> conv2d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                       const Type& out) {
    const auto& a = static_cast<const Conv2DAttrs&>(attrs);
    const te::Tensor &x = in[0], &w = in[1];
    ConvGeom g{a.groups,
               const_dim(w.shape()[0], "nn.conv2d output channels"),
               const_dim(w.shape()[1], "nn.conv2d input channels per group"),
               const_dim(w.shape()[2], "nn.conv2d kernel height"),
               const_dim(w.shape()[3], "nn.conv2d kernel width"),
               a.strides[0],
               a.strides[1],
               a.dilation[0],
               a.dilation[1]};
    te::Tensor xp = pad_input("conv2d", x, a.padding);
    WeightFn wf = [&](PrimExpr oc, PrimExpr rc, PrimExpr kh, PrimExpr kw) {
        return w(oc, rc, kh, kw);
    };
    return {conv_core("conv2d", xp, wf, g, te_shape(out))};
}

std::vector<te::Tensor> conv2d_pack_weight_compute(const std::vector<te::Tensor>& in,
                                                   const Attrs& attrs, const Type& out) {
    const auto& a = static_cast<const Conv2DPackWeightAttrs&>(attrs);
    const te::Tensor& w = in[0];
    auto* t = out.as<graph::TensorType>();
    if (t->ndim() == 4) {
        return {te::compute(
            w.shape(), [&](std::span<const PrimExpr> i) { return w(i[0], i[1], i[2], i[3]); },
            "conv2d_pack_weight")};
    }
    std::vector<int64_t> s = t->static_shape();
    ConvGeom g{a.groups, const_dim(w.shape()[0], "nn.conv2d_pack_weight output channels"),
               s[1],     s[2],
               s[3],     1,
               1,        1,
               1};
    WeightFn wf = [&](PrimExpr oc, PrimExpr rc, PrimExpr kh, PrimExpr kw) {
        return w(oc, rc, kh, kw);
    };
    return {pack_conv_weight("conv2d_pack_weight", wf, g, s[4])};
}

std::vector<te::Tensor> conv2d_packed_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                              const Type& out) {
    const auto& a = static_cast<const Conv2DPackedAttrs&>(attrs);
    const te::Tensor &x = in[0], &w = in[1];
    ConvGeom g{a.groups,
               a.channels,
               const_dim(w.shape()[1], "nn.conv2d_packed input channels per group"),
               const_dim(w.shape()[2], "nn.conv2d_packed kernel height"),
               const_dim(w.shape()[3], "nn.conv2d_packed kernel width"),
               a.strides[0],
               a.strides[1],
               a.dilation[0],
               a.dilation[1]};
    te::Tensor xp = pad_input("conv2d", x, a.padding);
    WeightFn unused = [](PrimExpr, PrimExpr, PrimExpr, PrimExpr) { return PrimExpr(); };
    return {conv_core("conv2d", xp, unused, g, te_shape(out), w)};
}

// conv2d_transpose as a stride-1 convolution: the input spread out by the stride and padded by
// (dilated kernel extent - 1 - padding) on each side, convolved with the flipped kernel whose
// in/out channel roles are swapped.
std::vector<te::Tensor> conv2d_transpose_compute(const std::vector<te::Tensor>& in,
                                                 const Attrs& attrs, const Type& out) {
    const auto& a = static_cast<const Conv2DTransposeAttrs&>(attrs);
    const te::Tensor &x = in[0], &w = in[1];
    std::vector<PrimExpr> out_shape = te_shape(out);
    int64_t c = const_dim(w.shape()[0], "nn.conv2d_transpose input channels");
    int64_t ocg = const_dim(w.shape()[1], "nn.conv2d_transpose output channels per group");
    int64_t kh = const_dim(w.shape()[2], "nn.conv2d_transpose kernel height");
    int64_t kw = const_dim(w.shape()[3], "nn.conv2d_transpose kernel width");
    ConvGeom g{a.groups, ocg * a.groups, c / a.groups, kh, kw, 1, 1, a.dilation[0], a.dilation[1]};
    int64_t lead_h = a.dilation[0] * (kh - 1) - a.padding[0];
    int64_t lead_w = a.dilation[1] * (kw - 1) - a.padding[1];
    const auto& s = x.shape();
    te::Tensor xd = te::compute(
        {s[0], s[1], out_shape[2] + I(a.dilation[0] * (kh - 1)),
         out_shape[3] + I(a.dilation[1] * (kw - 1))},
        [&](std::span<const PrimExpr> i) {
            PrimExpr y = i[2] - I(lead_h), xx = i[3] - I(lead_w);
            PrimExpr iy = floordiv(y, I(a.strides[0])), ix = floordiv(xx, I(a.strides[1]));
            PrimExpr inside = y >= I(0) && xx >= I(0) && iy < s[2] && ix < s[3];
            if (a.strides[0] > 1) inside = inside && eq(floormod(y, I(a.strides[0])), I(0));
            if (a.strides[1] > 1) inside = inside && eq(floormod(xx, I(a.strides[1])), I(0));
            return te::if_then_else(inside, x(i[0], i[1], iy, ix), make_const(x.dtype(), 0));
        },
        "conv2d_transpose_dilate");
    WeightFn wf = [&](PrimExpr oc, PrimExpr rc, PrimExpr y, PrimExpr xx) {
        PrimExpr grp = floordiv(oc, I(ocg));
        return w(grp * I(g.icg) + rc, oc - grp * I(ocg), I(kh - 1) - y, I(kw - 1) - xx);
    };
    return {conv_core("conv2d_transpose", xd, wf, g, out_shape)};
}

}  // namespace

// ---- schedules ----------------------------------------------------------------------------

void schedule_conv2d_generic(te::Schedule& s, const te::Tensor& anchor,
                             const std::vector<te::Tensor>& outputs,
                             const tir::LowerContext& target) {
    schedule_reduction_inputs_at_root(s, anchor, "conv2d");
}

void schedule_conv2d_x86(te::Schedule& s, const te::Tensor& anchor,
                         const std::vector<te::Tensor>& outputs, const tir::LowerContext& target) {
    te::Tensor red = expect_reduction(anchor, "conv2d");
    schedule_helper_inputs(s, red, target);
    te::Tensor out = tile_target(s, anchor, outputs, target);
    te::Tensor acc = local_accumulator(s, red, out);
    int lanes = vector_lanes(target);
    te::StageRef so = s[out];
    auto ax = so.op_axis();  // n, c, oh, ow
    auto aa = s[acc].op_axis();
    auto ar = s[acc].op_reduce_axis();  // rc, ry, rx
    int64_t ow = const_dim(out.shape()[3], "conv2d output width");
    int64_t work = known_extent_product(out.shape()) *
                   const_dim(ar[0]->dom.extent, "conv2d channels") *
                   const_dim(ar[1]->dom.extent, "kernel") * const_dim(ar[2]->dom.extent, "kernel");
    if (red.ndim() == 5) {
        // Register tile: `rows` output pixels x vb channels, the reduction outermost inside it.
        int64_t vb = const_dim(red.shape()[4], "conv2d channel block");
        int64_t rows = pick_register_rows(ow, vb, lanes);
        auto [co, ci] = so.split(ax[1], vb);
        auto [wo, wi] = so.split(ax[3], rows);
        so.reorder({ax[0], co, ax[2], wo, ci, wi});
        so.vectorize(wi);
        fuse_parallel(so, {ax[0], co, ax[2]}, work);
        s[acc].compute_at(so, wo);
        s[acc].reorder({ar[0], ar[1], ar[2], aa[3], aa[4]});
        s[acc].unroll(aa[3]);
        s[acc].vectorize(aa[4]);
        return;
    }
    // Direct (depthwise): a vector along the output row per tap.
    schedule_nchw_row_vectors(s, out, acc, work, target);
}

Ref<Op> make_conv2d_op() {
    return make_op({.name = "nn.conv2d",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<Conv2DAttrs>,
                    .infer_type = conv2d_type,
                    .compute = conv2d_compute,
                    .schedule = schedule_by_target<schedule_conv2d_x86, schedule_conv2d_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "2-D convolution, NCHW data, OIHW weight, groups/depthwise"});
}

Ref<Op> make_conv2d_pack_weight_op() {
    return make_op({.name = "nn.conv2d_pack_weight",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<Conv2DPackWeightAttrs>,
                    .infer_type = conv2d_pack_weight_type,
                    .compute = conv2d_pack_weight_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "OIHW conv2d weight to the blocked layout of nn.conv2d_packed"});
}

Ref<Op> make_conv2d_packed_op() {
    return make_op(
        {.name = "nn.conv2d_packed",
         .num_inputs = 2,
         .make_default_attrs = default_attrs<Conv2DPackedAttrs>,
         .infer_type = conv2d_packed_type,
         .compute = conv2d_packed_compute,
         .schedule = schedule_by_target<schedule_conv2d_x86, schedule_conv2d_generic>,
         .pattern = OpPattern::OutEWiseFusable,
         .description = "nn.conv2d with a pre-packed [O/VB, C/groups, KH, KW, VB] weight"});
}

Ref<Op> make_conv2d_transpose_op() {
    return make_op({.name = "nn.conv2d_transpose",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<Conv2DTransposeAttrs>,
                    .infer_type = conv2d_transpose_type,
                    .compute = conv2d_transpose_compute,
                    .schedule = schedule_by_target<schedule_conv2d_x86, schedule_conv2d_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "transposed 2-D convolution, NCHW data, IOHW weight"});
}

}  // namespace anvil::ops
