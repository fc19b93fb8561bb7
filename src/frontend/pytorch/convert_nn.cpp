// Converters of the neural-network layers: convolutions, batch normalization, pools, linear.
#include "frontend/pytorch/convert_ops.h"
#include "ops/conv.h"
#include "ops/norm.h"
#include "ops/pool.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// A per-spatial-dimension parameter: PyTorch accepts one int for all of them.
std::vector<int64_t> spatial(const PtContext& ctx, size_t i, size_t n, const char* what) {
    std::vector<int64_t> v = ctx.ints(i);
    if (v.size() == 1 && n > 1) v.assign(n, v[0]);
    if (v.size() != n) {
        ctx.error() << what << " has " << v.size() << " values for " << n
                    << " spatial dimensions";
    }
    return v;
}

// [p0, p1] → [p0, p1, p0, p1] (begin of each dimension, then end).
std::vector<int64_t> symmetric_padding(const std::vector<int64_t>& p) {
    std::vector<int64_t> out = p;
    out.insert(out.end(), p.begin(), p.end());
    return out;
}

}  // namespace

// aten::_convolution(x, w, b, stride, padding, dilation, transposed, output_padding, groups,
// ...) and aten::conv1d/2d/3d(x, w, b, stride, padding, dilation, groups).
PtValues convert_convolution(PtContext& ctx) {
    Expr x = ctx.tensor(0), w = ctx.tensor(1);
    Expr b = ctx.is_none(2) ? Expr() : ctx.tensor(2);
    int64_t rank = ctx.rank(x);
    size_t n = static_cast<size_t>(rank - 2);
    if (rank < 3 || rank > 5) ctx.error() << "input of rank " << rank << " is not 3-D to 5-D";
    bool generic = ctx.kind() == "aten::_convolution";
    bool transposed = generic && ctx.bool_arg(6);
    int64_t groups = ctx.int_arg(generic ? 8 : 6);
    auto strides = spatial(ctx, 3, n, "stride");
    if (ctx.input(4).kind == PtValue::Str) {
        ctx.error() << "padding='" << ctx.str_arg(4) << "' is not supported yet";
    }
    auto padding = spatial(ctx, 4, n, "padding");
    auto dilation = spatial(ctx, 5, n, "dilation");
    if (transposed) ctx.error() << "transposed convolution is not supported yet";
    // 1-D convolution runs as 2-D over a height of 1.
    if (rank == 3) {
        auto xs = ctx.static_shape(x, "the input");
        auto ws = ctx.static_shape(w, "the weight");
        x = reshape_to(ctx, x, {xs[0], xs[1], 1, xs[2]});
        w = reshape_to(ctx, w, {ws[0], ws[1], 1, ws[2]});
        strides.insert(strides.begin(), 1);
        padding.insert(padding.begin(), 0);
        dilation.insert(dilation.begin(), 1);
        n = 2;
    }
    Expr y;
    if (n == 2) {
        auto [attrs, a] = new_attrs<ops::Conv2DAttrs>();
        a->strides = strides;
        a->padding = symmetric_padding(padding);
        a->dilation = dilation;
        a->groups = groups;
        y = ctx.call("nn.conv2d", {x, w}, attrs);
    } else {
        auto [attrs, a] = new_attrs<ops::Conv3DAttrs>();
        a->strides = strides;
        a->padding = symmetric_padding(padding);
        a->dilation = dilation;
        a->groups = groups;
        y = ctx.call("nn.conv3d", {x, w}, attrs);
    }
    y = add_bias(ctx, y, b, 1);
    if (rank == 3) {
        auto ys = ctx.static_shape(y, "the result");
        y = reshape_to(ctx, y, {ys[0], ys[1], ys[3]});
    }
    return {PtValue::of_tensor(y)};
}

// aten::batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps, cudnn):
// inference with the running statistics (missing weight/bias are ones/zeros).
PtValues convert_batch_norm(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (ctx.is_none(3) || ctx.is_none(4)) {
        ctx.error() << "batch_norm without running statistics (track_running_stats=False) is "
                       "not supported yet";
    }
    Expr mean = ctx.tensor(3), var = ctx.tensor(4);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    auto channels = ctx.static_shape(mean, "running_mean");
    auto filled = [&](double v) {
        auto [attrs, b] = new_attrs<ops::BroadcastToAttrs>();
        b->shape = channels;
        return ctx.call("broadcast_to", {ctx.constant_scalar(dt, v)}, attrs);
    };
    Expr gamma = ctx.is_none(1) ? filled(1.0) : ctx.tensor(1);
    Expr beta = ctx.is_none(2) ? filled(0.0) : ctx.tensor(2);
    auto [attrs, a] = new_attrs<ops::BatchNormAttrs>();
    a->axis = 1;
    a->epsilon = ctx.float_arg(7);
    return {PtValue::of_tensor(ctx.call("nn.batch_norm", {x, gamma, beta, mean, var}, attrs))};
}

// aten::max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode); an empty stride is the
// kernel size.
PtValues convert_max_pool(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    auto kernel = spatial(ctx, 1, 2, "kernel_size");
    auto strides = ctx.ints(2).empty() ? kernel : spatial(ctx, 2, 2, "stride");
    auto [attrs, a] = new_attrs<ops::Pool2DAttrs>();
    a->pool_size = kernel;
    a->strides = strides;
    a->padding = symmetric_padding(spatial(ctx, 3, 2, "padding"));
    a->dilation = spatial(ctx, 4, 2, "dilation");
    a->ceil_mode = ctx.bool_arg(5);
    return {PtValue::of_tensor(ctx.call("nn.max_pool2d", {x}, attrs))};
}

// aten::adaptive_avg_pool2d(x, output_size): output cell (i, j) averages rows
// [floor(i*H/OH), ceil((i+1)*H/OH)) and the columns likewise.
PtValues convert_adaptive_pool(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    auto shape = ctx.static_shape(x, "the input");
    auto out = spatial(ctx, 1, 2, "output_size");
    int64_t h = shape[shape.size() - 2], w = shape[shape.size() - 1];
    if (out[0] == 1 && out[1] == 1) {
        return {PtValue::of_tensor(ctx.call("nn.global_avg_pool2d", {x}))};
    }
    if (h % out[0] == 0 && w % out[1] == 0) {
        auto [attrs, a] = new_attrs<ops::Pool2DAttrs>();
        a->pool_size = {h / out[0], w / out[1]};
        a->strides = a->pool_size;
        return {PtValue::of_tensor(ctx.call("nn.avg_pool2d", {x}, attrs))};
    }
    ctx.error() << "adaptive pooling of " << h << "x" << w << " to " << out[0] << "x" << out[1]
                << " (windows of different sizes) is not supported yet";
    ANVIL_UNREACHABLE();
}

// aten::linear(x, w[out, in], b): x @ w^T + b (nn.dense takes w as it is).
PtValues convert_linear(PtContext& ctx) {
    Expr y = ctx.call("nn.dense", {ctx.tensor(0), ctx.tensor(1)});
    Expr b = ctx.is_none(2) ? Expr() : ctx.tensor(2);
    if (b.defined()) y = ctx.call("add", {y, b});
    return {PtValue::of_tensor(y)};
}

}  // namespace anvil::frontend::pytorch
