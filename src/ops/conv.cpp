// Convolutions: nn.conv2d and nn.conv2d_transpose (NCHW), nn.conv3d and nn.conv3d_transpose
// (NCDHW). All are OutEWiseFusable anchors. Their schedules are in ops/conv_schedule.cpp, their
// padding and dilation stages in ops/conv_input.cpp.
//
// Graph pass alter_op_layout turns most 2-D convolutions with constant weights into
// nn.conv2d_nchwc on channel-blocked data (ops/conv_nchwc.cpp); nn.conv2d keeps the others
// (grouped convolutions that are not depthwise, channel counts without a block of 8, variable
// weights, symbolic shapes, -O1). For those its compute has the shape the x86 schedule needs:
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
//
// nn.conv3d and nn.conv3d_transpose (NCDHW) share the padding and dilation stages and the type
// rules, written over any spatial rank, but have only the direct reduction: a plain schedule,
// volumetric models being rare next to the 2-D ones that the blocked kernels serve.
#include "ops/conv.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "graph/op.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/product_dtype.h"
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

// What the type rules of the 2-D and 3-D ops share: their window attributes over `nd` spatial
// dimensions (padding: the nd begins, then the nd ends).
struct ConvWindow {
    size_t nd;
    std::vector<int64_t> strides, padding, dilation;
    std::vector<int64_t> output_padding;  // the transposed convolutions only
    int64_t groups;
    DataType out_dtype;  // the 2-D ones' integer form (ops/product_dtype.h); void otherwise
};

ConvWindow window_of(const Conv2DAttrs& a) {
    return {2, a.strides, a.padding, a.dilation, {}, a.groups, a.out_dtype};
}
ConvWindow window_of(const Conv3DAttrs& a) {
    return {3, a.strides, a.padding, a.dilation, {}, a.groups, DataType::void_()};
}
ConvWindow window_of(const Conv2DTransposeAttrs& a) {
    return {2, a.strides, a.padding, a.dilation, a.output_padding, a.groups, a.out_dtype};
}
ConvWindow window_of(const Conv3DTransposeAttrs& a) {
    return {3, a.strides, a.padding, a.dilation, a.output_padding, a.groups, DataType::void_()};
}

// "NCHW", "OIDHW", ...: the layout letters `lead` followed by those of `nd` spatial dimensions.
std::string layout_str(const char* lead, size_t nd) {
    return std::string(lead) + (nd == 3 ? "DHW" : "HW");
}

int64_t kernel_dim(const SourceLoc& loc, const std::string& op, const PrimExpr& d) {
    auto v = static_dim(d);
    if (!v) user_error(loc) << op << ": the kernel size " << d << " must be a constant";
    return *v;
}

// Checks rank and dtype of the two operands; the weight's layout is `weight_lead` ("OI" or
// "IO") followed by the spatial dimensions. Returns the result's element type.
DataType check_operands(const SourceLoc& loc, const std::string& op, const std::vector<Type>& args,
                        const graph::TensorType& d, const graph::TensorType& w, size_t nd,
                        const char* weight_lead, DataType out_dtype) {
    size_t rank = nd + 2;
    if (d.ndim() != rank) {
        user_error(loc) << op << ": the data must be " << rank << "-D (" << layout_str("NC", nd)
                        << "), got " << graph::type_str(args[0]);
    }
    if (w.ndim() != rank) {
        user_error(loc) << op << ": the weight must be " << rank << "-D ("
                        << layout_str(weight_lead, nd) << "), got " << graph::type_str(args[1]);
    }
    return product_dtype(op, d.dtype, w.dtype, out_dtype, loc);
}

void check_groups(const SourceLoc& loc, const std::string& op, int64_t groups) {
    if (groups < 1) user_error(loc) << op << ": groups must be >= 1, got " << groups;
}

