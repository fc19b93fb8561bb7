// Indexing ops: take (ONNX Gather), gather_elements, gather_nd, reverse_sequence, scatters,
// trilu and arange (strided_slice and pad are in transform_slice.cpp). All are Injective and use
// the injective schedule.
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

// ---- gather_nd ----------------------------------------------------------------------------

Type gather_nd_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                    const SourceLoc& loc) {
    const auto& data = graph::expect_tensor(args[0], loc, "the data (input 0) of " + op.name);
    const auto& indices = expect_indices(args, op, loc);
    int64_t b = attrs_as<GatherNDAttrs>(attrs).batch_dims;
    auto r = static_cast<int64_t>(data.ndim()), q = static_cast<int64_t>(indices.ndim());
    if (q < 1) user_error(loc) << op.name << ": the indices must have rank 1 or more";
    if (b < 0 || b >= std::min(r, q)) {
        user_error(loc) << op.name << ": batch_dims " << b << " must be less than the ranks of "
                        << "the data (" << r << ") and the indices (" << q << ")";
    }
    const int64_t* m = as_const_int(indices.shape[q - 1]);
    if (!m) user_error(loc) << op.name << ": the last axis of the indices must be static";
    if (*m < 1 || b + *m > r) {
        user_error(loc) << op.name << ": index tuples of " << *m << " elements do not fit data "
                        << shape_str(data.shape) << " after " << b << " batch axes";
    }
    for (int64_t d = 0; d < b; ++d) {
        const int64_t *x = as_const_int(data.shape[d]), *y = as_const_int(indices.shape[d]);
        if (x && y && *x != *y) {
            user_error(loc) << op.name << ": batch axis " << d << " has " << *x
                            << " elements in the data and " << *y << " in the indices";
        }
    }
    std::vector<PrimExpr> out(indices.shape.begin(), indices.shape.end() - 1);
    out.insert(out.end(), data.shape.begin() + b + *m, data.shape.end());
    return graph::make_tensor_type(out, data.dtype);
}

std::vector<te::Tensor> gather_nd_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                          const Type& out) {
    te::Tensor data = in[0], indices = in[1];
    int64_t b = attrs_as<GatherNDAttrs>(attrs).batch_dims;
    size_t q = indices.ndim();
    int64_t m = *as_const_int(indices.shape()[q - 1]);
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.begin(), i.begin() + b);
            std::vector<PrimExpr> pos(i.begin(), i.begin() + static_cast<int64_t>(q) - 1);
            pos.push_back(i32(0));
            for (int64_t j = 0; j < m; ++j) {
                pos.back() = i32(j);
                idx.push_back(wrap_index(indices(pos), data.shape()[b + j]));
            }
            idx.insert(idx.end(), i.begin() + static_cast<int64_t>(q) - 1, i.end());
            return data(idx);
        },
        "gather_nd")};
}

// ---- reverse_sequence ---------------------------------------------------------------------

Type reverse_sequence_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                           const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& lens = graph::expect_tensor(args[1], loc, "the sequence lengths of " + op.name);
    const auto& a = attrs_as<ReverseSequenceAttrs>(attrs);
    auto r = static_cast<int64_t>(x.ndim());
    if (r < 2) user_error(loc) << op.name << ": the input must have rank 2 or more";
    if (a.batch_axis < 0 || a.batch_axis > 1 || a.time_axis < 0 || a.time_axis > 1 ||
        a.batch_axis == a.time_axis) {
        user_error(loc) << op.name << ": batch_axis " << a.batch_axis << " and time_axis "
                        << a.time_axis << " must be 0 and 1 in some order";
    }
    if (!lens.dtype.is_integer() || lens.ndim() != 1) {
        user_error(loc) << op.name << ": the sequence lengths must be a 1-D integer tensor, got "
                        << graph::type_str(args[1]);
    }
    const int64_t *n = as_const_int(lens.shape[0]), *bn = as_const_int(x.shape[a.batch_axis]);
    if (n && bn && *n != *bn) {
        user_error(loc) << op.name << ": " << *n << " sequence lengths for a batch of " << *bn;
    }
    return args[0];
}

