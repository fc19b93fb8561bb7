// Compositions shared by the shape, index and creation converters (shape_ops.h).
#include "frontend/pytorch/shape_ops.h"

#include <algorithm>
#include <climits>

#include "frontend/shape_values.h"
#include "ir/analyzer.h"
#include "ir/polynomial.h"
#include "ops/axes.h"
#include "ops/shape_tensor.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

int category(DataType t) {
    if (t.is_bool()) return 0;
    return t.is_floating() ? 2 : 1;
}

// A constant scalar of any element type (NodeBuilder makes the common ones directly).
Expr scalar_constant(const PtContext& ctx, DataType dtype, double value) {
    if (dtype.is_bool()) return ctx.constant_scalar(dtype, value != 0 ? 1.0 : 0.0);
    if (dtype == DataType::float32() || dtype == DataType::float64() ||
        dtype == DataType::int64() || dtype == DataType::int32() || dtype == DataType::uint(8) ||
        dtype == DataType::int_(8)) {
        return ctx.constant_scalar(dtype, value);
    }
    DataType wide = dtype.is_floating() ? DataType::float32() : DataType::int64();
    return cast_to(ctx, ctx.constant_scalar(wide, value), dtype);
}

// The factors of a product of sizes (n * 3 * m → n, 3, m).
void factors(const PrimExpr& e, std::vector<PrimExpr>& out) {
    if (const auto* m = e.as<Mul>()) {
        factors(m->a, out);
        factors(m->b, out);
        return;
    }
    out.push_back(e);
}

// total / known when it divides exactly by cancelling factors: the symbolic factors of `known`
// each equal to one of `total`'s, and its constant factor dividing `total`'s. (The simplifier
// does not divide n * 24 by n.)
std::optional<PrimExpr> exact_quotient(const std::vector<PrimExpr>& total,
                                       const std::vector<PrimExpr>& known) {
    std::vector<PrimExpr> t, k;
    for (const auto& d : total) factors(simplify(d), t);
    for (const auto& d : known) factors(simplify(d), k);
    int64_t ct = 1, ck = 1;
    std::vector<PrimExpr> symbolic;
    for (const auto& f : t) {
        if (const int64_t* c = as_const_int(f)) {
            ct *= *c;
        } else {
            symbolic.push_back(f);
        }
    }
    for (const auto& f : k) {
        if (const int64_t* c = as_const_int(f)) {
            ck *= *c;
            continue;
        }
        auto it = std::find_if(symbolic.begin(), symbolic.end(),
                               [&](const PrimExpr& s) { return provably_equal(s, f); });
        if (it == symbolic.end()) return std::nullopt;
        symbolic.erase(it);
    }
    if (ck == 0 || ct % ck != 0) return std::nullopt;
    PrimExpr q = i64(ct / ck);
    for (const auto& f : symbolic) q = q * f;
    return simplify(q);
}

}  // namespace

Sizes sizes_operand(const PtContext& ctx, size_t i) {
    const PtValue& v = ctx.input(i);
    std::vector<PtValue> items;
    if (v.kind == PtValue::List || v.kind == PtValue::Tuple) {
        items = v.items;
    } else {
        items = {v};
    }
    Sizes out;
    for (size_t k = 0; k < items.size(); ++k) {
        const PtValue& item = items[k];
        if (item.kind != PtValue::Int && item.kind != PtValue::Bool) {
            ctx.error() << "operand " << i << " must be a list of ints; item " << k << " is a "
                        << kind_name(item.kind);
        }
        if (item.scalar.defined()) {
            out.dims.push_back(simplify(cast(DataType::int64(), item.scalar)));
            continue;
        }
        // Known only at run time: a dimension variable bound from its tensor.
        Expr t = cast_to(ctx, item.tensor, DataType::int64());
        out.bindings.push_back(shape_values(ctx, t, "size " + std::to_string(k)));
        if (out.bindings.back().values.size() != 1) ctx.error() << "a size must be one number";
        out.dims.push_back(out.bindings.back().values[0]);
    }
    return out;
}

