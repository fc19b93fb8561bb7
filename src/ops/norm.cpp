// Normalizations in inference form: nn.batch_norm (per-channel affine with the moving
// statistics; Broadcast), nn.layer_norm and nn.instance_norm (statistics computed over trailing
// axes; OutEWiseFusable).
//
// layer_norm and instance_norm share one compute: <name>_mean and <name>_var are keep-dims
// reductions over the normalized axes (the variance from the mean, two passes, so large means
// do not cancel), then the normalized and scaled result.
#include "ops/norm.h"

#include <functional>

#include "graph/op.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/reduce.h"
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

const graph::TensorType& expect_float_data(const Op& op, const std::vector<Type>& args,
                                           const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    if (!x.dtype.is_floating()) {
        user_error(loc) << op.name << " needs floating-point data, got " << x.dtype.str();
    }
    return x;
}

// A per-channel parameter: 1-D, `channels` long, the data's dtype.
void expect_channel_param(const Op& op, const std::vector<Type>& args, size_t i, const char* name,
                          const graph::TensorType& x, int64_t axis, const SourceLoc& loc) {
    const auto& p = graph::expect_tensor(args[i], loc, std::string(name) + " of " + op.name);
    if (p.dtype != x.dtype) {
        user_error(loc) << op.name << ": " << name << " has type " << p.dtype.str() << ", the data "
                        << x.dtype.str();
    }
    auto* c = as_const_int(x.shape[axis]);
    auto* n = p.ndim() == 1 ? as_const_int(p.shape[0]) : nullptr;
    if (p.ndim() != 1 || (c && n && *c != *n)) {
        user_error(loc) << op.name << ": " << name << " is " << graph::type_str(args[i])
                        << "; it must be 1-D with the " << graph::type_str(args[0])
                        << " data's axis-" << axis << " length";
    }
}

// ---- batch_norm ---------------------------------------------------------------------------

const char* kBatchNormParams[] = {"gamma", "beta", "moving_mean", "moving_var"};

Type batch_norm_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                     const SourceLoc& loc) {
    const auto& x = expect_float_data(op, args, loc);
    if (x.ndim() == 0) user_error(loc) << op.name << ": the data is a scalar";
    int64_t axis = normalize_input_axis(static_cast<const BatchNormAttrs&>(attrs).axis, x.ndim(),
                                        loc, op.name);
    for (size_t i = 1; i < 5; ++i) {
        expect_channel_param(op, args, i, kBatchNormParams[i - 1], x, axis, loc);
    }
    return args[0];
}

std::vector<te::Tensor> batch_norm_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    const auto& a = static_cast<const BatchNormAttrs&>(attrs);
    size_t axis = static_cast<size_t>(
        normalize_input_axis(a.axis, in[0].ndim(), SourceLoc{}, "nn.batch_norm"));
    te::Tensor x = in[0], gamma = in[1], beta = in[2], mean = in[3], var = in[4];
    PrimExpr eps = make_const(x.dtype(), a.epsilon);
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            PrimExpr c = i[axis];
            PrimExpr scale = gamma(c) * te::rsqrt(var(c) + eps);
            return (x(std::vector<PrimExpr>(i.begin(), i.end())) - mean(c)) * scale + beta(c);
        },
        "batch_norm")};
}

// ---- layer_norm / instance_norm -----------------------------------------------------------

// Scale/shift of one normalized value at index `i`.
using Affine = std::function<PrimExpr(PrimExpr, std::span<const PrimExpr>)>;

