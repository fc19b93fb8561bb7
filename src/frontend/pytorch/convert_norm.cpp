// Converters of PyTorch's normalizations: aten::batch_norm (running or batch statistics),
// aten::native_batch_norm, aten::layer_norm and aten::native_layer_norm (over any number of
// trailing dimensions), aten::group_norm (a layer norm over each group) and aten::instance_norm
// (with or without running statistics). A missing weight or bias is ones or zeros, as in
// PyTorch.
#include "frontend/pytorch/convert_ops.h"
#include "ops/norm.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// `value` broadcast to `shape`, in `dtype`.
Expr filled(const PtContext& ctx, const std::vector<int64_t>& shape, DataType dtype, double value) {
    auto [attrs, b] = new_attrs<ops::BroadcastToAttrs>();
    b->shape = shape;
    return ctx.call("broadcast_to", {ctx.constant_scalar(dtype, value)}, attrs);
}

// Operand i (a per-channel or per-element weight), or `value` over `shape` when it is None.
Expr weight_or(const PtContext& ctx, size_t i, const std::vector<int64_t>& shape, DataType dtype,
               double value) {
    return ctx.is_none(i) ? filled(ctx, shape, dtype, value) : ctx.tensor(i);
}

// The mean of `x` over `axes` (keepdims) or over every axis but `axes` (exclude).
Expr mean_over(const PtContext& ctx, const Expr& x, std::vector<int64_t> axes, bool keepdims,
               bool exclude) {
    auto [attrs, a] = new_attrs<ops::ReduceAttrs>();
    a->axes = std::move(axes);
    a->keepdims = keepdims;
    a->exclude = exclude;
    return ctx.call("mean", {x}, attrs);
}

// The channel count of `x` [N, C, ...] (static).
int64_t channels_of(const PtContext& ctx, const Expr& x, const char* op) {
    if (ctx.rank(x) < 2) {
        ctx.error() << op << " expects an input of at least 2 dimensions [N, C, ...], got "
                    << ctx.rank(x) << "-D";
    }
    const PrimExpr& c = ctx.tensor_type(x, "the input").shape[1];
    const int64_t* n = as_const_int(c);
    if (!n) ctx.error() << op << " needs a static channel dimension, got " << c;
    return *n;
}

// The biased per-channel statistics of `x` [N, C, ...]: mean [C] and variance [C].
std::pair<Expr, Expr> batch_statistics(const PtContext& ctx, const Expr& x, int64_t channels) {
    Expr mean = mean_over(ctx, x, {1}, false, true);
    std::vector<int64_t> bshape(static_cast<size_t>(ctx.rank(x) - 1), 1);
    bshape[0] = channels;
    Expr centered = ctx.call("subtract", {x, reshape_to(ctx, mean, bshape)});
    Expr var = mean_over(ctx, ctx.call("multiply", {centered, centered}), {1}, false, true);
    return {mean, var};
}

// batch_norm's normalization: with the running statistics (operands 3 and 4) when `training`
// is false, else with the batch's. Also returns the statistics it used (native_batch_norm's
// save_mean and, from the variance, save_invstd).
struct BatchNormResult {
    Expr y, mean, var;
};
BatchNormResult batch_norm(const PtContext& ctx, bool training, double eps) {
    Expr x = ctx.tensor(0);
    int64_t c = channels_of(ctx, x, "batch_norm");
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    BatchNormResult r;
    if (training) {
        std::tie(r.mean, r.var) = batch_statistics(ctx, x, c);
    } else {
        if (ctx.is_none(3) || ctx.is_none(4)) {
            ctx.error() << "batch_norm in evaluation mode needs running_mean and running_var";
        }
        r.mean = ctx.tensor(3);
        r.var = ctx.tensor(4);
    }
    auto [attrs, a] = new_attrs<ops::BatchNormAttrs>();
    a->axis = 1;
    a->epsilon = eps;
    r.y = ctx.call(
        "nn.batch_norm",
        {x, weight_or(ctx, 1, {c}, dt, 1.0), weight_or(ctx, 2, {c}, dt, 0.0), r.mean, r.var},
        attrs);
    return r;
}

