// Converters of ONNX's window ops: Conv, ConvTranspose, MaxPool, AveragePool and the global
// pools, 1-D (as 2-D with a unit height), 2-D and 3-D (the nn.*3d ops; the global pools as 2-D
// over the flattened depth and height), with auto_pad, dilations, groups, ceil_mode and an
// optional bias; MaxPool's Indices by nn.max_pool_indices. The convolutions themselves are built
// by frontend/conv_builder.h; what is ONNX's (attributes, auto_pad, output_shape) is here.
#include "frontend/conv_builder.h"
#include "frontend/onnx/convert_ops.h"
#include "ops/pool.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// The window geometry Conv, ConvTranspose and the pools share, per spatial dimension (after
// lifted_to_2d, 2-D geometry for 1-D data).
struct ConvGeometry {
    std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
    int64_t groups = 1;
    std::string auto_pad;
};

// `kernel` is the weight's spatial shape (convolutions), which kernel_shape must match, or
// empty (pools: kernel_shape is required).
ConvGeometry read_geometry(ConvertContext& ctx, size_t nd, const std::vector<int64_t>& kernel) {
    ConvGeometry g;
    g.kernel = ctx.attr_ints("kernel_shape", kernel);
    if (kernel.empty() && g.kernel.empty()) ctx.error() << "attribute 'kernel_shape' is required";
    if (!kernel.empty() && g.kernel != kernel) {
        ctx.error() << "kernel_shape " << ints_str(g.kernel) << " does not match the weight's "
                    << "spatial shape " << ints_str(kernel);
    }
    g.strides = ctx.attr_ints("strides", std::vector<int64_t>(nd, 1));
    g.dilations = ctx.attr_ints("dilations", std::vector<int64_t>(nd, 1));
    std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
    if (g.kernel.size() != nd || g.strides.size() != nd || g.dilations.size() != nd ||
        pads.size() != 2 * nd) {
        ctx.error() << "kernel_shape, strides, dilations and pads must have " << nd << ", " << nd
                    << ", " << nd << " and " << 2 * nd << " values for " << nd << "-D data";
    }
    g.pads_begin.assign(pads.begin(), pads.begin() + nd);
    g.pads_end.assign(pads.begin() + nd, pads.end());
    g.groups = ctx.attr_int("group", 1);
    g.auto_pad = ctx.attr_string("auto_pad", "NOTSET");
    if (g.auto_pad != "NOTSET" && g.auto_pad != "SAME_UPPER" && g.auto_pad != "SAME_LOWER" &&
        g.auto_pad != "VALID") {
        ctx.error() << "auto_pad '" << g.auto_pad << "' is not supported";
    }
    return g;
}

// Splits `total` padding between begin and end as SAME_UPPER (extra at the end) or SAME_LOWER.
void split_same(int64_t total, bool upper, int64_t* begin, int64_t* end) {
    *begin = upper ? total / 2 : total - total / 2;
    *end = total - *begin;
}

// Explicit pads for auto_pad SAME_* / VALID of a convolution or pool over `x` (static shape):
// SAME gives ceil(in / stride) outputs.
void resolve_auto_pad(ConvertContext& ctx, ConvGeometry& g, const Expr& x) {
    if (g.auto_pad == "NOTSET") return;
    std::vector<int64_t> in = ctx.static_shape(x, "the data");
    for (size_t i = 0; i < g.kernel.size(); ++i) {
        int64_t total = 0;
        if (g.auto_pad != "VALID") {
            int64_t size = in[i + 2], s = g.strides[i];
            int64_t out = (size + s - 1) / s;
            int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
            total = std::max<int64_t>(0, (out - 1) * s + extent - size);
        }
        split_same(total, g.auto_pad == "SAME_UPPER", &g.pads_begin[i], &g.pads_end[i]);
    }
}

// The geometry of 1-D data as that of 2-D data with a unit height (other ranks unchanged).
ConvGeometry lifted_to_2d(ConvGeometry g) {
    g.kernel = ints_to_2d(g.kernel, 1);
    g.strides = ints_to_2d(g.strides, 1);
    g.dilations = ints_to_2d(g.dilations, 1);
    g.pads_begin = ints_to_2d(g.pads_begin, 0);
    g.pads_end = ints_to_2d(g.pads_end, 0);
    return g;
}

// The ops' padding attribute: every begin, then every end ([top, left, bottom, right] in 2-D).
std::vector<int64_t> padding_of(const ConvGeometry& g) {
    std::vector<int64_t> p = g.pads_begin;
    p.insert(p.end(), g.pads_end.begin(), g.pads_end.end());
    return p;
}

// The attributes of nn.max_pool2d, nn.avg_pool2d and their 3-D forms from `g` (already lifted).
template <typename A>
Ref<A> pool_attrs(const ConvGeometry& g, bool ceil_mode, bool count_include_pad) {
    auto attrs = make_ref<A>();
    auto* a = const_cast<A*>(attrs.get());
    a->pool_size = g.kernel;
    a->strides = g.strides;
    a->dilation = g.dilations;
    a->padding = padding_of(g);
    a->ceil_mode = ceil_mode;
    a->count_include_pad = count_include_pad;
    return attrs;
}

// The explicit geometry of ONNX's convolution in the form conv_builder.h takes.
ConvParams conv_params(const ConvGeometry& g) {
    return {.strides = g.strides,
            .padding = padding_of(g),
            .dilation = g.dilations,
            .groups = g.groups};
}

}  // namespace

