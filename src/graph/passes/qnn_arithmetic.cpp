#include "graph/passes/qnn_arithmetic.h"

#include <algorithm>
#include <cmath>

#include "graph/constant_values.h"
#include "graph/passes/graph_rewrite.h"
#include "ops/elementwise.h"
#include "ops/qnn.h"
#include "ops/transform.h"

namespace anvil::graph {

const TensorType& QnnArithmetic::tensor_of(const Expr& e) {
    return *e->type.as<TensorType>();
}

int64_t QnnArithmetic::rank_of(const Expr& e) {
    return static_cast<int64_t>(tensor_of(e).ndim());
}

std::pair<double, double> QnnArithmetic::float_range_of(DataType t) {
    auto [lo, hi] = ops::quantized_range(t);
    return {lo, t == DataType::int32() ? 2147483520.0 : hi};
}

Expr QnnArithmetic::call(const std::string& op, std::vector<Expr> args, Ref<Attrs> attrs) {
    return make_call(*find_op(op), std::move(args), std::move(attrs), loc_);
}

Expr QnnArithmetic::cast(const Expr& x, DataType t) {
    if (tensor_of(x).dtype == t) return x;
    auto attrs = make_ref<ops::CastAttrs>();
    const_cast<ops::CastAttrs*>(attrs.get())->dtype = t;
    return call("cast", {x}, attrs);
}

Expr QnnArithmetic::clip(const Expr& x, double lo, double hi) {
    return make_clip(x, lo, hi, loc_);
}

Expr QnnArithmetic::reshape(const Expr& x, std::vector<int64_t> shape) {
    auto attrs = make_ref<ops::ReshapeAttrs>();
    const_cast<ops::ReshapeAttrs*>(attrs.get())->newshape = std::move(shape);
    return call("reshape", {x}, attrs);
}

Expr QnnArithmetic::along(const Expr& p, int64_t rank, int64_t axis) {
    const TensorType& t = tensor_of(p);
    if (t.ndim() == 0) return p;
    int64_t n = t.static_shape()[0];
    if (n == 1) return reshape(p, {});
    if (axis < 0) axis += rank;
    std::vector<int64_t> shape(static_cast<size_t>(rank - axis), 1);
    shape[0] = n;
    return reshape(p, shape);
}

Expr QnnArithmetic::minus_zero_point(const Expr& x, const Expr& zp, int64_t axis) {
    if (uniform_value(zp) == 0.0) return x;
    return call("subtract", {x, cast(along(zp, rank_of(x), axis), tensor_of(x).dtype)});
}

Expr QnnArithmetic::saturate(const Expr& x, DataType t) {
    auto [lo, hi] = ops::quantized_range(t);
    if (t == DataType::int32() && tensor_of(x).dtype == DataType::int32()) return x;
    return cast(clip(x, lo, hi), t);
}

std::vector<double> QnnArithmetic::scale_values(const Expr& scale, const char* what) {
    auto values = constant_values(scale);
    if (!values) {
        user_error(loc_) << op_name_ << ": the " << what
                         << " must be a constant (a compile-time value) to become a "
                            "fixed-point multiplier";
    }
    return *values;
}

Expr QnnArithmetic::quantize_float(const Expr& x_any, const Expr& scale, const Expr& zp,
                                   int64_t axis, DataType out_dtype) {
    Expr x = cast(x_any, DataType::float32());
    int64_t rank = rank_of(x);
    Expr q = call("round", {call("divide", {x, along(scale, rank, axis)})});
    if (uniform_value(zp) != 0.0) {
        q = call("add", {q, cast(along(zp, rank, axis), DataType::float32())});
    }
    auto [lo, hi] = float_range_of(out_dtype);
    return cast(clip(q, lo, hi), out_dtype);
}

Expr QnnArithmetic::dequantize(const Expr& q, const Expr& scale, const Expr& zp, int64_t axis) {
    Expr v = minus_zero_point(cast(q, DataType::int32()), zp, axis);
    return call("multiply", {cast(v, DataType::float32()), along(scale, rank_of(q), axis)});
}

Expr QnnArithmetic::requantize(const Expr& q, const Expr& in_scale, const Expr& in_zp,
                               const Expr& out_scale, const Expr& out_zp, int64_t axis,
                               const std::string& rounding, DataType out_dtype,
                               const std::string& compute_dtype) {
    std::vector<double> s = scale_values(in_scale, "input scale");
    if (compute_dtype == "int64") {
        return requantize_from(q, s, in_zp, out_scale, out_zp, axis, rounding, out_dtype);
    }
    DataType ft = compute_dtype == "float32" ? DataType::float32() : DataType::float64();
    double out_s = scale_values(out_scale, "output scale")[0];
    for (double& v : s) {
        v = ft.bits() == 32 ? double(float(v) / float(out_s)) : v / out_s;
        if (!(v > 0) || !std::isfinite(v)) {
            user_error(loc_) << op_name_ << ": the scale ratio " << v << " (input scale / "
                             << "output scale) must be positive and finite";
        }
    }
    Expr x = cast(minus_zero_point(cast(q, DataType::int32()), in_zp, axis), ft);
    return scaled_in_float(x, s, axis, /*half_up=*/false, out_zp, out_dtype);
}

Expr QnnArithmetic::scaled_in_float(const Expr& x, const std::vector<double>& ratios, int64_t axis,
                                    bool half_up, const Expr& out_zp, DataType out_dtype) {
    const DataType ft = tensor_of(x).dtype;
    Expr ratio =
        along(make_constant_of({int64_t(ratios.size())}, ft, ratios, loc_), rank_of(x), axis);
    Expr y = call("multiply", {x, ratio});
    y = half_up ? call("floor", {call("add", {y, make_constant_of({}, ft, {0.5}, loc_)})})
                : call("round", {y});
    if (uniform_value(out_zp) != 0.0) y = call("add", {y, cast(out_zp, ft)});
    // float64 holds int32's bounds, float32 not its largest (float_range_of).
    auto [lo, hi] =
        ft == DataType::float64() ? ops::quantized_range(out_dtype) : float_range_of(out_dtype);
    return cast(clip(y, lo, hi), out_dtype);
}

Expr QnnArithmetic::requantize_from(const Expr& q, const std::vector<double>& in_s,
                                    const Expr& in_zp, const Expr& out_scale, const Expr& out_zp,
                                    int64_t axis, const std::string& rounding, DataType out_dtype) {
    double out_s = scale_values(out_scale, "output scale")[0];
    std::vector<double> ratios;
    for (double v : in_s) ratios.push_back(v / out_s);
    Expr x = minus_zero_point(cast(q, DataType::int32()), in_zp, axis);
    Expr y = scale_by(x, ratios, axis, rounding);
    if (uniform_value(out_zp) != 0.0) y = call("add", {y, along(out_zp, rank_of(y), -1)});
    return saturate(y, out_dtype);
}

Expr QnnArithmetic::scale_by(const Expr& x, const std::vector<double>& ratios, int64_t axis,
                             const std::string& rounding) {
    std::vector<double> m, s;
    for (double r : ratios) {
        ops::FixedPoint f = ops::fixed_point_of(r, op_name_ + ": a scale ratio", loc_);
        m.push_back(f.multiplier);
        s.push_back(f.shift);
    }
    bool uniform = std::all_of(m.begin(), m.end(), [&](double v) { return v == m[0]; }) &&
                   std::all_of(s.begin(), s.end(), [&](double v) { return v == s[0]; });
    auto params = [&](const std::vector<double>& v) {
        if (uniform) return make_constant_of({}, DataType::int32(), {v[0]}, loc_);
        return along(make_constant_of({int64_t(v.size())}, DataType::int32(), v, loc_), rank_of(x),
                     axis);
    };
    return call(
        "fixed_point_multiply", {x, params(m), params(s)},
        ops::fixed_point_multiply_attrs(rounding, std::vector<int32_t>(s.begin(), s.end())));
}

}  // namespace anvil::graph
