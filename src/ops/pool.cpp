// Pooling: nn.max_pool2d, nn.avg_pool2d, nn.global_max_pool2d, nn.global_avg_pool2d (NCHW).
// All are OutEWiseFusable anchors.
//
// Windowed pools pad the input as a stage of its own ("<name>_pad", -inf for max and 0 for
// average, extended past the bottom/right padding as far as ceil_mode windows reach), so the
// window reduction reads without conditions and vectorizes along the output row. Average
// pooling divides a window sum ("avg_pool2d_sum") by a per-position count computed in closed
// form, which handles count_include_pad, ceil_mode and dilation alike.
#include "ops/pool.h"

#include <cmath>

#include "graph/op.h"
#include "ops/axes.h"
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

// Output extent of one spatial dimension (see Pool2DAttrs).
int64_t pool_out(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t k, int64_t stride, int64_t dil,
                 bool ceil_mode) {
    int64_t avail = in + pad_lo + pad_hi - (dil * (k - 1) + 1);
    int64_t out = (ceil_mode ? (avail + stride - 1) / stride : avail / stride) + 1;
    if (ceil_mode && (out - 1) * stride >= in + pad_lo) --out;
    return out;
}

const graph::TensorType& expect_nchw(const Op& op, const std::vector<Type>& args,
                                     const SourceLoc& loc) {
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    if (d.ndim() != 4) {
        user_error(loc) << op.name << ": the data must be 4-D (NCHW), got "
                        << graph::type_str(args[0]);
    }
    if (!d.dtype.is_floating()) {
        user_error(loc) << op.name << " needs floating-point data, got " << d.dtype.str();
    }
    return d;
}

Type pool2d_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    const auto& a = static_cast<const Pool2DAttrs&>(attrs);
    const auto& d = expect_nchw(op, args, loc);
    check_int_list(loc, op.name, "pool_size", a.pool_size, 2, 1);
    check_int_list(loc, op.name, "strides", a.strides, 2, 1);
    check_int_list(loc, op.name, "padding", a.padding, 4, 0);
    check_int_list(loc, op.name, "dilation", a.dilation, 2, 1);
    std::vector<PrimExpr> out{d.shape[0], d.shape[1]};
    for (int i = 0; i < 2; ++i) {
        const char* what = i == 0 ? "height" : "width";
        auto* in = as_const_int(d.shape[2 + i]);
        if (!in) user_error(loc) << op.name << ": the input " << what << " must be static";
        int64_t span = a.dilation[i] * (a.pool_size[i] - 1) + 1;
        int64_t padded = *in + a.padding[i] + a.padding[i + 2];
        if (span > padded) {
            user_error(loc) << op.name << ": the (dilated) window " << what << " " << span
                            << " is larger than the padded input " << what << " " << padded;
        }
        out.push_back(make_int(d.shape[2 + i].dtype(),
                               pool_out(*in, a.padding[i], a.padding[i + 2], a.pool_size[i],
                                        a.strides[i], a.dilation[i], a.ceil_mode)));
    }
    return graph::make_tensor_type(out, d.dtype);
}

Type global_pool_type(const Op& op, const std::vector<Type>& args, const Attrs&,
                      const SourceLoc& loc) {
    const auto& d = expect_nchw(op, args, loc);
    PrimExpr one = make_int(d.shape[2].dtype(), 1);
    return graph::make_tensor_type({d.shape[0], d.shape[1], one, one}, d.dtype);
}

// ---- computes -----------------------------------------------------------------------------

