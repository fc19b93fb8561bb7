// Converters of ONNX's constant and shape ops: Constant, Shape, Size, ConstantOfShape, Range.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "frontend/onnx/convert_ops.h"
#include "ir/analyzer.h"
#include "ops/shape_tensor.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

Exprs convert_constant(ConvertContext& ctx) {
    if (ctx.has_attr("value")) return {ctx.constant(ctx.attr_tensor("value"))};
    if (ctx.has_attr("value_float")) {
        return {ctx.constant_scalar(DataType::float32(), ctx.attr_float("value_float", 0))};
    }
    if (ctx.has_attr("value_int")) {
        return {ctx.constant_scalar(DataType::int64(), double(ctx.attr_int("value_int", 0)))};
    }
    if (ctx.has_attr("value_ints")) {
        std::vector<int64_t> v = ctx.attr_ints("value_ints");
        return {ctx.constant_int64(v, {static_cast<int64_t>(v.size())})};
    }
    if (ctx.has_attr("value_floats")) {
        std::vector<float> v = ctx.attr_floats("value_floats");
        runtime::NDArray a = runtime::NDArray::empty({static_cast<int64_t>(v.size())},
                                                     graph::dl_dtype_of(DataType::float32()));
        a.copy_from(v);
        return {ctx.constant(a)};
    }
    for (const char* name : {"sparse_value", "value_string", "value_strings"}) {
        if (ctx.has_attr(name))
            ctx.error() << "a Constant given by " << name << " is not supported";
    }
    ctx.error() << "the Constant has no value attribute";
    ANVIL_UNREACHABLE();
}

// Shape: a constant for a static tensor; with symbolic dimensions a shape_tensor, which shape
// arithmetic carries on symbolically (opset 15's start/end select a range of dimensions).
Exprs convert_shape(ConvertContext& ctx) {
    const std::vector<PrimExpr>& shape = ctx.tensor_type(ctx.input(0), "the input").shape;
    auto rank = static_cast<int64_t>(shape.size());
    int64_t start = ctx.attr_int("start", 0), end = ctx.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    std::vector<PrimExpr> dims(shape.begin() + start, shape.begin() + end);
    std::vector<int64_t> values;
    for (const auto& d : dims) {
        if (const int64_t* v = as_const_int(d)) values.push_back(*v);
    }
    if (values.size() == dims.size()) {
        return {ctx.constant_int64(values, {static_cast<int64_t>(values.size())})};
    }
    auto count = static_cast<int64_t>(dims.size());
    // After the input: its dimensions may be bound only when it is computed.
    return {ops::make_shape_tensor(std::move(dims), {count}, DataType::int64(), ctx.loc(),
                                   {ctx.input(0)})};
}

// Size: a constant, or with symbolic dimensions a 0-D shape_tensor of their product.
Exprs convert_size(ConvertContext& ctx) {
    PrimExpr n = make_int(DataType::int64(), 1);
    for (const auto& d : ctx.tensor_type(ctx.input(0), "the input").shape) n = n * d;
    n = simplify(n);
    if (const int64_t* v = as_const_int(n)) return {ctx.constant_int64({*v}, {})};
    return {ops::make_shape_tensor({n}, {}, DataType::int64(), ctx.loc(), {ctx.input(0)})};
}

// Integer fills are folded as shape arithmetic; this makes the floating-point ones.
Exprs convert_constant_of_shape(ConvertContext& ctx) {
    ShapeValues target = shape_values(ctx, ctx.input(0), "the shape");
    runtime::NDArray value;
    if (ctx.has_attr("value")) {
        value = ctx.attr_tensor("value");
        if (value.num_elements() != 1) ctx.error() << "the value must have one element";
    } else {
        value = runtime::NDArray::empty({1}, graph::dl_dtype_of(DataType::float32()));
        value.copy_from(std::vector<float>{0.0f});
    }
    if (!target.all_constant) {
        // A shape known only at run time (or symbolic): the value broadcast to it.
        runtime::NDArray scalar = runtime::NDArray::empty({}, value.dtype());
        scalar.copy_from(value.raw_data(), value.nbytes());
        return {broadcast_to_values(ctx, ctx.constant(scalar), target)};
    }
    const std::vector<int64_t>& shape = target.constants;
    check_shape(shape, graph::dtype_of(value.dtype()), ctx.loc(), "the result");
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    // A big fill is a broadcast of the value, not a constant of that size in the model (and
    // in the compiler's memory while it imports).
    constexpr int64_t kMaxFilled = int64_t{1} << 24;
    if (count > kMaxFilled) {
        runtime::NDArray scalar = runtime::NDArray::empty({}, value.dtype());
        scalar.copy_from(value.raw_data(), value.nbytes());
        auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
        a->shape = shape;
        return {ctx.call("broadcast_to", {ctx.constant(scalar)}, attrs)};
    }
    runtime::NDArray out = runtime::NDArray::empty(shape, value.dtype());
    auto bytes = static_cast<size_t>(runtime::dl_dtype_bytes(value.dtype()));
    auto* dst = static_cast<uint8_t*>(out.raw_data());
    for (int64_t i = 0; i < out.num_elements(); ++i) {
        std::memcpy(dst + i * bytes, value.raw_data(), bytes);
    }
    return {ctx.constant(out)};
}