// Checks the per-dimension attributes of `a` (output_padding only for `transposed`).
void check_window(const SourceLoc& loc, const std::string& op, const ConvWindow& a,
                  bool transposed) {
    check_int_list(loc, op, "strides", a.strides, a.nd, 1);
    check_int_list(loc, op, "padding", a.padding, 2 * a.nd, 0);
    if (transposed) check_int_list(loc, op, "output_padding", a.output_padding, a.nd, 0);
    check_int_list(loc, op, "dilation", a.dilation, a.nd, 1);
    check_groups(loc, op, a.groups);
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

// The kernel's spatial extents: dimensions 2.. of the weight.
std::vector<int64_t> kernel_dims(const SourceLoc& loc, const std::string& op,
                                 const graph::TensorType& w, size_t nd) {
    std::vector<int64_t> k;
    for (size_t i = 0; i < nd; ++i) k.push_back(kernel_dim(loc, op, w.shape[2 + i]));
    return k;
}

// nn.conv2d and nn.conv3d.
Type conv_type(const Op& op, const std::vector<Type>& args, const ConvWindow& a,
               const SourceLoc& loc) {
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    const auto& w = graph::expect_tensor(args[1], loc, "the weight of " + op.name);
    DataType dtype = check_operands(loc, op.name, args, d, w, a.nd, "OI", a.out_dtype);
    check_window(loc, op.name, a, false);
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
    std::vector<int64_t> k = kernel_dims(loc, op.name, w, a.nd);
    std::vector<PrimExpr> out{d.shape[0], w.shape[0]};
    for (size_t i = 0; i < a.nd; ++i) {
        out.push_back(window_out(loc, op.name, spatial_dim_name(i, a.nd), d.shape[2 + i],
                                 a.padding[i] + a.padding[i + a.nd], k[i], a.strides[i],
                                 a.dilation[i]));
    }
    return graph::make_tensor_type(out, dtype);
}

// nn.conv2d_transpose and nn.conv3d_transpose.
Type conv_transpose_type(const Op& op, const std::vector<Type>& args, const ConvWindow& a,
                         const SourceLoc& loc) {
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    const auto& w = graph::expect_tensor(args[1], loc, "the weight of " + op.name);
    DataType dtype = check_operands(loc, op.name, args, d, w, a.nd, "IO", a.out_dtype);
    check_window(loc, op.name, a, true);
    for (size_t i = 0; i < a.nd; ++i) {
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
                        << " channels (the weight is [C, O/groups, "
                        << (a.nd == 3 ? "KD, KH, KW" : "KH, KW") << "])";
    }
    std::vector<int64_t> k = kernel_dims(loc, op.name, w, a.nd);
    std::vector<PrimExpr> out{d.shape[0], w.shape[1] * make_int(w.shape[1].dtype(), a.groups)};
    if (og) out[1] = make_int(w.shape[1].dtype(), *og * a.groups);
    for (size_t i = 0; i < a.nd; ++i) {
        const PrimExpr& in = d.shape[2 + i];
        int64_t extra = a.dilation[i] * (k[i] - 1) + a.output_padding[i] + 1 - a.padding[i] -
                        a.padding[i + a.nd];
        if (auto v = static_dim(in)) {
            int64_t e = (*v - 1) * a.strides[i] + extra;
            if (e < 1) {
                user_error(loc) << op.name << ": the padding " << list_str(a.padding)
                                << " removes the whole output " << spatial_dim_name(i, a.nd);
            }
            out.push_back(make_int(in.dtype(), e));
        } else {
            out.push_back((in - make_int(in.dtype(), 1)) * make_int(in.dtype(), a.strides[i]) +
                          make_int(in.dtype(), extra));
        }
    }
    return graph::make_tensor_type(out, dtype);
}

Type conv2d_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    return conv_type(op, args, window_of(attrs_as<Conv2DAttrs>(attrs)), loc);
}

Type conv3d_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    return conv_type(op, args, window_of(attrs_as<Conv3DAttrs>(attrs)), loc);
}

