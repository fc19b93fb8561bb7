// Converters of torch.nn's activations (in their functional, method and in-place forms, which
// TorchScript records as the same aten ops) and of softmax/log_softmax. Each is the graph's
// activation op where one has PyTorch's definition (nn.gelu, nn.elu, nn.hardsigmoid, ...), or a
// short composition of elementwise ops that follows PyTorch's formula, thresholds included
// (softplus returns x itself above its threshold).
#include <cmath>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/number_ops.h"
#include "ir/analyzer.h"
#include "ops/activation.h"
#include "ops/softmax.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

DataType dtype_of(const PtContext& ctx, const Expr& x) {
    return ctx.tensor_type(x, "the input").dtype;
}

Expr constant_like(const PtContext& ctx, const Expr& x, double v) {
    return scalar_constant(ctx, dtype_of(ctx, x), v);
}

// Operand i as a number (a Scalar argument) or `fallback` when the node leaves it out.
double scalar_or(const PtContext& ctx, size_t i, double fallback) {
    return i < ctx.num_inputs() && !ctx.is_none(i) ? ctx.float_arg(i) : fallback;
}

// The input, which these activations need floating-point, as PyTorch's kernels do.
Expr float_input(const PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType t = dtype_of(ctx, x);
    if (!t.is_floating()) {
        ctx.error() << ctx.kind() << " of a " << t.str()
                    << " tensor is not supported (by PyTorch either); convert it to a floating "
                       "type first";
    }
    return x;
}

Expr clip(const PtContext& ctx, const Expr& x, double lo, double hi) {
    if (lo > hi) ctx.error() << "min_val " << lo << " is greater than max_val " << hi;
    auto [attrs, a] = new_attrs<ops::ClipAttrs>();
    a->a_min = lo;
    a->a_max = hi;
    return ctx.call("clip", {x}, attrs);
}

Expr leaky_relu(const PtContext& ctx, const Expr& x, double slope) {
    auto [attrs, a] = new_attrs<ops::LeakyReluAttrs>();
    a->alpha = slope;
    return ctx.call("nn.leaky_relu", {x}, attrs);
}

Expr elu(const PtContext& ctx, const Expr& x, double alpha) {
    auto [attrs, a] = new_attrs<ops::EluAttrs>();
    a->alpha = alpha;
    return ctx.call("nn.elu", {x}, attrs);
}

Expr mul(const PtContext& ctx, const Expr& x, double c) {
    return c == 1.0 ? x : ctx.call("multiply", {x, constant_like(ctx, x, c)});
}

// One half of x along `axis`: [0, n/2) or [n/2, n).
Expr half(const PtContext& ctx, const Expr& x, int64_t axis, bool second) {
    PrimExpr n = cast(DataType::int64(), ctx.tensor_type(x, "the input").shape[axis]);
    if (const std::optional<int64_t> c = known_int(n); c && *c % 2 != 0) {
        ctx.error() << "glu halves dimension " << axis << ", whose size " << *c << " is odd";
    }
    PrimExpr mid = simplify(floordiv(n, make_int(DataType::int64(), 2)));
    PrimExpr begin = second ? mid : make_int(DataType::int64(), 0);
    PrimExpr end = second ? n : mid;
    auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
    const std::optional<int64_t> b = known_int(begin);
    const std::optional<int64_t> e = known_int(end);
    if (b && e) {
        a->begin = {*b};
        a->end = {*e};
        a->axes = {axis};
    } else {
        a->dynamic_begin = {begin};
        a->dynamic_end = {end};
        a->dynamic_axes = {make_int(DataType::int64(), axis)};
    }
    return ctx.call("strided_slice", {x}, attrs);
}

}  // namespace

// relu, relu6, hardtanh(x, min_val=-1, max_val=1): also for integer tensors, as in PyTorch.
PtValues convert_relu(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    if (dtype_of(ctx, x).is_bool()) ctx.error() << "relu of a bool tensor is not supported";
    if (ctx.kind() == "aten::relu") return {PtValue::of_tensor(ctx.call("nn.relu", {x}))};
    if (ctx.kind() == "aten::relu6") return {PtValue::of_tensor(clip(ctx, x, 0, 6))};
    return {PtValue::of_tensor(clip(ctx, x, scalar_or(ctx, 1, -1), scalar_or(ctx, 2, 1)))};
}

// leaky_relu(x, negative_slope=0.01); rrelu(x, lower, upper, training=False) at inference is
// leaky_relu with the mean slope (lower + upper) / 2.
PtValues convert_leaky_relu(PtContext& ctx) {
    Expr x = float_input(ctx);
    if (ctx.kind() == "aten::rrelu") {
        if (ctx.num_inputs() > 3 && !ctx.is_none(3) && ctx.bool_arg(3)) {
            ctx.error() << "rrelu in training mode draws random slopes; only inference "
                           "(training=False) is supported";
        }
        double lower = scalar_or(ctx, 1, 1.0 / 8), upper = scalar_or(ctx, 2, 1.0 / 3);
        return {PtValue::of_tensor(leaky_relu(ctx, x, (lower + upper) / 2))};
    }
    return {PtValue::of_tensor(leaky_relu(ctx, x, scalar_or(ctx, 1, 0.01)))};
}

