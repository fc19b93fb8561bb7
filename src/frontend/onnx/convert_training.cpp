// Converters of the optimizers of domain ai.onnx.preview.training (Adagrad, Momentum, Adam), as
// elementwise compositions following ONNX's reference. Inputs: the learning rate R and the
// update count T (scalars, read at run time), then n tensors X, n gradients G and n states per
// kind of state; outputs: the n new X, then the n new states of each kind.
#include "frontend/onnx/convert_ops.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

struct Optimizer {
    ConvertContext& ctx;
    DataType dt;
    Expr r, t;  // as dt

    Expr k(double v) const { return ctx.constant_scalar(dt, v); }
    Expr add(const Expr& a, const Expr& b) const { return ctx.call("add", {a, b}); }
    Expr sub(const Expr& a, const Expr& b) const { return ctx.call("subtract", {a, b}); }
    Expr mul(const Expr& a, const Expr& b) const { return ctx.call("multiply", {a, b}); }
    Expr div(const Expr& a, const Expr& b) const { return ctx.call("divide", {a, b}); }
    Expr t_positive() const { return ctx.call("greater", {t, k(0.0)}); }
};

// The optimizer's view of the node: n tensors and `states` kinds of state.
Optimizer prepare(ConvertContext& ctx, int states, size_t* n) {
    size_t tensors = ctx.num_inputs() - 2;
    if (ctx.num_inputs() < 2 || tensors % static_cast<size_t>(2 + states) != 0) {
        ctx.error() << "expected R, T and " << 2 + states << " groups of equally many tensors, got "
                    << ctx.num_inputs() << " inputs";
    }
    *n = tensors / static_cast<size_t>(2 + states);
    DataType dt = ctx.tensor_type(ctx.input(2), "X").dtype;
    if (!dt.is_floating()) ctx.error() << "X must be floating-point, got " << dt.str();
    auto scalar = [&](size_t i) { return reshape_to(ctx, cast_to(ctx, ctx.input(i), dt), {}); };
    return {ctx, dt, scalar(0), scalar(1)};
}

}  // namespace

// r = R / (1 + T * decay); G' = norm * X + G; H' = H + G'^2; X' = X - r * G' / (sqrt(H') + eps)
Exprs convert_adagrad(ConvertContext& ctx) {
    size_t n = 0;
    Optimizer o = prepare(ctx, 1, &n);
    double decay = ctx.attr_float("decay_factor", 0.0f), eps = ctx.attr_float("epsilon", 0.0f);
    double norm = ctx.attr_float("norm_coefficient", 0.0f);
    Expr r = o.div(o.r, o.add(o.k(1.0), o.mul(o.t, o.k(decay))));
    Exprs xs, hs;
    for (size_t i = 0; i < n; ++i) {
        Expr x = ctx.input(2 + i), g = ctx.input(2 + n + i), h = ctx.input(2 + 2 * n + i);
        Expr greg = o.add(o.mul(o.k(norm), x), g);
        Expr h_new = o.add(h, o.mul(greg, greg));
        Expr adaptive = o.add(ctx.call("sqrt", {h_new}), o.k(eps));
        xs.push_back(o.sub(x, o.mul(r, o.div(greg, adaptive))));
        hs.push_back(h_new);
    }
    xs.insert(xs.end(), hs.begin(), hs.end());
    return xs;
}

// G' = norm * X + G; V' = alpha * V + (T > 0 ? beta : 1) * G';
// X' = X - R * V' (standard) or X - R * (G' + alpha * V') (nesterov)
Exprs convert_momentum(ConvertContext& ctx) {
    size_t n = 0;
    Optimizer o = prepare(ctx, 1, &n);
    double alpha = ctx.attr_float("alpha", 0.0f), beta = ctx.attr_float("beta", 0.0f);
    double norm = ctx.attr_float("norm_coefficient", 0.0f);
    std::string mode = ctx.attr_string("mode", "standard");
    if (mode != "standard" && mode != "nesterov") {
        ctx.error() << "mode '" << mode << "' is not standard or nesterov";
    }
    Expr beta_adj = ctx.call("where", {o.t_positive(), o.k(beta), o.k(1.0)});
    Exprs xs, vs;
    for (size_t i = 0; i < n; ++i) {
        Expr x = ctx.input(2 + i), g = ctx.input(2 + n + i), v = ctx.input(2 + 2 * n + i);
        Expr greg = o.add(o.mul(o.k(norm), x), g);
        Expr v_new = o.add(o.mul(o.k(alpha), v), o.mul(beta_adj, greg));
        Expr step = mode == "standard" ? v_new : o.add(greg, o.mul(o.k(alpha), v_new));
        xs.push_back(o.sub(x, o.mul(o.r, step)));
        vs.push_back(v_new);
    }
    xs.insert(xs.end(), vs.begin(), vs.end());
    return xs;
}

// G' = norm * X + G; V' = alpha * V + (1 - alpha) * G'; H' = beta * H + (1 - beta) * G'^2;
// r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R;
// X' = (1 - norm_post) * (X - r * V' / (sqrt(H') + eps))
Exprs convert_adam(ConvertContext& ctx) {
    size_t n = 0;
    Optimizer o = prepare(ctx, 2, &n);
    double alpha = ctx.attr_float("alpha", 0.9f), beta = ctx.attr_float("beta", 0.999f);
    double eps = ctx.attr_float("epsilon", 1e-6f), norm = ctx.attr_float("norm_coefficient", 0.0f);
    double norm_post = ctx.attr_float("norm_coefficient_post", 0.0f);
    Expr bias_fix = o.div(ctx.call("sqrt", {o.sub(o.k(1.0), ctx.call("power", {o.k(beta), o.t}))}),
                          o.sub(o.k(1.0), ctx.call("power", {o.k(alpha), o.t})));
    Expr r = ctx.call("where", {o.t_positive(), o.mul(o.r, bias_fix), o.r});
    Exprs xs, vs, hs;
    for (size_t i = 0; i < n; ++i) {
        Expr x = ctx.input(2 + i), g = ctx.input(2 + n + i);
        Expr v = ctx.input(2 + 2 * n + i), h = ctx.input(2 + 3 * n + i);
        Expr greg = o.add(o.mul(o.k(norm), x), g);
        Expr v_new = o.add(o.mul(o.k(alpha), v), o.mul(o.k(1.0 - alpha), greg));
        Expr h_new = o.add(o.mul(o.k(beta), h), o.mul(o.k(1.0 - beta), o.mul(greg, greg)));
        Expr h_sqrt = o.add(ctx.call("sqrt", {h_new}), o.k(eps));
        Expr x_new = o.sub(x, o.mul(r, o.div(v_new, h_sqrt)));
        xs.push_back(o.mul(o.k(1.0 - norm_post), x_new));
        vs.push_back(v_new);
        hs.push_back(h_new);
    }
    xs.insert(xs.end(), vs.begin(), vs.end());
    xs.insert(xs.end(), hs.begin(), hs.end());
    return xs;
}

}  // namespace anvil::frontend
