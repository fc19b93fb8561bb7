// resize2d: ONNX Resize on the spatial axes of NCHW tensors (nearest, linear, cubic; every
// coordinate transformation mode). Injective; uses the injective schedule.
//
// Coordinates follow onnxruntime's float32 arithmetic step for step (the scale as a float, then
// the transformation), so that nearest-neighbour rounding at ties picks the same pixel.
// Neighbour indices are clamped to the image, which is ONNX's edge padding.
#include <cmath>
#include <functional>

#include "graph/op.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/tensor_shape.h"
#include "ops/transform.h"
#include "support/error.h"
#include "te/math.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::Type;

namespace {

bool one_of(const std::string& v, std::initializer_list<const char*> options) {
    for (const char* o : options) {
        if (v == o) return true;
    }
    return false;
}

Type resize2d_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                   const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& a = static_cast<const Resize2DAttrs&>(attrs);
    if (x.ndim() != 4) {
        user_error(loc) << op.name << " needs an NCHW tensor (4 dimensions), got "
                        << shape_str(x.shape);
    }
    // tf_crop_and_resize reads the region of interest from the last input.
    bool crop = a.coordinate_transformation_mode == "tf_crop_and_resize";
    if (args.size() > (crop ? 3u : 2u) || (crop && args.size() < 2)) {
        user_error(loc) << op.name << " takes the data, optionally the scales"
                        << (crop ? " and the roi" : "") << ", got " << args.size() << " inputs";
    }
    if (crop) {
        const auto& roi = graph::expect_tensor(args.back(), loc, "the roi of " + op.name);
        if (roi.dtype != DataType::float32() || roi.num_elements() != 8) {
            user_error(loc) << op.name
                            << ": the roi must be 8 float32 values (the starts of N, C, H, W, "
                               "then their ends), got "
                            << graph::type_str(args.back());
        }
    }
    if (args.size() == (crop ? 3u : 2u)) {
        const auto& s = graph::expect_tensor(args[1], loc, "the scales of " + op.name);
        if (s.dtype != DataType::float32() || s.num_elements() != 4) {
            user_error(loc) << op.name << ": the scales must be 4 float32 values (N, C, H, W), got "
                            << graph::type_str(args[1]);
        }
    }
    if (!a.dynamic_size.empty()) {
        if (a.dynamic_size.size() != 2) {
            user_error(loc) << op.name << ": dynamic_size must be the output [height, width]";
        }
    } else if (a.size.size() != 2 || a.size[0] < 1 || a.size[1] < 1) {
        user_error(loc) << op.name << ": size must be the output [height, width], got "
                        << list_str(a.size);
    }
    if (!a.scales.empty() && (a.scales.size() != 2 || !(a.scales[0] > 0) || !(a.scales[1] > 0))) {
        user_error(loc) << op.name << ": scales must be empty or two positive numbers, got "
                        << a.scales.size() << " values";
    }
    if (!one_of(a.mode, {"nearest", "linear", "cubic"})) {
        user_error(loc) << op.name << ": mode must be \"nearest\", \"linear\" or \"cubic\", got \""
                        << a.mode << "\"";
    }
    if (!one_of(a.coordinate_transformation_mode,
                {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                 "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"})) {
        user_error(loc) << op.name << ": coordinate_transformation_mode \""
                        << a.coordinate_transformation_mode << "\" is not supported (use "
                        << "half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, "
                        << "asymmetric, tf_half_pixel_for_nn or tf_crop_and_resize)";
    }
    if (!one_of(a.nearest_mode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})) {
        user_error(loc) << op.name << ": nearest_mode must be round_prefer_floor, "
                        << "round_prefer_ceil, floor or ceil, got \"" << a.nearest_mode << "\"";
    }
    if (a.mode != "nearest" && !x.dtype.is_floating()) {
        user_error(loc) << op.name << ": " << a.mode << " interpolation of a " << x.dtype.str()
                        << " tensor; cast it to a float type";
    }
    for (int d = 2; d < 4; ++d) {
        if (!as_const_int(x.shape[d])) {
            user_error(loc) << op.name << ": spatial axis " << d << " of " << shape_str(x.shape)
                            << " must be static";
        }
    }
    if (!a.dynamic_size.empty()) {
        return graph::make_tensor_type(
            {x.shape[0], x.shape[1], a.dynamic_size[0], a.dynamic_size[1]}, x.dtype);
    }
    return graph::make_tensor_type({x.shape[0], x.shape[1], make_int(DataType::int64(), a.size[0]),
                                    make_int(DataType::int64(), a.size[1])},
                                   x.dtype);
}

