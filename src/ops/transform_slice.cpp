// Windows of each axis: strided_slice (ONNX Slice) and pad (ONNX Pad), both with static
// offsets or offsets known only at run time (expressions of variables the executor binds, which
// the kernels take as scalar parameters). Injective; the injective schedule.
#include <algorithm>
#include <functional>
#include <limits>
#include <optional>

#include "graph/op.h"
#include "ir/analyzer.h"
#include "ir/polynomial.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/reduce.h"
#include "ops/tensor_shape.h"
#include "ops/transform.h"
#include "support/error.h"
#include "te/math.h"
#include "te/reduction.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::TensorType;
using graph::Type;

namespace {

PrimExpr i32(int64_t v) {
    return make_int(DataType::int32(), v);
}

PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

// ---- strided_slice ------------------------------------------------------------------------

struct AxisSlice {
    int64_t begin = 0;
    int64_t stride = 1;
    int64_t length = 0;
};

// ONNX Slice's normalization: negative values count from the end, then clamp to the axis.
AxisSlice resolve_slice(int64_t begin, int64_t end, int64_t stride, int64_t n) {
    if (begin < 0) begin = begin < -n ? 0 : begin + n;
    if (end < 0) end = end < -n ? -1 : end + n;
    AxisSlice s{.stride = stride};
    if (n == 0) return s;
    if (stride > 0) {
        begin = std::clamp<int64_t>(begin, 0, n);
        end = std::clamp<int64_t>(end, 0, n);
        s.length = end > begin ? (end - begin + stride - 1) / stride : 0;
    } else {
        begin = std::clamp<int64_t>(begin, 0, n - 1);
        end = std::clamp<int64_t>(end, -1, n - 1);
        s.length = begin > end ? (begin - end - stride - 1) / -stride : 0;
    }
    s.begin = begin;
    return s;
}

// One entry per input axis (stride 1 over the whole axis where not sliced); the sliced axes
// must be static.
std::vector<AxisSlice> slices_of(const StridedSliceAttrs& a, const std::vector<PrimExpr>& shape,
                                 const SourceLoc& loc, const std::string& op) {
    int64_t r = static_cast<int64_t>(shape.size());
    size_t n = a.begin.size();
    if (a.end.size() != n || (!a.strides.empty() && a.strides.size() != n) ||
        (!a.axes.empty() && a.axes.size() != n)) {
        user_error(loc) << op << ": begin, end, strides and axes have " << n << ", " << a.end.size()
                        << ", " << a.strides.size() << " and " << a.axes.size()
                        << " entries; they must match (strides and axes may be empty)";
    }
    if (a.axes.empty() && static_cast<int64_t>(n) > r) {
        user_error(loc) << op << ": " << n << " begin values for a tensor of " << r
                        << " dimensions";
    }
    std::vector<int64_t> axes = a.axes;
    if (axes.empty()) {
        for (size_t k = 0; k < n; ++k) axes.push_back(static_cast<int64_t>(k));
    }
    axes = normalize_axes(axes, r, loc, op);
    std::vector<AxisSlice> out(r);
    for (int64_t d = 0; d < r; ++d) out[d].length = -1;  // whole axis
    for (size_t k = 0; k < n; ++k) {
        int64_t axis = axes[k];
        int64_t stride = a.strides.empty() ? 1 : a.strides[k];
        if (stride == 0) user_error(loc) << op << ": strides[" << k << "] is 0";
        const int64_t* dim = as_const_int(shape[axis]);
        if (!dim) {
            user_error(loc) << op << ": axis " << axis << " of " << shape_str(shape)
                            << " is sliced, so it must be static";
        }
        out[axis] = resolve_slice(a.begin[k], a.end[k], stride, *dim);
    }
    return out;
}

// A slice of one axis as index expressions (int64): element i is begin + i * stride, `length`
// of them.
struct SliceExpr {
    PrimExpr begin, stride, length;
};

// resolve_slice over values known only at run time.
SliceExpr resolve_dynamic_slice(PrimExpr b, PrimExpr e, const PrimExpr& s, const PrimExpr& n) {
    // Clamping into [-n - 1, n] first keeps the sums below from overflowing (INT64_MAX ends).
    b = min(max(b, -n - 1), n);
    e = min(max(e, -n - 1), n);
    b = select(b < 0, b + n, b);
    e = select(e < 0, e + n, e);
    PrimExpr fwd_b = min(max(b, 0), n), fwd_e = min(max(e, 0), n);
    PrimExpr bwd_b = min(max(b, 0), n - 1), bwd_e = min(max(e, -1), n - 1);
    PrimExpr forward = s > 0;
    PrimExpr span = max(select(forward, fwd_e - fwd_b, bwd_b - bwd_e), 0);
    PrimExpr step = select(forward, s, -s);
    return {select(forward, fwd_b, bwd_b), s, floordiv(span + step - 1, step)};
}

std::vector<SliceExpr> dynamic_slices_of(const StridedSliceAttrs& a,
                                         const std::vector<PrimExpr>& shape, const SourceLoc& loc,
                                         const std::string& op) {
    size_t n = a.dynamic_begin.size();
    if (a.dynamic_end.size() != n ||
        (!a.dynamic_strides.empty() && a.dynamic_strides.size() != n) ||
        (!a.dynamic_axes.empty() && a.dynamic_axes.size() != n)) {
        user_error(loc) << op << ": dynamic begin, end, strides and axes have " << n << ", "
                        << a.dynamic_end.size() << ", " << a.dynamic_strides.size() << " and "
                        << a.dynamic_axes.size() << " entries; they must match";
    }
    int64_t r = static_cast<int64_t>(shape.size());
    std::vector<SliceExpr> out;
    for (int64_t d = 0; d < r; ++d) {
        PrimExpr dim = cast(DataType::int64(), shape[d]);
        out.push_back({i64(0), i64(1), dim});
    }
    for (size_t k = 0; k < n; ++k) {
        PrimExpr stride = a.dynamic_strides.empty() ? i64(1) : a.dynamic_strides[k];
        if (a.dynamic_axes.empty()) {
            if (static_cast<int64_t>(k) >= r) {
                user_error(loc) << op << ": " << n << " begin values for a tensor of " << r
                                << " dimensions";
            }
            out[k] = resolve_dynamic_slice(a.dynamic_begin[k], a.dynamic_end[k], stride,
                                           cast(DataType::int64(), shape[k]));
            continue;
        }
        // The axis itself is known only at run time: every axis it may name takes this slice
        // when it does.
        PrimExpr axis = a.dynamic_axes[k];
        axis = select(axis < 0, axis + i64(r), axis);
        for (int64_t d = 0; d < r; ++d) {
            SliceExpr s = resolve_dynamic_slice(a.dynamic_begin[k], a.dynamic_end[k], stride,
                                                cast(DataType::int64(), shape[d]));
            PrimExpr here = eq(axis, i64(d));
            out[d] = {select(here, s.begin, out[d].begin), select(here, s.stride, out[d].stride),
                      select(here, s.length, out[d].length)};
        }
    }
    for (auto& s : out) {
        s.begin = simplify(s.begin);
        s.stride = simplify(s.stride);
        s.length = simplify(s.length);
    }
    return out;
}

// Every axis's slice; the whole axis where none is taken.
std::vector<SliceExpr> slice_exprs(const StridedSliceAttrs& a, const std::vector<PrimExpr>& shape,
                                   const SourceLoc& loc, const std::string& op) {
    if (!a.dynamic_begin.empty()) return dynamic_slices_of(a, shape, loc, op);
    std::vector<SliceExpr> out;
    auto slices = slices_of(a, shape, loc, op);
    for (size_t d = 0; d < shape.size(); ++d) {
        const AxisSlice& s = slices[d];
        if (s.length < 0) {
            out.push_back({PrimExpr(), PrimExpr(), shape[d]});
        } else {
            out.push_back({i64(s.begin), i64(s.stride), i64(s.length)});
        }
    }
    return out;
}

// An int64 index expression as the kernel's int32 index.
PrimExpr index32(const PrimExpr& e) {
    if (const int64_t* v = as_const_int(e)) return i32(*v);
    return cast(DataType::int32(), e);
}

Type strided_slice_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                        const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    std::vector<PrimExpr> out;
    for (const auto& s : slice_exprs(attrs_as<StridedSliceAttrs>(attrs), x.shape, loc, op.name)) {
        out.push_back(s.length);
    }
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> strided_slice_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                              const Type& out) {
    te::Tensor x = in[0];
    auto slices = slice_exprs(attrs_as<StridedSliceAttrs>(attrs), x.shape(), {}, "strided_slice");
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx;
            for (size_t d = 0; d < i.size(); ++d) {
                const SliceExpr& s = slices[d];
                idx.push_back(!s.begin.defined() ? i[d]
                                                 : index32(s.begin) + i[d] * index32(s.stride));
            }
            return x(idx);
        },
        "strided_slice")};
}

