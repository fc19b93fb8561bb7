// Converters of PyTorch's upsampling (F.interpolate, nn.Upsample): aten::upsample_nearest1d/2d/3d
// and aten::_upsample_nearest_exact1d/2d/3d, aten::upsample_linear1d, aten::upsample_bilinear2d,
// aten::upsample_trilinear3d and aten::upsample_bicubic2d, each in both overloads (output_size
// with per-dimension scales, or the .vec form with output_size or scale_factors).
//
// Nearest modes gather along each axis with index tables computed here exactly as PyTorch's
// kernels compute them (float32 arithmetic, its special cases), so they match bit for bit and
// take any rank and dtype. The interpolating modes use the graph's resize2d: 1-D data as 2-D
// with a unit height, 3-D data as two separable passes (height and width, then depth).
// Coordinate mapping as PyTorch: align_corners (the scale ignored) or half_pixel with the given
// scale factor (else in / out); bicubic's A is -0.75.
#include <cmath>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/shape_ops.h"
#include "frontend/pytorch/window_args.h"
#include "ir/analyzer.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// What an upsampling node asks for, per spatial dimension.
struct Upsample {
    int64_t nd = 0;
    std::vector<int64_t> in, out;  // spatial extents
    std::vector<double> scales;    // PyTorch's scale factors (out / in); empty: none given
    bool align_corners = false;
};

// The largest output extent: nearest modes build a table of that many indices here, and the
// resize kernel indexes with int32.
constexpr int64_t kMaxExtent = int64_t{1} << 24;

// The spatial rank of aten::upsample_bilinear2d, ... from its name.
int64_t rank_from_kind(const std::string& kind) {
    return kind[kind.size() - 2] - '0';
}

// Operand i as a list of floats (a lone float counts as a one-item list); empty for None.
std::vector<double> float_list(const PtContext& ctx, size_t i) {
    if (ctx.is_none(i)) return {};
    const PtValue& v = ctx.input(i);
    if (v.is_number()) return {ctx.float_arg(i)};
    if (v.kind != PtValue::List && v.kind != PtValue::Tuple) {
        ctx.error() << "operand " << i << " must be a list of floats, got " << kind_name(v.kind);
    }
    std::vector<double> out;
    for (size_t k = 0; k < v.items.size(); ++k) {
        const PtValue& item = v.items[k];
        if (!item.is_import_time()) {
            ctx.error() << "operand " << i << ": scale factor " << k
                        << " must be a number known when the model is imported";
        }
        PrimExpr s = simplify(item.scalar);
        if (const auto* c = as_const_int(s)) {
            out.push_back(static_cast<double>(*c));
        } else if (const auto* f = s.as<FloatImm>()) {
            out.push_back(f->value);
        } else {
            ctx.error() << "operand " << i << ": scale factor " << k << " is not a constant";
        }
    }
    return out;
}