PrimExpr f32(float v) {
    return make_float(DataType::float32(), v);
}

// One resized axis: `in` input elements, `out` output elements (an int64 constant, or an
// expression when known only at run time) and the float32 scale of the coordinate
// transformation.
struct ResizeAxis {
    int64_t in = 1;
    PrimExpr out;
    PrimExpr scale;
    bool from_scale = false;  // the scale was given (else it is out / in)
};

// The axis `axis` (0: height, 1: width) of a resize to `out`; `scales` is the run-time scales
// tensor, if any. Constant scales are computed here in float32 as at run time.
ResizeAxis resize_axis(const Resize2DAttrs& a, int axis, int64_t in, const PrimExpr& out,
                       const te::Tensor* scales) {
    ResizeAxis r{in, out, PrimExpr(), scales || !a.scales.empty()};
    const int64_t* static_out = as_const_int(out);
    if (scales) {
        r.scale = (*scales)(make_int(DataType::int32(), axis + 2));
    } else if (!a.scales.empty()) {
        r.scale = f32(static_cast<float>(a.scales[axis]));
    } else if (static_out) {
        r.scale = f32(static_cast<float>(*static_out) / static_cast<float>(in));
    } else {
        r.scale = cast(DataType::float32(), out) / f32(static_cast<float>(in));
    }
    return r;
}

// The input coordinate (float32) of output index `i` along `axis`.
PrimExpr source_coordinate(const Resize2DAttrs& a, const ResizeAxis& axis, const PrimExpr& i) {
    PrimExpr x = cast(DataType::float32(), i);
    const PrimExpr& scale = axis.scale;
    const int64_t* out = as_const_int(axis.out);
    PrimExpr out_f = out ? f32(static_cast<float>(*out)) : cast(DataType::float32(), axis.out);
    float in = static_cast<float>(axis.in);
    const std::string& mode = a.coordinate_transformation_mode;
    if (mode == "half_pixel") return (x + f32(0.5f)) / scale - f32(0.5f);
    if (mode == "pytorch_half_pixel") {
        PrimExpr c = (x + f32(0.5f)) / scale - f32(0.5f);
        if (out) return *out > 1 ? c : f32(0.0f);
        return select(axis.out > 1, c, f32(0.0f));
    }
    if (mode == "half_pixel_symmetric") {
        PrimExpr adjustment = out_f / (scale * f32(in));
        PrimExpr offset = f32(in / 2.0f) * (f32(1.0f) - adjustment);
        return offset + (x + f32(0.5f)) / scale - f32(0.5f);
    }
    if (mode == "align_corners" && axis.from_scale) {
        // ONNX divides by the resized length before flooring: in * scale - 1.
        return x * f32(in - 1) / (scale * f32(in) - f32(1.0f));
    }
    if (mode == "align_corners") {
        if (out) {
            if (*out == 1) return f32(0.0f);
            return x * f32(in - 1) / f32(static_cast<float>(*out - 1));
        }
        return select(eq(axis.out, 1), f32(0.0f), x * f32(in - 1) / (out_f - f32(1.0f)));
    }
    if (mode == "asymmetric") return x / scale;
    return (x + f32(0.5f)) / scale;  // tf_half_pixel_for_nn
}

PrimExpr clamp_index(const PrimExpr& v, int64_t n) {
    return max(min(v, make_int(DataType::int32(), n - 1)), make_int(DataType::int32(), 0));
}