// Integer ranges with bounds known only at run time: the executor binds the bounds, the length
// max(ceil((limit - start) / delta), 0) is a dimension, and arange computes the values.
Exprs runtime_int_range(ConvertContext& ctx) {
    std::vector<ShapeValues> bounds;
    for (size_t i = 0; i < 3; ++i) {
        const char* what[] = {"the start", "the limit", "the delta"};
        bounds.push_back(shape_values(ctx, ctx.input(i), what[i]));
        if (bounds.back().values.size() != 1) ctx.error() << what[i] << " must be one value";
    }
    PrimExpr start = bounds[0].values[0], limit = bounds[1].values[0], delta = bounds[2].values[0];
    PrimExpr zero = make_int(DataType::int64(), 0);
    // ceil(a / b) == -floor(-a / b), for either sign of b.
    PrimExpr length = max(zero - floordiv(start - limit, delta), zero);
    Expr start_tensor = ctx.input(0);
    for (size_t i = 0; i < 3; ++i) {
        std::vector<PrimExpr> checks;
        if (i == 2) checks.push_back(ne(delta, zero));
        start_tensor = bind_shape_values(ctx, start_tensor, bounds[i], checks);
    }
    auto attrs = make_ref<ops::ArangeAttrs>();
    const_cast<ops::ArangeAttrs*>(attrs.get())->length = {length};
    return {ctx.call("arange", {start_tensor, ctx.input(2)}, attrs)};
}

// A floating-point Range of run-time bounds: its length max(ceil((limit - start) / delta), 0),
// computed in the bounds' type by a kernel, is bound by the executor; arange makes the values.
Exprs runtime_float_range(ConvertContext& ctx) {
    Expr start = ctx.input(0), limit = ctx.input(1), delta = ctx.input(2);
    DataType dt = ctx.tensor_type(start, "the start").dtype;
    if (!dt.is_floating()) ctx.error() << "a range of " << dt.str() << " is not supported";
    for (const auto& e : {start, limit, delta}) {
        if (ctx.tensor_type(e, "a bound").num_elements() != 1) {
            ctx.error() << "start, limit and delta must be one value each";
        }
    }
    Expr steps =
        ctx.call("ceil", {ctx.call("divide", {ctx.call("subtract", {limit, start}), delta})});
    Expr length =
        cast_to(ctx, ctx.call("maximum", {steps, ctx.constant_scalar(dt, 0.0)}), DataType::int64());
    ShapeValues n = shape_values(ctx, length, "the length");
    auto attrs = make_ref<ops::ArangeAttrs>();
    const_cast<ops::ArangeAttrs*>(attrs.get())->length = n.values;
    return {ctx.call("arange", {bind_shape_values(ctx, start, n, {}), delta}, attrs)};
}

// Integer ranges of constants are folded as shape arithmetic, of run-time bounds computed by
// arange; this makes floating-point ones from constant bounds.
Exprs convert_range(ConvertContext& ctx) {
    DataType type = ctx.tensor_type(ctx.input(0), "the start").dtype;
    bool constant = true;
    for (size_t i = 0; i < 3; ++i) constant &= constant_data(ctx.input(i)).defined();
    if (!constant && type.is_integer()) return runtime_int_range(ctx);
    if (!constant) return runtime_float_range(ctx);
    double start = ctx.const_scalar(ctx.input(0), "the start");
    double limit = ctx.const_scalar(ctx.input(1), "the limit");
    double delta = ctx.const_scalar(ctx.input(2), "the delta");
    if (delta == 0) ctx.error() << "delta is 0";
    auto n = static_cast<int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
    DataType dt = ctx.tensor_type(ctx.input(0), "the start").dtype;
    if (dt != DataType::float32() && dt != DataType::float64()) {
        ctx.error() << "a range of " << dt.str() << " is not supported";
    }
    runtime::NDArray out = runtime::NDArray::empty({n}, graph::dl_dtype_of(dt));
    for (int64_t i = 0; i < n; ++i) {
        double v = start + static_cast<double>(i) * delta;
        if (dt == DataType::float32()) {
            out.data<float>()[i] = static_cast<float>(v);
        } else {
            out.data<double>()[i] = v;
        }
    }
    return {ctx.constant(out)};
}

