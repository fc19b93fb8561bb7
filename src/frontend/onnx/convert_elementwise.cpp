// Converters of ONNX's elementwise ops: arithmetic, comparisons, bitwise ops and shifts, unary
// math, activations, Cast, Identity, Dropout.
#include <cmath>
#include <limits>

#include "frontend/onnx/convert_ops.h"
#include "ops/activation.h"
#include "ops/elementwise.h"
#include "ops/string.h"
#include "ops/transform.h"

namespace anvil::frontend {

namespace {

using graph::Expr;

// ONNX op type → graph op, for the ops that map one to one.
const char* direct_op(const std::string& op_type) {
    static const std::pair<const char*, const char*> table[] = {
        {"Add", "add"},
        {"Sub", "subtract"},
        {"Mul", "multiply"},
        {"Div", "divide"},
        {"Pow", "power"},
        {"Equal", "equal"},
        {"Less", "less"},
        {"Greater", "greater"},
        {"LessOrEqual", "less_equal"},
        {"GreaterOrEqual", "greater_equal"},
        {"And", "logical_and"},
        {"Or", "logical_or"},
        {"Not", "logical_not"},
        {"BitwiseAnd", "bitwise_and"},
        {"BitwiseOr", "bitwise_or"},
        {"BitwiseXor", "bitwise_xor"},
        {"BitwiseNot", "bitwise_not"},
        {"Relu", "nn.relu"},
        {"Sigmoid", "sigmoid"},
        {"Tanh", "tanh"},
        {"Erf", "erf"},
        {"Sqrt", "sqrt"},
        {"Exp", "exp"},
        {"Log", "log"},
        {"Neg", "negative"},
        {"Abs", "abs"},
        {"Floor", "floor"},
        {"Ceil", "ceil"},
        {"Round", "round"},
        {"Softplus", "nn.softplus"},
        {"HardSwish", "nn.hardswish"},
        {"Mish", "nn.mish"},
        {"Sign", "sign"},
        {"Sin", "sin"},
        {"Cos", "cos"},
        {"Tan", "tan"},
        {"Asin", "asin"},
        {"Acos", "acos"},
        {"Atan", "atan"},
        {"Sinh", "sinh"},
        {"Cosh", "cosh"},
        {"Asinh", "asinh"},
        {"Acosh", "acosh"},
        {"Atanh", "atanh"},
    };
    for (const auto& [onnx_name, op] : table) {
        if (op_type == onnx_name) return op;
    }
    internal_error() << "no graph op for " << op_type;
    ANVIL_UNREACHABLE();
}

// Before opset 7, binary ops broadcast only with `broadcast=1`, aligning B's dimensions at
// `axis` of A (default: the trailing ones). Such a B is reshaped with trailing 1s so that numpy
// broadcasting means the same.
Expr legacy_broadcast_operand(ConvertContext& ctx, const Expr& a, Expr b) {
    if (ctx.opset() >= 7 || ctx.attr_int("broadcast", 0) == 0 || !ctx.has_attr("axis")) return b;
    int64_t ra = ctx.rank(a), rb = ctx.rank(b);
    int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), ra, "axis");
    int64_t trailing = ra - axis - rb;
    if (trailing < 0) ctx.error() << "operand B of rank " << rb << " does not fit at axis " << axis;
    if (trailing == 0) return b;
    std::vector<int64_t> shape = ctx.static_shape(b, "operand B");
    shape.insert(shape.end(), trailing, 1);
    return reshape_to(ctx, b, shape);
}

}  // namespace

Exprs convert_binary(ConvertContext& ctx) {
    Expr a = ctx.input(0);
    Expr b = legacy_broadcast_operand(ctx, a, ctx.input(1));
    if (ctx.node().op_type() == "Pow") {
        // The exponent may have another element type (opset 12+) and the base may be an integer;
        // power computes in floating point, on one type.
        DataType ta = ctx.tensor_type(a, "the base").dtype;
        DataType tc = ta.is_floating() ? ta : DataType::float64();
        Expr p = ctx.call("power", {cast_to(ctx, a, tc), cast_to(ctx, b, tc)});
        return {cast_to(ctx, p, ta)};
    }
    return {ctx.call(direct_op(ctx.node().op_type()), {a, b})};
}