PrimExpr nearest_index(const std::string& mode, const PrimExpr& x, int64_t n) {
    PrimExpr r;
    if (mode == "round_prefer_floor") {
        r = te::ceil(x - f32(0.5f));
    } else if (mode == "round_prefer_ceil") {
        r = te::floor(x + f32(0.5f));
    } else if (mode == "floor") {
        r = te::floor(x);
    } else {
        r = te::ceil(x);
    }
    return clamp_index(cast(DataType::int32(), r), n);
}

// One axis's taps: input indices and float32 weights.
struct Taps {
    std::vector<PrimExpr> index;
    std::vector<PrimExpr> weight;
};

Taps linear_taps(PrimExpr x, int64_t n) {
    x = max(min(x, f32(static_cast<float>(n - 1))), f32(0.0f));
    PrimExpr x0 = te::floor(x);
    PrimExpr t = x - x0;
    PrimExpr i0 = cast(DataType::int32(), x0);
    return {{i0, clamp_index(i0 + make_int(DataType::int32(), 1), n)}, {f32(1.0f) - t, t}};
}

// Keys' cubic kernel with parameter A, for |s| <= 1 and 1 < |s| < 2.
PrimExpr cubic_near(const PrimExpr& s, float a) {
    return ((f32(a + 2) * s - f32(a + 3)) * s) * s + f32(1.0f);
}
PrimExpr cubic_far(const PrimExpr& s, float a) {
    return ((f32(a) * s - f32(5 * a)) * s + f32(8 * a)) * s - f32(4 * a);
}

Taps cubic_taps(const PrimExpr& x, int64_t n, float a, bool exclude_outside) {
    PrimExpr x0 = te::floor(x);
    PrimExpr t = x - x0;
    PrimExpr i0 = cast(DataType::int32(), x0);
    Taps taps;
    std::vector<PrimExpr> w = {cubic_far(t + f32(1.0f), a), cubic_near(t, a),
                               cubic_near(f32(1.0f) - t, a), cubic_far(f32(2.0f) - t, a)};
    for (int k = 0; k < 4; ++k) {
        PrimExpr raw = i0 + make_int(DataType::int32(), k - 1);
        taps.index.push_back(clamp_index(raw, n));
        if (exclude_outside) {
            PrimExpr inside =
                raw >= make_int(DataType::int32(), 0) && raw < make_int(DataType::int32(), n);
            w[k] = select(inside, w[k], f32(0.0f));
        }
    }
    if (exclude_outside) {
        PrimExpr total = w[0] + w[1] + w[2] + w[3];
        for (auto& wk : w) wk = wk / total;
    }
    taps.weight = std::move(w);
    return taps;
}

// tf_crop_and_resize's input coordinate of output index `i` along axis `d` (of N, C, H, W):
// the roi's [start, end] of the axis spread over the output (its middle for one element).
PrimExpr crop_coordinate(const te::Tensor& roi, int d, int64_t in, const PrimExpr& out,
                         const PrimExpr& i) {
    PrimExpr start = roi(make_int(DataType::int32(), d));
    PrimExpr end = roi(make_int(DataType::int32(), d + 4));
    PrimExpr span = f32(static_cast<float>(in - 1));
    PrimExpr out_f = cast(DataType::float32(), out);
    PrimExpr spread =
        start * span + cast(DataType::float32(), i) * (end - start) * span / (out_f - f32(1.0f));
    return select(out > 1, spread, f32(0.5f) * (start + end) * span);
}