Type conv2d_transpose_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                           const SourceLoc& loc) {
    return conv_transpose_type(op, args, window_of(attrs_as<Conv2DTransposeAttrs>(attrs)), loc);
}

Type conv3d_transpose_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                           const SourceLoc& loc) {
    return conv_transpose_type(op, args, window_of(attrs_as<Conv3DTransposeAttrs>(attrs)), loc);
}

// Blocking of nn.conv2d's weight, shared by the compute and nn.conv2d_pack_weight.
struct ConvGeom {
    int64_t groups, oc, icg, kh, kw, sh, sw, dh, dw;
    // The type products are summed in: the result's (integer operands are widened to it).
    DataType acc = DataType::float32();
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
    auto D = [&](int64_t v) { return make_int(w.shape[0].dtype(), v); };
    if (a.words) {
        // Words for the uint8 x int8 and bfloat16 forms (pack_weight_words).
        // Blocks: kWordBlock (-1), or 8 for nn.conv2d_nchwc's smaller channel block.
        const bool int8 = w.dtype == DataType::int_(8);
        if ((!int8 && !w.dtype.is_bfloat()) || a.groups != 1 ||
            (a.block != -1 && a.block != 8 && a.block != kWordBlock)) {
            user_error(loc) << op.name << ": words pack an int8 or bfloat16 weight of one group "
                            << "in blocks of 8 or 16 (-1: 16), got " << graph::type_str(args[0])
                            << " with groups=" << a.groups << " and block=" << a.block;
        }
        const int64_t per = int8 ? 4 : 2;
        const int64_t block = a.block == -1 ? kWordBlock : a.block;
        return graph::make_tensor_type({D((s[0] + block - 1) / block), D((s[1] + per - 1) / per),
                                        w.shape[2], w.shape[3], D(block)},
                                       DataType::int32());
    }
    int64_t vb = conv_block({a.groups, s[0], s[1], s[2], s[3], 1, 1, 1, 1});
    if (a.block != -1) {
        auto choices = conv2d_weight_block_choices(a.groups, s[0]);
        if (std::find(choices.begin(), choices.end(), a.block) == choices.end()) {
            std::string listed;
            for (int64_t c : choices) listed += (listed.empty() ? "" : ", ") + std::to_string(c);
            user_error(loc) << op.name << ": block=" << a.block << " is not a block of the "
                            << "weight " << graph::type_str(args[0]) << " with groups=" << a.groups
                            << " (expected -1 for the default, or one of " << listed << ")";
        }
        vb = a.block;
    }
    if (vb == 0) return args[0];
    return graph::make_tensor_type(
        {D((s[0] + vb - 1) / vb), w.shape[1], w.shape[2], w.shape[3], D(vb)}, w.dtype);
}

