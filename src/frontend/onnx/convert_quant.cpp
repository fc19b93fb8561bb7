// Converters of ONNX's linear quantization: QuantizeLinear and DequantizeLinear as the QNN ops
// (ops/qnn.h); the integer products ConvInteger and MatMulInteger as qnn.conv2d / qnn.dense,
// QLinearConv and QLinearMatMul as those plus qnn.requantize, so that they run on the integer
// kernels (vpdpbusd), wherever the QNN ops can state them: 1-D and 2-D convolutions, a 2-D
// second matrix, zero points per tensor (per output channel or column for the weights), and for
// the QLinear ops constant scales. Other forms (3-D convolutions, batched or per-row operands,
// scales computed at run time) and DynamicQuantizeLinear are compositions of elementwise ops,
// reductions and exact float64 products. Both follow ONNX's reference definitions: the integer
// sums exact, the scale ratio (a_scale * b_scale / y_scale) in float32 applied in float64, round
// half to even, then saturate to the integer type's range.
#include <cmath>
#include <optional>

#include "frontend/conv_builder.h"
#include "frontend/onnx/convert_ops.h"
#include "ops/activation.h"
#include "ops/dense.h"
#include "ops/qnn.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// The integer range that quantized values saturate to.
std::pair<double, double> quant_range(ConvertContext& ctx, DataType t) {
    if (t == DataType::uint(8)) return {0.0, 255.0};
    if (t == DataType::int_(8)) return {-128.0, 127.0};
    ctx.error() << "quantization to " << t.str() << " is not supported (uint8, int8)";
    ANVIL_UNREACHABLE();
}

Expr clip(ConvertContext& ctx, const Expr& x, double lo, double hi) {
    auto attrs = make_ref<ops::ClipAttrs>();
    auto* a = const_cast<ops::ClipAttrs*>(attrs.get());
    a->a_min = lo;
    a->a_max = hi;
    return ctx.call("clip", {x}, attrs);
}

Expr reduce_all(ConvertContext& ctx, const char* op, const Expr& x) {
    auto attrs = make_ref<ops::ReduceAttrs>();
    return ctx.call(op, {x}, attrs);
}

// `what` (the tensor `x`) must hold 8-bit integers.
void require_8bit(ConvertContext& ctx, const Expr& x, const std::string& what) {
    DataType t = ctx.tensor_type(x, what).dtype;
    if (t != DataType::uint(8) && t != DataType::int_(8)) {
        ctx.error() << what << " must be uint8 or int8, got " << t.str();
    }
}

// A quantization parameter `p` (one value, or one per index of `axis`) as `dtype`, shaped to
// broadcast against a tensor of rank `rank`: a scalar, or [n, 1, ...] from `axis` on.
Expr along_axis(ConvertContext& ctx, const Expr& p, DataType dtype, int64_t rank, int64_t axis,
                const std::string& what) {
    int64_t n = ctx.static_count(p, what);
    Expr v = cast_to(ctx, p, dtype);
    if (n == 1) return reshape_to(ctx, v, {});
    std::vector<int64_t> b(static_cast<size_t>(rank - axis), 1);
    b[0] = n;
    return reshape_to(ctx, v, b);
}

// An integer operand minus its zero point (a scalar, or 1-D along `axis` of the operand), in
// float64: sums of products of 8-bit values are exact there, so the float products below are
// the integer ones.
Expr centered(ConvertContext& ctx, const Expr& x, const Expr& zp, int64_t axis, const char* what) {
    require_8bit(ctx, x, what);
    Expr v = cast_to(ctx, x, DataType::float64());
    if (!zp.defined()) return v;
    Expr z = along_axis(ctx, zp, DataType::float64(), ctx.rank(x), axis, "the zero point");
    return ctx.call("subtract", {v, z});
}

// The float64 product (a - a_zp) @ (b - b_zp); exact.
Expr integer_matmul(ConvertContext& ctx, const Expr& a, const Expr& a_zp, const Expr& b,
                    const Expr& b_zp) {
    Expr ca = centered(ctx, a, a_zp, ctx.rank(a) - 1, "input A");
    Expr cb = centered(ctx, b, b_zp, ctx.rank(b) - 1, "input B");
    return ctx.call("nn.matmul", {ca, cb}, make_ref<ops::MatmulAttrs>());
}