// 1 / sqrt(var + eps).
Expr inverse_std(const PtContext& ctx, const Expr& var, double eps) {
    DataType dt = ctx.tensor_type(var, "the variance").dtype;
    return ctx.call("rsqrt", {ctx.call("add", {var, ctx.constant_scalar(dt, eps)})});
}

// nn.layer_norm of `x` over its dimensions from `axis` on, with PyTorch's optional weight and
// bias (operands `wi`, `wi + 1`); their shape is `normalized`.
Expr layer_norm(const PtContext& ctx, const Expr& x, int64_t axis,
                const std::vector<int64_t>& normalized, size_t wi, double eps) {
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    std::vector<Expr> args = {x, weight_or(ctx, wi, normalized, dt, 1.0)};
    if (!ctx.is_none(wi + 1)) args.push_back(ctx.tensor(wi + 1));
    auto [attrs, a] = new_attrs<ops::LayerNormAttrs>();
    a->axis = axis;
    a->epsilon = eps;
    return ctx.call("nn.layer_norm", args, attrs);
}

// The first dimension layer_norm normalizes, after checking that `x` ends in `normalized`.
int64_t layer_norm_axis(const PtContext& ctx, const Expr& x,
                        const std::vector<int64_t>& normalized) {
    const auto& shape = ctx.tensor_type(x, "the input").shape;
    int64_t rank = static_cast<int64_t>(shape.size());
    int64_t n = static_cast<int64_t>(normalized.size());
    bool ok = n >= 1 && n <= rank;
    for (int64_t i = 0; ok && i < n; ++i) {
        const int64_t* d = as_const_int(shape[static_cast<size_t>(rank - n + i)]);
        ok = !d || *d == normalized[static_cast<size_t>(i)];
    }
    if (!ok) {
        ctx.error() << "normalized_shape " << ints_str(normalized)
                    << " is not the end of the input's shape (rank " << rank << ")";
    }
    return rank - n;
}

}  // namespace

// aten::batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps,
// cudnn_enabled). `training` (a module in training mode, or one without running statistics)
// normalizes with the batch's statistics; updating the running ones changes no output.
PtValues convert_batch_norm(PtContext& ctx) {
    return {PtValue::of_tensor(batch_norm(ctx, ctx.bool_arg(5), ctx.float_arg(7)).y)};
}

// aten::native_batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps)
// -> (y, save_mean, save_invstd): the batch's mean and 1/std when training, else empty, as
// PyTorch returns them.
PtValues convert_native_batch_norm(PtContext& ctx) {
    bool training = ctx.bool_arg(5);
    double eps = ctx.float_arg(7);
    BatchNormResult r = batch_norm(ctx, training, eps);
    if (training) {
        return {PtValue::of_tensor(r.y), PtValue::of_tensor(r.mean),
                PtValue::of_tensor(inverse_std(ctx, r.var, eps))};
    }
    DataType dt = ctx.tensor_type(r.y, "the result").dtype;
    Expr empty = ctx.constant(runtime::NDArray::empty({0}, graph::dl_dtype_of(dt)));
    return {PtValue::of_tensor(r.y), PtValue::of_tensor(empty), PtValue::of_tensor(empty)};
}

// aten::layer_norm(x, normalized_shape, weight, bias, eps, cudnn_enable).
PtValues convert_layer_norm(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    std::vector<int64_t> normalized = ctx.ints(1);
    int64_t axis = layer_norm_axis(ctx, x, normalized);
    return {PtValue::of_tensor(layer_norm(ctx, x, axis, normalized, 2, ctx.float_arg(4)))};
}

