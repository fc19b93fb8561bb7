#include "frontend/tflite/tflite_arithmetic.h"

#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/tflite/tflite_schema.h"
#include "graph/expr.h"
#include "ops/activation.h"
#include "ops/qnn.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

Expr clip(const TfContext& ctx, const Expr& x, double lo, double hi) {
    auto [attrs, a] = new_attrs<ops::ClipAttrs>();
    a->a_min = lo;
    a->a_max = hi;
    return ctx.call("clip", {x}, attrs);
}

// A constant of `shape` holding `values` as int32 or float32.
template <typename T>
Expr constant_of(const TfContext& ctx, const std::vector<int64_t>& shape,
                 const std::vector<T>& values) {
    DataType t = std::is_same_v<T, float>     ? DataType::float32()
                 : std::is_same_v<T, int64_t> ? DataType::int64()
                                              : DataType::int32();
    runtime::NDArray a = runtime::NDArray::empty(shape, graph::dl_dtype_of(t));
    a.copy_from(values);
    return ctx.constant(a);
}

std::vector<int64_t> along_shape(size_t n, int64_t rank, int64_t axis) {
    if (n == 1) return {};
    std::vector<int64_t> shape{int64_t(n)};
    for (int64_t d = axis + 1; d < rank; ++d) shape.push_back(1);
    return shape;
}

}  // namespace

Expr float_activation(const TfContext& ctx, Expr y, int8_t act) {
    switch (act) {
        case activation::kNone:
            return y;
        case activation::kRelu:
            return ctx.call("nn.relu", {y});
        case activation::kReluN1To1:
            return clip(ctx, y, -1.0, 1.0);
        case activation::kRelu6:
            return clip(ctx, y, 0.0, 6.0);
        case activation::kTanh:
            return ctx.call("tanh", {y});
        default:
            break;
    }
    ctx.error() << "the fused activation " << int(act) << " is not supported (NONE, RELU, "
                << "RELU_N1_TO_1, RELU6, TANH)";
    ANVIL_UNREACHABLE();
}

std::pair<int64_t, int64_t> quantized_activation_range(const TfContext& ctx, int8_t act,
                                                       const TfliteTensor& out, DataType t,
                                                       bool xnnpack_op) {
    auto [lo_d, hi_d] = ops::quantized_range(t);
    auto lo = int64_t(lo_d), hi = int64_t(hi_d);
    if (act == activation::kNone) return {lo, hi};
    Quantized q = per_tensor(ctx, out, "the result");
    const bool as_xnnpack = xnnpack_op && ctx.xnnpack_rounding() && t.bits() == 8;
    auto quantize = [&](float real) {
        const float scaled = real / float(q.scales[0]);
        if (as_xnnpack) return int64_t(std::lrint(scaled + float(q.zero_points[0])));
        return q.zero_points[0] + int64_t(std::round(scaled));
    };
    switch (act) {
        case activation::kRelu:
            return {std::max(lo, quantize(0.0f)), hi};
        case activation::kRelu6:
            return {std::max(lo, quantize(0.0f)), std::min(hi, quantize(6.0f))};
        case activation::kReluN1To1:
            return {std::max(lo, quantize(-1.0f)), std::min(hi, quantize(1.0f))};
        default:
            break;
    }
    ctx.error() << "the fused activation " << int(act) << " is not supported on quantized "
                << "results (NONE, RELU, RELU_N1_TO_1, RELU6)";
    ANVIL_UNREACHABLE();
}

Expr clamp_to(const TfContext& ctx, const Expr& x, int64_t lo, int64_t hi, DataType t) {
    return cast_to(ctx, clip(ctx, x, double(lo), double(hi)), t);
}

Expr multiply_by_ratio(const TfContext& ctx, const Expr& x, const std::vector<double>& ratios,
                       int64_t axis) {
    std::vector<int64_t> multipliers, shifts;
    for (double r : ratios) {
        ops::FixedPoint f = ops::fixed_point_of(r, "a scale ratio", ctx.loc());
        multipliers.push_back(f.multiplier);
        shifts.push_back(f.shift);
    }
    return multiply_by_fixed_point(ctx, x, std::move(multipliers), std::move(shifts), axis);
}

