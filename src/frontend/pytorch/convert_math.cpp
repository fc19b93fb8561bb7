// Converters of unary math (abs, exp, log, trigonometry, rounding, tests for nan and inf,
// logical and bitwise not) and of clamping, on tensors and numbers alike: numbers known at
// import time are evaluated with Python's semantics (number_ops.h; `math.ceil(h / 7)`), other
// operands become graph calls with PyTorch's types (an integer tensor's sqrt is float32).
#include <cmath>
#include <limits>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/number_ops.h"
#include "frontend/pytorch/promotion.h"
#include "ir/analyzer.h"
#include "ops/activation.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// What a unary op does to an integer or bool tensor.
enum class OnIntegers {
    ToFloat,   // computes in float32 (sqrt, exp: PyTorch's integer-to-float ops)
    Keep,      // computes in the tensor's own type (abs, neg)
    Identity,  // returns the tensor (floor, ceil, round, trunc of an integer)
    Refuse,    // an error, as in PyTorch (frac)
};

struct UnaryKind {
    const char* kind;
    NumFn fn;
    OnIntegers on_integers;
};

constexpr UnaryKind kUnaryKinds[] = {
    {"aten::neg", NumFn::Neg, OnIntegers::Keep},
    {"aten::negative", NumFn::Neg, OnIntegers::Keep},
    {"aten::abs", NumFn::Abs, OnIntegers::Keep},
    {"aten::absolute", NumFn::Abs, OnIntegers::Keep},
    {"prim::abs", NumFn::Abs, OnIntegers::Keep},
    {"aten::sign", NumFn::Sign, OnIntegers::Keep},
    {"aten::sgn", NumFn::Sign, OnIntegers::Keep},
    {"aten::floor", NumFn::Floor, OnIntegers::Identity},
    {"aten::ceil", NumFn::Ceil, OnIntegers::Identity},
    {"aten::round", NumFn::Round, OnIntegers::Identity},
    {"aten::trunc", NumFn::Trunc, OnIntegers::Identity},
    {"aten::fix", NumFn::Trunc, OnIntegers::Identity},
    {"aten::sqrt", NumFn::Sqrt, OnIntegers::ToFloat},
    {"aten::exp", NumFn::Exp, OnIntegers::ToFloat},
    {"aten::expm1", NumFn::Expm1, OnIntegers::ToFloat},
    {"aten::log", NumFn::Log, OnIntegers::ToFloat},
    {"aten::log2", NumFn::Log2, OnIntegers::ToFloat},
    {"aten::log10", NumFn::Log10, OnIntegers::ToFloat},
    {"aten::log1p", NumFn::Log1p, OnIntegers::ToFloat},
    {"aten::erf", NumFn::Erf, OnIntegers::ToFloat},
    {"aten::erfc", NumFn::Erfc, OnIntegers::ToFloat},
    {"aten::sin", NumFn::Sin, OnIntegers::ToFloat},
    {"aten::cos", NumFn::Cos, OnIntegers::ToFloat},
    {"aten::tan", NumFn::Tan, OnIntegers::ToFloat},
    {"aten::asin", NumFn::Asin, OnIntegers::ToFloat},
    {"aten::arcsin", NumFn::Asin, OnIntegers::ToFloat},
    {"aten::acos", NumFn::Acos, OnIntegers::ToFloat},
    {"aten::arccos", NumFn::Acos, OnIntegers::ToFloat},
    {"aten::atan", NumFn::Atan, OnIntegers::ToFloat},
    {"aten::arctan", NumFn::Atan, OnIntegers::ToFloat},
    {"aten::sinh", NumFn::Sinh, OnIntegers::ToFloat},
    {"aten::cosh", NumFn::Cosh, OnIntegers::ToFloat},
    {"aten::tanh", NumFn::Tanh, OnIntegers::ToFloat},
    {"aten::asinh", NumFn::Asinh, OnIntegers::ToFloat},
    {"aten::arcsinh", NumFn::Asinh, OnIntegers::ToFloat},
    {"aten::acosh", NumFn::Acosh, OnIntegers::ToFloat},
    {"aten::arccosh", NumFn::Acosh, OnIntegers::ToFloat},
    {"aten::atanh", NumFn::Atanh, OnIntegers::ToFloat},
    {"aten::arctanh", NumFn::Atanh, OnIntegers::ToFloat},
};

const UnaryKind* unary_kind(const std::string& kind) {
    for (const auto& k : kUnaryKinds) {
        if (kind == k.kind) return &k;
    }
    return nullptr;
}