Type conv2d_packed_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                        const SourceLoc& loc) {
    const auto& a = static_cast<const Conv2DPackedAttrs&>(attrs);
    const auto& w = graph::expect_tensor(args[1], loc, "the weight of " + op.name);
    if (w.ndim() == 4 && w.is_static() && w.static_shape()[0] == a.channels) {
        // The direct form: the weight as nn.conv2d reads it.
        return conv2d_type(op, args, conv2d_attrs_of(a), loc);
    }
    if (w.ndim() != 5 || !w.is_static()) {
        user_error(loc) << op.name << ": the weight must be packed [O/VB, C/groups, KH, KW, VB] "
                        << "with a static shape, or be [channels, C/groups, KH, KW] (the direct "
                        << "form; channels=" << a.channels << "), got " << graph::type_str(args[1]);
    }
    std::vector<int64_t> s = w.static_shape();
    const auto& x = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    if (a.words != 0) {
        // A weight packed in words (pack_weight_words): the data's channels, `words` per word,
        // 4 for uint8 data (an int8 weight, int32 sums), 2 for bfloat16 (float32 sums).
        const bool int8 = a.words == 4;
        const int64_t per = a.words;
        const int64_t* c = x.ndim() == 4 ? as_const_int(x.shape[1]) : nullptr;
        const bool data_fits =
            (int8 && x.dtype == DataType::uint(8)) || (a.words == 2 && x.dtype.is_bfloat());
        if (!c || !data_fits || w.dtype != DataType::int32() || a.groups != 1 ||
            s[4] != kWordBlock || (*c + per - 1) / per != s[1] || a.channels <= (s[0] - 1) * s[4] ||
            a.channels > s[0] * s[4]) {
            user_error(loc) << op.name << ": the weight packed in words "
                            << graph::type_str(args[1]) << " does not fit the data "
                            << graph::type_str(args[0]) << " with channels=" << a.channels
                            << ", groups=" << a.groups << " and words=" << a.words
                            << " (4 channels per word of uint8 data, 2 of bfloat16 data)";
        }
        auto oihw = graph::make_tensor_type(
            {make_int(w.shape[0].dtype(), a.channels), x.shape[1], w.shape[2], w.shape[3]},
            int8 ? DataType::int_(8) : x.dtype);
        Conv2DAttrs c2 = conv2d_attrs_of(a);
        c2.out_dtype = int8 ? DataType::int32() : DataType::float32();
        return conv2d_type(op, {args[0], oihw}, c2, loc);
    }
    if (a.channels <= (s[0] - 1) * s[4] || a.channels > s[0] * s[4]) {
        user_error(loc) << op.name << ": channels=" << a.channels << " does not fit the packed "
                        << "weight " << graph::type_str(args[1]);
    }
    // A block must stay inside one group: the kernel finds a block's group from its first lane.
    if (a.groups > 1 && (a.channels % a.groups != 0 || (a.channels / a.groups) % s[4] != 0)) {
        user_error(loc) << op.name << ": the packed weight's block " << s[4] << " does not divide "
                        << "the output channels of a group (channels=" << a.channels
                        << ", groups=" << a.groups << ")";
    }
    // The type of nn.conv2d with the unpacked weight.
    auto oihw = graph::make_tensor_type(
        {make_int(w.shape[0].dtype(), a.channels), w.shape[1], w.shape[2], w.shape[3]}, w.dtype);
    return conv2d_type(op, {args[0], oihw}, conv2d_attrs_of(a), loc);
}

// ---- computes -----------------------------------------------------------------------------

// The weight of output channel oc, input channel ric of its group, kernel tap (kh, kw).
using WeightFn = std::function<PrimExpr(PrimExpr, PrimExpr, PrimExpr, PrimExpr)>;

// Reads an OIHW weight tensor as it is.
WeightFn weight_reader(const te::Tensor& w) {
    return [w](PrimExpr oc, PrimExpr rc, PrimExpr kh, PrimExpr kw) { return w(oc, rc, kh, kw); };
}

// Vector block over output channels, or 0 for the direct (unblocked) reduction: a block must
// stay inside one group so that all its lanes read the same input channel.
// A reduction this short (3 channels x 3x3 taps), or over an RGB image's three channels (a stem,
// any kernel size), gains little from channel blocks, whose result must then be transposed into
// NCHW rows; the direct form computes rows as they are stored (ResNet-18's 7x7 stem: 95 -> 108
// GFLOP/s on one thread, 183 -> 215 on two).
constexpr int64_t kMaxDirectReduction = 32;
constexpr int64_t kMaxDirectChannels = 3;

int64_t conv_block(const ConvGeom& g) {
    if (g.groups == 1) {
        bool direct = g.icg <= kMaxDirectChannels || g.icg * g.kh * g.kw <= kMaxDirectReduction;
        return direct ? 0 : padded_channel_block(g.oc);
    }
    return dividing_channel_block(g.oc / g.groups);
}

}  // namespace

te::Tensor unblock_channels(const std::string& name, const te::Tensor& blocked, int64_t vb,
                            const std::vector<PrimExpr>& out_shape) {
    return te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            return blocked(i[0], floordiv(i[1], I(vb)), i[2], i[3], floormod(i[1], I(vb)));
        },
        name);
}