// The input padded by `pad_value` so that every window position of the output reads inside.
te::Tensor pad_for_windows(const std::string& name, const te::Tensor& x, const Pool2DAttrs& a,
                           const std::vector<PrimExpr>& out_shape, PrimExpr pad_value) {
    int64_t h = const_dim(x.shape()[2], "pool input height");
    int64_t w = const_dim(x.shape()[3], "pool input width");
    int64_t oh = const_dim(out_shape[2], "pool output height");
    int64_t ow = const_dim(out_shape[3], "pool output width");
    int64_t hp = (oh - 1) * a.strides[0] + a.dilation[0] * (a.pool_size[0] - 1) + 1;
    int64_t wp = (ow - 1) * a.strides[1] + a.dilation[1] * (a.pool_size[1] - 1) + 1;
    int64_t pt = a.padding[0], pl = a.padding[1];
    if (pt == 0 && pl == 0 && hp <= h && wp <= w) return x;
    const auto& s = x.shape();
    return te::compute(
        {s[0], s[1], I(hp), I(wp)},
        [&](std::span<const PrimExpr> i) {
            PrimExpr y = i[2] - I(pt), xx = i[3] - I(pl);
            PrimExpr inside = y >= I(0) && y < I(h) && xx >= I(0) && xx < I(w);
            return te::if_then_else(inside, x(i[0], i[1], y, xx), pad_value);
        },
        name + "_pad");
}

// Window positions k in [0, k_size) with lo <= start + k * dil < hi.
PrimExpr window_count(PrimExpr start, int64_t lo, int64_t hi, int64_t k_size, int64_t dil) {
    auto taps_below = [&](int64_t bound) {  // k with start + k * dil < bound
        PrimExpr n = floordiv(I(bound) - start + I(dil - 1), I(dil));
        return min(max(n, I(0)), I(k_size));
    };
    return taps_below(hi) - taps_below(lo);
}

std::vector<te::Tensor> pool2d_compute(const std::string& kind, const std::vector<te::Tensor>& in,
                                       const Attrs& attrs, const Type& out) {
    const auto& a = static_cast<const Pool2DAttrs&>(attrs);
    te::Tensor x = in[0];
    DataType t = x.dtype();
    std::vector<PrimExpr> out_shape = te_shape(out);
    bool is_max = kind == "max";
    std::string name = kind + "_pool2d";
    PrimExpr pad_value = is_max ? make_float(t, -INFINITY) : make_const(t, 0);
    te::Tensor xp = pad_for_windows(name, x, a, out_shape, pad_value);
    auto ry = te::reduce_axis(I(a.pool_size[0]), "ry");
    auto rx = te::reduce_axis(I(a.pool_size[1]), "rx");
    auto window = [&](std::span<const PrimExpr> i) {
        return xp(i[0], i[1], i[2] * I(a.strides[0]) + ry->var * I(a.dilation[0]),
                  i[3] * I(a.strides[1]) + rx->var * I(a.dilation[1]));
    };
    if (is_max) {
        return {te::compute(
            out_shape,
            [&](std::span<const PrimExpr> i) {
                return te::max(window(i), {ry, rx});
            },
            name)};
    }
    te::Tensor sum = te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            return te::sum(window(i), {ry, rx});
        },
        name + "_sum");
    int64_t h = const_dim(x.shape()[2], "pool input height");
    int64_t w = const_dim(x.shape()[3], "pool input width");
    return {te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            int64_t lo_h = a.count_include_pad ? -a.padding[0] : 0;
            int64_t hi_h = a.count_include_pad ? h + a.padding[2] : h;
            int64_t lo_w = a.count_include_pad ? -a.padding[1] : 0;
            int64_t hi_w = a.count_include_pad ? w + a.padding[3] : w;
            PrimExpr ch = window_count(i[2] * I(a.strides[0]) - I(a.padding[0]), lo_h, hi_h,
                                       a.pool_size[0], a.dilation[0]);
            PrimExpr cw = window_count(i[3] * I(a.strides[1]) - I(a.padding[1]), lo_w, hi_w,
                                       a.pool_size[1], a.dilation[1]);
            PrimExpr count = max(ch * cw, I(1));
            return sum(i[0], i[1], i[2], i[3]) / cast(t, count);
        },
        name)};
}

std::vector<te::Tensor> max_pool2d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    return pool2d_compute("max", in, attrs, out);
}

std::vector<te::Tensor> avg_pool2d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    return pool2d_compute("avg", in, attrs, out);
}

