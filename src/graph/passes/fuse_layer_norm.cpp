// Layer normalization as one op: the arithmetic exporters write for it before ONNX opset 17
// (PyTorch's LayerNorm, BERT's and ViT's exports),
//   m = mean(x, axes, keepdims);  d = x - m;  v = mean(d * d | power(d, 2), axes, keepdims)
//   y = d / sqrt(v + eps)  [* gamma]  [+ beta]
// over the trailing axes, becomes nn.layer_norm(x, gamma, beta, axis, epsilon): one kernel
// (its mean and variance row reductions and the normalization) where there were five (mean,
// subtract, square-mean, the division and the affine tail), the centred values no longer
// written out. Rewritten only where m, d, v and the values between have no user outside the
// pattern, eps is a scalar constant, and gamma and beta broadcast over the normalized axes
// alone (an absent gamma is the constant 1).
#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "ops/norm.h"
#include "ops/reduce.h"

namespace anvil::graph {

namespace {

class LayerNormFuser : public CallRewriter {
public:
    using CallRewriter::CallRewriter;

private:
    // The first normalized axis when `e` is a keep-dims mean over trailing axes of its input.
    static std::optional<int64_t> trailing_mean(const Call* mean) {
        if (!mean) return std::nullopt;
        const auto& attrs = attrs_of<ops::ReduceAttrs>(*mean);
        if (!attrs.keepdims || attrs.exclude || !attrs.dynamic_axes.empty()) return std::nullopt;
        const std::vector<int64_t>* axes = &attrs.axes;
        auto* t = mean->args[0]->type.as<TensorType>();
        if (axes->empty() || !t) return std::nullopt;
        const int64_t n = static_cast<int64_t>(t->ndim());
        std::vector<bool> in(static_cast<size_t>(n), false);
        for (int64_t a : *axes) {
            int64_t k = a < 0 ? a + n : a;
            if (k < 0 || k >= n || in[static_cast<size_t>(k)]) return std::nullopt;
            in[static_cast<size_t>(k)] = true;
        }
        const int64_t first = n - static_cast<int64_t>(axes->size());
        for (int64_t k = first; k < n; ++k) {
            if (!in[static_cast<size_t>(k)]) return std::nullopt;
        }
        return first;
    }

    // Whether `p` (gamma or beta) broadcasts over the normalized axes [first, ndim) alone.
    static bool over_normalized_axes(const Expr& p, const TensorType& x, int64_t first) {
        auto* t = p->type.as<TensorType>();
        if (!t || t->dtype != x.dtype) return false;
        const size_t normalized = x.ndim() - static_cast<size_t>(first);
        return t->ndim() <= normalized;  // the type of the multiply or add checked the sizes
    }

    Expr rewrite(const Expr& self) override {
        const Op* layer_norm = find_op("nn.layer_norm");
        // Up from the result: [+ beta], [* gamma], the division.
        Expr y = self, gamma, beta;
        auto peel = [&](const char* op, Expr* param) {
            auto* c = as_op_call(y, op);
            if (!c) return;
            for (int side = 0; side < 2; ++side) {
                if (as_op_call(c->args[side], "divide") ||
                    (param == &beta && as_op_call(c->args[side], "multiply"))) {
                    *param = c->args[1 - side];
                    y = c->args[side];
                    return;
                }
            }
        };
        peel("add", &beta);
        if (beta.defined() && uses(y) != 1) return {};
        peel("multiply", &gamma);
        if (gamma.defined() && uses(y) != 1) return {};
        auto* div = as_op_call(y, "divide");
        if (!div) return {};
        const Expr& d = div->args[0];
        auto* sqrt = as_op_call(div->args[1], "sqrt");
        auto* add_eps = sqrt ? as_op_call(sqrt->args[0], "add") : nullptr;
        if (!add_eps || uses(div->args[1]) != 1 || uses(sqrt->args[0]) != 1) return {};
        std::optional<double> eps;
        Expr var;
        for (int side = 0; side < 2 && !eps; ++side) {
            auto* et = add_eps->args[1 - side]->type.as<TensorType>();
            eps = et && et->ndim() == 0 ? uniform_value(add_eps->args[1 - side]) : std::nullopt;
            var = add_eps->args[side];
        }
        auto* var_mean = as_op_call(var, "mean");
        if (!eps || !(*eps >= 0) || !var_mean || uses(var) != 1) return {};
        // The square of d: d * d or power(d, 2).
        const Expr& sq = var_mean->args[0];
        auto* mul = as_op_call(sq, "multiply");
        auto* pow = as_op_call(sq, "power");
        bool squares_d = (mul && mul->args[0].same_as(d) && mul->args[1].same_as(d)) ||
                         (pow && pow->args[0].same_as(d) && uniform_value(pow->args[1]) == 2.0);
        if (!squares_d || uses(sq) != 1) return {};
        auto* sub = as_op_call(d, "subtract");
        if (!sub || uses(d) != (mul ? 3 : 2)) return {};
        const Expr& x = sub->args[0];
        auto* mean = as_op_call(sub->args[1], "mean");
        if (!mean || !mean->args[0].same_as(x) || uses(sub->args[1]) != 1) return {};
        auto first = trailing_mean(mean);
        auto var_first = trailing_mean(var_mean);
        auto* xt = x->type.as<TensorType>();
        if (!first || first != var_first || !xt || !type_equal(d->type, x->type)) return {};
        // float32 / float64 (the constant gamma below), the normalized extents constant (the
        // kernel's row loops are sized by them).
        if (xt->dtype != DataType::float32() && xt->dtype != DataType::float64()) return {};
        for (size_t k = static_cast<size_t>(*first); k < xt->ndim(); ++k) {
            if (!as_const_int(xt->shape[k])) return {};
        }
        if (gamma.defined() && !over_normalized_axes(gamma, *xt, *first)) return {};
        if (beta.defined() && !over_normalized_axes(beta, *xt, *first)) return {};
        if (!gamma.defined()) gamma = make_constant_of({}, xt->dtype, {1.0}, self->loc);
        std::vector<Expr> args = {mutate(x), mutate(gamma)};
        if (beta.defined()) args.push_back(mutate(beta));
        ops::LayerNormAttrs attrs;
        attrs.axis = *first - static_cast<int64_t>(xt->ndim());
        attrs.epsilon = *eps;
        return make_call(*layer_norm, args, make_ref<ops::LayerNormAttrs>(attrs), self->loc);
    }
};

}  // namespace

IRModule fuse_layer_norm(const IRModule& m, const PassContext& ctx) {
    return rewrite_calls<LayerNormFuser>(m, ctx);
}

}  // namespace anvil::graph
