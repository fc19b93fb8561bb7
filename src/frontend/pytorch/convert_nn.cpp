// Converters of the neural-network layers that rearrange or look up rather than compute:
// aten::embedding, aten::pixel_shuffle / pixel_unshuffle, aten::channel_shuffle. (Convolutions,
// pools, normalizations, linear layers and upsampling have their own files: convert_conv.cpp,
// convert_pool.cpp, convert_norm.cpp, convert_linear.cpp, convert_resize.cpp; aten::flatten is
// in convert_shape.cpp.)
#include <numeric>

#include "frontend/pytorch/convert_ops.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

Expr transpose(const PtContext& ctx, const Expr& x, std::vector<int64_t> axes) {
    auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
    a->axes = std::move(axes);
    return ctx.call("transpose", {x}, attrs);
}

// A positive int operand i (a factor or group count), named `what` in errors.
int64_t positive_int(const PtContext& ctx, size_t i, const char* what) {
    int64_t v = ctx.int_arg(i);
    if (v < 1) ctx.error() << what << " must be positive, got " << v;
    return v;
}

}  // namespace

// aten::embedding(weight [V, D], indices, padding_idx, scale_grad_by_freq, sparse): rows of the
// weight (the other operands only matter to training). Indices out of [0, V) are clamped, where
// PyTorch raises.
PtValues convert_embedding(PtContext& ctx) {
    Expr w = ctx.tensor(0), idx = ctx.tensor(1);
    if (ctx.rank(w) != 2)
        ctx.error() << "the embedding weight must be 2-D, got " << ctx.rank(w) << "-D";
    DataType t = ctx.tensor_type(idx, "the indices").dtype;
    if (t != DataType::int64() && t != DataType::int32()) {
        ctx.error() << "embedding indices must be int64 or int32, got " << t.str();
    }
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = 0;
    return {PtValue::of_tensor(ctx.call("take", {w, idx}, attrs))};
}

// aten::pixel_shuffle(x [*, C * r^2, H, W], r) -> [*, C, H * r, W * r]: ONNX's DepthToSpace in
// CRD order; aten::pixel_unshuffle(x [*, C, H * r, W * r], r) -> [*, C * r^2, H, W], its
// inverse, as a reshape to [B, C, H, r, W, r] and a transpose.
PtValues convert_pixel_shuffle(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    bool shuffle = ctx.kind() == "aten::pixel_shuffle";
    int64_t r = positive_int(ctx, 1, shuffle ? "upscale_factor" : "downscale_factor");
    if (ctx.rank(x) < 3) {
        ctx.error() << "expects an input of at least 3 dimensions [*, C, H, W], got " << ctx.rank(x)
                    << "-D";
    }
    std::vector<int64_t> s = ctx.static_shape(x, "the input");
    size_t k = s.size();
    int64_t batch = std::accumulate(s.begin(), s.end() - 3, int64_t{1}, std::multiplies<>());
    int64_t c = s[k - 3], h = s[k - 2], w = s[k - 1];
    std::vector<int64_t> out(s.begin(), s.end() - 3);
    Expr y;
    if (shuffle) {
        if (c % (r * r) != 0) {
            ctx.error() << "the " << c
                        << " channels are not divisible by upscale_factor^2 = " << r * r;
        }
        auto [attrs, a] = new_attrs<ops::DepthToSpaceAttrs>();
        a->blocksize = r;
        a->mode = "CRD";
        y = ctx.call("depth_to_space", {reshape_to(ctx, x, {batch, c, h, w})}, attrs);
        out.insert(out.end(), {c / (r * r), h * r, w * r});
    } else {
        if (h % r != 0 || w % r != 0) {
            ctx.error() << "the spatial size " << h << "x" << w
                        << " is not divisible by downscale_factor " << r;
        }
        y = reshape_to(ctx, x, {batch, c, h / r, r, w / r, r});
        y = transpose(ctx, y, {0, 1, 3, 5, 2, 4});
        out.insert(out.end(), {c * r * r, h / r, w / r});
    }
    return {PtValue::of_tensor(reshape_to(ctx, y, out))};
}

// aten::channel_shuffle(x [N, C, *], groups): channel g * (C / groups) + i moves to
// i * groups + g (ShuffleNet).
PtValues convert_channel_shuffle(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t groups = positive_int(ctx, 1, "groups");
    if (ctx.rank(x) < 3) {
        ctx.error() << "expects an input of at least 3 dimensions [N, C, *], got " << ctx.rank(x)
                    << "-D";
    }
    std::vector<int64_t> s = ctx.static_shape(x, "the input");
    if (s[1] % groups != 0) {
        ctx.error() << "the " << s[1] << " channels are not divisible by groups=" << groups;
    }
    std::vector<int64_t> split = {s[0], groups, s[1] / groups};
    split.insert(split.end(), s.begin() + 2, s.end());
    std::vector<int64_t> axes(split.size());
    std::iota(axes.begin(), axes.end(), 0);
    std::swap(axes[1], axes[2]);
    return {
        PtValue::of_tensor(reshape_to(ctx, transpose(ctx, reshape_to(ctx, x, split), axes), s))};
}

}  // namespace anvil::frontend::pytorch
