// Size operands in their three forms (shape_values.h); the graph calls that use them.
#include "frontend/shape_values.h"

#include <algorithm>
#include <climits>

#include "frontend/composite_ops.h"
#include "ir/analyzer.h"
#include "ir/polynomial.h"
#include "ops/shape_tensor.h"
#include "ops/transform.h"
#include "ops/value_shapes.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}

// options[index] for an index known only at run time (`fallback` when out of range).
PrimExpr pick(const std::vector<PrimExpr>& options, const PrimExpr& index, PrimExpr fallback) {
    for (size_t m = options.size(); m-- > 0;) {
        fallback = select(eq(index, i64(static_cast<int64_t>(m))), options[m], fallback);
    }
    return fallback;
}

// Whether one of `axes` is `position`.
PrimExpr any_equal(const std::vector<PrimExpr>& axes, int64_t position) {
    PrimExpr any;
    for (const auto& a : axes)
        any = any.defined() ? any || eq(a, i64(position)) : eq(a, i64(position));
    return any.defined() ? any : make_bool(false);
}

// The number of `axes` below `position`.
PrimExpr count_below(const std::vector<PrimExpr>& axes, int64_t position) {
    PrimExpr n = i64(0);
    for (const auto& a : axes) n = n + cast(DataType::int64(), a < i64(position));
    return n;
}

}  // namespace

ShapeValues shape_values(const NodeBuilder& ctx, const Expr& t, const std::string& what) {
    ShapeValues out;
    if (constant_data(t).defined()) {
        out.constants = ctx.const_ints(t, what);
        for (int64_t v : out.constants) out.values.push_back(make_int(DataType::int64(), v));
        out.all_constant = true;
        return out;
    }
    if (const auto* st = ops::shape_tensor_attrs(t)) {
        out.values = st->values;
        return out;
    }
    std::vector<int64_t> shape = ctx.static_shape(t, what);
    int64_t count = 1;
    for (int64_t d : shape) {
        if (__builtin_mul_overflow(count, d, &count)) count = INT64_MAX;  // new_dims refuses it
    }
    out.values = ctx.new_dims(static_cast<size_t>(count));
    out.bound_from = t;
    return out;
}

Expr bind_shape_values(const NodeBuilder& ctx, Expr x, const ShapeValues& v,
                       std::vector<PrimExpr> checks) {
    if (!v.bound_from.defined() && checks.empty()) return x;
    std::vector<Expr> tensors;
    std::vector<PrimExpr> vars;
    if (v.bound_from.defined()) {
        tensors.push_back(v.bound_from);
        vars = v.values;
    }
    return ctx.bind_values(std::move(x), tensors, std::move(vars), std::move(checks));
}

Expr bind_all_shape_values(const NodeBuilder& ctx, Expr x, const std::vector<ShapeValues>& values,
                           std::vector<PrimExpr> checks) {
    std::vector<Expr> tensors;
    std::vector<PrimExpr> vars;
    for (const auto& v : values) {
        if (!v.bound_from.defined()) continue;
        tensors.push_back(v.bound_from);
        vars.insert(vars.end(), v.values.begin(), v.values.end());
    }
    if (tensors.empty() && checks.empty()) return x;
    return ctx.bind_values(std::move(x), tensors, std::move(vars), std::move(checks));
}

// The VM compiles a call's arguments in order, so the shape_tensor (argument 1) may use the
// variables the binding of argument 0 binds.
Expr reshape_to_values(const NodeBuilder& ctx, const Expr& x,
                       const std::vector<ShapeValues>& values, std::vector<PrimExpr> checks,
                       std::vector<PrimExpr> dims) {
    Expr bound = bind_all_shape_values(ctx, x, values, std::move(checks));
    int64_t n = static_cast<int64_t>(dims.size());
    for (auto& d : dims) d = simplify(d);
    Expr shape =
        ops::make_shape_tensor(std::move(dims), {n}, DataType::int64(), ctx.loc(), {bound});
    auto [attrs, a] = new_attrs<ops::DynamicReshapeAttrs>();
    a->dims = ctx.new_dims(static_cast<size_t>(n));
    a->allowzero = true;
    return ctx.call("dynamic_reshape", {bound, shape}, attrs);
}