std::vector<te::Tensor> reverse_sequence_compute(const std::vector<te::Tensor>& in,
                                                 const Attrs& attrs, const Type& out) {
    te::Tensor x = in[0], lens = in[1];
    const auto& a = attrs_as<ReverseSequenceAttrs>(attrs);
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx = to_vector(i);
            PrimExpr len = cast(DataType::int32(), lens({i[a.batch_axis]}));
            PrimExpr t = cast(DataType::int32(), i[a.time_axis]);
            PrimExpr n = cast(DataType::int32(), x.shape()[a.time_axis]);
            len = max(min(len, n), i32(0));
            idx[a.time_axis] = select(t < len, len - i32(1) - t, t);
            return x(idx);
        },
        "reverse_sequence")};
}

// ---- scatter_elements, scatter_nd ------------------------------------------------------------
//
// Both are gathers from the output's point of view: each output element searches the updates
// that land on it (a reduction over the updates; quadratic, but static and exact). "none" finds
// the last matching update's flat position, then reads it; "add" and "mul" fold the matches.

void check_scatter_common(const Op& op, const std::vector<Type>& args, const ScatterAttrs& a,
                          const SourceLoc& loc) {
    const auto& data = graph::expect_tensor(args[0], loc, "the data (input 0) of " + op.name);
    expect_indices(args, op, loc);
    const auto& updates = graph::expect_tensor(args[2], loc, "the updates (input 2) of " + op.name);
    if (updates.dtype != data.dtype) {
        user_error(loc) << op.name << ": the updates have type " << updates.dtype.str()
                        << ", the data " << data.dtype.str();
    }
    if (a.reduction != "none" && a.reduction != "add" && a.reduction != "mul") {
        user_error(loc) << op.name << ": reduction '" << a.reduction
                        << "' is not supported (none, add, mul)";
    }
}

void expect_same_dims(const Op& op, const std::vector<PrimExpr>& got,
                      const std::vector<PrimExpr>& want, const char* what, const SourceLoc& loc) {
    bool same = got.size() == want.size();
    for (size_t d = 0; same && d < got.size(); ++d) {
        const int64_t *x = as_const_int(got[d]), *y = as_const_int(want[d]);
        same = x && y && *x == *y;
    }
    if (!same) {
        user_error(loc) << op.name << ": " << what << " have shape " << shape_str(got)
                        << ", expected " << shape_str(want);
    }
}

Type scatter_elements_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                           const SourceLoc& loc) {
    const auto& a = attrs_as<ScatterAttrs>(attrs);
    check_scatter_common(op, args, a, loc);
    const auto& data = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    const auto& indices = graph::expect_tensor(args[1], loc, "the indices of " + op.name);
    const auto& updates = graph::expect_tensor(args[2], loc, "the updates of " + op.name);
    normalize_axis(a.axis, static_cast<int64_t>(data.ndim()), loc, op.name);
    if (indices.ndim() != data.ndim()) {
        user_error(loc) << op.name << ": the indices have rank " << indices.ndim() << ", the data "
                        << data.ndim();
    }
    // Along the axis any number of updates may land; elsewhere the updates address data. The
    // kernel searches the (static) updates for each output position, so the data may be
    // symbolic.
    int64_t axis = a.axis < 0 ? a.axis + static_cast<int64_t>(data.ndim()) : a.axis;
    if (!as_const_int(shape_product(indices.shape))) {
        user_error(loc) << op.name << ": the indices " << shape_str(indices.shape)
                        << " must be static";
    }
    for (size_t d = 0; d < data.ndim(); ++d) {
        if (static_cast<int64_t>(d) == axis) continue;
        const int64_t *n = as_const_int(indices.shape[d]), *x = as_const_int(data.shape[d]);
        if (n && x ? *n > *x : !provably_equal(indices.shape[d], data.shape[d])) {
            user_error(loc) << op.name << ": indices " << shape_str(indices.shape)
                            << " exceed data " << shape_str(data.shape) << " in axis " << d;
        }
    }
    expect_same_dims(op, updates.shape, indices.shape, "the updates", loc);
    return args[0];
}