Expr multiply_by_fixed_point(const TfContext& ctx, const Expr& x, std::vector<int64_t> multipliers,
                             std::vector<int64_t> shifts, int64_t axis) {
    bool uniform =
        std::all_of(multipliers.begin(), multipliers.end(),
                    [&](int64_t m) { return m == multipliers[0]; }) &&
        std::all_of(shifts.begin(), shifts.end(), [&](int64_t s) { return s == shifts[0]; });
    if (uniform) {
        multipliers.resize(1);
        shifts.resize(1);
    }
    int64_t rank = ctx.rank(x);
    return ctx.call(
        "fixed_point_multiply",
        {x, int32_along(ctx, multipliers, rank, axis), int32_along(ctx, shifts, rank, axis)},
        ops::fixed_point_multiply_attrs("TFLITE",
                                        std::vector<int32_t>(shifts.begin(), shifts.end())));
}

Expr multiply_by_ratio_wide(const TfContext& ctx, const Expr& x, const std::vector<double>& ratios,
                            int64_t axis, bool whole_multiplier) {
    std::vector<int64_t> multipliers, rounds, shifts;
    for (double r : ratios) {
        ops::FixedPoint f = ops::fixed_point_of(r, "a scale ratio", ctx.loc());
        if (f.shift > 7) {
            ctx.error() << "the scale ratio " << r << " is too large for a 16-bit kernel's "
                        << "rescaling (at most 2^7)";
        }
        // The multiplier rounded to its top 16 bits (saturating), as TFLite's 64-bit form.
        int64_t reduced =
            f.multiplier < 0x7FFF0000 ? (int64_t(f.multiplier) + (1 << 15)) >> 16 : 0x7FFF;
        int64_t total_shift = (whole_multiplier ? 31 : 15) - f.shift;
        multipliers.push_back(whole_multiplier ? int64_t(f.multiplier) : reduced);
        rounds.push_back(int64_t{1} << (total_shift - 1));
        shifts.push_back(total_shift);
    }
    int64_t rank = ctx.rank(x);
    auto along = [&](const std::vector<int64_t>& v) {
        bool uniform = std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == v[0]; });
        std::vector<int64_t> values = uniform ? std::vector<int64_t>{v[0]} : v;
        return constant_of(ctx, along_shape(values.size(), rank, axis), values);
    };
    Expr wide = cast_to(ctx, x, DataType::int64());
    Expr y = ctx.call("add", {ctx.call("multiply", {wide, along(multipliers)}), along(rounds)});
    y = ctx.call("right_shift", {y, along(shifts)});
    return clamp_to(ctx, y, INT32_MIN, INT32_MAX, DataType::int32());
}

Expr requantize_integers(const TfContext& ctx, const Expr& x, const Quantized& in,
                         const Quantized& out, bool ratio_in_float) {
    Expr v = cast_to(ctx, x, DataType::int32());
    if (in.zero_points[0] != 0) v = ctx.call("subtract", {v, int32_scalar(ctx, in.zero_points[0])});
    const double ratio = ratio_in_float ? double(float(in.scales[0]) / float(out.scales[0]))
                                        : in.scales[0] / out.scales[0];
    Expr y = multiply_by_ratio(ctx, v, {ratio}, -1);
    if (out.zero_points[0] != 0) y = ctx.call("add", {y, int32_scalar(ctx, out.zero_points[0])});
    return y;
}

Expr float32_product(const TfContext& ctx, const Expr& a, const Expr& b) {
    Expr p = ctx.call("multiply",
                      {cast_to(ctx, a, DataType::float64()), cast_to(ctx, b, DataType::float64())});
    return cast_to(ctx, p, DataType::float32());
}

Expr round_half_away(const TfContext& ctx, const Expr& x) {
    // t = trunc(x) and x - t are exact in floating point; so is the comparison with 1/2.
    DataType ft = ctx.tensor_type(x, "the value rounded").dtype;
    Expr zero = ctx.constant_scalar(ft, 0.0);
    Expr t = ctx.call("where",
                      {ctx.call("less", {x, zero}), ctx.call("ceil", {x}), ctx.call("floor", {x})});
    Expr frac = ctx.call("subtract", {x, t});
    Expr half = ctx.constant_scalar(ft, 0.5);
    Expr up = ctx.call("greater_equal", {frac, half});
    Expr down = ctx.call("less_equal", {frac, ctx.constant_scalar(ft, -0.5)});
    Expr step = ctx.call("where", {up, ctx.constant_scalar(ft, 1.0),
                                   ctx.call("where", {down, ctx.constant_scalar(ft, -1.0), zero})});
    return ctx.call("add", {t, step});
}

Expr int8_as_uint8(const TfContext& ctx, const Expr& x) {
    Expr flipped = ctx.call("bitwise_xor", {x, ctx.constant_scalar(DataType::int_(8), -128.0)});
    return cast_to(ctx, flipped, DataType::uint(8));
}

Expr int32_scalar(const TfContext& ctx, int64_t v) {
    return ctx.constant_scalar(DataType::int32(), double(v));
}