Expr squeeze_values(const NodeBuilder& ctx, const Expr& x, const ShapeValues& v) {
    const auto& shape = ctx.tensor_type(x, "the input").shape;
    int64_t r = static_cast<int64_t>(shape.size());
    std::vector<PrimExpr> checks;
    std::vector<PrimExpr> axes = normalized_axes(v.values, r, &checks);
    if (static_cast<int64_t>(axes.size()) > r) {
        ctx.error() << axes.size() << " axes to squeeze from a rank-" << r << " input";
    }
    std::vector<PrimExpr> dims(r - static_cast<int64_t>(axes.size()), i64(1));
    for (int64_t m = 0; m < r; ++m) {
        PrimExpr squeezed = any_equal(axes, m);
        PrimExpr dim = cast(DataType::int64(), shape[m]);
        checks.push_back(!squeezed || eq(dim, i64(1)));
        // Kept axis m is output axis m - (squeezed axes below m).
        PrimExpr position = i64(m) - count_below(axes, m);
        for (size_t j = 0; j < dims.size(); ++j) {
            dims[j] = select(!squeezed && eq(position, i64(static_cast<int64_t>(j))), dim, dims[j]);
        }
    }
    return reshape_to_values(ctx, x, {v}, std::move(checks), std::move(dims));
}

Expr unsqueeze_values(const NodeBuilder& ctx, const Expr& x, const ShapeValues& v) {
    const auto& shape = ctx.tensor_type(x, "the input").shape;
    int64_t out_rank = static_cast<int64_t>(shape.size() + v.values.size());
    std::vector<PrimExpr> checks;
    std::vector<PrimExpr> axes = normalized_axes(v.values, out_rank, &checks);
    std::vector<PrimExpr> in_dims;
    for (const auto& d : shape) in_dims.push_back(cast(DataType::int64(), d));
    std::vector<PrimExpr> dims;
    for (int64_t j = 0; j < out_rank; ++j) {
        PrimExpr inserted = any_equal(axes, j);
        // Output axis j, when not inserted, is input axis j - (inserted axes below j).
        dims.push_back(
            select(inserted, i64(1), pick(in_dims, i64(j) - count_below(axes, j), i64(1))));
    }
    return reshape_to_values(ctx, x, {v}, std::move(checks), std::move(dims));
}

Expr broadcast_to_values(const NodeBuilder& ctx, Expr x, const ShapeValues& target) {
    const auto& xt = ctx.tensor_type(x, "the input");
    size_t k = target.values.size();
    size_t r = std::max(k, xt.ndim());
    auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
    std::vector<PrimExpr> checks;
    PrimExpr one = make_int(DataType::int64(), 1);
    for (size_t i = 0; i < r; ++i) {
        PrimExpr xd = i + xt.ndim() >= r ? xt.shape[i + xt.ndim() - r] : one;
        PrimExpr td = i + k >= r ? target.values[i + k - r] : one;
        if (is_one(xd)) {
            a->dims.push_back(td);
            checks.push_back(td >= make_int(DataType::int64(), 0));
        } else if (is_one(td) || provably_equal(xd, td)) {
            a->dims.push_back(xd);
        } else if (as_const_int(xd)) {
            a->dims.push_back(xd);
            checks.push_back(eq(td, one) || eq(td, xd));
        } else {
            ctx.error() << "not supported yet: expanding the symbolic dimension " << xd
                        << " to a size known only at run time";
        }
    }
    Expr bound = bind_shape_values(ctx, std::move(x), target, std::move(checks));
    return ctx.call("broadcast_to", {bound}, attrs);
}

std::vector<Expr> split_dynamic(const NodeBuilder& ctx, const Expr& x, int64_t axis,
                                const ShapeValues& sizes, int outputs) {
    if (static_cast<int>(sizes.values.size()) != outputs) {
        ctx.error() << "split has " << sizes.values.size() << " sizes for " << outputs
                    << " outputs";
    }
    std::vector<PrimExpr> checks;
    PrimExpr total = make_int(DataType::int64(), 0);
    for (const auto& size : sizes.values) {
        checks.push_back(size >= 0);
        total = total + size;
    }
    PrimExpr dim = cast(DataType::int64(), ctx.tensor_type(x, "the input").shape[axis]);
    checks.push_back(eq(total, dim));
    Expr bound = bind_shape_values(ctx, x, sizes, std::move(checks));
    std::vector<Expr> outs;
    PrimExpr begin = make_int(DataType::int64(), 0);
    for (const auto& size : sizes.values) {
        auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
        a->dynamic_begin = {begin};
        a->dynamic_end = {begin + size};
        a->dynamic_axes = {make_int(DataType::int64(), axis)};
        outs.push_back(ctx.call("strided_slice", {bound}, attrs));
        begin = begin + size;
    }
    return outs;
}

}  // namespace anvil::frontend