std::vector<PrimExpr> dims_of(const PtContext& ctx, const Expr& x) {
    std::vector<PrimExpr> out;
    for (const auto& d : ctx.tensor_type(x, "the input").shape) {
        out.push_back(simplify(cast(DataType::int64(), d)));
    }
    return out;
}

Expr permute_axes(const PtContext& ctx, const Expr& x, const std::vector<int64_t>& perm) {
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
    if (identity) return x;
    auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
    a->axes = perm;
    return ctx.call("transpose", {x}, attrs);
}

Expr view_dims(const PtContext& ctx, const Expr& x, std::vector<PrimExpr> dims) {
    std::optional<size_t> infer;
    bool constant = ctx.tensor_type(x, "the input").is_static();
    for (size_t i = 0; i < dims.size(); ++i) {
        dims[i] = simplify(cast(DataType::int64(), dims[i]));
        const int64_t* v = as_const_int(dims[i]);
        if (!v) {
            constant = false;
            continue;
        }
        if (*v < -1) ctx.error() << "invalid size " << *v << " at position " << i;
        if (*v == -1) {
            if (infer) ctx.error() << "only one dimension can be inferred (-1)";
            infer = i;
        }
    }
    if (constant) {
        std::vector<int64_t> shape;
        for (const auto& d : dims) shape.push_back(*as_const_int(d));
        std::vector<int64_t> in = ctx.static_shape(x, "the input");
        int64_t total = 1, known = 1;
        for (int64_t d : in) total *= d;
        for (int64_t d : shape) {
            if (d >= 0 && __builtin_mul_overflow(known, d, &known)) {
                ctx.error() << "the shape " << ints_str(shape) << " overflows 64 bits";
            }
        }
        if (infer) {
            if (known == 0 || total % known != 0) {
                ctx.error() << "shape " << ints_str(shape) << " is invalid for an input of "
                            << total << " elements";
            }
            shape[*infer] = total / known;
        } else if (known != total) {
            ctx.error() << "shape " << ints_str(shape) << " is invalid for an input of " << total
                        << " elements";
        }
        if (shape == in) return x;
        return reshape_to(ctx, x, shape);
    }
    // Symbolic sizes: resolve the -1 where the quotient is provably exact.
    std::vector<PrimExpr> total = dims_of(ctx, x);
    std::vector<PrimExpr> known;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (!infer || i != *infer) known.push_back(dims[i]);
    }
    bool provable = false;
    if (auto q = exact_quotient(total, known)) {
        if (infer) {
            dims[*infer] = *q;
            provable = true;
        } else {
            provable = is_one(*q);
        }
    }
    if (!provable && !infer) {
        provable = provably_equal(ops::shape_product(total), ops::shape_product(known));
    }
    if (!provable) return reshape_to_values(ctx, x, {}, {}, std::move(dims));
    if (dims.size() == total.size() &&
        std::equal(dims.begin(), dims.end(), total.begin(),
                   [](const auto& a, const auto& b) { return provably_equal(a, b); })) {
        return x;
    }
    auto [attrs, a] = new_attrs<ops::ReshapeAttrs>();
    a->dims = dims;
    a->allowzero = true;
    return ctx.call("reshape", {x}, attrs);
}

Expr view_sizes(const PtContext& ctx, const Expr& x, const Sizes& sizes) {
    if (sizes.bindings.empty()) return view_dims(ctx, x, sizes.dims);
    // The executor infers a -1 and checks the element count (dynamic_reshape).
    std::vector<PrimExpr> checks;
    for (const auto& b : sizes.bindings) checks.push_back(b.values[0] >= -1);
    return reshape_to_values(ctx, x, sizes.bindings, std::move(checks), sizes.dims);
}