std::vector<te::Tensor> resize2d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                         const Type& out) {
    te::Tensor x = in[0];
    const auto& a = static_cast<const Resize2DAttrs&>(attrs);
    bool crop = a.coordinate_transformation_mode == "tf_crop_and_resize";
    std::vector<int64_t> in_shape;
    for (int d = 0; d < 4; ++d) {
        const int64_t* n = as_const_int(x.shape()[d]);
        if (!n && (crop || d >= 2)) {
            user_error() << "resize2d: axis " << d << " of the input must be static";
        }
        in_shape.push_back(n ? *n : 0);
    }
    const auto& out_shape = graph::expect_tensor(out, {}, "the result").shape;
    const te::Tensor* scales = in.size() == (crop ? 3u : 2u) ? &in[1] : nullptr;
    const te::Tensor* roi = crop ? &in.back() : nullptr;
    ResizeAxis ah = resize_axis(a, 0, in_shape[2], out_shape[2], scales);
    ResizeAxis aw = resize_axis(a, 1, in_shape[3], out_shape[3], scales);
    DataType t = x.dtype();
    float coeff = static_cast<float>(a.cubic_coeff_a);
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            // Each axis's taps; N and C are copied unless tf_crop_and_resize crops them too.
            std::vector<Taps> taps(4);
            PrimExpr outside;  // tf_crop_and_resize: a coordinate outside the input
            for (int d = 0; d < 4; ++d) {
                if (d < 2 && !crop) {
                    taps[d] = {{i[d]}, {f32(1.0f)}};
                    continue;
                }
                int64_t n = in_shape[d];
                PrimExpr c = crop ? crop_coordinate(*roi, d, n, out_shape[d], i[d])
                                  : source_coordinate(a, d == 2 ? ah : aw, i[d]);
                if (crop) {
                    PrimExpr out_of_range = c < f32(0.0f) || c > f32(static_cast<float>(n - 1));
                    outside = outside.defined() ? outside || out_of_range : out_of_range;
                }
                if (a.mode == "nearest") {
                    taps[d] = {{nearest_index(a.nearest_mode, c, n)}, {f32(1.0f)}};
                } else if (a.mode == "linear") {
                    taps[d] = linear_taps(c, n);
                } else {
                    taps[d] = cubic_taps(c, n, coeff, a.exclude_outside);
                }
            }
            PrimExpr value;
            if (a.mode == "nearest") {
                value = x(taps[0].index[0], taps[1].index[0], taps[2].index[0], taps[3].index[0]);
            } else {
                // The weighted sum over every combination of the axes' taps, in float32.
                std::function<PrimExpr(int, std::vector<PrimExpr>&)> sum_from =
                    [&](int d, std::vector<PrimExpr>& index) -> PrimExpr {
                    if (d == 4) {
                        PrimExpr v = x(index);
                        return t == DataType::float32() ? v : cast(DataType::float32(), v);
                    }
                    PrimExpr sum;
                    for (size_t k = 0; k < taps[d].index.size(); ++k) {
                        index.push_back(taps[d].index[k]);
                        PrimExpr inner = sum_from(d + 1, index);
                        index.pop_back();
                        bool copied = d < 2 && !crop;  // N and C: one tap, no weight
                        PrimExpr term = copied ? inner : taps[d].weight[k] * inner;
                        sum = sum.defined() ? sum + term : term;
                    }
                    return sum;
                };
                std::vector<PrimExpr> index;
                value = sum_from(0, index);
                if (t != DataType::float32()) value = cast(t, value);
            }
            if (outside.defined()) {
                value = select(outside, make_const(t, a.extrapolation_value), value);
            }
            return value;
        },
        "resize2d")};
}

// ---- grid_sample --------------------------------------------------------------------------
//
// As ONNX's reference (PyTorch's grid sampler): denormalize, round for nearest, move
// coordinates outside the border into it (border: clamp, reflection: reflect), then read the
// taps with the padding mode applied to each index.