std::vector<te::Tensor> global_pool_compute(bool is_max, const std::vector<te::Tensor>& in,
                                            const Type& out) {
    te::Tensor x = in[0];
    auto ry = te::reduce_axis(x.shape()[2], "ry");
    auto rx = te::reduce_axis(x.shape()[3], "rx");
    std::vector<PrimExpr> out_shape = te_shape(out);
    auto value = [&](std::span<const PrimExpr> i) { return x(i[0], i[1], ry->var, rx->var); };
    if (is_max) {
        return {te::compute(
            out_shape,
            [&](std::span<const PrimExpr> i) {
                return te::max(value(i), {ry, rx});
            },
            "global_max_pool2d")};
    }
    te::Tensor sum = te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            return te::sum(value(i), {ry, rx});
        },
        "global_avg_pool2d_sum");
    PrimExpr count = cast(x.dtype(), x.shape()[2] * x.shape()[3]);
    return {te::compute(
        out_shape, [&](std::span<const PrimExpr> i) { return sum(i[0], i[1], i[2], i[3]) / count; },
        "global_avg_pool2d")};
}

std::vector<te::Tensor> global_max_pool2d_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                                  const Type& out) {
    return global_pool_compute(true, in, out);
}

std::vector<te::Tensor> global_avg_pool2d_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                                  const Type& out) {
    return global_pool_compute(false, in, out);
}

}  // namespace

void schedule_pool_generic(te::Schedule& s, const te::Tensor& anchor,
                           const std::vector<te::Tensor>& outputs,
                           const tir::LowerContext& target) {
    schedule_reduction_inputs_at_root(s, anchor, "pool");
}

void schedule_pool_x86(te::Schedule& s, const te::Tensor& anchor,
                       const std::vector<te::Tensor>& outputs, const tir::LowerContext& target) {
    te::Tensor red = expect_reduction(anchor, "pool");
    schedule_helper_inputs(s, red, target);
    te::Tensor out = tile_target(s, anchor, outputs, target);
    te::Tensor acc = local_accumulator(s, red, out);
    int64_t work = known_extent_product(red.shape());
    for (const auto& r : s[acc].op_reduce_axis()) work *= const_dim(r->dom.extent, "pool window");
    int64_t ow = const_dim(out.shape()[3], "pool output width");
    if (ow == 1 && const_dim(out.shape()[2], "pool output height") == 1) {
        // Global pooling: one scalar accumulator per (n, c).
        schedule_scalar_accumulator(s, out, acc, work);
        return;
    }
    schedule_nchw_row_vectors(s, out, acc, work, target);
}

Ref<Op> make_max_pool2d_op() {
    return make_op({.name = "nn.max_pool2d",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<Pool2DAttrs>,
                    .infer_type = pool2d_type,
                    .compute = max_pool2d_compute,
                    .schedule = schedule_by_target<schedule_pool_x86, schedule_pool_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "2-D max pooling, NCHW"});
}

Ref<Op> make_avg_pool2d_op() {
    return make_op({.name = "nn.avg_pool2d",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<Pool2DAttrs>,
                    .infer_type = pool2d_type,
                    .compute = avg_pool2d_compute,
                    .schedule = schedule_by_target<schedule_pool_x86, schedule_pool_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "2-D average pooling, NCHW"});
}

Ref<Op> make_global_max_pool2d_op() {
    return make_op({.name = "nn.global_max_pool2d",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<graph::NoAttrs>,
                    .infer_type = global_pool_type,
                    .compute = global_max_pool2d_compute,
                    .schedule = schedule_by_target<schedule_pool_x86, schedule_pool_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "max over H and W, NCHW -> [N, C, 1, 1]"});
}

Ref<Op> make_global_avg_pool2d_op() {
    return make_op({.name = "nn.global_avg_pool2d",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<graph::NoAttrs>,
                    .infer_type = global_pool_type,
                    .compute = global_avg_pool2d_compute,
                    .schedule = schedule_by_target<schedule_pool_x86, schedule_pool_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "mean over H and W, NCHW -> [N, C, 1, 1]"});
}

}  // namespace anvil::ops