// aten::native_layer_norm(x, normalized_shape, weight, bias, eps) -> (y, mean, rstd), the
// statistics with the normalized dimensions kept as 1.
PtValues convert_native_layer_norm(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    std::vector<int64_t> normalized = ctx.ints(1);
    int64_t axis = layer_norm_axis(ctx, x, normalized);
    double eps = ctx.float_arg(4);
    std::vector<int64_t> axes;
    for (int64_t i = axis; i < ctx.rank(x); ++i) axes.push_back(i);
    Expr mean = mean_over(ctx, x, axes, true, false);
    Expr centered = ctx.call("subtract", {x, mean});
    Expr var = mean_over(ctx, ctx.call("multiply", {centered, centered}), axes, true, false);
    return {PtValue::of_tensor(layer_norm(ctx, x, axis, normalized, 2, eps)),
            PtValue::of_tensor(mean), PtValue::of_tensor(inverse_std(ctx, var, eps))};
}

// aten::group_norm(x, num_groups, weight, bias, eps, cudnn_enabled): [N, C, *S] normalized
// over each group of C / num_groups channels (and all of S), then scaled and shifted per
// channel. As a layer norm over [N, G, C / G * S].
PtValues convert_group_norm(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t c = channels_of(ctx, x, "group_norm");
    int64_t groups = ctx.int_arg(1);
    if (groups < 1 || c % groups != 0) {
        ctx.error() << "num_groups=" << groups << " does not divide the " << c << " channels";
    }
    const auto& shape = ctx.tensor_type(x, "the input").shape;
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    int64_t per_group = c / groups;
    std::vector<int64_t> back = {0, c};  // 0: the input's batch dimension
    for (size_t d = 2; d < shape.size(); ++d) {
        const int64_t* n = as_const_int(shape[d]);
        if (!n) ctx.error() << "group_norm needs static spatial dimensions, got " << shape[d];
        per_group *= *n;
        back.push_back(*n);
    }
    auto reshape = [&](const Expr& e, std::vector<int64_t> s) {
        auto [attrs, a] = new_attrs<ops::ReshapeAttrs>();
        a->newshape = std::move(s);
        return ctx.call("reshape", {e}, attrs);
    };
    auto [attrs, a] = new_attrs<ops::LayerNormAttrs>();
    a->axis = 2;
    a->epsilon = ctx.float_arg(4);
    Expr y = ctx.call("nn.layer_norm",
                      {reshape(x, {0, groups, per_group}), filled(ctx, {1}, dt, 1.0)}, attrs);
    y = reshape(y, back);
    // Per channel: weight [C] and bias [C] along axis 1.
    std::vector<int64_t> per_channel(shape.size() - 1, 1);
    per_channel[0] = c;
    if (!ctx.is_none(2)) y = ctx.call("multiply", {y, reshape_to(ctx, ctx.tensor(2), per_channel)});
    if (!ctx.is_none(3)) y = ctx.call("add", {y, reshape_to(ctx, ctx.tensor(3), per_channel)});
    return {PtValue::of_tensor(y)};
}

// aten::instance_norm(x, weight, bias, running_mean, running_var, use_input_stats, momentum,
// eps, cudnn_enabled): each (n, c) over the spatial dimensions, or, without use_input_stats
// (track_running_stats in evaluation mode), batch_norm with the running statistics.
PtValues convert_instance_norm(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    double eps = ctx.float_arg(7);
    if (!ctx.bool_arg(5)) return {PtValue::of_tensor(batch_norm(ctx, false, eps).y)};
    if (ctx.rank(x) < 3) {
        ctx.error() << "instance_norm expects an input of at least 3 dimensions [N, C, ...], got "
                    << ctx.rank(x) << "-D";
    }
    int64_t c = channels_of(ctx, x, "instance_norm");
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    auto [attrs, a] = new_attrs<ops::InstanceNormAttrs>();
    a->epsilon = eps;
    return {PtValue::of_tensor(
        ctx.call("nn.instance_norm",
                 {x, weight_or(ctx, 1, {c}, dt, 1.0), weight_or(ctx, 2, {c}, dt, 0.0)}, attrs))};
}

}  // namespace anvil::frontend::pytorch
