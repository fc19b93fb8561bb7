// Convolutions over 1, 2 or 3 spatial dimensions (conv_builder.h).
#include "frontend/conv_builder.h"

#include "frontend/composite_ops.h"
#include "ops/conv.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// UserError unless `p` has one stride and dilation and two pads per spatial dimension.
void check_params(const NodeBuilder& ctx, const ConvParams& p, size_t nd) {
    if (p.strides.size() != nd || p.dilation.size() != nd || p.padding.size() != 2 * nd) {
        ctx.error() << "strides, dilation and padding must have " << nd << ", " << nd << " and "
                    << 2 * nd << " values for " << nd << "-D data, not " << p.strides.size() << ", "
                    << p.dilation.size() << " and " << p.padding.size();
    }
}

// The attributes of nn.conv2d / nn.conv3d and their transposes (all have these fields), 1-D
// geometry lifted to 2-D.
template <typename A>
Ref<A> conv_attrs(const ConvParams& p) {
    auto attrs = make_ref<A>();
    auto* a = const_cast<A*>(attrs.get());
    a->strides = ints_to_2d(p.strides, 1);
    a->dilation = ints_to_2d(p.dilation, 1);
    a->padding =
        p.padding.size() == 2 ? std::vector<int64_t>{0, p.padding[0], 0, p.padding[1]} : p.padding;
    a->groups = p.groups;
    return attrs;
}

// The weight as 2-D ([O, C, K] → [O, C, 1, K]).
Expr weight_2d(const NodeBuilder& ctx, const Expr& w, std::vector<int64_t> shape) {
    if (shape.size() == 4) return w;
    shape.insert(shape.begin() + 2, 1);
    return reshape_to(ctx, w, shape);
}

}  // namespace

int64_t window_spatial_rank(const NodeBuilder& ctx, const Expr& x) {
    int64_t nd = ctx.rank(x) - 2;
    if (nd < 1 || nd > 3) {
        ctx.error() << nd << "-D data is not supported (1-D, 2-D and 3-D are)";
    }
    return nd;
}

std::vector<int64_t> conv_weight_shape(const NodeBuilder& ctx, const Expr& x, const Expr& w) {
    int64_t nd = window_spatial_rank(ctx, x);
    std::vector<int64_t> w_shape = ctx.static_shape(w, "the weight");
    if (static_cast<int64_t>(w_shape.size()) != nd + 2) {
        ctx.error() << "the weight has rank " << w_shape.size() << ", the data " << nd + 2;
    }
    return w_shape;
}

Expr build_conv(const NodeBuilder& ctx, const Expr& x, const Expr& w, const Expr& bias,
                const ConvParams& p) {
    std::vector<int64_t> w_shape = conv_weight_shape(ctx, x, w);
    size_t nd = w_shape.size() - 2;
    check_params(ctx, p, nd);
    Expr y;
    if (nd == 3) {
        y = ctx.call("nn.conv3d", {x, w}, conv_attrs<ops::Conv3DAttrs>(p));
    } else {
        Expr data = nd == 1 ? lift_1d_to_2d(ctx, x) : x;
        y = ctx.call("nn.conv2d", {data, weight_2d(ctx, w, w_shape)},
                     conv_attrs<ops::Conv2DAttrs>(p));
        if (nd == 1) y = lower_2d_to_1d(ctx, y);
    }
    return add_bias(ctx, y, bias, 1);
}

Expr build_conv_transpose(const NodeBuilder& ctx, const Expr& x, const Expr& w, const Expr& bias,
                          const ConvParams& p, std::vector<int64_t> output_padding) {
    std::vector<int64_t> w_shape = conv_weight_shape(ctx, x, w);
    size_t nd = w_shape.size() - 2;
    check_params(ctx, p, nd);
    if (output_padding.empty()) output_padding.assign(nd, 0);
    if (output_padding.size() != nd) {
        ctx.error() << "output_padding has " << output_padding.size() << " values for " << nd
                    << "-D data";
    }
    Expr y;
    if (nd == 3) {
        auto attrs = conv_attrs<ops::Conv3DTransposeAttrs>(p);
        const_cast<ops::Conv3DTransposeAttrs*>(attrs.get())->output_padding = output_padding;
        y = ctx.call("nn.conv3d_transpose", {x, w}, attrs);
    } else {
        auto attrs = conv_attrs<ops::Conv2DTransposeAttrs>(p);
        const_cast<ops::Conv2DTransposeAttrs*>(attrs.get())->output_padding =
            ints_to_2d(output_padding, 0);
        Expr data = nd == 1 ? lift_1d_to_2d(ctx, x) : x;
        y = ctx.call("nn.conv2d_transpose", {data, weight_2d(ctx, w, w_shape)}, attrs);
        if (nd == 1) y = lower_2d_to_1d(ctx, y);
    }
    return add_bias(ctx, y, bias, 1);
}

Expr lift_1d_to_2d(const NodeBuilder& ctx, const Expr& x) {
    auto [attrs, a] = new_attrs<ops::ExpandDimsAttrs>();
    a->axis = 2;
    return ctx.call("expand_dims", {x}, attrs);
}

Expr lower_2d_to_1d(const NodeBuilder& ctx, const Expr& y) {
    auto [attrs, a] = new_attrs<ops::SqueezeAttrs>();
    a->axes = {2};
    return ctx.call("squeeze", {y}, attrs);
}

std::vector<int64_t> ints_to_2d(const std::vector<int64_t>& v, int64_t unit) {
    return v.size() == 1 ? std::vector<int64_t>{unit, v[0]} : v;
}

}  // namespace anvil::frontend
