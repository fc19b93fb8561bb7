// Converters of PyTorch's convolutions: aten::conv1d/2d/3d (explicit or "same"/"valid" padding),
// aten::conv_transpose1d/2d/3d, and the forms tracing records, aten::_convolution (either kind,
// picked by its `transposed` flag), aten::convolution and aten::_convolution_mode (string
// padding). Data may lack the batch dimension, as PyTorch allows. The convolutions themselves are
// built by frontend/conv_builder.h; what is PyTorch's (operand order, string padding, its checks
// of channels and output_padding) is here.
#include "frontend/conv_builder.h"
#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/window_args.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// The operands every form shares, read for `nd` spatial dimensions.
struct ConvOperands {
    WindowData data;
    Expr w, bias;
    std::vector<int64_t> w_shape;
    int64_t nd = 0;
};

// x, w, bias (operands 0-2) of a convolution over `nd` spatial dimensions (0: the weight's rank
// says, as in aten::_convolution).
ConvOperands read_operands(const PtContext& ctx, int64_t nd) {
    ConvOperands c;
    c.w = ctx.tensor(1);
    c.w_shape = ctx.static_shape(c.w, "the weight");
    int64_t w_nd = static_cast<int64_t>(c.w_shape.size()) - 2;
    if (nd == 0) nd = w_nd;
    if (w_nd != nd || nd < 1 || nd > 3) {
        ctx.error() << "the weight " << ints_str(c.w_shape) << " is not that of a "
                    << (nd >= 1 && nd <= 3 ? std::to_string(nd) + "-D " : "") << "convolution"
                    << (nd >= 1 && nd <= 3 ? "" : " over 1, 2 or 3 spatial dimensions");
    }
    c.nd = nd;
    c.data = batched_data(ctx, ctx.tensor(0), nd);
    if (!ctx.is_none(2)) c.bias = ctx.tensor(2);
    return c;
}

// PyTorch's checks of the channels, which the ops would report less clearly: the data's
// channels are the weight's input channels (w[1] * groups; transposed: w[0]), and groups
// divide w[0].
void check_channels(const PtContext& ctx, const ConvOperands& c, int64_t groups, bool transposed) {
    if (groups < 1) ctx.error() << "groups must be positive, got " << groups;
    if (c.w_shape[0] % groups != 0) {
        ctx.error() << "the weight's first dimension " << c.w_shape[0]
                    << " is not divisible by groups=" << groups;
    }
    int64_t expected = transposed ? c.w_shape[0] : c.w_shape[1] * groups;
    const PrimExpr& channels = ctx.tensor_type(c.data.x, "the input").shape[1];
    if (const int64_t* n = as_const_int(channels); n && *n != expected) {
        ctx.error() << "the input has " << *n << " channels, but the weight " << ints_str(c.w_shape)
                    << " with groups=" << groups << " expects " << expected;
    }
    if (c.bias.defined()) {
        int64_t out = transposed ? c.w_shape[1] * groups : c.w_shape[0];
        auto b = ctx.static_shape(c.bias, "the bias");
        if (b != std::vector<int64_t>{out}) {
            ctx.error() << "the bias has shape " << ints_str(b) << ", expected [" << out << "]";
        }
    }
}

// padding="same" (stride 1: the output keeps the input's size, the odd element of the total
// padding at the end, as PyTorch pads) or "valid" (none).
std::vector<int64_t> string_padding(const PtContext& ctx, const std::string& mode,
                                    const ConvOperands& c, const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& dilation) {
    std::vector<int64_t> begin(static_cast<size_t>(c.nd), 0), end = begin;
    if (mode == "valid") return symmetric_padding(begin);
    if (mode != "same") {
        ctx.error() << "padding='" << mode << "' is not a padding mode ('same' or 'valid' are)";
    }
    for (size_t d = 0; d < begin.size(); ++d) {
        if (strides[d] != 1) {
            ctx.error() << "padding='same' is not supported for strided convolutions (stride "
                        << ints_str(strides) << "), as in PyTorch";
        }
        int64_t total = dilation[d] * (c.w_shape[d + 2] - 1);
        begin[d] = total / 2;
        end[d] = total - begin[d];
    }
    begin.insert(begin.end(), end.begin(), end.end());
    return begin;
}