// The float64 convolution of (x - x_zp) with (w - w_zp) (w_zp per output channel), with the
// node's Conv attributes; exact.
Expr integer_conv(ConvertContext& ctx, const Expr& x, const Expr& x_zp, const Expr& w,
                  const Expr& w_zp) {
    Expr cx = centered(ctx, x, x_zp, 1, "the input");
    Expr cw = centered(ctx, w, w_zp, 0, "the weights");
    ConvParams p = conv_node_params(ctx, cx, conv_weight_shape(ctx, cx, cw));
    return build_conv(ctx, cx, cw, Expr(), p);
}

// saturate(round(acc * a_scale * b_scale / y_scale) + y_zp), acc float64, the scale ratio in
// float32 (as ONNX's reference computes it); the scales may be per output channel (axis `axis`
// of acc).
Expr requantize(ConvertContext& ctx, const Expr& acc, const Expr& a_scale, const Expr& b_scale,
                const Expr& y_scale, const Expr& y_zp, int64_t axis) {
    auto along = [&](const Expr& p, DataType t) {
        return along_axis(ctx, p, t, ctx.rank(acc), axis, "a scale");
    };
    const DataType f32 = DataType::float32();
    Expr ratio = ctx.call(
        "divide",
        {ctx.call("multiply", {along(a_scale, f32), along(b_scale, f32)}), along(y_scale, f32)});
    Expr q =
        ctx.call("round", {ctx.call("multiply", {acc, cast_to(ctx, ratio, DataType::float64())})});
    DataType qt =
        y_zp.defined() ? ctx.tensor_type(y_zp, "the output zero point").dtype : DataType::uint(8);
    auto [lo, hi] = quant_range(ctx, qt);
    if (y_zp.defined()) q = ctx.call("add", {q, along(y_zp, DataType::float64())});
    return cast_to(ctx, clip(ctx, q, lo, hi), qt);
}

// ---- the QNN forms ------------------------------------------------------------------------

// The values of a float32 constant, or nothing (a scale computed at run time, float16).
std::optional<std::vector<float>> float32_values(const Expr& e) {
    runtime::NDArray data = constant_data(e);
    if (!data.defined() || data.dtype().code != kDLFloat || data.dtype().bits != 32) return {};
    return data.to_vector<float>();
}

// A zero point as the QNN ops take it: int32, a scalar or 1-D of `n` values (n == 0: scalar
// only); undefined when it has another form (per row of the data). Absent: 0.
Expr qnn_zero_point(ConvertContext& ctx, const Expr& zp, int64_t n) {
    if (!zp.defined()) return ctx.constant_scalar(DataType::int32(), 0);
    int64_t count = ctx.static_count(zp, "the zero point");
    Expr z = cast_to(ctx, zp, DataType::int32());
    if (count == 1) return reshape_to(ctx, z, {});
    if (n > 0 && count == n && ctx.rank(zp) == 1) return z;
    return Expr();
}

// The scale ratio a_scale * b_scale / y_scale of a QLinear node, in float32 as ONNX's reference
// computes it, one value or one per output channel (`n`); nothing unless all are constants of
// one value or n values.
std::optional<std::vector<float>> qlinear_ratio(const Expr& a_scale, const Expr& b_scale,
                                                const Expr& y_scale, int64_t n) {
    auto a = float32_values(a_scale), b = float32_values(b_scale), y = float32_values(y_scale);
    if (!a || !b || !y || a->size() != 1 || y->size() != 1) return {};
    if (b->size() != 1 && static_cast<int64_t>(b->size()) != n) return {};
    std::vector<float> ratio;
    for (float bs : *b) {
        ratio.push_back((*a)[0] * bs / (*y)[0]);
        // Zero or non-finite ratios (an all-zero channel's zero scale) are no requantization:
        // the float64 composition computes what ONNX defines for them.
        if (!(ratio.back() > 0) || !std::isfinite(ratio.back())) return {};
    }
    return ratio;
}