// The output of a scatter: `matches(p, k)` says whether update k (a flat position in the update
// tuples) lands on output position p, `update(p, k)` reads it; `count` update tuples.
using ScatterMatch = std::function<PrimExpr(std::span<const PrimExpr>, PrimExpr)>;

te::Tensor scatter_output(const te::Tensor& data, const Type& out, const std::string& reduction,
                          int64_t count, const ScatterMatch& matches, const ScatterMatch& update,
                          const std::string& name) {
    Ref<IterVar> k = te::reduce_axis(i32(count), "k");
    auto shape = te_shape(out);
    DataType dt = data.dtype();
    if (reduction == "none") {
        te::Tensor last = te::compute(
            shape,
            [&](std::span<const PrimExpr> p) {
                return te::max(select(matches(p, k->var), k->var, i32(-1)), {k});
            },
            name + "_last");
        return te::compute(
            shape,
            [&](std::span<const PrimExpr> p) {
                PrimExpr l = last(to_vector(p));
                return select(l >= i32(0), update(p, max(l, i32(0))), data(to_vector(p)));
            },
            name);
    }
    bool add = reduction == "add";
    static const te::Reducer prod =
        te::comm_reducer([](PrimExpr a, PrimExpr b) { return a * b; },
                         [](DataType t) { return make_const(t, 1); }, "prod");
    te::Tensor folded = te::compute(
        shape,
        [&](std::span<const PrimExpr> p) {
            PrimExpr v = select(matches(p, k->var), update(p, k->var), make_const(dt, add ? 0 : 1));
            return add ? te::sum(v, {k}) : prod(v, {k}, PrimExpr());
        },
        name + "_" + reduction);
    return te::compute(
        shape,
        [&](std::span<const PrimExpr> p) {
            PrimExpr d = data(to_vector(p)), f = folded(to_vector(p));
            return add ? d + f : d * f;
        },
        name);
}

// The multi-index of flat position `flat` in a static shape.
std::vector<PrimExpr> unflatten(PrimExpr flat, const std::vector<int64_t>& shape) {
    std::vector<PrimExpr> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = floormod(flat, i32(shape[d]));
        flat = floordiv(flat, i32(shape[d]));
    }
    return idx;
}

std::vector<int64_t> static_dims(const std::vector<PrimExpr>& shape) {
    std::vector<int64_t> out;
    for (const auto& e : shape) out.push_back(*as_const_int(e));
    return out;
}

std::vector<te::Tensor> scatter_elements_compute(const std::vector<te::Tensor>& in,
                                                 const Attrs& attrs, const Type& out) {
    te::Tensor data = in[0], indices = in[1], updates = in[2];
    const auto& a = attrs_as<ScatterAttrs>(attrs);
    auto r = static_cast<int64_t>(data.ndim());
    int64_t axis = a.axis < 0 ? a.axis + r : a.axis;
    std::vector<int64_t> is = static_dims(indices.shape());
    // Update k along `axis`, at the output position's other coordinates.
    auto pos = [&](std::span<const PrimExpr> p, PrimExpr k) {
        std::vector<PrimExpr> idx;
        for (int64_t d = 0; d < r; ++d) {
            PrimExpr c = cast(DataType::int32(), p[d]);
            idx.push_back(d == axis ? k : min(c, i32(is[d] - 1)));
        }
        return idx;
    };
    ScatterMatch matches = [&](std::span<const PrimExpr> p, PrimExpr k) {
        PrimExpr hit = eq(wrap_index(indices(pos(p, k)), data.shape()[axis]),
                          cast(DataType::int32(), p[axis]));
        for (int64_t d = 0; d < r; ++d) {
            if (d != axis) hit = hit && cast(DataType::int32(), p[d]) < i32(is[d]);
        }
        return hit;
    };
    ScatterMatch update = [&](std::span<const PrimExpr> p, PrimExpr k) {
        return updates(pos(p, k));
    };
    return {scatter_output(data, out, a.reduction, is[axis], matches, update, "scatter_elements")};
}