// Reads the node. The overloads: (x, output_size, [align_corners,] scale...) with one optional
// scale per dimension, or .vec (x, output_size?, [align_corners,] scale_factors?).
Upsample read_upsample(const PtContext& ctx, bool has_align_corners) {
    Upsample u;
    u.nd = rank_from_kind(ctx.kind());
    Expr x = ctx.tensor(0);
    if (ctx.rank(x) != u.nd + 2) {
        ctx.error() << "expects " << u.nd + 2 << "-D input [N, C, ...] for " << u.nd
                    << "-D upsampling, got " << ctx.rank(x) << "-D";
    }
    u.in = spatial_shape(ctx, x);
    size_t n = static_cast<size_t>(u.nd);
    size_t scale_at = has_align_corners ? 3 : 2;
    if (has_align_corners) u.align_corners = ctx.bool_arg(2);
    bool vec = !ctx.is_none(scale_at) && ctx.input(scale_at).kind == PtValue::List;
    if (vec) {
        u.scales = float_list(ctx, scale_at);
        if (!ctx.is_none(1)) {
            ctx.error() << "must specify exactly one of output_size and scale_factors";
        }
    } else {
        for (size_t d = 0; d < n; ++d) {
            if (ctx.is_none(scale_at + d)) {
                u.scales.clear();
                break;
            }
            u.scales.push_back(ctx.float_arg(scale_at + d));
        }
    }
    if (!u.scales.empty() && u.scales.size() != n) {
        ctx.error() << "scale_factors has " << u.scales.size() << " values for " << n
                    << " spatial dimensions";
    }
    for (double s : u.scales) {
        if (!(s > 0) || !std::isfinite(s))
            ctx.error() << "scale factor " << s << " must be positive";
    }
    if (!ctx.is_none(1)) {
        u.out = ctx.ints(1);
        if (u.out.size() != n) {
            ctx.error() << "output_size " << ints_str(u.out) << " has " << u.out.size()
                        << " values for " << n << " spatial dimensions";
        }
    } else if (u.scales.empty()) {
        ctx.error() << "either output_size or scale_factors must be given";
    } else {
        for (size_t d = 0; d < n; ++d) {
            // PyTorch: the product in double, truncated.
            double size = static_cast<double>(u.in[d]) * u.scales[d];
            u.out.push_back(size < double(kMaxExtent) ? static_cast<int64_t>(size)
                                                      : kMaxExtent + 1);
        }
    }
    for (size_t d = 0; d < n; ++d) {
        if (u.out[d] < 1 || u.in[d] < 1) {
            ctx.error() << "upsampling " << ints_str(u.in) << " to " << ints_str(u.out)
                        << ": every input and output extent must be positive";
        }
        if (u.out[d] > kMaxExtent) {
            ctx.error() << "upsampling " << ints_str(u.in) << " to " << ints_str(u.out)
                        << ": output extents above " << kMaxExtent << " are not supported";
        }
    }
    return u;
}

// PyTorch's compute_scales_value: 1 / scale factor when one is given, else in / out (float32).
float source_scale(const Upsample& u, size_t d) {
    if (!u.scales.empty()) return static_cast<float>(1.0 / u.scales[d]);
    return static_cast<float>(u.in[d]) / static_cast<float>(u.out[d]);
}

// The input index each output index of axis d reads: nearest_idx (legacy nearest) or
// nearest_neighbor_exact_compute_source_index of PyTorch's UpSample.h.
std::vector<int64_t> nearest_indices(const Upsample& u, size_t d, bool exact) {
    int64_t in = u.in[d], out = u.out[d];
    float scale = source_scale(u, d);
    std::vector<int64_t> idx(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) {
        int64_t i;
        if (!exact && out == in) {
            i = o;
        } else if (!exact && out == 2 * in) {
            i = o >> 1;
        } else {
            float pos =
                exact ? (static_cast<float>(o) + 0.5f) * scale : static_cast<float>(o) * scale;
            i = static_cast<int64_t>(std::floor(pos));
        }
        idx[static_cast<size_t>(o)] = std::min(i, in - 1);
    }
    return idx;
}

Expr upsample_nearest(const PtContext& ctx, Expr x, const Upsample& u, bool exact) {
    for (size_t d = 0; d < u.in.size(); ++d) {
        std::vector<int64_t> idx = nearest_indices(u, d, exact);
        bool identity = true;
        for (size_t o = 0; o < idx.size(); ++o) identity = identity && idx[o] == int64_t(o);
        if (identity && u.in[d] == u.out[d]) continue;
        auto [attrs, a] = new_attrs<ops::TakeAttrs>();
        a->axis = static_cast<int64_t>(d) + 2;
        x = ctx.call("take", {x, ctx.constant_int64(idx, {u.out[d]})}, attrs);
    }
    return x;
}