te::Tensor normalize(const std::string& name, const te::Tensor& x, size_t first, double epsilon,
                     const std::vector<PrimExpr>& shape, const Affine& affine) {
    std::vector<PrimExpr> row_shape = shape;
    std::vector<Ref<IterVar>> axes;
    int64_t count = 1;
    for (size_t d = first; d < shape.size(); ++d) {
        row_shape[d] = make_int(DataType::int32(), 1);
        axes.push_back(te::reduce_axis(shape[d], "k" + std::to_string(d - first)));
        count *= const_dim(shape[d], "a normalized extent");
    }
    DataType t = x.dtype();
    PrimExpr inv = make_const(t, 1.0 / static_cast<double>(count));
    auto element = [&](std::span<const PrimExpr> i) {  // x at the row of i, reduction position
        std::vector<PrimExpr> idx(i.begin(), i.end());
        for (size_t d = first; d < shape.size(); ++d) idx[d] = axes[d - first]->var;
        return x(idx);
    };
    auto row = [&](std::span<const PrimExpr> i) {
        std::vector<PrimExpr> idx(i.begin(), i.end());
        for (size_t d = first; d < shape.size(); ++d) idx[d] = PrimExpr(0);
        return idx;
    };
    te::Tensor mean = te::set_tag(
        te::compute(
            row_shape, [&](std::span<const PrimExpr> i) { return te::sum(element(i) * inv, axes); },
            name + "_mean"),
        kOpStageTag);
    te::Tensor var = te::set_tag(
        te::compute(
            row_shape,
            [&](std::span<const PrimExpr> i) {
                PrimExpr dev = element(i) - mean(std::vector<PrimExpr>(i.begin(), i.end()));
                return te::sum(dev * dev * inv, axes);
            },
            name + "_var"),
        kOpStageTag);
    PrimExpr eps = make_const(t, epsilon);
    return te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> r = row(i);
            PrimExpr v =
                (x(std::vector<PrimExpr>(i.begin(), i.end())) - mean(r)) * te::rsqrt(var(r) + eps);
            return affine(v, i);
        },
        name);
}

Type layer_norm_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                     const SourceLoc& loc) {
    if (args.size() != 2 && args.size() != 3) {
        user_error(loc) << op.name << " takes (data, gamma) or (data, gamma, beta), got "
                        << args.size() << " inputs";
    }
    const auto& x = expect_float_data(op, args, loc);
    if (x.ndim() == 0) user_error(loc) << op.name << ": the data is a scalar";
    size_t axis = static_cast<size_t>(normalize_input_axis(
        static_cast<const LayerNormAttrs&>(attrs).axis, x.ndim(), loc, op.name));
    std::vector<PrimExpr> normalized(x.shape.begin() + static_cast<ptrdiff_t>(axis), x.shape.end());
    for (size_t i = 1; i < args.size(); ++i) {
        const char* name = i == 1 ? "gamma" : "beta";
        const auto& p = graph::expect_tensor(args[i], loc, std::string(name) + " of " + op.name);
        bool fits = p.dtype == x.dtype && p.ndim() <= normalized.size();
        for (size_t d = 0; fits && d < p.ndim(); ++d) {
            const PrimExpr& pd = p.shape[d];
            const PrimExpr& nd = normalized[d + normalized.size() - p.ndim()];
            auto* pv = as_const_int(pd);
            auto* nv = as_const_int(nd);
            fits = is_one(pd) || !pv || !nv || *pv == *nv;
        }
        if (!fits) {
            user_error(loc) << op.name << ": " << name << " " << graph::type_str(args[i])
                            << " does not broadcast to the normalized axes " << axis << ".. of "
                            << graph::type_str(args[0]);
        }
    }
    return args[0];
}

std::vector<te::Tensor> layer_norm_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    const auto& a = static_cast<const LayerNormAttrs&>(attrs);
    te::Tensor x = in[0];
    size_t first =
        static_cast<size_t>(normalize_input_axis(a.axis, x.ndim(), SourceLoc{}, "nn.layer_norm"));
    auto param = [&](const te::Tensor& p, std::span<const PrimExpr> i) {
        return p(broadcast_index(p.shape(), i.subspan(first)));
    };
    Affine affine = [&](PrimExpr v, std::span<const PrimExpr> i) {
        PrimExpr r = v * param(in[1], i);
        return in.size() > 2 ? r + param(in[2], i) : r;
    };
    return {normalize("layer_norm", x, first, a.epsilon, te_shape(out), affine)};
}

Type instance_norm_type(const Op& op, const std::vector<Type>& args, const Attrs&,
                        const SourceLoc& loc) {
    const auto& x = expect_float_data(op, args, loc);
    if (x.ndim() < 3) {
        user_error(loc) << op.name << ": the data must be [N, C, spatial...] with at least one "
                        << "spatial axis, got " << graph::type_str(args[0]);
    }
    expect_channel_param(op, args, 1, "gamma", x, 1, loc);
    expect_channel_param(op, args, 2, "beta", x, 1, loc);
    return args[0];
}

