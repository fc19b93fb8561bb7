// Pooling: nn.max_pool2d, nn.avg_pool2d, nn.global_max_pool2d, nn.global_avg_pool2d (NCHW),
// nn.max_pool3d, nn.avg_pool3d (NCDHW). All are OutEWiseFusable anchors.
//
// Windowed pools pad the input as a stage of its own ("<name>_pad", -inf (an integer type's
// least value) for max and 0 for average, extended past the bottom/right padding as far as
// ceil_mode windows reach), so the
// window reduction reads without conditions and vectorizes along the output row. Average
// pooling divides a window sum ("avg_pool2d_sum") by a per-position count computed in closed
// form, which handles count_include_pad, ceil_mode and dilation alike. The windowed pools are
// written once over any spatial rank; the 3-D ones thus get the 2-D ones' compute and schedule.
//
// nn.max_pool_indices (MaxPool's second output) is, like argmax, two reductions over each
// window: the maximum (the max pools' own stages), then the first in-input tap holding it (TE has
// no tuple reducers). It repeats the maximum rather than sharing nn.max_pool2d's kernel: the two
// are separate calls, and the indices are rarely asked for.
#include "ops/pool.h"

#include <cmath>

#include "graph/op.h"
#include "ops/axes.h"
#include "ops/op_spec.h"
#include "ops/reduce.h"
#include "ops/tensor_shape.h"
#include "ops/tile_schedule.h"
#include "ops/transform.h"
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

// What the 2-D and 3-D pools share: their attributes over `nd` spatial dimensions (padding: the
// nd begins, then the nd ends).
struct PoolWindow {
    size_t nd;
    std::vector<int64_t> pool_size, strides, padding, dilation;
    bool ceil_mode, count_include_pad;
};

PoolWindow window_of(const Pool2DAttrs& a) {
    return {2, a.pool_size, a.strides, a.padding, a.dilation, a.ceil_mode, a.count_include_pad};
}
PoolWindow window_of(const Pool3DAttrs& a) {
    return {3, a.pool_size, a.strides, a.padding, a.dilation, a.ceil_mode, a.count_include_pad};
}
PoolWindow window_of(const MaxPoolIndicesAttrs& a, size_t nd) {
    return {nd, a.pool_size, a.strides, a.padding, a.dilation, a.ceil_mode, false};
}

// The data of a pool with `nd` spatial dimensions: NCHW (nd = 2) or NCDHW, floating point.
const graph::TensorType& expect_data(const Op& op, const std::vector<Type>& args, size_t nd,
                                     const SourceLoc& loc) {
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    if (d.ndim() != nd + 2) {
        static const char* const kLayouts[] = {"NCW", "NCHW", "NCDHW"};
        user_error(loc) << op.name << ": the data must be " << nd + 2 << "-D (" << kLayouts[nd - 1]
                        << "), got " << graph::type_str(args[0]);
    }
    // The maximum of integers is exact; averages need floating point.
    bool max = op.name.find("max") != std::string::npos;
    if (!d.dtype.is_floating() && !(max && (d.dtype.is_int() || d.dtype.is_uint()))) {
        user_error(loc) << op.name << " needs " << (max ? "numeric" : "floating-point")
                        << " data, got " << d.dtype.str();
    }
    return d;
}

Type pool_type(const Op& op, const std::vector<Type>& args, const PoolWindow& a,
               const SourceLoc& loc) {
    const auto& d = expect_data(op, args, a.nd, loc);
    check_int_list(loc, op.name, "pool_size", a.pool_size, a.nd, 1);
    check_int_list(loc, op.name, "strides", a.strides, a.nd, 1);
    check_int_list(loc, op.name, "padding", a.padding, 2 * a.nd, 0);
    check_int_list(loc, op.name, "dilation", a.dilation, a.nd, 1);
    std::vector<PrimExpr> out{d.shape[0], d.shape[1]};
    for (size_t i = 0; i < a.nd; ++i) {
        const char* what = spatial_dim_name(i, a.nd);
        auto* in = as_const_int(d.shape[2 + i]);
        if (!in) user_error(loc) << op.name << ": the input " << what << " must be static";
        int64_t span = a.dilation[i] * (a.pool_size[i] - 1) + 1;
        int64_t padded = *in + a.padding[i] + a.padding[i + a.nd];
        if (span > padded) {
            user_error(loc) << op.name << ": the (dilated) window " << what << " " << span
                            << " is larger than the padded input " << what << " " << padded;
        }
        out.push_back(make_int(d.shape[2 + i].dtype(),
                               pool_out(*in, a.padding[i], a.padding[i + a.nd], a.pool_size[i],
                                        a.strides[i], a.dilation[i], a.ceil_mode)));
    }
    return graph::make_tensor_type(out, d.dtype);
}

