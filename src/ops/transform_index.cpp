// Indexing ops: strided_slice (ONNX Slice), take (ONNX Gather), gather_elements and pad. All are
// Injective and use the injective schedule.
#include <algorithm>
#include <limits>
#include <optional>

#include "graph/op.h"
#include "ir/analyzer.h"
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
using graph::TensorType;
using graph::Type;

namespace {

PrimExpr i32(int64_t v) {
    return make_int(DataType::int32(), v);
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
        if (out[axis].length == 0) {
            user_error(loc) << op << ": begin " << a.begin[k] << ", end " << a.end[k] << ", stride "
                            << stride << " select no element of axis " << axis << " (size " << *dim
                            << "); empty tensors are not supported";
        }
    }
    return out;
}

Type strided_slice_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                        const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    auto slices = slices_of(attrs_as<StridedSliceAttrs>(attrs), x.shape, loc, op.name);
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < x.ndim(); ++d) {
        out.push_back(slices[d].length < 0 ? x.shape[d]
                                           : make_int(DataType::int64(), slices[d].length));
    }
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> strided_slice_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                              const Type& out) {
    te::Tensor x = in[0];
    auto slices = slices_of(attrs_as<StridedSliceAttrs>(attrs), x.shape(), {}, "strided_slice");
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx;
            for (size_t d = 0; d < i.size(); ++d) {
                const AxisSlice& s = slices[d];
                idx.push_back(s.length < 0 ? i[d] : i32(s.begin) + i[d] * i32(s.stride));
            }
            return x(idx);
        },
        "strided_slice")};
}

// ---- take / gather_elements ---------------------------------------------------------------

const TensorType& expect_indices(const std::vector<Type>& args, const Op& op,
                                 const SourceLoc& loc) {
    const auto& t = graph::expect_tensor(args[1], loc, "the indices (input 1) of " + op.name);
    if (t.dtype != DataType::int32() && t.dtype != DataType::int64()) {
        user_error(loc) << op.name << ": indices have type " << t.dtype.str()
                        << "; they must be int32 or int64";
    }
    return t;
}

// An index into an axis of `n` elements as int32: negative counts from the end, and the rest
// is clamped so that a bad index cannot read outside the tensor.
PrimExpr wrap_index(PrimExpr v, const PrimExpr& n) {
    PrimExpr len = cast(v.dtype(), n);
    v = select(v < make_const(v.dtype(), 0), v + len, v);
    v = max(min(v, len - make_const(v.dtype(), 1)), make_const(v.dtype(), 0));
    return v.dtype() == DataType::int32() ? v : cast(DataType::int32(), v);
}

Type take_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
               const SourceLoc& loc) {
    const auto& data = graph::expect_tensor(args[0], loc, "the data (input 0) of " + op.name);
    const auto& indices = expect_indices(args, op, loc);
    int64_t axis = normalize_axis(attrs_as<TakeAttrs>(attrs).axis,
                                  static_cast<int64_t>(data.ndim()), loc, op.name);
    std::vector<PrimExpr> out(data.shape.begin(), data.shape.begin() + axis);
    out.insert(out.end(), indices.shape.begin(), indices.shape.end());
    out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
    return graph::make_tensor_type(out, data.dtype);
}

std::vector<te::Tensor> take_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                     const Type& out) {
    te::Tensor data = in[0], indices = in[1];
    int64_t axis = attrs_as<TakeAttrs>(attrs).axis;
    if (axis < 0) axis += static_cast<int64_t>(data.ndim());
    size_t k = indices.ndim();
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> pos(i.begin() + axis, i.begin() + axis + k);
            std::vector<PrimExpr> idx(i.begin(), i.begin() + axis);
            idx.push_back(wrap_index(indices(pos), data.shape()[axis]));
            idx.insert(idx.end(), i.begin() + axis + k, i.end());
            return data(idx);
        },
        "take")};
}

Type gather_elements_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                          const SourceLoc& loc) {
    const auto& data = graph::expect_tensor(args[0], loc, "the data (input 0) of " + op.name);
    const auto& indices = expect_indices(args, op, loc);
    int64_t r = static_cast<int64_t>(data.ndim());
    int64_t axis = normalize_axis(attrs_as<GatherElementsAttrs>(attrs).axis, r, loc, op.name);
    if (static_cast<int64_t>(indices.ndim()) != r) {
        user_error(loc) << op.name << ": indices " << shape_str(indices.shape) << " and data "
                        << shape_str(data.shape) << " must have the same rank";
    }
    for (int64_t d = 0; d < r; ++d) {
        const int64_t* a = as_const_int(indices.shape[d]);
        const int64_t* b = as_const_int(data.shape[d]);
        if (d != axis && a && b && *a > *b) {
            user_error(loc) << op.name << ": indices " << shape_str(indices.shape)
                            << " exceed data " << shape_str(data.shape) << " in axis " << d;
        }
    }
    return graph::make_tensor_type(indices.shape, data.dtype);
}