Expr slice_axis(const PtContext& ctx, const Expr& x, int64_t axis, std::optional<PrimExpr> begin,
                std::optional<PrimExpr> end, const PrimExpr& step) {
    PrimExpr s = simplify(step);
    const int64_t* step_value = as_const_int(s);
    if (!step_value) ctx.error() << "the slice step " << s << " must be known at import time";
    if (*step_value <= 0) ctx.error() << "slice step must be positive, got " << *step_value;
    if (begin) begin = simplify(*begin);
    if (end) end = simplify(*end);
    PrimExpr n = dims_of(ctx, x)[static_cast<size_t>(axis)];
    bool whole_begin = !begin || is_zero(*begin);
    bool whole_end = !end || provably_equal(*end, n);
    if (const int64_t* e = end ? as_const_int(*end) : nullptr) {
        const int64_t* d = as_const_int(n);
        whole_end = whole_end || (d && *e >= *d);
    }
    if (whole_begin && whole_end && *step_value == 1) return x;
    auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
    const int64_t* b = begin ? as_const_int(*begin) : nullptr;
    const int64_t* e = end ? as_const_int(*end) : nullptr;
    if (as_const_int(n) && (!begin || b) && (!end || e)) {
        a->begin = {b ? *b : 0};
        a->end = {e ? *e : INT64_MAX};
        a->strides = {*step_value};
        a->axes = {axis};
    } else {
        // The executor resolves the bounds against the run-time size.
        a->dynamic_begin = {begin ? *begin : i64(0)};
        a->dynamic_end = {end ? *end : n};
        a->dynamic_strides = {s};
        a->dynamic_axes = {i64(axis)};
    }
    return ctx.call("strided_slice", {x}, attrs);
}

Expr select_axis(const PtContext& ctx, const Expr& x, int64_t axis, const PrimExpr& index) {
    PrimExpr i = simplify(cast(DataType::int64(), index));
    PrimExpr n = dims_of(ctx, x)[static_cast<size_t>(axis)];
    const int64_t* c = as_const_int(i);
    const int64_t* size = as_const_int(n);
    if (c && size) {
        if (*c < -*size || *c >= *size) {
            ctx.error() << "index " << *c << " is out of range for dimension " << axis
                        << " of size " << *size;
        }
        int64_t at = *c < 0 ? *c + *size : *c;
        Expr one = slice_axis(ctx, x, axis, i64(at), i64(at + 1), i64(1));
        auto [attrs, a] = new_attrs<ops::SqueezeAttrs>();
        a->axes = {axis};
        return ctx.call("squeeze", {one}, attrs);
    }
    // A symbolic size or index: take reads the (run-time) position; it counts a negative index
    // from the end.
    Expr position = c ? ctx.constant_int64({*c}, {})
                      : ops::make_shape_tensor({i}, {}, DataType::int64(), ctx.loc());
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = axis;
    return ctx.call("take", {x, position}, attrs);
}

Expr concat(const PtContext& ctx, std::vector<Expr> xs, int64_t axis) {
    if (xs.empty()) ctx.error() << "expects a non-empty list of tensors";
    // The type: the recorded one, else the highest category and width among the operands.
    std::optional<DataType> dtype;
    const TsType& out = ctx.output_type(0);
    if (out.kind == TsType::Tensor && !out.dtype.empty()) dtype = dtype_from_name(out.dtype);
    if (!dtype) {
        for (const auto& x : xs) {
            DataType t = ctx.tensor_type(x, "an operand").dtype;
            if (!dtype || category(t) > category(*dtype) ||
                (category(t) == category(*dtype) && t.bits() > dtype->bits())) {
                dtype = t;
            }
        }
    }
    // PyTorch skips 1-D empty tensors beside tensors of other ranks (legacy torch.cat).
    std::vector<Expr> parts;
    for (const auto& x : xs) {
        const auto& t = ctx.tensor_type(x, "an operand");
        bool legacy_empty = t.ndim() == 1 && is_zero(t.shape[0]);
        if (!legacy_empty || xs.size() == 1) parts.push_back(cast_to(ctx, x, *dtype));
    }
    if (parts.empty()) parts.push_back(cast_to(ctx, xs[0], *dtype));
    if (parts.size() == 1) return parts[0];
    auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
    a->axis = axis;
    return ctx.call("concatenate", parts, attrs);
}