// The data of a pool with layout NCHW<block>c: [N, C/block, H, W, block], else a UserError.
const graph::TensorType& expect_blocked_data(const Op& op, const std::vector<Type>& args,
                                             const std::string& layout, int64_t block,
                                             const SourceLoc& loc) {
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    if (d.ndim() != 5 || static_dim(d.shape[4]) != block) {
        user_error(loc) << op.name << ": layout " << layout << " needs data [N, C/" << block
                        << ", H, W, " << block << "], got " << graph::type_str(args[0]);
    }
    return d;
}

Type pool2d_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    const auto& a = attrs_as<Pool2DAttrs>(attrs);
    int64_t block = nchw_channel_block(a.layout, loc, op.name);
    if (block == 0) return pool_type(op, args, window_of(a), loc);
    // Blocked: the pool of the [N, C/b, H, W] planes, each lane of the block alike.
    const auto& d = expect_blocked_data(op, args, a.layout, block, loc);
    Type planes = pool_type(
        op, {graph::make_tensor_type({d.shape[0], d.shape[1], d.shape[2], d.shape[3]}, d.dtype)},
        window_of(a), loc);
    std::vector<PrimExpr> out = planes.as<graph::TensorType>()->shape;
    out.push_back(d.shape[4]);
    return graph::make_tensor_type(out, d.dtype);
}

Type pool3d_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    return pool_type(op, args, window_of(attrs_as<Pool3DAttrs>(attrs)), loc);
}

// nn.max_pool_indices: the max pools' checks over 1 to 3 spatial dimensions, int64 results.
Type max_pool_indices_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                           const SourceLoc& loc) {
    const auto& a = attrs_as<MaxPoolIndicesAttrs>(attrs);
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    if (d.ndim() < 3 || d.ndim() > 5) {
        user_error(loc) << op.name << ": the data must be 3-D (NCW), 4-D (NCHW) or 5-D (NCDHW), "
                        << "got " << graph::type_str(args[0]);
    }
    if (a.storage_order != 0 && a.storage_order != 1) {
        user_error(loc) << op.name << ": storage_order must be 0 (row-major) or 1 (column-major), "
                        << "got " << a.storage_order;
    }
    size_t nd = d.ndim() - 2;
    Type values = pool_type(op, args, window_of(a, nd), loc);
    const auto& shape = values.as<graph::TensorType>()->shape;
    // A window of padding only has no index to give (onnxruntime refuses pads as large as the
    // kernel for the same reason).
    for (size_t i = 0; i < nd; ++i) {
        int64_t in = *as_const_int(d.shape[2 + i]), out = *as_const_int(shape[2 + i]);
        for (int64_t o = 0; o < out; ++o) {
            int64_t start = o * a.strides[i] - a.padding[i];
            bool reaches = false;
            for (int64_t k = 0; k < a.pool_size[i] && !reaches; ++k) {
                int64_t p = start + k * a.dilation[i];
                reaches = p >= 0 && p < in;
            }
            if (!reaches) {
                user_error(loc) << op.name << ": the window at output " << spatial_dim_name(i, nd)
                                << " " << o << " lies entirely in the padding, so it has no "
                                << "index; the padding must be smaller than the window";
            }
        }
    }
    return graph::make_tensor_type(shape, DataType::int64());
}

Type global_pool_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                      const SourceLoc& loc) {
    const auto& a = attrs_as<GlobalPool2DAttrs>(attrs);
    int64_t block = nchw_channel_block(a.layout, loc, op.name);
    if (block == 0) {
        const auto& d = expect_data(op, args, 2, loc);
        PrimExpr one = make_int(d.shape[2].dtype(), 1);
        return graph::make_tensor_type({d.shape[0], d.shape[1], one, one}, d.dtype);
    }
    const auto& d = expect_blocked_data(op, args, a.layout, block, loc);
    PrimExpr one = make_int(d.shape[2].dtype(), 1);
    return graph::make_tensor_type({d.shape[0], d.shape[1], one, one, d.shape[4]}, d.dtype);
}