std::vector<te::Tensor> instance_norm_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                              const Type& out) {
    const auto& a = static_cast<const InstanceNormAttrs&>(attrs);
    Affine affine = [&](PrimExpr v, std::span<const PrimExpr> i) {
        return v * in[1](i[1]) + in[2](i[1]);
    };
    return {normalize("instance_norm", in[0], 2, a.epsilon, te_shape(out), affine)};
}

// ---- lrn ----------------------------------------------------------------------------------

Type lrn_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
              const SourceLoc& loc) {
    const auto& x = expect_float_data(op, args, loc);
    if (x.ndim() < 3) {
        user_error(loc) << op.name << " needs data of rank 3 or more [N, C, ...], got "
                        << graph::type_str(args[0]);
    }
    int64_t size = attrs_as<LRNAttrs>(attrs).size;
    if (size < 1) user_error(loc) << op.name << ": size must be positive, got " << size;
    return args[0];
}

// The windowed sum of squares is a reduction over `size` channel offsets; offsets outside
// [0, C) are excluded by the condition (and their reads clamped into range).
std::vector<te::Tensor> lrn_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                    const Type& out) {
    te::Tensor x = in[0];
    const auto& a = attrs_as<LRNAttrs>(attrs);
    DataType dt = x.dtype();
    PrimExpr channels = cast(DataType::int32(), x.shape()[1]);
    Ref<IterVar> r = te::reduce_axis(make_int(DataType::int32(), a.size), "r");
    auto shape = te_shape(out);
    te::Tensor sq = te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.begin(), i.end());
            PrimExpr c = cast(DataType::int32(), i[1]) + r->var -
                         make_int(DataType::int32(), (a.size - 1) / 2);
            PrimExpr inside = c >= make_int(DataType::int32(), 0) && c < channels;
            idx[1] = max(min(c, channels - make_int(DataType::int32(), 1)),
                         make_int(DataType::int32(), 0));
            PrimExpr v = x(idx);
            return te::sum(v * v, {r}, inside);
        },
        "lrn_square_sum");
    return {te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.begin(), i.end());
            PrimExpr base = make_const(dt, a.bias) +
                            make_const(dt, a.alpha / static_cast<double>(a.size)) * sq(idx);
            return x(idx) / te::pow(base, make_const(dt, a.beta));
        },
        "lrn")};
}

}  // namespace

void schedule_norm_x86(te::Schedule& s, const te::Tensor& anchor,
                       const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    schedule_row_reduction_op(s, anchor, outputs, ctx);
}

void schedule_norm_generic(te::Schedule& s, const te::Tensor& anchor,
                           const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    schedule_row_reduction_op_generic(s, anchor, outputs, ctx);
}

Ref<Op> make_batch_norm_op() {
    return make_op({.name = "nn.batch_norm",
                    .num_inputs = 5,
                    .make_default_attrs = default_attrs<BatchNormAttrs>,
                    .infer_type = batch_norm_type,
                    .compute = batch_norm_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Broadcast,
                    .description = "inference batch normalization along attrs.axis"});
}

Ref<Op> make_lrn_op() {
    return make_op({.name = "nn.lrn",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<LRNAttrs>,
                    .infer_type = lrn_type,
                    .compute = lrn_compute,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "local response normalization across channels"});
}

Ref<Op> make_layer_norm_op() {
    return make_op(
        {.name = "nn.layer_norm",
         .num_inputs = -1,
         .make_default_attrs = default_attrs<LayerNormAttrs>,
         .infer_type = layer_norm_type,
         .compute = layer_norm_compute,
         .schedule = schedule_by_target<schedule_norm_x86, schedule_norm_generic>,
         .pattern = OpPattern::OutEWiseFusable,
         .description = "normalization over the axes attrs.axis.. (gamma, optional beta)"});
}

Ref<Op> make_instance_norm_op() {
    return make_op({.name = "nn.instance_norm",
                    .num_inputs = 3,
                    .make_default_attrs = default_attrs<InstanceNormAttrs>,
                    .infer_type = instance_norm_type,
                    .compute = instance_norm_compute,
                    .schedule = schedule_by_target<schedule_norm_x86, schedule_norm_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "per-(n, c) normalization over the spatial axes"});
}

}  // namespace anvil::ops
