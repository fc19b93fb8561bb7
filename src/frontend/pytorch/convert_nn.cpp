// Converters of the neural-network layers that rearrange or look up rather than compute:
// aten::embedding, aten::pixel_shuffle / pixel_unshuffle, aten::channel_shuffle. (Convolutions,
// pools, normalizations, linear layers and upsampling have their own files: convert_conv.cpp,
// convert_pool.cpp, convert_norm.cpp, convert_linear.cpp, convert_resize.cpp; aten::flatten is
// in convert_shape.cpp.)
#include <numeric>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/shape_ops.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// Dimension i of `dims`, which must be static.
int64_t static_dim(const PtContext& ctx, const std::vector<PrimExpr>& dims, size_t i) {
    const int64_t* n = as_const_int(dims[i]);
    if (!n) ctx.error() << "dimension " << i << " of the input must be static, got " << dims[i];
    return *n;
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
// inverse, as a reshape to [B, C, H, r, W, r] and a transpose. The leading dimensions may be
// symbolic.
PtValues convert_pixel_shuffle(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    bool shuffle = ctx.kind() == "aten::pixel_shuffle";
    int64_t r = positive_int(ctx, 1, shuffle ? "upscale_factor" : "downscale_factor");
    if (ctx.rank(x) < 3) {
        ctx.error() << "expects an input of at least 3 dimensions [*, C, H, W], got " << ctx.rank(x)
                    << "-D";
    }
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    std::vector<PrimExpr> out(dims.begin(), dims.end() - 3);
    PrimExpr batch = make_int(DataType::int64(), 1);
    for (const auto& d : out) batch = batch * d;
    int64_t c = static_dim(ctx, dims, dims.size() - 3), h = static_dim(ctx, dims, dims.size() - 2),
            w = static_dim(ctx, dims, dims.size() - 1);
    auto size = [](int64_t v) { return make_int(DataType::int64(), v); };
    Expr y;
    if (shuffle) {
        if (c % (r * r) != 0) {
            ctx.error() << "the " << c
                        << " channels are not divisible by upscale_factor^2 = " << r * r;
        }
        auto [attrs, a] = new_attrs<ops::DepthToSpaceAttrs>();
        a->blocksize = r;
        a->mode = "CRD";
        Expr x4 = view_dims(ctx, x, {batch, size(c), size(h), size(w)});
        y = ctx.call("depth_to_space", {x4}, attrs);
        out.insert(out.end(), {size(c / (r * r)), size(h * r), size(w * r)});
    } else {
        if (h % r != 0 || w % r != 0) {
            ctx.error() << "the spatial size " << h << "x" << w
                        << " is not divisible by downscale_factor " << r;
        }
        y = view_dims(ctx, x, {batch, size(c), size(h / r), size(r), size(w / r), size(r)});
        y = permute_axes(ctx, y, {0, 1, 3, 5, 2, 4});
        out.insert(out.end(), {size(c * r * r), size(h / r), size(w / r)});
    }
    return {PtValue::of_tensor(view_dims(ctx, y, out))};
}

// aten::channel_shuffle(x [N, C, *], groups): channel g * (C / groups) + i moves to
// i * groups + g (ShuffleNet). Only C must be static.
PtValues convert_channel_shuffle(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t groups = positive_int(ctx, 1, "groups");
    if (ctx.rank(x) < 3) {
        ctx.error() << "expects an input of at least 3 dimensions [N, C, *], got " << ctx.rank(x)
                    << "-D";
    }
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    int64_t c = static_dim(ctx, dims, 1);
    if (c % groups != 0) {
        ctx.error() << "the " << c << " channels are not divisible by groups=" << groups;
    }
    std::vector<PrimExpr> split = {dims[0], make_int(DataType::int64(), groups),
                                   make_int(DataType::int64(), c / groups)};
    split.insert(split.end(), dims.begin() + 2, dims.end());
    std::vector<int64_t> axes(split.size());
    std::iota(axes.begin(), axes.end(), 0);
    std::swap(axes[1], axes[2]);
    Expr y = permute_axes(ctx, view_dims(ctx, x, split), axes);
    return {PtValue::of_tensor(view_dims(ctx, y, dims))};
}

}  // namespace anvil::frontend::pytorch