// prelu(x, weight): one slope, or one per channel (dimension 1; a tensor of rank < 2 has one).
PtValues convert_prelu(PtContext& ctx) {
    Expr x = float_input(ctx);
    Expr w = ctx.tensor(1);
    int64_t rank = ctx.rank(x);
    const auto& wt = ctx.tensor_type(w, "the weight");
    if (wt.dtype != dtype_of(ctx, x)) {
        ctx.error() << "the weight has type " << wt.dtype.str() << " but the input has "
                    << dtype_of(ctx, x).str();
    }
    if (rank == 0) ctx.error() << "prelu of a 0-d tensor is not supported";
    std::vector<int64_t> shape = ctx.static_shape(w, "the weight");
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    if (shape.size() != 1) w = reshape_to(ctx, w, {n});
    auto [attrs, a] = new_attrs<ops::PReluAttrs>();
    a->axis = rank >= 2 ? 1 : 0;
    if (rank < 2 && n != 1) {
        ctx.error() << "the weight has " << n << " slopes, but a tensor of rank " << rank
                    << " has one channel";
    }
    return {PtValue::of_tensor(ctx.call("nn.prelu", {x, w}, attrs))};
}

// elu(x, alpha=1, scale=1, input_scale=1) = scale * (x > 0 ? x : alpha * (exp(x *
// input_scale) - 1)); celu(x, alpha) = elu with input_scale 1/alpha; selu.
PtValues convert_elu(PtContext& ctx) {
    Expr x = float_input(ctx);
    if (ctx.kind() == "aten::selu") return {PtValue::of_tensor(ctx.call("nn.selu", {x}))};
    if (ctx.kind() == "aten::celu") {
        double alpha = scalar_or(ctx, 1, 1.0);
        if (alpha == 0) ctx.error() << "celu's alpha must not be 0";
        // alpha * elu(x / alpha): x above 0, alpha * (exp(x / alpha) - 1) below.
        return {PtValue::of_tensor(mul(ctx, elu(ctx, mul(ctx, x, 1.0 / alpha), 1.0), alpha))};
    }
    double alpha = scalar_or(ctx, 1, 1.0), scale = scalar_or(ctx, 2, 1.0);
    double input_scale = scalar_or(ctx, 3, 1.0);
    if (input_scale == 1.0) return {PtValue::of_tensor(mul(ctx, elu(ctx, x, alpha), scale))};
    // The negative branch reads x * input_scale; the positive one x itself.
    Expr zero = constant_like(ctx, x, 0);
    Expr neg = elu(ctx, mul(ctx, ctx.call("minimum", {x, zero}), input_scale), alpha);
    Expr r = ctx.call("add", {ctx.call("maximum", {x, zero}), neg});
    return {PtValue::of_tensor(mul(ctx, r, scale))};
}

// gelu(x, approximate='none' | 'tanh').
PtValues convert_gelu(PtContext& ctx) {
    Expr x = float_input(ctx);
    std::string approximate = ctx.num_inputs() > 1 && !ctx.is_none(1) ? ctx.str_arg(1) : "none";
    if (approximate != "none" && approximate != "tanh") {
        ctx.error() << "approximate must be 'none' or 'tanh', got '" << approximate << "'";
    }
    auto [attrs, a] = new_attrs<ops::GeluAttrs>();
    a->approximate = approximate;
    return {PtValue::of_tensor(ctx.call("nn.gelu", {x}, attrs))};
}

// sigmoid (integer tensors give float32), silu = x * sigmoid(x), mish, hardswish,
// hardsigmoid = relu6(x + 3) / 6, log_sigmoid = -softplus(-x).
PtValues convert_sigmoid_family(PtContext& ctx) {
    const std::string& kind = ctx.kind();
    if (kind == "aten::sigmoid") {
        Expr x = ctx.tensor(0);
        if (!dtype_of(ctx, x).is_floating()) x = cast_to(ctx, x, DataType::float32());
        return {PtValue::of_tensor(ctx.call("sigmoid", {x}))};
    }
    Expr x = float_input(ctx);
    if (kind == "aten::silu") {
        return {PtValue::of_tensor(ctx.call("multiply", {x, ctx.call("sigmoid", {x})}))};
    }
    if (kind == "aten::mish") return {PtValue::of_tensor(ctx.call("nn.mish", {x}))};
    if (kind == "aten::hardswish") return {PtValue::of_tensor(ctx.call("nn.hardswish", {x}))};
    if (kind == "aten::hardsigmoid") {
        auto [attrs, a] = new_attrs<ops::HardSigmoidAttrs>();
        a->alpha = 1.0 / 6;
        a->beta = 0.5;
        return {PtValue::of_tensor(ctx.call("nn.hardsigmoid", {x}, attrs))};
    }
    // log_sigmoid
    Expr sp = ctx.call("nn.softplus", {ctx.call("negative", {x})});
    return {PtValue::of_tensor(ctx.call("negative", {sp}))};
}