// ---- computes -----------------------------------------------------------------------------

// The input padded by `pad_value` so that every window position of the output reads inside.
te::Tensor pad_for_windows(const std::string& name, const te::Tensor& x, const PoolWindow& a,
                           const std::vector<PrimExpr>& out_shape, PrimExpr pad_value) {
    std::vector<int64_t> in, padded;
    bool needed = false;
    for (size_t d = 0; d < a.nd; ++d) {
        in.push_back(const_dim(x.shape()[2 + d], "pool input extent"));
        int64_t out = const_dim(out_shape[2 + d], "pool output extent");
        padded.push_back((out - 1) * a.strides[d] + a.dilation[d] * (a.pool_size[d] - 1) + 1);
        needed = needed || a.padding[d] != 0 || padded[d] > in[d];
    }
    if (!needed) return x;
    // Axes after the spatial ones (the channel block of NCHW<b>c data) are kept.
    std::vector<PrimExpr> shape = x.shape();
    for (size_t d = 0; d < a.nd; ++d) shape[2 + d] = I(padded[d]);
    return te::set_tag(te::compute(
                           shape,
                           [&](std::span<const PrimExpr> i) {
                               std::vector<PrimExpr> at(i.begin(), i.end());
                               PrimExpr inside;
                               for (size_t d = 0; d < a.nd; ++d) {
                                   at[2 + d] = i[2 + d] - I(a.padding[d]);
                                   PrimExpr lo = at[2 + d] >= I(0);
                                   inside = inside.defined() ? inside && lo : lo;
                                   inside = inside && at[2 + d] < I(in[d]);
                               }
                               return te::if_then_else(inside, x(at), pad_value);
                           },
                           name + "_pad"),
                       kPaddedInputTag);
}

// Window positions k in [0, k_size) with lo <= start + k * dil < hi.
PrimExpr window_count(PrimExpr start, int64_t lo, int64_t hi, int64_t k_size, int64_t dil) {
    auto taps_below = [&](int64_t bound) {  // k with start + k * dil < bound
        PrimExpr n = floordiv(I(bound) - start + I(dil - 1), I(dil));
        return min(max(n, I(0)), I(k_size));
    };
    return taps_below(hi) - taps_below(lo);
}

std::vector<te::Tensor> pool_compute(const std::string& kind, const std::vector<te::Tensor>& in,
                                     const PoolWindow& a, const Type& out) {
    static const char* const kTapNames[] = {"rz", "ry", "rx"};
    te::Tensor x = in[0];
    DataType t = x.dtype();
    size_t nd = a.nd;
    std::vector<PrimExpr> out_shape = te_shape(out);
    bool is_max = kind == "max";
    std::string name = kind + "_pool" + std::to_string(nd) + "d";
    PrimExpr pad_value = !is_max           ? make_const(t, 0)
                         : t.is_floating() ? make_float(t, -INFINITY)
                                           : min_value(t);
    te::Tensor xp = pad_for_windows(name, x, a, out_shape, pad_value);
    te::Axes taps;
    for (size_t d = 0; d < nd; ++d) {
        taps.push_back(te::reduce_axis(I(a.pool_size[d]), kTapNames[3 - nd + d]));
    }
    auto window = [&](std::span<const PrimExpr> i) {
        std::vector<PrimExpr> at(i.begin(), i.end());
        for (size_t d = 0; d < nd; ++d) {
            at[2 + d] = i[2 + d] * I(a.strides[d]) + taps[d]->var * I(a.dilation[d]);
        }
        return xp(at);
    };
    if (is_max) {
        return {te::compute(
            out_shape, [&](std::span<const PrimExpr> i) { return te::max(window(i), taps); },
            name)};
    }
    te::Tensor sum = te::compute(
        out_shape, [&](std::span<const PrimExpr> i) { return te::sum(window(i), taps); },
        name + "_sum");
    return {te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            PrimExpr count;
            for (size_t d = 0; d < nd; ++d) {
                int64_t extent = const_dim(x.shape()[2 + d], "pool input extent");
                int64_t lo = a.count_include_pad ? -a.padding[d] : 0;
                int64_t hi = a.count_include_pad ? extent + a.padding[d + nd] : extent;
                PrimExpr c = window_count(i[2 + d] * I(a.strides[d]) - I(a.padding[d]), lo, hi,
                                          a.pool_size[d], a.dilation[d]);
                count = count.defined() ? count * c : c;
            }
            return sum(std::vector<PrimExpr>(i.begin(), i.end())) / cast(t, max(count, I(1)));
        },
        name)};
}

