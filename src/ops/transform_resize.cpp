// resize2d: ONNX Resize on the spatial axes of NCHW tensors (nearest, linear, cubic; every
// coordinate transformation mode but tf_crop_and_resize). Injective; uses the injective schedule.
//
// Coordinates follow onnxruntime's float32 arithmetic step for step (the scale as a float, then
// the transformation), so that nearest-neighbour rounding at ties picks the same pixel.
// Neighbour indices are clamped to the image, which is ONNX's edge padding.
#include <cmath>

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
    if (a.size.size() != 2 || a.size[0] < 1 || a.size[1] < 1) {
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
                 "asymmetric", "tf_half_pixel_for_nn"})) {
        user_error(loc) << op.name << ": coordinate_transformation_mode \""
                        << a.coordinate_transformation_mode << "\" is not supported (use "
                        << "half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, "
                        << "asymmetric or tf_half_pixel_for_nn)";
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
    return graph::make_tensor_type({x.shape[0], x.shape[1], make_int(DataType::int64(), a.size[0]),
                                    make_int(DataType::int64(), a.size[1])},
                                   x.dtype);
}

PrimExpr f32(float v) {
    return make_float(DataType::float32(), v);
}

// The input coordinate (float32) of output index `i` along an axis of `in` → `out` elements.
PrimExpr source_coordinate(const Resize2DAttrs& a, int axis, const PrimExpr& i, int64_t in,
                           int64_t out) {
    float scale = a.scales.empty() ? static_cast<float>(out) / static_cast<float>(in)
                                   : static_cast<float>(a.scales[axis]);
    PrimExpr x = cast(DataType::float32(), i);
    const std::string& mode = a.coordinate_transformation_mode;
    if (mode == "half_pixel") return (x + f32(0.5f)) / f32(scale) - f32(0.5f);
    if (mode == "pytorch_half_pixel") {
        return out > 1 ? (x + f32(0.5f)) / f32(scale) - f32(0.5f) : f32(0.0f);
    }
    if (mode == "half_pixel_symmetric") {
        float adjustment = static_cast<float>(out) / (scale * static_cast<float>(in));
        float offset = static_cast<float>(in) / 2.0f * (1.0f - adjustment);
        return f32(offset) + (x + f32(0.5f)) / f32(scale) - f32(0.5f);
    }
    if (mode == "align_corners") {
        if (out == 1) return f32(0.0f);
        return x * f32(static_cast<float>(in - 1)) / f32(static_cast<float>(out - 1));
    }
    if (mode == "asymmetric") return x / f32(scale);
    return (x + f32(0.5f)) / f32(scale);  // tf_half_pixel_for_nn
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

std::vector<te::Tensor> resize2d_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                         const Type& out) {
    te::Tensor x = in[0];
    const auto& a = static_cast<const Resize2DAttrs&>(attrs);
    int64_t in_h = *as_const_int(x.shape()[2]), in_w = *as_const_int(x.shape()[3]);
    int64_t out_h = a.size[0], out_w = a.size[1];
    DataType t = x.dtype();
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            PrimExpr y = source_coordinate(a, 0, i[2], in_h, out_h);
            PrimExpr xc = source_coordinate(a, 1, i[3], in_w, out_w);
            if (a.mode == "nearest") {
                return x(i[0], i[1], nearest_index(a.nearest_mode, y, in_h),
                         nearest_index(a.nearest_mode, xc, in_w));
            }
            float coeff = static_cast<float>(a.cubic_coeff_a);
            Taps ty = a.mode == "linear" ? linear_taps(y, in_h)
                                         : cubic_taps(y, in_h, coeff, a.exclude_outside);
            Taps tx = a.mode == "linear" ? linear_taps(xc, in_w)
                                         : cubic_taps(xc, in_w, coeff, a.exclude_outside);
            PrimExpr sum;
            for (size_t r = 0; r < ty.index.size(); ++r) {
                PrimExpr row;
                for (size_t c = 0; c < tx.index.size(); ++c) {
                    PrimExpr v = x(i[0], i[1], ty.index[r], tx.index[c]);
                    if (t != DataType::float32()) v = cast(DataType::float32(), v);
                    PrimExpr term = tx.weight[c] * v;
                    row = row.defined() ? row + term : term;
                }
                PrimExpr term = ty.weight[r] * row;
                sum = sum.defined() ? sum + term : term;
            }
            return t == DataType::float32() ? sum : cast(t, sum);
        },
        "resize2d")};
}

}  // namespace

Ref<Op> make_resize2d_op() {
    return make_op(
        {.name = "resize2d",
         .num_inputs = 1,
         .make_default_attrs = default_attrs<Resize2DAttrs>,
         .infer_type = resize2d_type,
         .compute = resize2d_compute,
         .schedule = schedule_injective,
         .pattern = OpPattern::Injective,
         .description = "ONNX Resize of the spatial axes of NCHW (nearest, linear, cubic)"});
}

}  // namespace anvil::ops
