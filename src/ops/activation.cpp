// Activations with attributes or several primitive steps: clip, leaky_relu, prelu, gelu,
// hardswish, hardsigmoid, softplus, elu, selu, mish. All are elementwise (prelu broadcasts its
// slope) and fuse into anything; standing alone they use the injective schedule. The plain ones
// (relu, sigmoid, tanh, erf) live in elementwise.cpp.
#include "ops/activation.h"

#include <cmath>

#include "graph/op.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/tensor_shape.h"
#include "support/error.h"
#include "te/math.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::Type;

namespace {

// Every activation here is defined on floats only, except clip, which ONNX also defines for
// integers.
Type float_unary_type(const Op& op, const std::vector<Type>& args, const Attrs&,
                      const SourceLoc& loc) {
    const auto& t = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    if (!t.dtype.is_floating()) {
        user_error(loc) << op.name << " needs a floating-point input, got " << t.dtype.str()
                        << "; insert a cast";
    }
    return args[0];
}

Type clip_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
               const SourceLoc& loc) {
    const auto& t = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& a = static_cast<const ClipAttrs&>(attrs);
    if (t.dtype.is_bool()) user_error(loc) << op.name << ": cannot clip a bool tensor";
    if (std::isnan(a.a_min) || std::isnan(a.a_max) || a.a_min > a.a_max) {
        user_error(loc) << op.name << ": a_min " << a.a_min << " is not <= a_max " << a.a_max;
    }
    return args[0];
}

Type gelu_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
               const SourceLoc& loc) {
    const auto& a = static_cast<const GeluAttrs&>(attrs);
    if (a.approximate != "none" && a.approximate != "tanh") {
        user_error(loc) << op.name << ": approximate must be \"none\" or \"tanh\", got \""
                        << a.approximate << "\"";
    }
    return float_unary_type(op, args, attrs, loc);
}

PrimExpr c(const PrimExpr& x, double v) {
    return make_const(x.dtype(), v);
}

// A bound for clip in x's type; undefined when the bound does not constrain x.
PrimExpr clip_bound(DataType t, double v) {
    if (std::isinf(v)) return PrimExpr();
    if (t.is_floating()) return make_const(t, v);
    // Integer tensors: bounds beyond the type's range do not constrain it.
    PrimExpr min_v = min_value(t), max_v = max_value(t);
    const int64_t* lo = as_const_int(min_v);
    const int64_t* hi = as_const_int(max_v);
    if ((lo && v <= static_cast<double>(*lo)) || (hi && v >= static_cast<double>(*hi))) {
        return PrimExpr();
    }
    return make_const(t, v);
}

PrimExpr clip_fn(PrimExpr x, const Attrs& attrs) {
    const auto& a = static_cast<const ClipAttrs&>(attrs);
    PrimExpr lo = clip_bound(x.dtype(), a.a_min), hi = clip_bound(x.dtype(), a.a_max);
    if (lo.defined()) x = max(x, lo);
    if (hi.defined()) x = min(x, hi);
    return x;
}

PrimExpr leaky_relu_fn(PrimExpr x, const Attrs& attrs) {
    double alpha = static_cast<const LeakyReluAttrs&>(attrs).alpha;
    return select(x > c(x, 0), x, x * c(x, alpha));
}

PrimExpr gelu_fn(PrimExpr x, const Attrs& attrs) {
    if (static_cast<const GeluAttrs&>(attrs).approximate == "tanh") {
        const double k = std::sqrt(2.0 / M_PI);
        PrimExpr inner = c(x, k) * (x + c(x, 0.044715) * x * x * x);
        return c(x, 0.5) * x * (c(x, 1) + te::tanh(inner));
    }
    return c(x, 0.5) * x * (c(x, 1) + te::erf(x * c(x, M_SQRT1_2)));
}

PrimExpr hardswish_fn(PrimExpr x, const Attrs&) {
    return x * max(c(x, 0), min(c(x, 1), x * c(x, 1.0 / 6) + c(x, 0.5)));
}

