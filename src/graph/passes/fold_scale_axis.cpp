// Backward scale folding: a per-output-channel multiply after a conv2d or dense moves into the
// weights, where it costs nothing at run time:
//   multiply(conv2d(x, w), s)                 -> conv2d(x, w * s)
//   multiply(nn.bias_add(conv2d(x, w), b), s) -> nn.bias_add(conv2d(x, w * s), b * s)
//   multiply(add(conv2d(x, w), b), s)         -> add(conv2d(x, w * s), b * s)
// (either operand order of multiply and add). s and b are constants that vary along the output
// channel only; w is a constant OIHW (conv2d) or (units, in) (dense) weight; the conv/dense and
// the bias step have no other user. Batch norm after a conv, once simplify_inference has made it
// a multiply and an add, becomes a conv with adjusted weights and one add.
// The new constants are computed here, in double, for float32/float64 weights. Written with the
// dataflow pattern language (graph/pattern/): one pattern covers the three forms.
#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "graph/pattern/rewrite.h"

namespace anvil::graph {

namespace {

// The per-channel values of constant `c` broadcast onto a tensor of type `out` with channels
// along `axis`: c must vary along that axis only. nullopt when it does not fit.
std::optional<std::vector<double>> per_channel(const Expr& c, const TensorType& out, int64_t axis) {
    auto values = constant_values(c);
    auto* ct = c->type.as<TensorType>();
    if (!values || !ct || ct->ndim() > out.ndim() || !out.is_static()) return std::nullopt;
    int64_t channels = out.static_shape()[axis];
    std::vector<int64_t> shape = ct->static_shape();
    // Right-align c's shape to out's rank; every dimension but the channel's must be 1.
    int64_t offset = static_cast<int64_t>(out.ndim() - ct->ndim());
    int64_t channel_dim = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
        if (d + offset == axis) {
            channel_dim = shape[d];
        } else if (shape[d] != 1) {
            return std::nullopt;
        }
    }
    if (channel_dim != channels && channel_dim != 1) return std::nullopt;
    std::vector<double> out_values(static_cast<size_t>(channels));
    for (int64_t i = 0; i < channels; ++i) out_values[i] = (*values)[channel_dim == 1 ? 0 : i];
    return out_values;
}

// The weight with row i (along axis 0, the output channel of OIHW and (units, in)) scaled
// by s[i]. Weights are large (millions of elements): scaled in their own type.
Expr scale_rows(const Constant& w, const std::vector<double>& s) {
    runtime::NDArray out = runtime::NDArray::empty(
        std::vector<int64_t>(w.data.shape().begin(), w.data.shape().end()), w.data.dtype());
    size_t n = static_cast<size_t>(w.data.num_elements()), per_row = n / s.size();
    auto scale = [&](auto* dst, const auto* src) {
        for (size_t i = 0; i < n; ++i) dst[i] = src[i] * s[i / per_row];
    };
    if (w.data.dtype().bits == 32) {
        scale(out.data<float>(), w.data.data<float>());
    } else {
        scale(out.data<double>(), w.data.data<double>());
    }
    return make_constant(out, w.loc);
}

// multiply(value, s) with value a conv2d or dense of a constant weight, alone or under a bias
// step (nn.bias_add or add of a constant). The match's region being private (rewrite.h) is the
// rule that the conv/dense and the bias step have no other user.
class FoldScaleAxis : public DFPatternRewrite {
public:
    FoldScaleAxis() {
        // nn.conv2d is NCHW data and OIHW weights (the op has no other layout; blocked layouts
        // are other ops, made after this pass).
        anchor_ = is_op("nn.conv2d")({data_, weight_}) | is_op("nn.dense")({data_, weight_});
        bias_add_ = is_op("nn.bias_add")({anchor_, bias_});
        add_ = is_op("add")({anchor_, bias_});
        pattern_ = is_op("multiply")({anchor_ | bias_add_ | add_, scale_});
    }

    Expr callback(const Expr&, const Expr& post, const NodeMap& node_map) const override {
        const Expr& anchor = node_map[anchor_][0];
        const Call& a = *anchor.as<Call>();
        // The multiply's operand: the anchor, or the bias step over it.
        Expr value = anchor;
        for (const DFPattern* p : {&bias_add_, &add_}) {
            if (node_map.contains(*p)) value = node_map[*p][0];
        }
        const Call* step = value.same_as(anchor) ? nullptr : value.as<Call>();
        // The multiply must not broadcast its value to a larger shape, nor the bias step.
        if (!type_equal(post->type, value->type) || !type_equal(anchor->type, value->type)) {
            return post;
        }
        const Expr& w = a.args[1];
        const auto& out = *a.type.as<TensorType>();
        if (!is_static_float_constant(w) || !out.is_static()) return post;
        const int64_t axis = a.op->name == "nn.conv2d" ? 1 : static_cast<int64_t>(out.ndim()) - 1;
        auto s = per_channel(node_map[scale_][0], out, axis);
        if (!s || w->type.as<TensorType>()->static_shape()[0] != static_cast<int64_t>(s->size())) {
            return post;
        }
        Expr result =
            make_call(a.op, {a.args[0], scale_rows(*w.as<Constant>(), *s)}, a.attrs, a.loc);
        if (!step) return result;

        const Expr& bias = node_map[bias_][0];
        Expr new_bias;
        if (step->op->name == "nn.bias_add") {
            auto bv = constant_values(bias);
            if (!bv || bv->size() != s->size()) return post;
            for (size_t i = 0; i < bv->size(); ++i) (*bv)[i] *= (*s)[i];
            const auto& bt = *bias->type.as<TensorType>();
            new_bias = make_constant_of(bt.static_shape(), bt.dtype, *bv, bias->loc);
        } else {
            auto bv = per_channel(bias, out, axis);
            if (!bv) return post;
            for (size_t i = 0; i < bv->size(); ++i) (*bv)[i] *= (*s)[i];
            // (C, 1, ..., 1): broadcasts along the channel axis.
            std::vector<int64_t> shape(out.ndim() - static_cast<size_t>(axis), 1);
            shape[0] = static_cast<int64_t>(bv->size());
            new_bias = make_constant_of(shape, bias->type.as<TensorType>()->dtype, *bv, bias->loc);
        }
        // The step's operands in their order, the scaled ones in place of the old.
        std::vector<Expr> args = step->args;
        for (Expr& arg : args) arg = arg.same_as(anchor) ? result : new_bias;
        Expr r = make_call(step->op, args, step->attrs, step->loc);
        return type_equal(r->type, post->type) ? r : post;
    }

private:
    DFPattern data_ = wildcard(), weight_ = is_constant(), bias_ = is_constant();
    DFPattern scale_ = is_constant();
    DFPattern anchor_, bias_add_, add_;
};

}  // namespace

IRModule fold_scale_axis(const IRModule& m, const PassContext&) {
    return rewrite({make_ref<FoldScaleAxis>()}, m);
}

}  // namespace anvil::graph