Type scatter_nd_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                     const SourceLoc& loc) {
    check_scatter_common(op, args, attrs_as<ScatterAttrs>(attrs), loc);
    const auto& data = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    const auto& indices = graph::expect_tensor(args[1], loc, "the indices of " + op.name);
    const auto& updates = graph::expect_tensor(args[2], loc, "the updates of " + op.name);
    size_t q = indices.ndim();
    const int64_t* m = q ? as_const_int(indices.shape[q - 1]) : nullptr;
    if (!m || *m < 1 || *m > static_cast<int64_t>(data.ndim())) {
        user_error(loc) << op.name << ": index tuples " << shape_str(indices.shape)
                        << " do not fit data " << shape_str(data.shape);
    }
    for (const auto& e : indices.shape) {
        if (!as_const_int(e))
            user_error(loc) << op.name << ": the indices must have a static shape";
    }
    std::vector<PrimExpr> want(indices.shape.begin(), indices.shape.end() - 1);
    want.insert(want.end(), data.shape.begin() + *m, data.shape.end());
    expect_same_dims(op, updates.shape, want, "the updates", loc);
    return args[0];
}

std::vector<te::Tensor> scatter_nd_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    te::Tensor data = in[0], indices = in[1], updates = in[2];
    const auto& a = attrs_as<ScatterAttrs>(attrs);
    std::vector<int64_t> is = static_dims(indices.shape());
    int64_t m = is.back();
    std::vector<int64_t> tuples(is.begin(), is.end() - 1);
    int64_t count = 1;
    for (int64_t d : tuples) count *= d;
    ScatterMatch matches = [&](std::span<const PrimExpr> p, PrimExpr k) {
        std::vector<PrimExpr> idx = unflatten(k, tuples);
        idx.push_back(i32(0));
        PrimExpr hit;
        for (int64_t j = 0; j < m; ++j) {
            idx.back() = i32(j);
            PrimExpr e =
                eq(wrap_index(indices(idx), data.shape()[j]), cast(DataType::int32(), p[j]));
            hit = hit.defined() ? (hit && e) : e;
        }
        return hit;
    };
    ScatterMatch update = [&](std::span<const PrimExpr> p, PrimExpr k) {
        std::vector<PrimExpr> idx = unflatten(k, tuples);
        idx.insert(idx.end(), p.begin() + m, p.end());
        return updates(idx);
    };
    return {scatter_output(data, out, a.reduction, count, matches, update, "scatter_nd")};
}

// ---- trilu --------------------------------------------------------------------------------

Type trilu_type(const Op& op, const std::vector<Type>& args, const Attrs&, const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& k = graph::expect_tensor(args[1], loc, "the diagonal k of " + op.name);
    if (x.ndim() < 2) {
        user_error(loc) << op.name << ": the input must have rank 2 or more, got "
                        << shape_str(x.shape);
    }
    if (!k.dtype.is_integer()) {
        user_error(loc) << op.name << ": k must be an integer tensor, got " << k.dtype.str();
    }
    bool one = k.ndim() == 0 || (k.ndim() == 1 && is_const_int(k.shape[0], 1));
    if (!one) {
        user_error(loc) << op.name << ": k must have one element, got shape " << shape_str(k.shape);
    }
    return args[0];
}