PrimExpr hardsigmoid_fn(PrimExpr x, const Attrs& attrs) {
    const auto& a = static_cast<const HardSigmoidAttrs&>(attrs);
    return max(c(x, 0), min(c(x, 1), x * c(x, a.alpha) + c(x, a.beta)));
}

// log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|)).
PrimExpr softplus_fn(PrimExpr x, const Attrs&) {
    return max(x, c(x, 0)) + te::log(c(x, 1) + te::exp(-te::abs(x)));
}

// exp(x) - 1 for the x <= 0 branch; select evaluates both branches, so the exponent is capped
// at 0 to keep the branch not taken from overflowing.
PrimExpr expm1_negative(const PrimExpr& x) {
    return te::exp(min(x, c(x, 0))) - c(x, 1);
}

PrimExpr elu_fn(PrimExpr x, const Attrs& attrs) {
    double alpha = static_cast<const EluAttrs&>(attrs).alpha;
    return select(x > c(x, 0), x, c(x, alpha) * expm1_negative(x));
}

PrimExpr selu_fn(PrimExpr x, const Attrs& attrs) {
    const auto& a = static_cast<const SeluAttrs&>(attrs);
    return c(x, a.gamma) * select(x > c(x, 0), x, c(x, a.alpha) * expm1_negative(x));
}

// tanh(log(1 + u)) = n / (n + 2) with u = exp(x) and n = u (u + 2): one exp instead of three
// nested transcendental functions, whose polynomial expansions would multiply. Beyond x = 20
// the factor is 1 in float32, and clamping there keeps n finite.
PrimExpr mish_fn(PrimExpr x, const Attrs&) {
    PrimExpr u = te::exp(min(x, c(x, 20)));
    PrimExpr n = u * (u + c(x, 2));
    return x * (n / (n + c(x, 2)));
}

using ActivationFn = PrimExpr (*)(PrimExpr, const Attrs&);

template <ActivationFn Fn, const char* Name>
std::vector<te::Tensor> activation_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    te::Tensor x = in[0];
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            return Fn(x(std::vector<PrimExpr>(i.begin(), i.end())), attrs);
        },
        Name)};
}

// ---- prelu --------------------------------------------------------------------------------

Type prelu_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                const SourceLoc& loc) {
    float_unary_type(op, args, attrs, loc);
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    const auto& alpha = graph::expect_tensor(args[1], loc, "the slope (input 1) of " + op.name);
    if (alpha.dtype != x.dtype) {
        user_error(loc) << op.name << ": the slope has type " << alpha.dtype.str()
                        << " but the input has " << x.dtype.str();
    }
    if (alpha.ndim() == 1) {
        int64_t axis = normalize_axis(static_cast<const PReluAttrs&>(attrs).axis,
                                      static_cast<int64_t>(x.ndim()), loc, op.name);
        if (!is_one(alpha.shape[0]) &&
            !(as_const_int(alpha.shape[0]) && as_const_int(x.shape[axis]) &&
              *as_const_int(alpha.shape[0]) == *as_const_int(x.shape[axis]))) {
            user_error(loc) << op.name << ": the slope has " << dim_str(alpha.shape[0])
                            << " elements but axis " << axis << " of the input "
                            << shape_str(x.shape) << " has " << dim_str(x.shape[axis]);
        }
        return args[0];
    }
    auto shape = broadcast_shape({x.shape, alpha.shape}, loc, op.name);
    if (shape.size() != x.ndim()) {
        user_error(loc) << op.name << ": the slope " << shape_str(alpha.shape)
                        << " has more dimensions than the input " << shape_str(x.shape);
    }
    for (size_t d = 0; d < shape.size(); ++d) {
        if (!is_one(shape[d]) && is_one(x.shape[d])) {
            user_error(loc) << op.name << ": the slope " << shape_str(alpha.shape)
                            << " does not broadcast onto the input " << shape_str(x.shape);
        }
    }
    return args[0];
}