Expr constant_like(const PtContext& ctx, const Expr& x, double v) {
    return scalar_constant(ctx, ctx.tensor_type(x, "the operand").dtype, v);
}

// fn(x) for a floating-point tensor x (or one of PyTorch's integer cases).
Expr tensor_unary(const PtContext& ctx, NumFn fn, const Expr& x) {
    DataType t = ctx.tensor_type(x, "the operand").dtype;
    auto multiply_by = [&](const Expr& e, double c) {
        return ctx.call("multiply", {e, constant_like(ctx, e, c)});
    };
    switch (fn) {
        case NumFn::Neg:
            return ctx.call("negative", {x});
        case NumFn::Abs:
            return ctx.call("abs", {x});
        case NumFn::Sign:
            return t.is_bool() ? x : ctx.call("sign", {x});
        case NumFn::Floor:
            return ctx.call("floor", {x});
        case NumFn::Ceil:
            return ctx.call("ceil", {x});
        case NumFn::Round:
            return ctx.call("round", {x});
        case NumFn::Trunc: {
            Expr negative = ctx.call("less", {x, constant_like(ctx, x, 0)});
            return ctx.call("where", {negative, ctx.call("ceil", {x}), ctx.call("floor", {x})});
        }
        case NumFn::Sqrt:
            return ctx.call("sqrt", {x});
        case NumFn::Exp:
            return ctx.call("exp", {x});
        case NumFn::Expm1:
            return ctx.call("subtract", {ctx.call("exp", {x}), constant_like(ctx, x, 1)});
        case NumFn::Log:
            return ctx.call("log", {x});
        case NumFn::Log2:
            return multiply_by(ctx.call("log", {x}), 1.0 / std::log(2.0));
        case NumFn::Log10:
            return multiply_by(ctx.call("log", {x}), 1.0 / std::log(10.0));
        case NumFn::Log1p:
            return ctx.call("log", {ctx.call("add", {x, constant_like(ctx, x, 1)})});
        case NumFn::Erf:
            return ctx.call("erf", {x});
        case NumFn::Erfc:
            return ctx.call("subtract", {constant_like(ctx, x, 1), ctx.call("erf", {x})});
        case NumFn::Sin:
            return ctx.call("sin", {x});
        case NumFn::Cos:
            return ctx.call("cos", {x});
        case NumFn::Tan:
            return ctx.call("tan", {x});
        case NumFn::Asin:
            return ctx.call("asin", {x});
        case NumFn::Acos:
            return ctx.call("acos", {x});
        case NumFn::Atan:
            return ctx.call("atan", {x});
        case NumFn::Sinh:
            return ctx.call("sinh", {x});
        case NumFn::Cosh:
            return ctx.call("cosh", {x});
        case NumFn::Tanh:
            return ctx.call("tanh", {x});
        case NumFn::Asinh:
            return ctx.call("asinh", {x});
        case NumFn::Acosh:
            return ctx.call("acosh", {x});
        case NumFn::Atanh:
            return ctx.call("atanh", {x});
        case NumFn::Not:
            break;
    }
    ctx.error() << "has no tensor form";
    ANVIL_UNREACHABLE();
}

// The element type fn gives for an operand of type t, after PyTorch's rules.
DataType unary_result_dtype(const PtContext& ctx, const UnaryKind& k, DataType t) {
    if (t.is_floating()) return t;
    if (k.on_integers == OnIntegers::ToFloat) return DataType::float32();
    if (t.is_bool() && (k.fn == NumFn::Neg || k.fn == NumFn::Abs)) {
        ctx.error() << k.kind << " of a bool tensor is not supported (by PyTorch either); use ~ "
                    << "or logical_not";
    }
    return t;
}

// round(x, decimals=d): x * 10^d rounded (half to even), divided back, as PyTorch computes it.
Expr round_decimals(const PtContext& ctx, const Expr& x, int64_t decimals) {
    DataType t = ctx.tensor_type(x, "the operand").dtype;
    if (!t.is_floating() || decimals == 0) return decimals == 0 ? ctx.call("round", {x}) : x;
    double scale = std::pow(10.0, static_cast<double>(std::llabs(decimals)));
    Expr s = scalar_constant(ctx, t, scale);
    if (decimals > 0) {
        return ctx.call("divide", {ctx.call("round", {ctx.call("multiply", {x, s})}), s});
    }
    return ctx.call("multiply", {ctx.call("round", {ctx.call("divide", {x, s})}), s});
}

}  // namespace