Expr int64_scalar(const TfContext& ctx, int64_t v) {
    return ctx.constant_scalar(DataType::int64(), double(v));
}

ScaleLog2 scale_log2(double scale) {
    const float log2 = std::log(float(scale)) * (1.0f / std::log(2.0f));
    const float rounded = std::round(log2);
    return {int32_t(rounded), std::abs(log2 - rounded) < 1e-3f};
}

Expr table_constant(const TfContext& ctx, const std::vector<int16_t>& values) {
    runtime::NDArray a =
        runtime::NDArray::empty({int64_t(values.size())}, graph::dl_dtype_of(DataType::int_(16)));
    a.copy_from(values);
    return ctx.constant(a);
}

Expr table_constant(const TfContext& ctx, DataType t, const std::vector<uint8_t>& bytes) {
    runtime::NDArray a = runtime::NDArray::empty({int64_t(bytes.size())}, graph::dl_dtype_of(t));
    a.copy_from(bytes);
    return ctx.constant(a);
}

Expr table_lookup(const TfContext& ctx, const Expr& table, const Expr& x, int64_t lowest) {
    Expr index =
        ctx.call("subtract", {cast_to(ctx, x, DataType::int32()), int32_scalar(ctx, lowest)});
    return ctx.call("take", {table, index}, make_ref<ops::TakeAttrs>());
}

Expr float32_scalar(const TfContext& ctx, double v) {
    return ctx.constant_scalar(DataType::float32(), v);
}

Expr int32_along(const TfContext& ctx, const std::vector<int64_t>& values, int64_t rank,
                 int64_t axis) {
    std::vector<int32_t> v(values.begin(), values.end());
    return constant_of(ctx, along_shape(v.size(), rank, axis), v);
}

Expr float32_along(const TfContext& ctx, const std::vector<double>& values, int64_t rank,
                   int64_t axis) {
    std::vector<float> v(values.begin(), values.end());
    return constant_of(ctx, along_shape(v.size(), rank, axis), v);
}

Quantized quantization_of(const TfContext& ctx, const TfliteTensor& t, const std::string& what) {
    if (!t.quantization || t.quantization->scale.empty()) {
        ctx.error() << what << " ('" << t.name << "') is " << tensor_type_name(t.type)
                    << " without quantization parameters; a quantized operator needs them";
    }
    const TfliteQuantization& tq = *t.quantization;
    Quantized q;
    for (float s : tq.scale) {
        if (!(s > 0) || !std::isfinite(s)) {
            ctx.error() << what << " ('" << t.name << "') has the scale " << s
                        << "; scales must be positive and finite";
        }
        q.scales.push_back(s);
    }
    q.zero_points = tq.zero_point;
    if (q.zero_points.empty()) q.zero_points.assign(q.scales.size(), 0);
    if (q.zero_points.size() == 1 && q.scales.size() > 1) {
        q.zero_points.assign(q.scales.size(), q.zero_points[0]);
    }
    if (q.zero_points.size() != q.scales.size()) {
        ctx.error() << what << " ('" << t.name << "') has " << q.scales.size() << " scales and "
                    << q.zero_points.size() << " zero points";
    }
    if (q.scales.size() > 1) {
        int64_t rank = int64_t(t.shape.size());
        // Rank-1 tensors (biases) run along their only axis whatever the file says (some
        // converters wrote the weight's axis there).
        q.axis = rank == 1 ? 0 : tq.quantized_dimension;
        if (q.axis < 0 || q.axis >= rank || t.shape[q.axis] != int64_t(q.scales.size())) {
            ctx.error() << what << " ('" << t.name << "') is quantized along axis "
                        << tq.quantized_dimension << " with " << q.scales.size()
                        << " scales; its shape has no axis of that length there";
        }
    }
    if (t.type != tensor_type::kInt32 && t.type != tensor_type::kInt64) {
        auto [lo, hi] = ops::quantized_range(ctx.dtype_of(t.type, what));
        for (int64_t zp : q.zero_points) {
            if (zp < lo || zp > hi) {
                ctx.error() << what << " ('" << t.name << "') has the zero point " << zp
                            << ", outside the range of " << tensor_type_name(t.type);
            }
        }
    }
    return q;
}

Quantized per_tensor(const TfContext& ctx, const TfliteTensor& t, const std::string& what) {
    Quantized q = quantization_of(ctx, t, what);
    if (q.scales.size() != 1) {
        ctx.error() << what << " ('" << t.name << "') must be quantized per tensor, it has "
                    << q.scales.size() << " scales";
    }
    return q;
}

}  // namespace anvil::frontend::tflite