// resize2d of [N, C, H, W] data to (out_h, out_w); `scales` (h, w) or empty.
Expr resize2d(const PtContext& ctx, const Expr& x, const std::string& mode, bool align_corners,
              std::vector<int64_t> size, std::vector<double> scales) {
    auto [attrs, a] = new_attrs<ops::Resize2DAttrs>();
    a->size = std::move(size);
    a->mode = mode;
    a->coordinate_transformation_mode = align_corners ? "align_corners" : "half_pixel";
    // align_corners maps corner to corner whatever the scale factor (PyTorch ignores it).
    if (!align_corners) a->scales = std::move(scales);
    a->cubic_coeff_a = -0.75;
    return ctx.call("resize2d", {x}, attrs);
}

Expr upsample_interpolating(const PtContext& ctx, const Expr& x, const Upsample& u,
                            const std::string& mode) {
    auto scale = [&](size_t d) { return u.scales.empty() ? 0.0 : u.scales[d]; };
    auto scales_of = [&](std::vector<double> s) {
        return u.scales.empty() ? std::vector<double>{} : s;
    };
    if (u.nd == 2) return resize2d(ctx, x, mode, u.align_corners, u.out, scales_of(u.scales));
    // Reshapes keep the batch and channels as they are (possibly symbolic).
    std::vector<PrimExpr> dims = dims_of(ctx, x);
    PrimExpr n = dims[0], c = dims[1];
    auto size = [](int64_t v) { return make_int(DataType::int64(), v); };
    if (u.nd == 1) {
        // [N, C, W] as [N, C, 1, W]: the unit height maps to itself in either mode.
        Expr y = resize2d(ctx, view_dims(ctx, x, {n, c, size(1), size(u.in[0])}), mode,
                          u.align_corners, {1, u.out[0]}, scales_of({1.0, scale(0)}));
        return view_dims(ctx, y, {n, c, size(u.out[0])});
    }
    // 3-D: height and width over [N, C * D, H, W], then depth over [N, C, D, OH * OW] (a width
    // kept by a scale of 1 reads each column exactly).
    int64_t d = u.in[0], oh = u.out[1], ow = u.out[2];
    Expr y = resize2d(ctx, view_dims(ctx, x, {n, c * size(d), size(u.in[1]), size(u.in[2])}), mode,
                      u.align_corners, {oh, ow}, scales_of({scale(1), scale(2)}));
    y = resize2d(ctx, view_dims(ctx, y, {n, c, size(d), size(oh * ow)}), mode, u.align_corners,
                 {u.out[0], oh * ow}, scales_of({scale(0), 1.0}));
    return view_dims(ctx, y, {n, c, size(u.out[0]), size(oh), size(ow)});
}

}  // namespace

// aten::upsample_nearest1d/2d/3d and aten::_upsample_nearest_exact1d/2d/3d(x, output_size,
// scales...) or .vec(x, output_size?, scale_factors?).
PtValues convert_upsample_nearest(PtContext& ctx) {
    Upsample u = read_upsample(ctx, false);
    bool exact = ctx.kind().find("exact") != std::string::npos;
    return {PtValue::of_tensor(upsample_nearest(ctx, ctx.tensor(0), u, exact))};
}

// aten::upsample_linear1d / upsample_bilinear2d / upsample_trilinear3d / upsample_bicubic2d
// (x, output_size, align_corners, scales...) or .vec(x, output_size?, align_corners,
// scale_factors?).
PtValues convert_upsample_interpolating(PtContext& ctx) {
    Upsample u = read_upsample(ctx, true);
    Expr x = ctx.tensor(0);
    if (!ctx.tensor_type(x, "the input").dtype.is_floating()) {
        ctx.error() << "interpolating upsampling needs a floating-point input, got "
                    << ctx.tensor_type(x, "the input").dtype.str();
    }
    std::string mode = ctx.kind().find("bicubic") != std::string::npos ? "cubic" : "linear";
    return {PtValue::of_tensor(upsample_interpolating(ctx, x, u, mode))};
}

}  // namespace anvil::frontend::pytorch