Exprs convert_unary(ConvertContext& ctx) {
    return {ctx.call(direct_op(ctx.node().op_type()), {ctx.input(0)})};
}

Exprs convert_xor(ConvertContext& ctx) {
    return {ctx.call("not_equal", {ctx.input(0), ctx.input(1)})};
}

// Mod: fmod=1 is C's fmod (the dividend's sign), fmod=0 the floored remainder (the divisor's
// sign), which ONNX defines for integers only.
Exprs convert_mod(ConvertContext& ctx) {
    Expr a = ctx.input(0), b = ctx.input(1);
    bool fmod = ctx.attr_int("fmod", 0) != 0;
    DataType dt = ctx.tensor_type(a, "input A").dtype;
    if (!fmod && dt.is_floating()) {
        ctx.error() << "fmod=0 is defined for integer inputs only, got " << dt.str();
    }
    return {ctx.call(fmod ? "mod" : "floor_mod", {a, b})};
}

// Softsign: x / (1 + |x|).
Exprs convert_softsign(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    Expr d = ctx.call("add", {ctx.constant_scalar(dt, 1.0), ctx.call("abs", {x})});
    return {ctx.call("divide", {x, d})};
}

// ThresholdedRelu: x where x > alpha, else 0.
Exprs convert_thresholded_relu(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    Expr alpha = ctx.constant_scalar(dt, ctx.attr_float("alpha", 1.0f));
    return {ctx.call("where", {ctx.call("greater", {x, alpha}), x, ctx.constant_scalar(dt, 0.0)})};
}

// Shrink: x + bias where x < -lambd, x - bias where x > lambd, else 0.
Exprs convert_shrink(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) ctx.error() << "Shrink is supported for floating-point inputs only";
    double lambd = ctx.attr_float("lambd", 0.5f), bias = ctx.attr_float("bias", 0.0f);
    Expr lo = ctx.call("less", {x, ctx.constant_scalar(dt, -lambd)});
    Expr hi = ctx.call("greater", {x, ctx.constant_scalar(dt, lambd)});
    Expr below = ctx.call("add", {x, ctx.constant_scalar(dt, bias)});
    Expr above = ctx.call("subtract", {x, ctx.constant_scalar(dt, bias)});
    Expr zero = ctx.constant_scalar(dt, 0.0);
    return {ctx.call("where", {lo, below, ctx.call("where", {hi, above, zero})})};
}

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
Exprs convert_celu(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) ctx.error() << "Celu needs a floating-point input, got " << dt.str();
    double alpha = ctx.attr_float("alpha", 1.0f);
    Expr zero = ctx.constant_scalar(dt, 0.0);
    Expr e = ctx.call("exp", {ctx.call("divide", {x, ctx.constant_scalar(dt, alpha)})});
    Expr neg = ctx.call("multiply", {ctx.constant_scalar(dt, alpha),
                                     ctx.call("subtract", {e, ctx.constant_scalar(dt, 1.0)})});
    return {ctx.call("add", {ctx.call("maximum", {zero, x}), ctx.call("minimum", {zero, neg})})};
}

// IsNaN: x != x.
Exprs convert_isnan(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) ctx.error() << "IsNaN needs a floating-point input, got " << dt.str();
    return {ctx.call("not_equal", {x, x})};
}

// IsInf: x == +inf (detect_positive) or x == -inf (detect_negative).
Exprs convert_isinf(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) ctx.error() << "IsInf needs a floating-point input, got " << dt.str();
    double inf = std::numeric_limits<double>::infinity();
    bool pos = ctx.attr_int("detect_positive", 1) != 0;
    bool neg = ctx.attr_int("detect_negative", 1) != 0;
    Expr is_pos = ctx.call("equal", {x, ctx.constant_scalar(dt, inf)});
    Expr is_neg = ctx.call("equal", {x, ctx.constant_scalar(dt, -inf)});
    if (pos && neg) return {ctx.call("logical_or", {is_pos, is_neg})};
    if (pos) return {is_pos};
    if (neg) return {is_neg};
    return {ctx.call("not_equal", {x, x})};  // ...and x == x: false everywhere
}