Type grid_sample_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                      const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& g = graph::expect_tensor(args[1], loc, "the grid of " + op.name);
    const auto& a = attrs_as<GridSampleAttrs>(attrs);
    if (x.ndim() != 4 || !x.dtype.is_floating()) {
        user_error(loc) << op.name << " needs a floating-point NCHW input, got "
                        << graph::type_str(args[0]);
    }
    if (g.ndim() != 4 || !is_const_int(g.shape[3], 2) || g.dtype != x.dtype) {
        user_error(loc) << op.name
                        << ": the grid must be [N, H_out, W_out, 2] of the input's type, "
                        << "got " << graph::type_str(args[1]);
    }
    if (!one_of(a.mode, {"bilinear", "nearest", "bicubic"})) {
        user_error(loc) << op.name << ": mode must be bilinear, nearest or bicubic, got '" << a.mode
                        << "'";
    }
    if (!one_of(a.padding_mode, {"zeros", "border", "reflection"})) {
        user_error(loc) << op.name << ": padding_mode must be zeros, border or reflection, got '"
                        << a.padding_mode << "'";
    }
    return graph::make_tensor_type({x.shape[0], x.shape[1], g.shape[1], g.shape[2]}, x.dtype);
}

// Reflects v into [lo, hi] by the nearer border, repeatedly.
PrimExpr reflect(PrimExpr v, double lo, double hi) {
    DataType t = v.dtype();
    auto c = [&](double d) { return make_const(t, d); };
    double range = hi - lo;
    auto fold = [&](PrimExpr dx, double near, double far, double sign) {
        PrimExpr n = te::floor(dx / c(range));
        PrimExpr r = dx - n * c(range);
        PrimExpr even = eq(te::floor(n / c(2)) * c(2), n);
        return select(even, c(near) + c(sign) * r, c(far) - c(sign) * r);
    };
    return select(v < c(lo), fold(c(lo) - v, lo, hi, 1),
                  select(v > c(hi), fold(v - c(hi), hi, lo, -1), v));
}

std::vector<te::Tensor> grid_sample_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                            const Type& out) {
    te::Tensor x = in[0], grid = in[1];
    const auto& a = attrs_as<GridSampleAttrs>(attrs);
    DataType t = x.dtype();
    auto c = [&](double d) { return make_const(t, d); };
    int64_t h = *as_const_int(x.shape()[2]), w = *as_const_int(x.shape()[3]);
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            // Per axis (0: y over h, 1: x over w): the denormalized, adjusted coordinate.
            int64_t dims[2] = {h, w};
            PrimExpr coord[2];
            double lo[2], hi[2];
            for (int k = 0; k < 2; ++k) {
                PrimExpr g = grid({i[0], i[2], i[3], make_int(DataType::int32(), 1 - k)});
                double d = static_cast<double>(dims[k]);
                PrimExpr v = a.align_corners ? (g + c(1)) / c(2) * c(d - 1)
                                             : ((g + c(1)) * c(d) - c(1)) / c(2);
                if (a.mode == "nearest") v = te::round(v);
                lo[k] = a.align_corners ? 0.0 : -0.5;
                hi[k] = a.align_corners ? d - 1 : d - 0.5;
                if (a.padding_mode == "border") {
                    v = select(v < c(lo[k]) || v > c(hi[k]), max(min(v, c(d - 1)), c(0)), v);
                } else if (a.padding_mode == "reflection") {
                    v = reflect(v, lo[k], hi[k]);
                }
                coord[k] = v;
            }
            // The pixel at integer (float-valued) indices, with the padding mode.
            auto pixel = [&](PrimExpr iy, PrimExpr ix) {
                PrimExpr idx[2] = {iy, ix};
                PrimExpr inside;
                std::vector<PrimExpr> at = {i[0], i[1]};
                for (int k = 0; k < 2; ++k) {
                    PrimExpr v = idx[k];
                    if (a.padding_mode == "zeros") {
                        PrimExpr ok = v >= c(0) && v < c(static_cast<double>(dims[k]));
                        inside = inside.defined() ? (inside && ok) : ok;
                    } else if (a.padding_mode == "reflection") {
                        v = reflect(v, lo[k], hi[k]);
                    }
                    PrimExpr n = cast(DataType::int32(), v);
                    at.push_back(max(min(n, make_int(DataType::int32(), dims[k] - 1)),
                                     make_int(DataType::int32(), 0)));
                }
                PrimExpr p = x(at);
                return inside.defined() ? te::if_then_else(inside, p, c(0)) : p;
            };
            if (a.mode == "nearest") return pixel(coord[0], coord[1]);
            PrimExpr y0 = te::floor(coord[0]), x0 = te::floor(coord[1]);
            PrimExpr ty = coord[0] - y0, tx = coord[1] - x0;
            if (a.mode == "bilinear") {
                return (c(1) - ty) * ((c(1) - tx) * pixel(y0, x0) + tx * pixel(y0, x0 + c(1))) +
                       ty * ((c(1) - tx) * pixel(y0 + c(1), x0) + tx * pixel(y0 + c(1), x0 + c(1)));
            }
            // bicubic: Keys' kernel with A = -0.75 over the taps floor - 1 .. floor + 2.
            auto coeffs = [&](PrimExpr s) {
                const double A = -0.75;
                PrimExpr s1 = s + c(1), r1 = c(1) - s, r2 = c(2) - s;
                return std::vector<PrimExpr>{
                    ((c(A) * s1 - c(5 * A)) * s1 + c(8 * A)) * s1 - c(4 * A),
                    ((c(A + 2) * s - c(A + 3)) * s * s) + c(1),
                    ((c(A + 2) * r1 - c(A + 3)) * r1 * r1) + c(1),
                    ((c(A) * r2 - c(5 * A)) * r2 + c(8 * A)) * r2 - c(4 * A)};
            };
            std::vector<PrimExpr> cy = coeffs(ty), cx = coeffs(tx);
            PrimExpr sum;
            for (int p = 0; p < 4; ++p) {
                PrimExpr row;
                for (int q = 0; q < 4; ++q) {
                    PrimExpr v = cx[q] * pixel(y0 + c(p - 1), x0 + c(q - 1));
                    row = row.defined() ? row + v : v;
                }
                PrimExpr v = cy[p] * row;
                sum = sum.defined() ? sum + v : v;
            }
            return sum;
        },
        "grid_sample")};
}