// OneHot: `values` [off, on] where the (negative: counted from depth) index equals the position
// along the new axis, off elsewhere and for indices out of range. Depth may be known only at run
// time (the executor binds it); the result is one fused elementwise kernel over a range.
Exprs convert_one_hot(ConvertContext& ctx) {
    Expr indices = ctx.input(0), depth = ctx.input(1), values = ctx.input(2);
    int64_t rank = ctx.rank(indices) + 1;
    int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), rank, "axis");
    const auto& vt = ctx.tensor_type(values, "the values");
    if (vt.ndim() != 1 || !vt.is_static() || vt.num_elements() != 2) {
        ctx.error() << "the values must be [off_value, on_value], got "
                    << graph::type_str(values->type);
    }
    DataType i64 = DataType::int64();
    Expr depth64;
    if (constant_data(depth).defined()) {  // ONNX rounds a fractional depth down
        auto v = static_cast<int64_t>(std::floor(ctx.const_scalar(depth, "the depth")));
        depth64 = ctx.constant_int64({v}, {});
    } else if (ctx.tensor_type(depth, "the depth").dtype.is_integer()) {
        depth64 = cast_to(ctx, depth, i64);
    } else {
        depth64 = cast_to(ctx, ctx.call("floor", {depth}), i64);
    }
    ShapeValues d = shape_values(ctx, depth64, "the depth");
    if (d.values.size() != 1) ctx.error() << "the depth must be one value";
    Expr zero = ctx.constant_scalar(i64, 0);
    Expr positions = iota(ctx, d.values[0], bind_shape_values(ctx, zero, d, {d.values[0] > 0}));
    // [depth, 1, ..., 1] so that it broadcasts along `axis` of the result.
    std::vector<PrimExpr> shape = {d.values[0]};
    for (int64_t k = axis + 1; k < rank; ++k) shape.push_back(make_int(i64, 1));
    auto reshape = make_ref<ops::ReshapeAttrs>();
    const_cast<ops::ReshapeAttrs*>(reshape.get())->dims = shape;
    const_cast<ops::ReshapeAttrs*>(reshape.get())->allowzero = true;
    positions = ctx.call("reshape", {positions}, reshape);
    Expr index = cast_to(ctx, indices, i64);
    Expr depth_tensor = reshape_to(ctx, depth64, {});
    index = ctx.call(
        "where", {ctx.call("less", {index, zero}), ctx.call("add", {index, depth_tensor}), index});
    Expr hot = ctx.call("equal", {expand_dims(ctx, index, axis), positions});
    auto pick = [&](int64_t k) {
        auto a = make_ref<ops::StridedSliceAttrs>();
        const_cast<ops::StridedSliceAttrs*>(a.get())->begin = {k};
        const_cast<ops::StridedSliceAttrs*>(a.get())->end = {k + 1};
        return reshape_to(ctx, ctx.call("strided_slice", {values}, a), {});
    };
    return {ctx.call("where", {hot, pick(1), pick(0)})};
}

// EyeLike: ones on the k-th diagonal of a 2-D tensor shaped like the input; a constant.
Exprs convert_eye_like(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    if (shape.size() != 2) ctx.error() << "the input must be 2-D, got rank " << shape.size();
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (ctx.has_attr("dtype")) {
        auto onnx_type = static_cast<int>(ctx.attr_int("dtype", 0));
        std::optional<DataType> t = dtype_from_onnx(onnx_type);
        if (!t) ctx.error() << "dtype " << onnx_dtype_name(onnx_type) << " is not supported";
        dt = *t;
    }
    int64_t k = ctx.attr_int("k", 0);
    std::vector<int64_t> values(static_cast<size_t>(shape[0] * shape[1]), 0);
    for (int64_t i = 0; i < shape[0]; ++i) {
        int64_t j = i + k;
        if (j >= 0 && j < shape[1]) values[static_cast<size_t>(i * shape[1] + j)] = 1;
    }
    return {cast_to(ctx, ctx.constant_int64(values, shape), dt)};
}

}  // namespace anvil::frontend