Expr build(const PtContext& ctx, const ConvOperands& c, const ConvParams& p, bool transposed,
           const std::vector<int64_t>& output_padding) {
    check_channels(ctx, c, p.groups, transposed);
    Expr y;
    if (transposed) {
        for (size_t d = 0; d < output_padding.size(); ++d) {
            if (output_padding[d] < 0 ||
                output_padding[d] >= std::max(p.strides[d], p.dilation[d])) {
                ctx.error() << "output_padding " << ints_str(output_padding)
                            << " must be smaller than either stride " << ints_str(p.strides)
                            << " or dilation " << ints_str(p.dilation) << " in each dimension";
            }
        }
        y = build_conv_transpose(ctx, c.data.x, c.w, c.bias, p, output_padding);
    } else {
        y = build_conv(ctx, c.data.x, c.w, c.bias, p);
    }
    return drop_batch(ctx, y, c.data);
}

// The spatial rank of aten::conv2d, aten::conv_transpose3d, ... from its name.
int64_t rank_from_kind(const std::string& kind) {
    return kind[kind.size() - 2] - '0';
}

}  // namespace

// aten::_convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups,
// benchmark, deterministic, cudnn_enabled[, allow_tf32]) and aten::convolution (its first nine).
PtValues convert_convolution(PtContext& ctx) {
    ConvOperands c = read_operands(ctx, 0);
    size_t nd = static_cast<size_t>(c.nd);
    bool transposed = ctx.bool_arg(6);
    ConvParams p{.strides = spatial_ints(ctx, 3, nd, "stride"),
                 .padding = symmetric_padding(spatial_ints(ctx, 4, nd, "padding")),
                 .dilation = spatial_ints(ctx, 5, nd, "dilation"),
                 .groups = ctx.int_arg(8)};
    std::vector<int64_t> output_padding;
    if (transposed) output_padding = spatial_ints(ctx, 7, nd, "output_padding");
    return {PtValue::of_tensor(build(ctx, c, p, transposed, output_padding))};
}

// aten::conv1d/2d/3d(x, w, b, stride, padding, dilation, groups), padding a list of ints or
// (the .padding overload) "same"/"valid"; aten::_convolution_mode, what tracing records for
// the latter, takes the same operands.
PtValues convert_conv(PtContext& ctx) {
    bool mode = ctx.kind() == "aten::_convolution_mode";
    ConvOperands c = read_operands(ctx, mode ? 0 : rank_from_kind(ctx.kind()));
    size_t nd = static_cast<size_t>(c.nd);
    ConvParams p{.strides = spatial_ints(ctx, 3, nd, "stride"),
                 .dilation = spatial_ints(ctx, 5, nd, "dilation"),
                 .groups = ctx.int_arg(6)};
    p.padding = ctx.input(4).kind == PtValue::Str
                    ? string_padding(ctx, ctx.str_arg(4), c, p.strides, p.dilation)
                    : symmetric_padding(spatial_ints(ctx, 4, nd, "padding"));
    return {PtValue::of_tensor(build(ctx, c, p, false, {}))};
}

// aten::conv_transpose1d/2d/3d(x, w, b, stride, padding, output_padding, groups, dilation).
PtValues convert_conv_transpose(PtContext& ctx) {
    ConvOperands c = read_operands(ctx, rank_from_kind(ctx.kind()));
    size_t nd = static_cast<size_t>(c.nd);
    ConvParams p{.strides = spatial_ints(ctx, 3, nd, "stride"),
                 .padding = symmetric_padding(spatial_ints(ctx, 4, nd, "padding")),
                 .dilation = spatial_ints(ctx, 7, nd, "dilation"),
                 .groups = ctx.int_arg(6)};
    std::vector<int64_t> output_padding = spatial_ints(ctx, 5, nd, "output_padding");
    return {PtValue::of_tensor(build(ctx, c, p, true, output_padding))};
}

}  // namespace anvil::frontend::pytorch