ConvParams conv_node_params(ConvertContext& ctx, const Expr& x,
                            const std::vector<int64_t>& w_shape) {
    ConvGeometry g = read_geometry(ctx, w_shape.size() - 2, {w_shape.begin() + 2, w_shape.end()});
    resolve_auto_pad(ctx, g, x);
    return conv_params(g);
}

Exprs convert_conv(ConvertContext& ctx) {
    Expr x = ctx.input(0), w = ctx.input(1);
    ConvParams p = conv_node_params(ctx, x, conv_weight_shape(ctx, x, w));
    return {build_conv(ctx, x, w, ctx.optional_input(2), p)};
}

// output_shape and auto_pad become explicit pads (and output_padding, for an output larger than
// the natural one).
Exprs convert_conv_transpose(ConvertContext& ctx) {
    Expr x = ctx.input(0), w = ctx.input(1);
    std::vector<int64_t> w_shape = conv_weight_shape(ctx, x, w);
    int64_t nd = static_cast<int64_t>(w_shape.size()) - 2;
    ConvGeometry g = read_geometry(ctx, nd, {w_shape.begin() + 2, w_shape.end()});
    std::vector<int64_t> out_pad = ctx.attr_ints("output_padding", std::vector<int64_t>(nd, 0));
    std::vector<int64_t> out_shape = ctx.attr_ints("output_shape");
    if (out_pad.size() != static_cast<size_t>(nd))
        ctx.error() << "output_padding has a wrong length";
    if (out_shape.size() > static_cast<size_t>(nd)) {
        out_shape.erase(out_shape.begin(), out_shape.end() - nd);  // [N, C, ...] given in full
    }
    bool same = g.auto_pad == "SAME_UPPER" || g.auto_pad == "SAME_LOWER";
    if (!out_shape.empty() || same || g.auto_pad == "VALID") {
        std::vector<int64_t> in = ctx.static_shape(x, "the data");
        for (int64_t i = 0; i < nd; ++i) {
            int64_t extent = (g.kernel[i] - 1) * g.dilations[i] + 1;
            int64_t full = g.strides[i] * (in[i + 2] - 1) + out_pad[i] + extent;
            int64_t target = !out_shape.empty() ? out_shape[i]
                             : same             ? in[i + 2] * g.strides[i]
                                                : full;
            int64_t total = full - target;
            if (total < 0) {
                // A larger output_shape than the natural one grows the end, as onnxruntime does.
                out_pad[i] -= total;
                total = 0;
            }
            // ONNX: the extra element goes to the end only for SAME_UPPER.
            split_same(total, g.auto_pad == "SAME_UPPER", &g.pads_begin[i], &g.pads_end[i]);
        }
    }
    return {build_conv_transpose(ctx, x, w, ctx.optional_input(2), conv_params(g), out_pad)};
}

Exprs convert_pool(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    int64_t nd = window_spatial_rank(ctx, x);
    ConvGeometry g = read_geometry(ctx, nd, {});
    resolve_auto_pad(ctx, g, x);
    bool is_max = ctx.node().op_type() == "MaxPool";
    bool ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
    bool count_include_pad = !is_max && ctx.attr_int("count_include_pad", 0) != 0;
    // MaxPool's Indices, when asked for: one op over any spatial rank, so 1-D data needs no
    // lifting (its flat indices would be the same).
    Expr indices;
    if (is_max && ctx.node().output_size() > 1 && !ctx.node().output(1).empty()) {
        auto [attrs, a] = new_attrs<ops::MaxPoolIndicesAttrs>();
        a->pool_size = g.kernel;
        a->strides = g.strides;
        a->dilation = g.dilations;
        a->padding = padding_of(g);
        a->ceil_mode = ceil_mode;
        a->storage_order = ctx.attr_int("storage_order", 0);
        if (a->storage_order != 0 && a->storage_order != 1) {
            ctx.error() << "storage_order must be 0 (row-major) or 1 (column-major), got "
                        << a->storage_order;
        }
        indices = ctx.call("nn.max_pool_indices", {x}, attrs);
    }
    g = lifted_to_2d(g);
    Expr y;
    if (nd == 3) {
        y = ctx.call(is_max ? "nn.max_pool3d" : "nn.avg_pool3d", {x},
                     pool_attrs<ops::Pool3DAttrs>(g, ceil_mode, count_include_pad));
    } else {
        Expr data = nd == 1 ? lift_1d_to_2d(ctx, x) : x;
        y = ctx.call(is_max ? "nn.max_pool2d" : "nn.avg_pool2d", {data},
                     pool_attrs<ops::Pool2DAttrs>(g, ceil_mode, count_include_pad));
        if (nd == 1) y = lower_2d_to_1d(ctx, y);
    }
    if (indices.defined()) return {y, indices};
    return {y};
}

Exprs convert_global_pool(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    int64_t nd = window_spatial_rank(ctx, x);
    bool is_max = ctx.node().op_type() == "GlobalMaxPool";
    if (nd == 3) {
        // Over [N, C, D * H, W]: the same elements, and no 3-D op for one reduction.
        std::vector<int64_t> s = ctx.static_shape(x, "the data");
        Expr flat = reshape_to(ctx, x, {s[0], s[1], s[2] * s[3], s[4]});
        Expr y = ctx.call(is_max ? "nn.global_max_pool2d" : "nn.global_avg_pool2d", {flat});
        return {reshape_to(ctx, y, {s[0], s[1], 1, 1, 1})};
    }
    Expr data = nd == 1 ? lift_1d_to_2d(ctx, x) : x;
    Expr y = ctx.call(is_max ? "nn.global_max_pool2d" : "nn.global_avg_pool2d", {data});
    return {nd == 1 ? lower_2d_to_1d(ctx, y) : y};
}

}  // namespace anvil::frontend