// softplus(x, beta=1, threshold=20) = log(1 + exp(beta * x)) / beta, and x itself where
// beta * x > threshold.
PtValues convert_softplus(PtContext& ctx) {
    Expr x = float_input(ctx);
    double beta = scalar_or(ctx, 1, 1.0), threshold = scalar_or(ctx, 2, 20.0);
    if (beta == 0) ctx.error() << "softplus's beta must not be 0";
    Expr bx = mul(ctx, x, beta);
    Expr soft = mul(ctx, ctx.call("nn.softplus", {bx}), 1.0 / beta);
    Expr linear = ctx.call("greater", {bx, constant_like(ctx, x, threshold)});
    return {PtValue::of_tensor(ctx.call("where", {linear, x, soft}))};
}

// softshrink(x, lambd) = x - lambd above lambd, x + lambd below -lambd, else 0;
// hardshrink(x, lambd) = x outside [-lambd, lambd], else 0; threshold(x, threshold, value) = x
// above threshold, else value.
PtValues convert_shrink(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType t = dtype_of(ctx, x);
    if (t.is_bool()) ctx.error() << ctx.kind() << " of a bool tensor is not supported";
    if (ctx.kind() == "aten::threshold") {
        Expr above = ctx.call("greater", {x, constant_like(ctx, x, ctx.float_arg(1))});
        return {PtValue::of_tensor(
            ctx.call("where", {above, x, constant_like(ctx, x, ctx.float_arg(2))}))};
    }
    x = float_input(ctx);
    double lambd = scalar_or(ctx, 1, 0.5);
    Expr zero = constant_like(ctx, x, 0), lo = constant_like(ctx, x, -lambd);
    Expr hi = constant_like(ctx, x, lambd);
    Expr above = ctx.call("greater", {x, hi}), below = ctx.call("less", {x, lo});
    if (ctx.kind() == "aten::hardshrink") {
        return {PtValue::of_tensor(
            ctx.call("where", {ctx.call("logical_or", {above, below}), x, zero}))};
    }
    if (lambd < 0) ctx.error() << "softshrink's lambd must not be negative, got " << lambd;
    Expr inner = ctx.call("where", {below, ctx.call("add", {x, hi}), zero});
    return {PtValue::of_tensor(ctx.call("where", {above, ctx.call("subtract", {x, hi}), inner}))};
}

// glu(x, dim=-1) = a * sigmoid(b), a and b the halves of x along dim.
PtValues convert_glu(PtContext& ctx) {
    Expr x = float_input(ctx);
    int64_t rank = ctx.rank(x);
    if (rank == 0) ctx.error() << "glu of a 0-d tensor";
    int64_t axis = ctx.normalize_axis(ctx.num_inputs() > 1 ? ctx.int_arg(1) : -1, rank, "dim");
    Expr a = half(ctx, x, axis, false), b = half(ctx, x, axis, true);
    return {PtValue::of_tensor(ctx.call("multiply", {a, ctx.call("sigmoid", {b})}))};
}

// softmax / log_softmax(x, dim, dtype=None) (x converted to dtype first), and the traced
// _softmax / _log_softmax(x, dim, half_to_float).
PtValues convert_softmax(PtContext& ctx) {
    const std::string& kind = ctx.kind();
    Expr x = ctx.tensor(0);
    if (kind == "aten::_softmax" || kind == "aten::_log_softmax") {
        if (ctx.num_inputs() > 2 && ctx.bool_arg(2)) x = cast_to(ctx, x, DataType::float32());
    } else if (auto dt = ctx.num_inputs() > 2 ? ctx.dtype_arg(2) : std::nullopt) {
        x = cast_to(ctx, x, *dt);
    }
    DataType t = dtype_of(ctx, x);
    if (!t.is_floating()) {
        ctx.error() << kind << " of a " << t.str()
                    << " tensor is not supported (by PyTorch either); pass dtype=torch.float32";
    }
    int64_t rank = ctx.rank(x);
    if (rank == 0) {
        // The one element is its own softmax: 1 (log_softmax: 0), wherever it is finite.
        bool log = kind == "aten::log_softmax" || kind == "aten::_log_softmax";
        Expr r = ctx.call("subtract", {x, x});
        return {PtValue::of_tensor(log ? r : ctx.call("exp", {r}))};
    }
    auto [attrs, a] = new_attrs<ops::SoftmaxAttrs>();
    a->axis = ctx.normalize_axis(ctx.int_arg(1), rank, "dim");
    bool log = kind == "aten::log_softmax" || kind == "aten::_log_softmax";
    return {PtValue::of_tensor(ctx.call(log ? "nn.log_softmax" : "nn.softmax", {x}, attrs))};
}

}  // namespace anvil::frontend::pytorch