std::vector<te::Tensor> trilu_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                      const Type& out) {
    te::Tensor x = in[0], k = in[1];
    bool upper = attrs_as<TriluAttrs>(attrs).upper;
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            size_t n = i.size();
            PrimExpr kv =
                cast(DataType::int64(), k.ndim() == 0 ? k(std::vector<PrimExpr>{}) : k({i32(0)}));
            PrimExpr diag = cast(DataType::int64(), i[n - 1]) - cast(DataType::int64(), i[n - 2]);
            PrimExpr keep = upper ? diag >= kv : diag <= kv;
            return select(keep, x(to_vector(i)), make_const(x.dtype(), 0));
        },
        "trilu")};
}

Type arange_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    const auto& a = attrs_as<ArangeAttrs>(attrs);
    const auto& start = graph::expect_tensor(args[0], loc, "the start of " + op.name);
    const auto& delta = graph::expect_tensor(args[1], loc, "the delta of " + op.name);
    if (a.length.size() != 1 || !a.length[0].defined() || !a.length[0].dtype().is_integer()) {
        user_error(loc) << op.name << ": length must be one integer dimension";
    }
    for (const auto* t : {&start, &delta}) {
        if (!t->is_static() || t->num_elements() != 1 || t->dtype != start.dtype) {
            user_error(loc) << op.name << ": start and delta must be one-element tensors of one "
                            << "dtype, not " << shape_str(start.shape) << " " << start.dtype.str()
                            << " and " << shape_str(delta.shape) << " " << delta.dtype.str();
        }
    }
    return graph::make_tensor_type(a.length, start.dtype);
}

std::vector<te::Tensor> arange_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                       const Type& out) {
    te::Tensor start = in[0], delta = in[1];
    auto first = [](const te::Tensor& t) { return t(std::vector<PrimExpr>(t.ndim(), i32(0))); };
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            return first(start) + cast(start.dtype(), i[0]) * first(delta);
        },
        "arange")};
}

}  // namespace

Ref<Op> make_arange_op() {
    return make_op({.name = "arange",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<ArangeAttrs>,
                    .infer_type = arange_type,
                    .compute = arange_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "start + i * delta for i below a length (ONNX Range)"});
}

Ref<Op> make_trilu_op() {
    return make_op({.name = "trilu",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<TriluAttrs>,
                    .infer_type = trilu_type,
                    .compute = trilu_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "upper or lower triangle of the last two axes (ONNX Trilu)"});
}

Ref<Op> make_gather_nd_op() {
    return make_op({.name = "gather_nd",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<GatherNDAttrs>,
                    .infer_type = gather_nd_type,
                    .compute = gather_nd_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "gather slices by index tuples (ONNX GatherND)"});
}

Ref<Op> make_reverse_sequence_op() {
    return make_op({.name = "reverse_sequence",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<ReverseSequenceAttrs>,
                    .infer_type = reverse_sequence_type,
                    .compute = reverse_sequence_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "reverse each batch entry's leading time steps"});
}

Ref<Op> make_scatter_elements_op() {
    return make_op({.name = "scatter_elements",
                    .num_inputs = 3,
                    .make_default_attrs = default_attrs<ScatterAttrs>,
                    .infer_type = scatter_elements_type,
                    .compute = scatter_elements_compute,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::Opaque,
                    .description = "write updates along axis at indices (ONNX ScatterElements)"});
}

Ref<Op> make_scatter_nd_op() {
    return make_op({.name = "scatter_nd",
                    .num_inputs = 3,
                    .make_default_attrs = default_attrs<ScatterAttrs>,
                    .infer_type = scatter_nd_type,
                    .compute = scatter_nd_compute,
                    .schedule = schedule_reduce,
                    .pattern = OpPattern::Opaque,
                    .description = "write update slices at index tuples (ONNX ScatterND)"});
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

}  // namespace anvil::ops