std::vector<te::Tensor> max_pool2d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    return pool_compute("max", in, window_of(attrs_as<Pool2DAttrs>(attrs)), out);
}

std::vector<te::Tensor> avg_pool2d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    return pool_compute("avg", in, window_of(attrs_as<Pool2DAttrs>(attrs)), out);
}

std::vector<te::Tensor> max_pool3d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    return pool_compute("max", in, window_of(attrs_as<Pool3DAttrs>(attrs)), out);
}

std::vector<te::Tensor> avg_pool3d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    return pool_compute("avg", in, window_of(attrs_as<Pool3DAttrs>(attrs)), out);
}

// The maximum of each window (the max pool's own stage), then per window the least key over its
// taps: an in-input tap holding the maximum keys its row-major spatial position p, any other
// in-input tap volume + p, a padded one 2 * volume. So the first tap holding the maximum wins,
// and a window whose maximum no tap equals (NaN) falls back to its first in-input tap instead of
// an index outside the data.
std::vector<te::Tensor> max_pool_indices_compute(const std::vector<te::Tensor>& in,
                                                 const Attrs& attrs, const Type& out) {
    static const char* const kTapNames[] = {"rz", "ry", "rx"};
    const auto& attr = attrs_as<MaxPoolIndicesAttrs>(attrs);
    te::Tensor x = in[0];
    size_t nd = x.ndim() - 2;
    PoolWindow a = window_of(attr, nd);
    te::Tensor maximum = pool_compute("max", in, a, out)[0];
    DataType i64 = DataType::int64();
    std::vector<int64_t> extent;
    int64_t volume = 1;
    for (size_t d = 0; d < nd; ++d) {
        extent.push_back(const_dim(x.shape()[2 + d], "pool input extent"));
        volume *= extent.back();
    }
    te::Axes taps;
    for (size_t d = 0; d < nd; ++d) {
        taps.push_back(te::reduce_axis(I(a.pool_size[d]), kTapNames[3 - nd + d]));
    }
    std::vector<PrimExpr> out_shape = te_shape(out);
    te::Tensor first = te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> at{i[0], i[1]};
            PrimExpr inside = make_bool(true), pos = make_int(i64, 0);
            for (size_t d = 0; d < nd; ++d) {
                PrimExpr p =
                    i[2 + d] * I(a.strides[d]) + taps[d]->var * I(a.dilation[d]) - I(a.padding[d]);
                at.push_back(p);
                inside = inside && p >= I(0) && p < I(extent[d]);
                pos = pos * make_int(i64, extent[d]) + cast(i64, p);
            }
            PrimExpr v = te::if_then_else(inside, x(at), maximum(to_vector(i)));
            PrimExpr key = select(v >= maximum(to_vector(i)), pos, pos + make_int(i64, volume));
            return te::min(select(inside, key, make_int(i64, 2 * volume)), taps);
        },
        "max_pool_indices_first");
    PrimExpr channels = cast(i64, x.shape()[1]);
    return {te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            PrimExpr pos = floormod(first(to_vector(i)), make_int(i64, volume));
            if (attr.storage_order == 1) {  // the same coordinates, the first axis fastest
                PrimExpr col = make_int(i64, 0);
                int64_t row_stride = volume, col_stride = 1;
                for (size_t d = 0; d < nd; ++d) {
                    row_stride /= extent[d];
                    PrimExpr c = floormod(floordiv(pos, make_int(i64, row_stride)),
                                          make_int(i64, extent[d]));
                    col = col + c * make_int(i64, col_stride);
                    col_stride *= extent[d];
                }
                pos = col;
            }
            return (cast(i64, i[0]) * channels + cast(i64, i[1])) * make_int(i64, volume) + pos;
        },
        "max_pool_indices")};
}