std::vector<te::Tensor> prelu_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                      const Type& out) {
    te::Tensor x = in[0], alpha = in[1];
    int64_t axis = static_cast<const PReluAttrs&>(attrs).axis;
    if (axis < 0) axis += static_cast<int64_t>(x.ndim());
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            PrimExpr v = x(std::vector<PrimExpr>(i.begin(), i.end()));
            PrimExpr slope;
            if (alpha.ndim() == 1) {
                slope = alpha(is_one(alpha.shape()[0]) ? PrimExpr(0) : i[axis]);
            } else {
                slope = alpha(broadcast_index(alpha.shape(), i));
            }
            return select(v > c(v, 0), v, v * slope);
        },
        "prelu")};
}

#define ANVIL_NAME(id, text) constexpr char k_##id[] = text;
ANVIL_NAME(clip, "clip")
ANVIL_NAME(leaky_relu, "leaky_relu")
ANVIL_NAME(gelu, "gelu")
ANVIL_NAME(hardswish, "hardswish")
ANVIL_NAME(hardsigmoid, "hardsigmoid")
ANVIL_NAME(softplus, "softplus")
ANVIL_NAME(elu, "elu")
ANVIL_NAME(selu, "selu")
ANVIL_NAME(mish, "mish")
#undef ANVIL_NAME

}  // namespace

Ref<Op> make_clip_op() {
    return make_op({.name = "clip",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<ClipAttrs>,
                    .infer_type = clip_type,
                    .compute = activation_compute<clip_fn, k_clip>,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "min(max(x, a_min), a_max)"});
}

Ref<Op> make_leaky_relu_op() {
    return make_op({.name = "nn.leaky_relu",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<LeakyReluAttrs>,
                    .infer_type = float_unary_type,
                    .compute = activation_compute<leaky_relu_fn, k_leaky_relu>,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "x > 0 ? x : alpha * x"});
}

Ref<Op> make_prelu_op() {
    return make_op({.name = "nn.prelu",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<PReluAttrs>,
                    .infer_type = prelu_type,
                    .compute = prelu_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Broadcast,
                    .description = "x > 0 ? x : slope * x, slope per channel"});
}

Ref<Op> make_gelu_op() {
    return make_op({.name = "nn.gelu",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<GeluAttrs>,
                    .infer_type = gelu_type,
                    .compute = activation_compute<gelu_fn, k_gelu>,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "0.5 x (1 + erf(x / sqrt 2)), or its tanh approximation"});
}

Ref<Op> make_hardswish_op() {
    return make_op({.name = "nn.hardswish",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<graph::NoAttrs>,
                    .infer_type = float_unary_type,
                    .compute = activation_compute<hardswish_fn, k_hardswish>,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "x * max(0, min(1, x / 6 + 1/2))"});
}

Ref<Op> make_hardsigmoid_op() {
    return make_op({.name = "nn.hardsigmoid",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<HardSigmoidAttrs>,
                    .infer_type = float_unary_type,
                    .compute = activation_compute<hardsigmoid_fn, k_hardsigmoid>,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "max(0, min(1, alpha * x + beta))"});
}

Ref<Op> make_softplus_op() {
    return make_op({.name = "nn.softplus",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<graph::NoAttrs>,
                    .infer_type = float_unary_type,
                    .compute = activation_compute<softplus_fn, k_softplus>,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "log(1 + exp(x))"});
}

Ref<Op> make_elu_op() {
    return make_op({.name = "nn.elu",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<EluAttrs>,
                    .infer_type = float_unary_type,
                    .compute = activation_compute<elu_fn, k_elu>,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "x > 0 ? x : alpha * (exp(x) - 1)"});
}

Ref<Op> make_selu_op() {
    return make_op({.name = "nn.selu",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<SeluAttrs>,
                    .infer_type = float_unary_type,
                    .compute = activation_compute<selu_fn, k_selu>,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "gamma * (x > 0 ? x : alpha * (exp(x) - 1))"});
}

Ref<Op> make_mish_op() {
    return make_op({.name = "nn.mish",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<graph::NoAttrs>,
                    .infer_type = float_unary_type,
                    .compute = activation_compute<mish_fn, k_mish>,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "x * tanh(softplus(x))"});
}

}  // namespace anvil::ops