// ---- roi_align ----------------------------------------------------------------------------

Type roi_align_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                    const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& rois = graph::expect_tensor(args[1], loc, "the rois of " + op.name);
    const auto& bi = graph::expect_tensor(args[2], loc, "the batch indices of " + op.name);
    const auto& a = attrs_as<RoiAlignAttrs>(attrs);
    if (x.ndim() != 4 || !x.dtype.is_floating()) {
        user_error(loc) << op.name << " needs a floating-point NCHW input, got "
                        << graph::type_str(args[0]);
    }
    if (rois.ndim() != 2 || !is_const_int(rois.shape[1], 4) || rois.dtype != x.dtype) {
        user_error(loc) << op.name << ": the rois must be [R, 4] of the input's type, got "
                        << graph::type_str(args[1]);
    }
    if (bi.ndim() != 1 || !bi.dtype.is_integer()) {
        user_error(loc) << op.name << ": the batch indices must be a 1-D integer tensor, got "
                        << graph::type_str(args[2]);
    }
    if (a.output_height < 1 || a.output_width < 1 || a.sampling_ratio < 1) {
        user_error(loc) << op.name << ": output_height, output_width and sampling_ratio must be "
                        << "positive (an adaptive sampling ratio is not supported)";
    }
    return graph::make_tensor_type(
        {rois.shape[0], x.shape[1], make_int(DataType::int64(), a.output_height),
         make_int(DataType::int64(), a.output_width)},
        x.dtype);
}