// qnn.conv2d(x, w) summed in int32 with the node's Conv attributes, for 1-D (as 2-D with a unit
// height) and 2-D data; undefined for other forms.
Expr qnn_conv(ConvertContext& ctx, Expr x, const Expr& x_zp, Expr w, const Expr& w_zp) {
    require_8bit(ctx, x, "the input");
    require_8bit(ctx, w, "the weights");
    std::vector<int64_t> w_shape = conv_weight_shape(ctx, x, w);
    const int64_t nd = static_cast<int64_t>(w_shape.size()) - 2;
    if (nd > 2) return Expr();
    Expr xz = qnn_zero_point(ctx, x_zp, 0);
    Expr wz = qnn_zero_point(ctx, w_zp, w_shape[0]);
    if (!xz.defined() || !wz.defined()) return Expr();
    ConvParams p = conv_node_params(ctx, x, w_shape);
    if (nd == 1) {
        x = lift_1d_to_2d(ctx, x);
        w = lift_1d_to_2d(ctx, w);
        p.strides = ints_to_2d(p.strides, 1);
        p.dilation = ints_to_2d(p.dilation, 1);
        p.padding = {0, p.padding[0], 0, p.padding[1]};
    }
    auto attrs = make_ref<ops::QnnConv2DAttrs>();
    auto* a = const_cast<ops::QnnConv2DAttrs*>(attrs.get());
    a->strides = p.strides;
    a->padding = p.padding;
    a->dilation = p.dilation;
    a->groups = p.groups;
    Expr one = ctx.constant_scalar(DataType::float32(), 1.0);
    Expr y = ctx.call("qnn.conv2d", {x, w, xz, wz, one, one}, attrs);
    return nd == 1 ? lower_2d_to_1d(ctx, y) : y;
}

// qnn.dense(a, b^T) summed in int32 for a [..., K] and a 2-D b [K, N]; undefined for other
// forms (1-D a, batched b, a per-row zero point).
Expr qnn_matmul(ConvertContext& ctx, const Expr& a, const Expr& a_zp, const Expr& b,
                const Expr& b_zp) {
    if (ctx.rank(a) < 2 || ctx.rank(b) != 2 || !ctx.tensor_type(b, "input B").is_static()) {
        return Expr();
    }
    require_8bit(ctx, a, "input A");
    require_8bit(ctx, b, "input B");
    int64_t n = ctx.static_shape(b, "input B")[1];
    Expr az = qnn_zero_point(ctx, a_zp, 0);
    Expr bz = qnn_zero_point(ctx, b_zp, n);
    if (!az.defined() || !bz.defined()) return Expr();
    auto t = make_ref<ops::TransposeAttrs>();
    const_cast<ops::TransposeAttrs*>(t.get())->axes = {1, 0};
    Expr one = ctx.constant_scalar(DataType::float32(), 1.0);
    return ctx.call("qnn.dense", {a, ctx.call("transpose", {b}, t), az, bz, one, one},
                    make_ref<ops::QnnDenseAttrs>());
}

// requantize(acc, ratio, y_zp) of a QLinear node: round(acc * ratio) + y_zp, saturated, with the
// float32 ratio applied in float64 (per output channel along `axis`).
Expr qlinear_requantize(ConvertContext& ctx, const Expr& acc, const std::vector<float>& ratio,
                        const Expr& y_zp, int64_t axis) {
    DataType qt =
        y_zp.defined() ? ctx.tensor_type(y_zp, "the output zero point").dtype : DataType::uint(8);
    quant_range(ctx, qt);
    auto r = runtime::NDArray::empty({static_cast<int64_t>(ratio.size())},
                                     graph::dl_dtype_of(DataType::float32()));
    r.copy_from(ratio);
    Expr scale =
        ratio.size() == 1 ? ctx.constant_scalar(DataType::float32(), ratio[0]) : ctx.constant(r);
    auto attrs = make_ref<ops::RequantizeAttrs>();
    auto* a = const_cast<ops::RequantizeAttrs*>(attrs.get());
    a->axis = axis;
    a->compute_dtype = "float64";
    a->out_dtype = qt;
    Expr zero = ctx.constant_scalar(DataType::int32(), 0);
    return ctx.call("qnn.requantize",
                    {acc, scale, zero, ctx.constant_scalar(DataType::float32(), 1.0),
                     qnn_zero_point(ctx, y_zp, 0)},
                    attrs);
}

}  // namespace

