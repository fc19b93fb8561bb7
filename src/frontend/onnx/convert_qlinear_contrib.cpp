// The quantized operators of ONNX Runtime's domain com.microsoft that quantization tools write
// (onnxruntime.quantization, QOperator format): QLinearAdd, QLinearMul, QLinearConcat,
// QLinearGlobalAveragePool, QLinearSigmoid and QLinearLeakyRelu. Each is what ONNX Runtime
// defines it as: its operands dequantized, the float op, the result quantized, written with
// qnn.dequantize / qnn.quantize (round half to even, saturate) around the op, so that graph pass
// fake_quantization_to_integer computes in integers what it can (concatenate, pooling) and the
// rest fuses into one elementwise kernel, as for ONNX's QDQ form.
#include "frontend/onnx/convert_ops.h"
#include "ops/activation.h"
#include "ops/qnn.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

void require_microsoft_domain(ConvertContext& ctx) {
    if (ctx.node().domain() != "com.microsoft") {
        ctx.error() << ctx.node().op_type() << " is an op of domain 'com.microsoft' (ONNX "
                    << "Runtime's contrib ops), not of domain '" << ctx.node().domain() << "'";
    }
}

// A scale as qnn.dequantize / qnn.quantize take it: one float32 value (these ops quantize per
// tensor).
Expr scale_operand(ConvertContext& ctx, const Expr& scale, const std::string& what) {
    if (ctx.static_count(scale, what) != 1) {
        ctx.error() << what << " must hold one value (per-tensor quantization), got shape "
                    << ints_str(ctx.static_shape(scale, what));
    }
    if (!ctx.tensor_type(scale, what).dtype.is_floating()) {
        ctx.error() << what << " must be floating-point, got "
                    << ctx.tensor_type(scale, what).dtype.str();
    }
    return reshape_to(ctx, cast_to(ctx, scale, DataType::float32()), {});
}

// The zero point as an int32 scalar (0 when absent); its type, or `absent` when absent.
std::pair<Expr, DataType> zero_point_operand(ConvertContext& ctx, const Expr& zp,
                                             const std::string& what, DataType absent) {
    if (!zp.defined()) return {ctx.constant_scalar(DataType::int32(), 0), absent};
    DataType t = ctx.tensor_type(zp, what).dtype;
    if (t != DataType::uint(8) && t != DataType::int_(8)) {
        ctx.error() << what << " must be uint8 or int8, got " << t.str();
    }
    if (ctx.static_count(zp, what) != 1) {
        ctx.error() << what << " must hold one value, got shape "
                    << ints_str(ctx.static_shape(zp, what));
    }
    return {reshape_to(ctx, cast_to(ctx, zp, DataType::int32()), {}), t};
}

// The real values of the quantized input `q` (scale and zero point at inputs s and z).
Expr dequantized(ConvertContext& ctx, size_t q, size_t s, size_t z) {
    const std::string n = std::to_string(q);
    DataType t = ctx.tensor_type(ctx.input(q), "input " + n).dtype;
    if (t != DataType::uint(8) && t != DataType::int_(8)) {
        ctx.error() << "input " << n << " must be uint8 or int8, got " << t.str();
    }
    Expr scale = scale_operand(ctx, ctx.input(s), "input " + std::to_string(s) + " (scale)");
    auto [zp, zt] = zero_point_operand(ctx, ctx.optional_input(z),
                                       "input " + std::to_string(z) + " (zero point)", t);
    if (ctx.optional_input(z).defined() && zt != t) {
        ctx.error() << "input " << n << " is " << t.str() << " but its zero point is " << zt.str();
    }
    auto attrs = make_ref<ops::DequantizeAttrs>();
    return ctx.call("qnn.dequantize", {ctx.input(q), scale, zp}, attrs);
}

// `x` quantized with the scale and zero point at inputs s and z; the zero point's type is the
// result's (without one, the type of the op's quantized input `like`: ONNX Runtime's type T).
Expr quantized(ConvertContext& ctx, const Expr& x, size_t s, size_t z, size_t like) {
    Expr scale = scale_operand(ctx, ctx.input(s), "input " + std::to_string(s) + " (scale)");
    DataType input_type = ctx.tensor_type(ctx.input(like), "input " + std::to_string(like)).dtype;
    auto [zp, t] = zero_point_operand(ctx, ctx.optional_input(z),
                                      "input " + std::to_string(z) + " (zero point)", input_type);
    auto attrs = make_ref<ops::QuantizeAttrs>();
    const_cast<ops::QuantizeAttrs*>(attrs.get())->out_dtype = t;
    return ctx.call("qnn.quantize", {x, scale, zp}, attrs);
}