// CastLike: Cast to the element type of input 1.
Exprs convert_cast_like(ConvertContext& ctx) {
    DataType to = ctx.tensor_type(ctx.input(1), "the target_type input").dtype;
    return {cast_to(ctx, ctx.input(0), to)};
}

// BitShift of unsigned integers: the shift ops, which give 0 for amounts of the width or more
// (as the reference implementation, numpy, does; the ONNX spec leaves them open).
Exprs convert_bit_shift(ConvertContext& ctx) {
    Expr x = ctx.input(0), y = ctx.input(1);
    DataType dt = ctx.tensor_type(x, "input X").dtype;
    if (!dt.is_uint()) ctx.error() << "BitShift needs unsigned integer inputs, got " << dt.str();
    if (ctx.tensor_type(y, "input Y").dtype != dt) {
        ctx.error() << "the inputs have different element types";
    }
    std::string direction = ctx.attr_string("direction", "");
    if (direction != "LEFT" && direction != "RIGHT") {
        ctx.error() << "direction must be LEFT or RIGHT, got '" << direction << "'";
    }
    return {ctx.call(direction == "LEFT" ? "left_shift" : "right_shift", {x, y})};
}

Exprs convert_reciprocal(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    return {ctx.call("divide", {ctx.constant_scalar(dt, 1.0), x})};
}

// Max, Min, Sum, Mean: variadic, folded left.
Exprs convert_variadic(ConvertContext& ctx) {
    const std::string& op_type = ctx.node().op_type();
    const char* op = op_type == "Max" ? "maximum" : op_type == "Min" ? "minimum" : "add";
    Expr acc = ctx.input(0);
    for (size_t i = 1; i < ctx.num_inputs(); ++i) acc = ctx.call(op, {acc, ctx.input(i)});
    if (op_type == "Mean" && ctx.num_inputs() > 1) {
        DataType dt = ctx.tensor_type(acc, "the sum").dtype;
        acc = ctx.call("divide", {acc, ctx.constant_scalar(dt, double(ctx.num_inputs()))});
    }
    return {acc};
}

Exprs convert_where(ConvertContext& ctx) {
    return {ctx.call("where", {ctx.input(0), ctx.input(1), ctx.input(2)})};
}

// Clip: bounds are attributes before opset 11 and optional inputs from 11 on. Constant bounds
// become clip's attributes; computed bounds become maximum/minimum.
Exprs convert_clip(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    auto attrs = make_ref<ops::ClipAttrs>();
    auto* a = const_cast<ops::ClipAttrs*>(attrs.get());
    if (ctx.opset() < 11) {
        a->a_min = ctx.attr_float("min", -std::numeric_limits<float>::infinity());
        a->a_max = ctx.attr_float("max", std::numeric_limits<float>::infinity());
        return {ctx.call("clip", {x}, attrs)};
    }
    Expr lo = ctx.optional_input(1), hi = ctx.optional_input(2);
    bool lo_const = !lo.defined() || constant_data(lo).defined();
    bool hi_const = !hi.defined() || constant_data(hi).defined();
    if (lo_const && hi_const) {
        if (lo.defined()) a->a_min = ctx.const_scalar(lo, "min");
        if (hi.defined()) a->a_max = ctx.const_scalar(hi, "max");
        return {ctx.call("clip", {x}, attrs)};
    }
    if (lo.defined()) x = ctx.call("maximum", {x, lo});
    if (hi.defined()) x = ctx.call("minimum", {x, hi});
    return {x};
}

Exprs convert_leaky_relu(ConvertContext& ctx) {
    auto attrs = make_ref<ops::LeakyReluAttrs>();
    const_cast<ops::LeakyReluAttrs*>(attrs.get())->alpha = ctx.attr_float("alpha", 0.01f);
    return {ctx.call("nn.leaky_relu", {ctx.input(0)}, attrs)};
}

Exprs convert_prelu(ConvertContext& ctx) {
    // Since opset 7 ONNX PRelu broadcasts the slope numpy-style onto x (unidirectionally),
    // so a 1-D slope runs along x's last axis (PyTorch exports per-channel slopes as [C, 1, 1]).
    // Before, a 1-D slope held one value per channel (axis 1), or one shared value.
    Expr x = ctx.input(0), slope = ctx.input(1);
    auto attrs = make_ref<ops::PReluAttrs>();
    if (ctx.rank(slope) == 1) {
        bool per_channel = ctx.opset() < 7 && ctx.rank(x) >= 2;
        const_cast<ops::PReluAttrs*>(attrs.get())->axis = per_channel ? 1 : ctx.rank(x) - 1;
    }
    return {ctx.call("nn.prelu", {x, slope}, attrs)};
}