Exprs convert_matmul_integer(ConvertContext& ctx) {
    Expr a = ctx.input(0), b = ctx.input(1), a_zp = ctx.optional_input(2);
    Expr b_zp = ctx.optional_input(3);
    if (Expr q = qnn_matmul(ctx, a, a_zp, b, b_zp); q.defined()) return {q};
    return {cast_to(ctx, integer_matmul(ctx, a, a_zp, b, b_zp), DataType::int32())};
}

Exprs convert_conv_integer(ConvertContext& ctx) {
    Expr x = ctx.input(0), w = ctx.input(1), x_zp = ctx.optional_input(2);
    Expr w_zp = ctx.optional_input(3);
    if (Expr q = qnn_conv(ctx, x, x_zp, w, w_zp); q.defined()) return {q};
    return {cast_to(ctx, integer_conv(ctx, x, x_zp, w, w_zp), DataType::int32())};
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
Exprs convert_qlinear_matmul(ConvertContext& ctx) {
    Expr a = ctx.input(0), b = ctx.input(3);
    if (ctx.rank(b) == 2 && ctx.tensor_type(b, "input B").is_static() &&
        qnn_zero_point(ctx, ctx.input(7), 0).defined()) {
        int64_t n = ctx.static_shape(b, "input B")[1];
        auto ratio = qlinear_ratio(ctx.input(1), ctx.input(4), ctx.input(6), n);
        Expr acc = ratio ? qnn_matmul(ctx, a, ctx.input(2), b, ctx.input(5)) : Expr();
        if (acc.defined()) {
            return {qlinear_requantize(ctx, acc, *ratio, ctx.input(7), ctx.rank(acc) - 1)};
        }
    }
    Expr acc = integer_matmul(ctx, a, ctx.input(2), b, ctx.input(5));
    return {requantize(ctx, acc, ctx.input(1), ctx.input(4), ctx.input(6), ctx.input(7),
                       ctx.rank(acc) - 1)};
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B): B is int32, added to the
// accumulator before requantization.
Exprs convert_qlinear_conv(ConvertContext& ctx) {
    Expr x = ctx.input(0), w = ctx.input(3), bias = ctx.optional_input(8);
    auto bias_shape = [&](const Expr& acc) {
        std::vector<int64_t> b(static_cast<size_t>(ctx.rank(acc) - 1), 1);
        b[0] = ctx.static_shape(bias, "the bias")[0];
        return b;
    };
    int64_t channels = ctx.static_shape(w, "the weights")[0];
    auto ratio = qlinear_ratio(ctx.input(1), ctx.input(4), ctx.input(6), channels);
    // (The output zero point of the QNN form is one value.)
    Expr acc = ratio && qnn_zero_point(ctx, ctx.input(7), 0).defined()
                   ? qnn_conv(ctx, x, ctx.input(2), w, ctx.input(5))
                   : Expr();
    if (acc.defined()) {
        if (bias.defined()) {
            acc = ctx.call("add", {acc, reshape_to(ctx, cast_to(ctx, bias, DataType::int32()),
                                                   bias_shape(acc))});
        }
        return {qlinear_requantize(ctx, acc, *ratio, ctx.input(7), 1)};
    }
    acc = integer_conv(ctx, x, ctx.input(2), w, ctx.input(5));
    if (bias.defined()) {
        acc = ctx.call("add", {acc, reshape_to(ctx, cast_to(ctx, bias, DataType::float64()),
                                               bias_shape(acc))});
    }
    return {requantize(ctx, acc, ctx.input(1), ctx.input(4), ctx.input(6), ctx.input(7), 1)};
}

// The scale as float32 (ONNX allows 16-bit floats) and the zero point as int32 (0 without one):
// the operands of qnn.quantize and qnn.dequantize.
std::pair<Expr, Expr> qnn_params(ConvertContext& ctx, const Expr& scale, const Expr& zp) {
    DataType ft = ctx.tensor_type(scale, "the scale").dtype;
    if (!ft.is_floating()) ctx.error() << "the scale must be floating-point, got " << ft.str();
    Expr z = ctx.constant_scalar(DataType::int32(), 0);
    if (zp.defined()) {
        // An initializer's zero point becomes an int32 constant here, not a cast of one, so that
        // the QNN patterns (fold_qnn_quantize's is_constant()) see a constant.
        runtime::NDArray data = constant_data(zp);
        if (data.defined()) {
            std::vector<int64_t> values = ctx.const_ints(zp, "the zero point");
            auto z32 = runtime::NDArray::empty(
                std::vector<int64_t>(data.shape().begin(), data.shape().end()),
                graph::dl_dtype_of(DataType::int32()));
            for (size_t i = 0; i < values.size(); ++i) {
                z32.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
            }
            z = ctx.constant(z32);
        } else {
            z = cast_to(ctx, zp, DataType::int32());
        }
    }
    return {cast_to(ctx, scale, DataType::float32()), z};
}

// y = saturate(round(x / scale) + zero_point) as qnn.quantize; the zero point's type is the
// output's (uint8 without one).
Exprs convert_quantize_linear(ConvertContext& ctx) {
    Expr x = ctx.input(0), zp = ctx.optional_input(2);
    DataType qt = zp.defined() ? ctx.tensor_type(zp, "the zero point").dtype : DataType::uint(8);
    quant_range(ctx, qt);  // a type it supports
    auto [scale, zero] = qnn_params(ctx, ctx.input(1), zp);
    // Opsets 10-18 also quantize int32 data (as a float computation).
    if (!ctx.tensor_type(x, "the input").dtype.is_floating())
        x = cast_to(ctx, x, DataType::float32());
    auto attrs = make_ref<ops::QuantizeAttrs>();
    auto* a = const_cast<ops::QuantizeAttrs*>(attrs.get());
    a->axis = ctx.attr_int("axis", 1);
    a->out_dtype = qt;
    return {ctx.call("qnn.quantize", {x, scale, zero}, attrs)};
}

// y = (x - zero_point) * scale as qnn.dequantize, in the scale's type.
Exprs convert_dequantize_linear(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType ft = ctx.tensor_type(ctx.input(1), "the scale").dtype;
    auto [scale, zero] = qnn_params(ctx, ctx.input(1), ctx.optional_input(2));
    auto attrs = make_ref<ops::DequantizeAttrs>();
    const_cast<ops::DequantizeAttrs*>(attrs.get())->axis = ctx.attr_int("axis", 1);
    return {cast_to(ctx, ctx.call("qnn.dequantize", {x, scale, zero}, attrs), ft)};
}

// uint8 quantization with a scale and zero point from the data's range (which always includes
// 0): scale = (max - min) / 255, zero_point = saturate(round(-min / scale)).
Exprs convert_dynamic_quantize_linear(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType ft = ctx.tensor_type(x, "the input").dtype;
    if (ft != DataType::float32()) ctx.error() << "the input must be float32, got " << ft.str();
    Expr zero = ctx.constant_scalar(ft, 0.0);
    Expr mn = ctx.call("minimum", {reduce_all(ctx, "min", x), zero});
    Expr mx = ctx.call("maximum", {reduce_all(ctx, "max", x), zero});
    Expr scale =
        ctx.call("divide", {ctx.call("subtract", {mx, mn}), ctx.constant_scalar(ft, 255.0)});
    Expr zp = clip(
        ctx, ctx.call("round", {ctx.call("subtract", {zero, ctx.call("divide", {mn, scale})})}),
        0.0, 255.0);
    Expr y = clip(ctx, ctx.call("add", {ctx.call("round", {ctx.call("divide", {x, scale})}), zp}),
                  0.0, 255.0);
    return {cast_to(ctx, y, DataType::uint(8)), scale, cast_to(ctx, zp, DataType::uint(8))};
}

}  // namespace anvil::frontend