// neg, abs, sign, floor, ceil, round(x, decimals=0), trunc, sqrt, exp, log, ..., atanh, on a
// tensor or a number; log(a, b) of two numbers.
PtValues convert_unary_math(PtContext& ctx) {
    const UnaryKind* k = unary_kind(ctx.kind());
    if (!k) ctx.error() << "is not a unary math op";
    const PtValue& v = ctx.input(0);
    bool two_numbers = ctx.num_inputs() == 2 && ctx.kind() == "aten::log";
    int64_t decimals = 0;
    if (k->fn == NumFn::Round && ctx.num_inputs() > 1 && !ctx.is_none(1)) {
        decimals = ctx.int_arg(1);
        if (decimals < -400 || decimals > 400)
            ctx.error() << "round to " << decimals << " decimals";
    }
    if (auto n = known_number(ctx, v); n && decimals == 0) {
        std::optional<PtValue> r = number_unary(ctx, k->fn, *n);
        if (r && two_numbers) {  // log(a, base)
            auto base = known_number(ctx, ctx.input(1));
            auto log_base = base ? number_unary(ctx, NumFn::Log, *base) : std::nullopt;
            r = log_base ? number_binary(ctx, NumOp::Div, *r, *log_base) : std::nullopt;
        }
        if (r && v.kind != PtValue::Tensor) {
            return {number_as(*r, output_number_kind(ctx, r->kind))};
        }
        if (r) {
            DataType t = ctx.tensor_type(v.tensor, "the operand").dtype;
            if (Expr e = number_tensor_of(ctx, *r, unary_result_dtype(ctx, *k, t)); e.defined()) {
                return {PtValue::of_tensor(e)};
            }
        }
    }
    if (two_numbers) {
        ctx.error() << "log(a, base) of numbers known only at run time is not supported";
    }
    Expr x = ctx.tensor(0);
    DataType t = ctx.tensor_type(x, "the operand").dtype;
    DataType out = unary_result_dtype(ctx, *k, t);
    Expr r;
    if (!t.is_floating() && k->on_integers == OnIntegers::Identity) {
        r = x;
    } else if (decimals != 0) {
        r = round_decimals(ctx, x, decimals);
    } else {
        r = tensor_unary(ctx, k->fn, cast_to(ctx, x, out));
    }
    return {elementwise_result(ctx, r, {0})};
}

namespace {

// Operand 0 as a floating-point tensor: integer and bool tensors become float32, as PyTorch's
// float-valued ops make them.
Expr float_operand(const PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType t = ctx.tensor_type(x, "the operand").dtype;
    return t.is_floating() ? x : cast_to(ctx, x, DataType::float32());
}

}  // namespace

// reciprocal, rsqrt, exp2, frac, square, positive: tensors only.
PtValues convert_tensor_math(PtContext& ctx) {
    const std::string& kind = ctx.kind();
    Expr r;
    if (kind == "aten::reciprocal") {
        Expr x = float_operand(ctx);
        r = ctx.call("divide", {constant_like(ctx, x, 1), x});
    } else if (kind == "aten::rsqrt") {
        r = ctx.call("rsqrt", {float_operand(ctx)});
    } else if (kind == "aten::exp2") {
        Expr x = float_operand(ctx);
        r = ctx.call("power", {constant_like(ctx, x, 2), x});
    } else if (kind == "aten::frac") {
        Expr x = ctx.tensor(0);
        DataType t = ctx.tensor_type(x, "the operand").dtype;
        if (!t.is_floating()) {
            ctx.error() << "frac of a " << t.str() << " tensor is not supported (by PyTorch "
                        << "either)";
        }
        r = ctx.call("subtract", {x, tensor_unary(ctx, NumFn::Trunc, x)});
    } else if (kind == "aten::square") {
        Expr x = ctx.tensor(0);
        if (ctx.tensor_type(x, "the operand").dtype.is_bool())
            x = cast_to(ctx, x, DataType::int64());
        r = ctx.call("multiply", {x, x});
    } else if (kind == "aten::positive") {
        r = ctx.tensor(0);
    } else {
        ctx.error() << "is not a tensor math op";
    }
    return {elementwise_result(ctx, r, {0})};
}