int64_t conv2d_weight_block(int64_t groups, int64_t oc, int64_t icg, int64_t kh, int64_t kw) {
    return conv_block({groups, oc, icg, kh, kw, 1, 1, 1, 1});
}

std::vector<int64_t> conv2d_weight_block_choices(int64_t groups, int64_t oc) {
    std::vector<int64_t> choices = {0};
    for (int64_t b : {8, 16, 32}) {
        if (groups == 1 || (groups > 0 && oc % groups == 0 && (oc / groups) % b == 0)) {
            choices.push_back(b);
        }
    }
    return choices;
}

namespace {

// The weight as [O/VB, C/groups, KH, KW, VB]: VB output channels contiguous, zero past O.
te::Tensor pack_conv_weight(const std::string& name, const WeightFn& w, const ConvGeom& g,
                            int64_t vb) {
    int64_t ocb = (g.oc + vb - 1) / vb;
    bool padded = ocb * vb != g.oc;
    return te::set_tag(
        te::compute(
            {I(ocb), I(g.icg), I(g.kh), I(g.kw), I(vb)},
            [&](std::span<const PrimExpr> i) {
                PrimExpr oc = i[0] * I(vb) + i[4];
                PrimExpr v = w(oc, i[1], i[2], i[3]);
                return padded ? te::if_then_else(oc < I(g.oc), v, make_const(v.dtype(), 0)) : v;
            },
            name + "_pack"),
        kPackedWeightTag);
}

// The padded input of a direct convolution with column stride 2 split into its even and odd
// columns, [N, C, H, 2, ceil(W / 2)] (phase p, column j holds column 2j + p), so that every tap
// reads a contiguous run of a row; the strided reads happen once per input element, here,
// instead of once per tap. Named "<name>_phases_pad" (a staged input, see staged_input); the
// padding stage it reads is inlined into it by the schedule. Other strides: nullopt.
std::optional<te::Tensor> column_phases(const std::string& name, const te::Tensor& xp,
                                        const ConvGeom& g) {
    const int64_t* w = as_const_int(xp.shape()[3]);
    if (g.sw != 2 || g.dw != 1 || !w) return std::nullopt;
    const auto& s = xp.shape();
    return te::set_tag(te::compute(
                           {s[0], s[1], s[2], I(2), I((*w + 1) / 2)},
                           [&](std::span<const PrimExpr> i) {
                               PrimExpr col = i[4] * I(2) + i[3];
                               if (*w % 2 == 0) return xp(i[0], i[1], i[2], col);
                               return te::if_then_else(col < I(*w), xp(i[0], i[1], i[2], col),
                                                       make_const(xp.dtype(), 0));
                           },
                           name + "_phases_pad"),
                       kColumnPhasesTag);
}

// A pointwise convolution over a large plane is a matrix product out[oc, p] = W[oc, :] x[:, p]
// whose spatial index p is contiguous in NCHW: its schedule vectorizes along the plane with a
// broadcast weight per output channel (schedule_conv2d_pointwise_x86), which suits the few input
// channels of the early pointwise layers of mobile networks better than channel blocks. Small
// planes (7x7, 14x14) keep the channel blocks, which do not waste lanes on them.
constexpr int64_t kMinPointwisePlane = 256;

// The widest vector the target may have (AVX-512's float32 lanes); computes are made before the
// target's width is known, schedules then use the target's own.
constexpr int kWidestLanes = 16;

bool is_pointwise_over_plane(const ConvGeom& g, const te::Tensor& xp,
                             const std::vector<PrimExpr>& out_shape) {
    if (g.groups != 1 || g.kh != 1 || g.kw != 1 || g.sh != 1 || g.sw != 1) return false;
    const int64_t* h = as_const_int(out_shape[2]);
    const int64_t* w = as_const_int(out_shape[3]);
    const int64_t* xh = as_const_int(xp.shape()[2]);
    const int64_t* xw = as_const_int(xp.shape()[3]);
    // The input itself, not a padded (or, for a transposed convolution, dilated) copy: the
    // pointwise schedule has no place for such a stage.
    if (xp.op->kind != te::OpKind::Placeholder) return false;
    return h && w && xh && xw && *xh == *h && *xw == *w && *h * *w >= kMinPointwisePlane &&
           plane_tile_rows(*h, *w, kWidestLanes) > 0;
}

// out[n, oc, oh, ow] = sum xp[n, group(oc) * icg + rc, oh * sh + kh * dh, ow * sw + kw * dw]
//                          * w(oc, rc, kh, kw)
// `prepacked`: the weight already in the blocked layout [O/VB, C/groups, KH, KW, VB] (by
// nn.conv2d_pack_weight, folded at compile time); then `w` is unused and no pack stage is made.
// `direct`: the direct form whatever conv_block would choose (nn.conv2d_packed of an unpacked
// weight, a tuning choice).
te::Tensor conv_core(const std::string& name, const te::Tensor& xp, const WeightFn& w,
                     const ConvGeom& g, const std::vector<PrimExpr>& out_shape,
                     const std::optional<te::Tensor>& prepacked = std::nullopt,
                     bool direct = false) {
    auto rc = te::reduce_axis(I(g.icg), "rc");
    auto rh = te::reduce_axis(I(g.kh), "ry");
    auto rw = te::reduce_axis(I(g.kw), "rx");
    int64_t ocg = g.oc / g.groups;
    auto input = [&](PrimExpr n, PrimExpr c, PrimExpr oh, PrimExpr ow) {
        return xp(n, c, oh * I(g.sh) + rh->var * I(g.dh), ow * I(g.sw) + rw->var * I(g.dw));
    };
    int64_t vb = prepacked ? const_dim(prepacked->shape()[4], "conv2d channel block")
                 : direct  ? 0
                           : conv_block(g);
    if (is_pointwise_over_plane(g, xp, out_shape)) {
        // One reduction axis (rc) tells the schedule this is the pointwise form.
        auto weight = [&](const PrimExpr& oc) {
            if (!prepacked) return w(oc, rc->var, I(0), I(0));
            return (*prepacked)(floordiv(oc, I(vb)), rc->var, I(0), I(0), floormod(oc, I(vb)));
        };
        return te::compute(
            out_shape,
            [&](std::span<const PrimExpr> i) {
                return te::sum(
                    widen(xp(i[0], rc->var, i[2], i[3]), g.acc) * widen(weight(i[1]), g.acc), {rc});
            },
            name);
    }
    if (vb == 0) {
        std::optional<te::Tensor> phases = column_phases(name, xp, g);
        return te::compute(
            out_shape,
            [&](std::span<const PrimExpr> i) {
                PrimExpr c = floordiv(i[1], I(ocg)) * I(g.icg) + rc->var;
                PrimExpr x =
                    phases ? (*phases)(i[0], c, i[2] * I(g.sh) + rh->var * I(g.dh),
                                       floormod(rw->var, I(2)), i[3] + floordiv(rw->var, I(2)))
                           : input(i[0], c, i[2], i[3]);
                return te::sum(widen(x, g.acc) * widen(w(i[1], rc->var, rh->var, rw->var), g.acc),
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
            return te::sum(widen(input(i[0], c, i[2], i[3]), g.acc) *
                               widen(pack(i[1], rc->var, rh->var, rw->var, i[4]), g.acc),
                           {rc, rh, rw});
        },
        name + "_blocked");
    return unblock_channels(name, blocked, vb, out_shape);
}

}  // namespace

namespace {

// The weight of output channel oc, input channel rc of its group and kernel tap `taps` (one
// index per spatial dimension).
using WeightNdFn = std::function<PrimExpr(PrimExpr, PrimExpr, const std::vector<PrimExpr>&)>;

// out[n, oc, o...] = sum xp[n, group(oc) * icg + rc, o_d * strides_d + k_d * dilation_d]
//                        * w(oc, rc, k...)
// The direct reduction of the 3-D convolutions, one reduce axis per kernel dimension; their
// schedule vectorizes it along the output row as the depthwise conv2d's.
te::Tensor conv_direct(const std::string& name, const te::Tensor& xp, const WeightNdFn& w,
                       int64_t ocg, int64_t icg, const std::vector<int64_t>& kernel,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& dilation,
                       const std::vector<PrimExpr>& out_shape) {
    static const char* const kTapNames[] = {"rz", "ry", "rx"};
    size_t nd = kernel.size();
    auto rc = te::reduce_axis(I(icg), "rc");
    te::Axes taps;
    for (size_t d = 0; d < nd; ++d) {
        taps.push_back(te::reduce_axis(I(kernel[d]), kTapNames[3 - nd + d]));
    }
    te::Axes all{rc};
    all.insert(all.end(), taps.begin(), taps.end());
    return te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> at{i[0], floordiv(i[1], I(ocg)) * I(icg) + rc->var}, tap;
            for (size_t d = 0; d < nd; ++d) {
                at.push_back(i[2 + d] * I(strides[d]) + taps[d]->var * I(dilation[d]));
                tap.push_back(taps[d]->var);
            }
            return te::sum(xp(at) * w(i[1], rc->var, tap), all);
        },
        name);
}

// The spatial extents of a weight (dimensions 2..) as constants.
std::vector<int64_t> kernel_extents(const te::Tensor& w, const char* what) {
    std::vector<int64_t> k;
    for (size_t d = 2; d < w.ndim(); ++d) k.push_back(const_dim(w.shape()[d], what));
    return k;
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
               a.dilation[1],
               out.as<graph::TensorType>()->dtype};
    te::Tensor xp = pad_input("conv2d", x, a.padding);
    if (conv_channels_per_word(x.dtype(), w.dtype(), g.acc, g.groups) != 0) {
        return {conv2d_words("conv2d", xp, pack_weight_words("conv2d", w), a.strides, a.dilation,
                             te_shape(out))};
    }
    return {conv_core("conv2d", xp, weight_reader(w), g, te_shape(out))};
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
    if (a.words) {
        return {pack_weight_words("conv2d_pack_weight", w, a.block == -1 ? kWordBlock : a.block)};
    }
    std::vector<int64_t> s = t->static_shape();
    ConvGeom g{a.groups, const_dim(w.shape()[0], "nn.conv2d_pack_weight output channels"),
               s[1],     s[2],
               s[3],     1,
               1,        1,
               1};
    return {pack_conv_weight("conv2d_pack_weight", weight_reader(w), g, s[4])};
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
               a.dilation[1],
               out.as<graph::TensorType>()->dtype};
    te::Tensor xp = pad_input("conv2d", x, a.padding);
    if (a.words != 0) {
        return {conv2d_words("conv2d", xp, w, a.strides, a.dilation, te_shape(out))};
    }
    if (w.ndim() == 4) {
        return {conv_core("conv2d", xp, weight_reader(w), g, te_shape(out), std::nullopt,
                          /*direct=*/true)};
    }
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
    ConvGeom g{a.groups,
               ocg * a.groups,
               c / a.groups,
               kh,
               kw,
               1,
               1,
               a.dilation[0],
               a.dilation[1],
               out.as<graph::TensorType>()->dtype};
    int64_t lead_h = a.dilation[0] * (kh - 1) - a.padding[0];
    int64_t lead_w = a.dilation[1] * (kw - 1) - a.padding[1];
    te::Tensor xd = dilate_input(
        "conv2d_transpose", x,
        {out_shape[2] + I(a.dilation[0] * (kh - 1)), out_shape[3] + I(a.dilation[1] * (kw - 1))},
        {lead_h, lead_w}, a.strides);
    WeightFn wf = [&](PrimExpr oc, PrimExpr rc, PrimExpr y, PrimExpr xx) {
        PrimExpr grp = floordiv(oc, I(ocg));
        return w(grp * I(g.icg) + rc, oc - grp * I(ocg), I(kh - 1) - y, I(kw - 1) - xx);
    };
    return {conv_core("conv2d_transpose", xd, wf, g, out_shape)};
}