Exprs convert_elu(ConvertContext& ctx) {
    auto attrs = make_ref<ops::EluAttrs>();
    const_cast<ops::EluAttrs*>(attrs.get())->alpha = ctx.attr_float("alpha", 1.0f);
    return {ctx.call("nn.elu", {ctx.input(0)}, attrs)};
}

Exprs convert_selu(ConvertContext& ctx) {
    auto attrs = make_ref<ops::SeluAttrs>();
    auto* a = const_cast<ops::SeluAttrs*>(attrs.get());
    a->alpha = ctx.attr_float("alpha", 1.67326319217681884765625f);
    a->gamma = ctx.attr_float("gamma", 1.05070102214813232421875f);
    return {ctx.call("nn.selu", {ctx.input(0)}, attrs)};
}

Exprs convert_hard_sigmoid(ConvertContext& ctx) {
    auto attrs = make_ref<ops::HardSigmoidAttrs>();
    auto* a = const_cast<ops::HardSigmoidAttrs*>(attrs.get());
    a->alpha = ctx.attr_float("alpha", 0.2f);
    a->beta = ctx.attr_float("beta", 0.5f);
    return {ctx.call("nn.hardsigmoid", {ctx.input(0)}, attrs)};
}

Exprs convert_gelu(ConvertContext& ctx) {
    std::string approximate = ctx.attr_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") {
        ctx.error() << "approximate '" << approximate << "' is not supported (none, tanh)";
    }
    auto attrs = make_ref<ops::GeluAttrs>();
    const_cast<ops::GeluAttrs*>(attrs.get())->approximate = approximate;
    return {ctx.call("nn.gelu", {ctx.input(0)}, attrs)};
}

Exprs convert_cast(ConvertContext& ctx) {
    auto to = static_cast<int>(ctx.attr_int("to", 0));
    std::optional<DataType> dt = dtype_from_onnx(to);
    if (!dt) ctx.error() << "cast to " << onnx_dtype_name(to) << " is not supported";
    return {cast_to(ctx, ctx.input(0), *dt)};
}

Exprs convert_identity(ConvertContext& ctx) {
    return {ctx.input(0)};
}

// Inference: Dropout is the identity, and its mask output (when asked for) all true. Training mode
// with ratio 0 is the identity too (nothing dropped, scale 1 / (1 - 0)): torchvision 0.14's Swin
// exports its attention dropout so.
Exprs convert_dropout(ConvertContext& ctx) {
    if (ctx.opset() >= 12) {
        Expr training = ctx.optional_input(2);
        if (training.defined() && ctx.const_ints(training, "training_mode")[0] != 0) {
            Expr ratio = ctx.optional_input(1);
            double r = ratio.defined() ? ctx.const_scalar(ratio, "the ratio") : 0.5;
            if (r != 0.0) {
                ctx.error() << "training_mode true is not supported with ratio " << r
                            << " (inference only; a ratio of 0 drops nothing)";
            }
        }
    }
    // Before opset 7, old exporters left is_test at 0 even for inference; the identity is still
    // what inference means. The mask (second output) keeps everything: all true (opset 10+,
    // bool) or ones (before, the input's type).
    Expr x = ctx.input(0);
    if (ctx.node().output_size() < 2 || ctx.node().output(1).empty()) return {x};
    DataType mask_type =
        ctx.opset() >= 10 ? DataType::bool_() : ctx.tensor_type(x, "the input").dtype;
    Expr one = cast_to(ctx, ctx.constant_scalar(DataType::int64(), 1.0), mask_type);
    auto attrs = make_ref<ops::BroadcastToAttrs>();
    const_cast<ops::BroadcastToAttrs*>(attrs.get())->shape = ctx.static_shape(x, "the input");
    return {x, ctx.call("broadcast_to", {one}, attrs)};
}

}  // namespace anvil::frontend