Expr broadcast_dims(const PtContext& ctx, const Expr& x, const std::vector<PrimExpr>& dims) {
    std::vector<int64_t> shape;
    for (const auto& d : dims) {
        const std::optional<int64_t> v = known_int(d);
        if (!v) break;
        shape.push_back(*v);
    }
    if (shape.size() == dims.size()) {
        const auto& t = ctx.tensor_type(x, "the input");
        if (t.is_static() && t.static_shape() == shape) return x;
        auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
        a->shape = shape;
        return ctx.call("broadcast_to", {x}, attrs);
    }
    // Symbolic sizes: when x's dimensions are 1 or provably the target's, and the target's sizes
    // are sizes of tensors (dimension variables, never negative), there is nothing to check.
    std::vector<PrimExpr> xd = dims_of(ctx, x);
    bool plain = dims.size() >= xd.size();
    for (size_t i = 0; plain && i < dims.size(); ++i) {
        PrimExpr d = simplify(dims[i]);
        const int64_t* v = as_const_int(d);
        plain = (v && *v >= 0) || d.as<Var>();
        size_t offset = dims.size() - xd.size();
        if (plain && i >= offset)
            plain = is_one(xd[i - offset]) || provably_equal(xd[i - offset], d);
    }
    if (plain) {
        auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
        for (const auto& d : dims) a->dims.push_back(simplify(d));
        return ctx.call("broadcast_to", {x}, attrs);
    }
    ShapeValues target;
    for (const auto& d : dims) target.values.push_back(simplify(d));
    return broadcast_to_values(ctx, x, target);
}

DataType creation_dtype(const PtContext& ctx, size_t i, DataType fallback) {
    if (auto t = ctx.dtype_arg(i)) return *t;
    if (!ctx.node().outputs.empty()) {
        const TsType& out = ctx.output_type(0);
        if (out.kind == TsType::Tensor && !out.dtype.empty()) {
            if (auto t = dtype_from_name(out.dtype)) return *t;
        }
    }
    return fallback;
}

Expr filled(const PtContext& ctx, const std::vector<PrimExpr>& dims, const PtValue& v,
            DataType dtype) {
    Expr value;
    PrimExpr s = v.is_import_time() ? simplify(v.scalar) : PrimExpr();
    if (s.defined() && as_const_int(s)) {
        value = scalar_constant(ctx, dtype, static_cast<double>(*as_const_int(s)));
    } else if (s.defined() && s.as<FloatImm>()) {
        value = scalar_constant(ctx, dtype, s.as<FloatImm>()->value);
    } else if (s.defined()) {
        // A symbolic size: the executor makes its value.
        value = cast_to(
            ctx,
            ops::make_shape_tensor({cast(DataType::int64(), s)}, {}, DataType::int64(), ctx.loc()),
            dtype);
    } else if (v.tensor.defined()) {
        value = v.tensor;
        const auto& t = ctx.tensor_type(value, "the fill value");
        if (t.ndim() != 0) {
            if (!t.is_static() || t.num_elements() != 1) {
                ctx.error() << "the fill value must be a number or a one-element tensor, got "
                            << graph::type_str(value->type);
            }
            value = reshape_to(ctx, value, {});
        }
        value = cast_to(ctx, value, dtype);
    } else {
        ctx.error() << "the fill value must be a number or a tensor, got " << kind_name(v.kind);
    }
    return broadcast_dims(ctx, value, dims);
}

Expr filled_sizes(const PtContext& ctx, const Sizes& sizes, const PtValue& value, DataType dtype) {
    if (sizes.bindings.empty()) return filled(ctx, sizes.dims, value, dtype);
    // The value is bound first, so that the broadcast's sizes are known when it runs.
    PtValue bound = PtValue::of_tensor(filled(ctx, std::vector<PrimExpr>{}, value, dtype));
    std::vector<PrimExpr> checks;
    for (const auto& b : sizes.bindings) checks.push_back(b.values[0] >= 0);
    bound.tensor = bind_all_shape_values(ctx, bound.tensor, sizes.bindings, std::move(checks));
    auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
    a->dims = sizes.dims;
    return ctx.call("broadcast_to", {bound.tensor}, attrs);
}

}  // namespace anvil::frontend::pytorch
