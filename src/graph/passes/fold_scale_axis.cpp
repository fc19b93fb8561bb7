// Backward scale folding: a per-output-channel multiply after a conv2d or dense moves into the
// weights, where it costs nothing at run time:
//   multiply(conv2d(x, w), s)                 -> conv2d(x, w * s)
//   multiply(nn.bias_add(conv2d(x, w), b), s) -> nn.bias_add(conv2d(x, w * s), b * s)
//   multiply(add(conv2d(x, w), b), s)         -> add(conv2d(x, w * s), b * s)
// (either operand order of multiply and add). s and b are constants that vary along the output
// channel only; w is a constant OIHW (conv2d) or (units, in) (dense) weight; the conv/dense and
// the bias step have no other user. Batch norm after a conv, once simplify_inference has made it
// a multiply and an add, becomes a conv with adjusted weights and one add.
// The new constants are computed here, in double, for float32/float64 weights.
#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"

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

class ScaleFolder : public ExprMutator {
public:
    explicit ScaleFolder(const Expr& body) : uses_(count_uses(body)) {}

protected:
    Expr mutate_(const Call* op, const Expr& self) override {
        if (as_op_call(self, "multiply")) {
            for (int k = 0; k < 2; ++k) {
                Expr r = fold(*op, op->args[k], op->args[1 - k]);
                if (r.defined()) return r;
            }
        }
        return ExprMutator::mutate_(op, self);
    }

private:
    bool single_use(const Expr& e) const {
        auto it = uses_.find(e.get());
        return it != uses_.end() && it->second == 1;
    }

    // multiply(value, scale) with `value` a conv/dense, possibly under a bias step.
    Expr fold(const Call& mul, const Expr& value, const Expr& scale) {
        if (!type_equal(mul.type, value->type) || !single_use(value)) return {};
        const Call* bias_step = as_op_call(value, "nn.bias_add");
        if (!bias_step) bias_step = as_op_call(value, "add");
        Expr anchor = value, bias;
        int bias_pos = -1;
        if (bias_step) {
            for (int k = 0; k < 2 && bias_pos < 0; ++k) {
                if (bias_step->args[k].is<Constant>() && is_anchor(bias_step->args[1 - k])) {
                    bias_pos = k;
                }
            }
            if (bias_pos < 0) return {};
            bias = bias_step->args[bias_pos];
            anchor = bias_step->args[1 - bias_pos];
            if (!single_use(anchor) || !type_equal(anchor->type, value->type)) return {};
        }
        if (!is_anchor(anchor)) return {};
        const Call& a = *anchor.as<Call>();
        const auto& out = *a.type.as<TensorType>();
        bool conv = a.op->name == "nn.conv2d";
        int64_t axis = conv ? 1 : static_cast<int64_t>(out.ndim()) - 1;
        auto s = per_channel(scale, out, axis);
        if (!s) return {};

        const Expr& w = a.args[1];
        if (w->type.as<TensorType>()->static_shape()[0] != static_cast<int64_t>(s->size()))
            return {};
        Expr new_w = scale_rows(*w.as<Constant>(), *s);
        std::vector<Expr> args = {mutate(a.args[0]), new_w};
        if (a.args.size() > 2) {  // the op's own bias, one per output channel
            auto bv = constant_values(a.args[2]);
            if (a.args.size() > 3 || !bv || bv->size() != s->size()) return {};
            for (size_t i = 0; i < bv->size(); ++i) (*bv)[i] *= (*s)[i];
            const auto& bt = *a.args[2]->type.as<TensorType>();
            args.push_back(make_constant_of(bt.static_shape(), bt.dtype, *bv, a.args[2]->loc));
        }
        Expr result = make_call(a.op, std::move(args), a.attrs, a.loc);
        if (!bias_step) return result;

        Expr new_bias;
        if (bias_step->op->name == "nn.bias_add") {
            auto bv = constant_values(bias);
            if (!bv || bv->size() != s->size()) return {};
            for (size_t i = 0; i < bv->size(); ++i) (*bv)[i] *= (*s)[i];
            const auto& bt = *bias->type.as<TensorType>();
            new_bias = make_constant_of(bt.static_shape(), bt.dtype, *bv, bias->loc);
        } else {
            auto bv = per_channel(bias, out, axis);
            if (!bv) return {};
            for (size_t i = 0; i < bv->size(); ++i) (*bv)[i] *= (*s)[i];
            // (C, 1, ..., 1): broadcasts along the channel axis.
            std::vector<int64_t> shape(out.ndim() - static_cast<size_t>(axis), 1);
            shape[0] = static_cast<int64_t>(bv->size());
            new_bias = make_constant_of(shape, bias->type.as<TensorType>()->dtype, *bv, bias->loc);
        }
        std::vector<Expr> bias_args(2);
        bias_args[bias_pos] = new_bias;
        bias_args[1 - bias_pos] = result;
        Expr r = make_call(bias_step->op, bias_args, bias_step->attrs, bias_step->loc);
        return type_equal(r->type, mul.type) ? r : Expr();
    }

    // The weight with row i (along axis 0, the output channel of OIHW and (units, in)) scaled
    // by s[i]. Weights are large (millions of elements): scaled in their own type.
    static Expr scale_rows(const Constant& w, const std::vector<double>& s) {
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

    // A conv2d (NCHW data and OIHW weights: the op has no other layout; blocked layouts are
    // other ops, made after this pass) or a dense, with a constant float weight.
    static bool is_anchor(const Expr& e) {
        auto* call = e.as<Call>();
        if (!call || !call->op.defined() || call->args.size() < 2) return false;
        const std::string& name = call->op->name;
        if (name != "nn.conv2d" && name != "nn.dense") return false;
        auto* out = call->type.as<TensorType>();
        auto* wt = call->args[1]->type.as<TensorType>();
        if (!out || !wt || !wt->is_static() || !out->is_static()) return false;
        if (wt->dtype != DataType::float32() && wt->dtype != DataType::float64()) return false;
        return call->args[1].is<Constant>();
    }

    std::unordered_map<const ExprNode*, int> uses_;
};

}  // namespace

IRModule fold_scale_axis(const IRModule& m, const PassContext&) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Expr body = ScaleFolder(f->body).mutate(f->body);
        return body.same_as(f->body) ? f : make_function(f->params, body, f->primitive, f->loc);
    });
}

}  // namespace anvil::graph