std::vector<te::Tensor> gather_elements_compute(const std::vector<te::Tensor>& in,
                                                const Attrs& attrs, const Type& out) {
    te::Tensor data = in[0], indices = in[1];
    int64_t axis = attrs_as<GatherElementsAttrs>(attrs).axis;
    if (axis < 0) axis += static_cast<int64_t>(data.ndim());
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx = to_vector(i);
            idx[axis] = wrap_index(indices(to_vector(i)), data.shape()[axis]);
            return data(idx);
        },
        "gather_elements")};
}

// ---- pad ----------------------------------------------------------------------------------

Type pad_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
              const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& a = attrs_as<PadAttrs>(attrs);
    if (a.pad_width.size() != 2 * x.ndim()) {
        user_error(loc) << op.name << ": pad_width has " << a.pad_width.size()
                        << " entries; a tensor of " << x.ndim() << " dimensions needs "
                        << 2 * x.ndim() << " (before and after for each axis)";
    }
    if (a.mode != "constant" && a.mode != "reflect" && a.mode != "edge" && a.mode != "wrap") {
        user_error(loc) << op.name << ": mode must be \"constant\", \"reflect\", \"edge\" or "
                        << "\"wrap\", got \"" << a.mode << "\"";
    }
    std::vector<PrimExpr> out;
    for (size_t d = 0; d < x.ndim(); ++d) {
        int64_t before = a.pad_width[2 * d], after = a.pad_width[2 * d + 1];
        const int64_t* n = as_const_int(x.shape[d]);
        if (n && *n + before + after <= 0) {
            user_error(loc) << op.name << ": pads " << before << " and " << after
                            << " leave nothing of the " << *n << " elements of axis " << d
                            << "; empty tensors are not supported";
        }
        if (a.mode != "constant" && (before > 0 || after > 0) && n && *n == 0) {
            user_error(loc) << op.name << ": " << a.mode << " padding of the empty axis " << d;
        }
        out.push_back(simplify(x.shape[d] + make_int(DataType::int64(), before + after)));
    }
    return graph::make_tensor_type(out, x.dtype);
}

std::vector<te::Tensor> pad_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                    const Type& out) {
    te::Tensor x = in[0];
    const auto& a = attrs_as<PadAttrs>(attrs);
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx;
            PrimExpr inside;
            for (size_t d = 0; d < i.size(); ++d) {
                int64_t before = a.pad_width[2 * d], after = a.pad_width[2 * d + 1];
                PrimExpr n = x.shape()[d];
                PrimExpr j = before == 0 ? i[d] : i[d] - i32(before);
                if (before <= 0 && after <= 0) {  // only cropped: always inside
                    idx.push_back(j);
                    continue;
                }
                if (a.mode == "constant") {
                    PrimExpr ok;
                    if (before > 0) ok = j >= i32(0);
                    if (after > 0) ok = ok.defined() ? (ok && j < n) : j < n;
                    inside = inside.defined() ? (inside && ok) : ok;
                } else if (a.mode == "edge") {
                    j = max(min(j, n - i32(1)), i32(0));
                } else if (a.mode == "wrap") {
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
            return te::if_then_else(inside, x(idx), make_const(x.dtype(), a.pad_value));
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

Ref<Op> make_take_op() {
    return make_op({.name = "take",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<TakeAttrs>,
                    .infer_type = take_type,
                    .compute = take_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "select slices along axis by index (ONNX Gather)"});
}

Ref<Op> make_gather_elements_op() {
    return make_op({.name = "gather_elements",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<GatherElementsAttrs>,
                    .infer_type = gather_elements_type,
                    .compute = gather_elements_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "select elements along axis by a same-rank index tensor"});
}

Ref<Op> make_pad_op() {
    return make_op(
        {.name = "pad",
         .num_inputs = 1,
         .make_default_attrs = default_attrs<PadAttrs>,
         .infer_type = pad_type,
         .compute = pad_compute,
         .schedule = schedule_injective,
         .pattern = OpPattern::Injective,
         .description = "pad with a constant, the reflection, the edge or periodically"});
}

}  // namespace anvil::ops