std::vector<te::Tensor> roi_align_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                          const Type& out) {
    te::Tensor x = in[0], rois = in[1], bi = in[2];
    const auto& a = attrs_as<RoiAlignAttrs>(attrs);
    DataType t = x.dtype();
    auto c = [&](double d) { return make_const(t, d); };
    auto i32 = [](int64_t v) { return make_int(DataType::int32(), v); };
    int64_t h = *as_const_int(x.shape()[2]), w = *as_const_int(x.shape()[3]);
    int64_t g = a.sampling_ratio;
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            PrimExpr r = i[0];
            double offset = a.half_pixel ? 0.5 : 0.0;
            auto coord = [&](int64_t k) {
                return rois({r, i32(k)}) * c(a.spatial_scale) - c(offset);
            };
            PrimExpr x0 = coord(0), y0 = coord(1);
            PrimExpr rw = coord(2) - x0, rh = coord(3) - y0;
            if (!a.half_pixel) {
                rw = max(rw, c(1));
                rh = max(rh, c(1));
            }
            PrimExpr bin_h = rh / c(double(a.output_height)),
                     bin_w = rw / c(double(a.output_width));
            PrimExpr n = cast(DataType::int32(), bi({r}));
            PrimExpr ph = cast(t, i[2]), pw = cast(t, i[3]);
            // A bilinear sample at (yy, xx), 0 outside [-1, size].
            auto sample = [&](PrimExpr yy, PrimExpr xx) {
                PrimExpr outside =
                    yy < c(-1) || yy > c(double(h)) || xx < c(-1) || xx > c(double(w));
                auto axis = [&](PrimExpr v, int64_t size, PrimExpr* lo, PrimExpr* hi,
                                PrimExpr* frac) {
                    v = max(v, c(0));
                    PrimExpr l = cast(DataType::int32(), v);  // v >= 0: truncation is floor
                    PrimExpr last = l >= i32(size - 1);
                    *lo = select(last, i32(size - 1), l);
                    *hi = select(last, i32(size - 1), l + i32(1));
                    *frac = select(last, c(0), v - cast(t, l));
                };
                PrimExpr yl, yh, ly, xl, xh, lx;
                axis(yy, h, &yl, &yh, &ly);
                axis(xx, w, &xl, &xh, &lx);
                PrimExpr hy = c(1) - ly, hx = c(1) - lx;
                auto px = [&](PrimExpr iy, PrimExpr ix) { return x({n, i[1], iy, ix}); };
                PrimExpr v = hy * hx * px(yl, xl) + hy * lx * px(yl, xh) + ly * hx * px(yh, xl) +
                             ly * lx * px(yh, xh);
                return select(outside, c(0), v);
            };
            PrimExpr sum;
            for (int64_t iy = 0; iy < g; ++iy) {
                PrimExpr yy = y0 + ph * bin_h + c((double(iy) + 0.5) / double(g)) * bin_h;
                for (int64_t ix = 0; ix < g; ++ix) {
                    PrimExpr xx = x0 + pw * bin_w + c((double(ix) + 0.5) / double(g)) * bin_w;
                    PrimExpr v = sample(yy, xx);
                    sum = sum.defined() ? sum + v : v;
                }
            }
            return sum / c(double(g * g));
        },
        "roi_align")};
}

}  // namespace

Ref<Op> make_roi_align_op() {
    return make_op({.name = "roi_align",
                    .num_inputs = 3,
                    .make_default_attrs = default_attrs<RoiAlignAttrs>,
                    .infer_type = roi_align_type,
                    .compute = roi_align_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "average-pool regions of interest (ONNX RoiAlign)"});
}

Ref<Op> make_grid_sample_op() {
    return make_op({.name = "grid_sample",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<GridSampleAttrs>,
                    .infer_type = grid_sample_type,
                    .compute = grid_sample_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "sample NCHW at grid coordinates (ONNX GridSample)"});
}

Ref<Op> make_resize2d_op() {
    return make_op(
        {.name = "resize2d",
         .num_inputs = -1,
         .make_default_attrs = default_attrs<Resize2DAttrs>,
         .infer_type = resize2d_type,
         .compute = resize2d_compute,
         .schedule = schedule_injective,
         .pattern = OpPattern::Injective,
         .description = "ONNX Resize of the spatial axes of NCHW (nearest, linear, cubic)"});
}

}  // namespace anvil::ops