// ---- pad ----------------------------------------------------------------------------------

// The pads as int64 expressions: [before_0, after_0, before_1, ...].
std::vector<PrimExpr> pad_exprs(const PadAttrs& a) {
    if (!a.dynamic_pad_width.empty()) return a.dynamic_pad_width;
    std::vector<PrimExpr> out;
    for (int64_t p : a.pad_width) out.push_back(i64(p));
    return out;
}

Type pad_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
              const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& a = attrs_as<PadAttrs>(attrs);
    std::vector<PrimExpr> pads = pad_exprs(a);
    if (pads.size() != 2 * x.ndim()) {
        user_error(loc) << op.name << ": pad_width has " << pads.size() << " entries; a tensor of "
                        << x.ndim() << " dimensions needs " << 2 * x.ndim()
                        << " (before and after for each axis)";
    }
    if (a.pad_mode != "constant" && a.pad_mode != "reflect" && a.pad_mode != "edge" &&
        a.pad_mode != "wrap") {
        user_error(loc) << op.name << ": pad_mode must be \"constant\", \"reflect\", \"edge\" or "
                        << "\"wrap\", got \"" << a.pad_mode << "\"";
    }
    if (args.size() > 2) {
        user_error(loc) << op.name << " takes the data and optionally the constant, got "
                        << args.size() << " inputs";
    }
    if (args.size() == 2) {
        const auto& v = graph::expect_tensor(args[1], loc, "the constant of " + op.name);
        if (v.num_elements() != 1 || a.pad_mode != "constant" || v.dtype.is_handle()) {
            user_error(loc) << op.name << ": the constant must be one element (constant mode), got "
                            << graph::type_str(args[1]) << " in " << a.pad_mode << " mode";
        }
    }
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < x.ndim(); ++d) {
        const int64_t* n = as_const_int(x.shape[d]);
        const int64_t* before = as_const_int(pads[2 * d]);
        const int64_t* after = as_const_int(pads[2 * d + 1]);
        if (n && before && after && *n + *before + *after < 0) {
            user_error(loc) << op.name << ": pads " << *before << " and " << *after
                            << " crop more than the " << *n << " elements of axis " << d;
        }
        if (a.pad_mode != "constant" && before && after && (*before > 0 || *after > 0) && n &&
            *n == 0) {
            user_error(loc) << op.name << ": " << a.pad_mode << " padding of the empty axis " << d;
        }
        out.push_back(
            simplify(cast(DataType::int64(), x.shape[d]) + pads[2 * d] + pads[2 * d + 1]));
    }
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> pad_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                    const Type& out) {
    te::Tensor x = in[0];
    const auto& a = attrs_as<PadAttrs>(attrs);
    std::vector<PrimExpr> pads = pad_exprs(a);
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx;
            PrimExpr inside;
            for (size_t d = 0; d < i.size(); ++d) {
                const int64_t* before = as_const_int(pads[2 * d]);
                const int64_t* after = as_const_int(pads[2 * d + 1]);
                PrimExpr n = x.shape()[d];
                PrimExpr j = before && *before == 0 ? i[d] : i[d] - index32(pads[2 * d]);
                if (before && after && *before <= 0 && *after <= 0) {  // cropped: always inside
                    idx.push_back(j);
                    continue;
                }
                if (a.pad_mode == "constant") {
                    // Pads known only at run time may pad or crop: test both ends.
                    PrimExpr ok;
                    if (!before || *before > 0) ok = j >= i32(0);
                    if (!after || *after > 0) ok = ok.defined() ? (ok && j < n) : j < n;
                    inside = inside.defined() ? (inside && ok) : ok;
                } else if (a.pad_mode == "edge") {
                    j = max(min(j, n - i32(1)), i32(0));
                } else if (a.pad_mode == "wrap") {
                    j = floormod(j, n);
                } else if (is_one(n)) {  // reflect of one element
                    j = i32(0);
                } else {  // reflect: period 2(n - 1), mirrored in its second half
                    PrimExpr period = (n - i32(1)) * i32(2);
                    PrimExpr m = floormod(j, period);
                    j = select(m < n, m, period - m);
                }
                idx.push_back(j);
            }
            if (!inside.defined()) return x(idx);
            PrimExpr value =
                in.size() == 2 ? cast(x.dtype(), in[1](std::vector<PrimExpr>(in[1].ndim(), i32(0))))
                               : make_const(x.dtype(), a.pad_value);
            return te::if_then_else(inside, x(idx), value);
        },
        "pad")};
}

}  // namespace

Ref<Op> make_strided_slice_op() {
    return make_op({.name = "strided_slice",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<StridedSliceAttrs>,
                    .infer_type = strided_slice_type,
                    .compute = strided_slice_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "begin:end:stride per axis (ONNX Slice)"});
}

Ref<Op> make_pad_op() {
    return make_op(
        {.name = "nn.pad",
         .num_inputs = -1,
         .make_default_attrs = default_attrs<PadAttrs>,
         .infer_type = pad_type,
         .compute = pad_compute,
         .schedule = schedule_injective_rows,
         .pattern = OpPattern::Injective,
         .description = "pad with a constant, the reflection, the edge or periodically"});
}

}  // namespace anvil::ops