// isnan, isinf, isposinf, isneginf, isfinite: bool tensors. Integers are never nan or infinite.
PtValues convert_float_class(PtContext& ctx) {
    const std::string& kind = ctx.kind();
    Expr x = ctx.tensor(0);
    DataType t = ctx.tensor_type(x, "the operand").dtype;
    bool finite_check = kind == "aten::isfinite";
    if (!t.is_floating()) {
        // x == x is true and x != x false for every integer: a result of x's shape.
        return {
            elementwise_result(ctx, ctx.call(finite_check ? "equal" : "not_equal", {x, x}), {0})};
    }
    const double inf = std::numeric_limits<double>::infinity();
    Expr r;
    if (kind == "aten::isnan") {
        r = ctx.call("not_equal", {x, x});
    } else if (kind == "aten::isinf") {
        r = ctx.call("equal", {ctx.call("abs", {x}), constant_like(ctx, x, inf)});
    } else if (kind == "aten::isposinf") {
        r = ctx.call("equal", {x, constant_like(ctx, x, inf)});
    } else if (kind == "aten::isneginf") {
        r = ctx.call("equal", {x, constant_like(ctx, x, -inf)});
    } else {
        r = ctx.call("less", {ctx.call("abs", {x}), constant_like(ctx, x, inf)});  // false for nan
    }
    return {elementwise_result(ctx, r, {0})};
}

// logical_not (any tensor: x == 0) and bitwise_not (~: not of a bool, every bit flipped of an
// integer).
PtValues convert_not_ops(PtContext& ctx) {
    if (auto n = known_number(ctx, ctx.input(0)); n && ctx.input(0).kind != PtValue::Tensor) {
        bool logical = ctx.kind() == "aten::logical_not" || n->kind == PtValue::Bool;
        if (logical) return {*number_unary(ctx, NumFn::Not, number_as(*n, PtValue::Bool))};
        return {make_number(PtValue::Int, -1 - cast(DataType::int64(), n->scalar))};
    }
    Expr x = ctx.tensor(0);
    DataType t = ctx.tensor_type(x, "the operand").dtype;
    Expr r;
    if (t.is_bool()) {
        r = ctx.call("logical_not", {x});
    } else if (ctx.kind() == "aten::logical_not") {
        r = ctx.call("equal", {x, constant_like(ctx, x, 0)});
    } else if (t.is_floating()) {
        ctx.error() << "bitwise_not of a " << t.str() << " tensor is not supported (by PyTorch "
                    << "either)";
    } else {
        r = ctx.call("bitwise_not", {x});
    }
    return {elementwise_result(ctx, r, {0})};
}

// clamp/clip(x, min=None, max=None) with number or tensor bounds, clamp_min, clamp_max:
// min(max(x, min), max), in the type x and the bounds promote to (an integer tensor clamped to
// 0.5 is float).
PtValues convert_clamp(PtContext& ctx) {
    const std::string& kind = ctx.kind();
    size_t lo = 1, hi = 2;
    if (kind == "aten::clamp_min") hi = 99;
    if (kind == "aten::clamp_max") lo = 99, hi = 1;
    bool has_lo = lo < ctx.num_inputs() && !ctx.is_none(lo);
    bool has_hi = hi < ctx.num_inputs() && !ctx.is_none(hi);
    if (!has_lo && !has_hi) ctx.error() << "at least one of min and max must not be None";
    std::vector<size_t> operands = {0};
    if (has_lo) operands.push_back(lo);
    if (has_hi) operands.push_back(hi);
    DataType t = operands.size() == 3 ? promoted_dtype(ctx, {0, lo, hi})
                                      : promoted_dtype(ctx, {0, operands[1]});
    if (t.is_bool()) ctx.error() << "clamp of a bool tensor is not supported";
    Expr x = operand_as(ctx, 0, t);
    auto import_time = [&](bool has, size_t i) { return !has || ctx.input(i).is_import_time(); };
    if (import_time(has_lo, lo) && import_time(has_hi, hi)) {
        const double inf = std::numeric_limits<double>::infinity();
        double a = has_lo ? ctx.float_arg(lo) : -inf, b = has_hi ? ctx.float_arg(hi) : inf;
        if (a <= b) {  // clip's bounds; min > max (every value becomes max) is composed
            auto [attrs, c] = new_attrs<ops::ClipAttrs>();
            c->a_min = a;
            c->a_max = b;
            return {PtValue::of_tensor(ctx.call("clip", {x}, attrs))};
        }
    }
    Expr r = x;
    if (has_lo) r = ctx.call("maximum", {r, operand_as(ctx, lo, t)});
    if (has_hi) r = ctx.call("minimum", {r, operand_as(ctx, hi, t)});
    return {PtValue::of_tensor(r)};
}

}  // namespace anvil::frontend::pytorch