std::vector<te::Tensor> conv3d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                       const Type& out) {
    const auto& a = attrs_as<Conv3DAttrs>(attrs);
    const te::Tensor &x = in[0], &w = in[1];
    int64_t oc = const_dim(w.shape()[0], "nn.conv3d output channels");
    int64_t icg = const_dim(w.shape()[1], "nn.conv3d input channels per group");
    std::vector<int64_t> k = kernel_extents(w, "nn.conv3d kernel");
    te::Tensor xp = pad_input("conv3d", x, a.padding);
    WeightNdFn wf = [&](PrimExpr o, PrimExpr rc, const std::vector<PrimExpr>& t) {
        return w(o, rc, t[0], t[1], t[2]);
    };
    return {
        conv_direct("conv3d", xp, wf, oc / a.groups, icg, k, a.strides, a.dilation, te_shape(out))};
}

// conv3d_transpose as conv2d_transpose: a stride-1 convolution of the spread-out input with the
// flipped kernel.
std::vector<te::Tensor> conv3d_transpose_compute(const std::vector<te::Tensor>& in,
                                                 const Attrs& attrs, const Type& out) {
    const auto& a = attrs_as<Conv3DTransposeAttrs>(attrs);
    const te::Tensor &x = in[0], &w = in[1];
    std::vector<PrimExpr> out_shape = te_shape(out);
    int64_t c = const_dim(w.shape()[0], "nn.conv3d_transpose input channels");
    int64_t ocg = const_dim(w.shape()[1], "nn.conv3d_transpose output channels per group");
    int64_t icg = c / a.groups;
    std::vector<int64_t> k = kernel_extents(w, "nn.conv3d_transpose kernel");
    std::vector<PrimExpr> extents;
    std::vector<int64_t> lead;
    for (size_t d = 0; d < 3; ++d) {
        extents.push_back(out_shape[2 + d] + I(a.dilation[d] * (k[d] - 1)));
        lead.push_back(a.dilation[d] * (k[d] - 1) - a.padding[d]);
    }
    te::Tensor xd = dilate_input("conv3d_transpose", x, extents, lead, a.strides);
    WeightNdFn wf = [&](PrimExpr o, PrimExpr rc, const std::vector<PrimExpr>& t) {
        PrimExpr grp = floordiv(o, I(ocg));
        return w(grp * I(icg) + rc, o - grp * I(ocg), I(k[0] - 1) - t[0], I(k[1] - 1) - t[1],
                 I(k[2] - 1) - t[2]);
    };
    return {conv_direct("conv3d_transpose", xd, wf, ocg, icg, k, {1, 1, 1}, a.dilation, out_shape)};
}

}  // namespace

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

Ref<Op> make_conv3d_op() {
    return make_op({.name = "nn.conv3d",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<Conv3DAttrs>,
                    .infer_type = conv3d_type,
                    .compute = conv3d_compute,
                    .schedule = schedule_by_target<schedule_conv3d_x86, schedule_conv3d_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "3-D convolution, NCDHW data, OIDHW weight, groups"});
}

Ref<Op> make_conv3d_transpose_op() {
    return make_op({.name = "nn.conv3d_transpose",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<Conv3DTransposeAttrs>,
                    .infer_type = conv3d_transpose_type,
                    .compute = conv3d_transpose_compute,
                    .schedule = schedule_by_target<schedule_conv3d_x86, schedule_conv3d_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "transposed 3-D convolution, NCDHW data, IODHW weight"});
}

}  // namespace anvil::ops