// NCHW, or NCHW<b>c (the block axis last, pooled lane by lane).
std::vector<te::Tensor> global_pool_compute(bool is_max, const std::vector<te::Tensor>& in,
                                            const Type& out) {
    te::Tensor x = in[0];
    auto ry = te::reduce_axis(x.shape()[2], "ry");
    auto rx = te::reduce_axis(x.shape()[3], "rx");
    std::vector<PrimExpr> out_shape = te_shape(out);
    auto value = [&](std::span<const PrimExpr> i) {
        std::vector<PrimExpr> at{i[0], i[1], ry->var, rx->var};
        at.insert(at.end(), i.begin() + 4, i.end());
        return x(at);
    };
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
        out_shape, [&](std::span<const PrimExpr> i) { return sum(to_vector(i)) / count; },
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
                           const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    schedule_reduction_inputs_at_root(s, anchor, "pool");
}

void schedule_pool_x86(te::Schedule& s, const te::Tensor& anchor,
                       const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    te::Tensor red = expect_reduction(anchor, "pool");
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    te::Tensor acc = local_accumulator(s, red, out);
    int64_t work = known_extent_product(red.shape());
    for (const auto& r : s[acc].op_reduce_axis()) work *= const_dim(r->dom.extent, "pool window");
    bool single = true;
    for (size_t d = 2; d < out.ndim(); ++d) {
        single = single && const_dim(out.shape()[d], "pool output extent") == 1;
    }
    if (single) {
        // Global pooling: one scalar accumulator per (n, c).
        schedule_helper_inputs(s, red, ctx);
        schedule_scalar_accumulator(s, out, acc, work, declare_parallel_choice(ctx, work));
        return;
    }
    // Windowed: the padded input made per (n, c) plane, as for depthwise convolutions. (A
    // blocked global pool is a blocked window over the whole plane: vectors along the block.)
    if (out.ndim() == 5) {
        schedule_blocked_windows(s, out, acc, work, ctx, staged_input(red));
        return;
    }
    schedule_nchw_row_vectors(s, out, acc, work, ctx, staged_input(red),
                              declare_parallel_choice(ctx, work));
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

Ref<Op> make_max_pool3d_op() {
    return make_op({.name = "nn.max_pool3d",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<Pool3DAttrs>,
                    .infer_type = pool3d_type,
                    .compute = max_pool3d_compute,
                    .schedule = schedule_by_target<schedule_pool_x86, schedule_pool_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "3-D max pooling, NCDHW"});
}

Ref<Op> make_avg_pool3d_op() {
    return make_op({.name = "nn.avg_pool3d",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<Pool3DAttrs>,
                    .infer_type = pool3d_type,
                    .compute = avg_pool3d_compute,
                    .schedule = schedule_by_target<schedule_pool_x86, schedule_pool_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "3-D average pooling, NCDHW"});
}

Ref<Op> make_max_pool_indices_op() {
    return make_op({.name = "nn.max_pool_indices",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<MaxPoolIndicesAttrs>,
                    .infer_type = max_pool_indices_type,
                    .compute = max_pool_indices_compute,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::CommReduce,
                    .description = "int64 flat index of each max pooling window's maximum"});
}

Ref<Op> make_global_max_pool2d_op() {
    return make_op(
        {.name = "nn.global_max_pool2d",
         .num_inputs = 1,
         .make_default_attrs = default_attrs<GlobalPool2DAttrs>,
         .infer_type = global_pool_type,
         .compute = global_max_pool2d_compute,
         .schedule = schedule_by_target<schedule_pool_x86, schedule_pool_generic>,
         .pattern = OpPattern::OutEWiseFusable,
         .description = "max over H and W, NCHW -> [N, C, 1, 1] (or blocked, attrs.layout)"});
}

Ref<Op> make_global_avg_pool2d_op() {
    return make_op(
        {.name = "nn.global_avg_pool2d",
         .num_inputs = 1,
         .make_default_attrs = default_attrs<GlobalPool2DAttrs>,
         .infer_type = global_pool_type,
         .compute = global_avg_pool2d_compute,
         .schedule = schedule_by_target<schedule_pool_x86, schedule_pool_generic>,
         .pattern = OpPattern::OutEWiseFusable,
         .description = "mean over H and W, NCHW -> [N, C, 1, 1] (or blocked, attrs.layout)"});
}

}  // namespace anvil::ops