// (A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp): C = quantize(op(A, B)), broadcasting.
Exprs binary(ConvertContext& ctx, const char* op) {
    require_microsoft_domain(ctx);
    Expr y = ctx.call(op, {dequantized(ctx, 0, 1, 2), dequantized(ctx, 3, 4, 5)});
    return {quantized(ctx, y, 6, 7, 0)};
}

// (X, X_scale, X_zp, Y_scale, Y_zp): Y = quantize(f(X)).
template <class F>
Exprs unary(ConvertContext& ctx, F f) {
    require_microsoft_domain(ctx);
    return {quantized(ctx, f(dequantized(ctx, 0, 1, 2)), 3, 4, 0)};
}

}  // namespace

Exprs convert_qlinear_add(ConvertContext& ctx) {
    return binary(ctx, "add");
}

Exprs convert_qlinear_mul(ConvertContext& ctx) {
    return binary(ctx, "multiply");
}

Exprs convert_qlinear_sigmoid(ConvertContext& ctx) {
    return unary(ctx, [&](const Expr& x) { return ctx.call("sigmoid", {x}); });
}

Exprs convert_qlinear_leaky_relu(ConvertContext& ctx) {
    return unary(ctx, [&](const Expr& x) {
        auto attrs = make_ref<ops::LeakyReluAttrs>();
        const_cast<ops::LeakyReluAttrs*>(attrs.get())->alpha = ctx.attr_float("alpha", 0.01f);
        return ctx.call("nn.leaky_relu", {x}, attrs);
    });
}

// (X, X_scale, X_zp, Y_scale, Y_zp), attribute channels_last: the mean over every spatial
// dimension, kept as extent 1 (NCHW: [N, C, 1, 1]; channels last: [N, 1, 1, C]). 2-D NCHW data
// is nn.global_avg_pool2d, which fake_quantization_to_integer computes in integers.
Exprs convert_qlinear_global_average_pool(ConvertContext& ctx) {
    return unary(ctx, [&](const Expr& x) {
        int64_t rank = ctx.rank(x);
        if (rank < 3) {
            ctx.error() << "the input must have a batch, a channel and at least one spatial "
                        << "dimension, got rank " << rank;
        }
        const bool channels_last = ctx.attr_int("channels_last", 0) != 0;
        if (rank == 4 && !channels_last) return ctx.call("nn.global_avg_pool2d", {x});
        auto attrs = make_ref<ops::ReduceAttrs>();
        auto* a = const_cast<ops::ReduceAttrs*>(attrs.get());
        for (int64_t d = channels_last ? 1 : 2; d < (channels_last ? rank - 1 : rank); ++d) {
            a->axes.push_back(d);
        }
        a->keepdims = true;
        return ctx.call("mean", {x}, attrs);
    });
}

// (Y_scale, Y_zp, X0, X0_scale, X0_zp, X1, ...), attribute axis: Y = quantize(concat(X_i)).
Exprs convert_qlinear_concat(ConvertContext& ctx) {
    require_microsoft_domain(ctx);
    if (ctx.num_inputs() < 5 || (ctx.num_inputs() - 2) % 3 != 0) {
        ctx.error() << "expected Y_scale, Y_zero_point and a (tensor, scale, zero point) triple "
                    << "per input, got " << ctx.num_inputs() << " inputs";
    }
    std::vector<Expr> parts;
    for (size_t i = 2; i < ctx.num_inputs(); i += 3)
        parts.push_back(dequantized(ctx, i, i + 1, i + 2));
    int64_t rank = ctx.rank(parts[0]);
    auto attrs = make_ref<ops::ConcatenateAttrs>();
    const_cast<ops::ConcatenateAttrs*>(attrs.get())->axis =
        ctx.normalize_axis(ctx.attr_int("axis", 0), rank, "axis");
    Expr y = ctx.call("concatenate", parts, attrs);
    return {quantized(ctx, y, 0, 1, 2)};
}

}  // namespace anvil::frontend
