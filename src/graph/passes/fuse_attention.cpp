// Scaled dot-product attention as one op: the pattern every exporter writes,
//   p = softmax(matmul(q, kᵀ) [* c | / c] [+ bias], axis=-1);  out = matmul(p, v)
// (the scale c also on q: matmul(q * c, kᵀ) or q / c), becomes
//   out = nn.attention(q, k, v[, bias], scale=...)
// whose kernel never writes the score matrix to memory. The operands are taken before any
// transposition of the products (transpose_a/b, or a transpose op swapping the last two axes is
// added, which fuses into the kernel with the head split before it: fuse_ops lets injective
// producers into an op that fuses_injective_inputs). Rewritten only where the scores, their
// scaled, masked and softmax forms have no other user, q, k and v share their batch dimensions
// (no broadcasting product), the bias does not widen the scores, and the result keeps the
// type of the last product.
//
// The head merge after it, reshape(transpose(attention, the heads axis after the rows), shape),
// becomes nn.attention(..., merge_heads=True) (the kernel writes [batch..., S, H * Dv] itself),
// followed by a reshape only where `shape` is another one of the same elements.
#include <cmath>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "ir/structural_equal.h"
#include "ops/attention.h"
#include "ops/dense.h"
#include "ops/softmax.h"
#include "ops/transform.h"

namespace anvil::graph {

namespace {

// The product `e` when it calls nn.matmul or nn.batch_matmul, else null.
const Call* as_product(const Expr& e) {
    if (auto* c = as_op_call(e, "nn.matmul")) return c;
    return as_op_call(e, "nn.batch_matmul");
}

// The scalar constant a multiply or divide of `e` applies, with the other operand.
struct Scaled {
    Expr operand;
    double factor = 1;  // operand * factor
};
std::optional<Scaled> as_scaled(const Expr& e) {
    if (auto* c = as_op_call(e, "multiply")) {
        for (int side = 0; side < 2; ++side) {
            auto f = uniform_value(c->args[1 - side]);
            if (f && c->args[1 - side]->type.as<TensorType>()->ndim() == 0) {
                return Scaled{c->args[side], *f};
            }
        }
    }
    if (auto* c = as_op_call(e, "divide")) {
        auto f = uniform_value(c->args[1]);
        if (f && *f != 0 && c->args[1]->type.as<TensorType>()->ndim() == 0) {
            return Scaled{c->args[0], 1 / *f};
        }
    }
    return std::nullopt;
}

class AttentionFuser : public CallRewriter {
public:
    using CallRewriter::CallRewriter;

private:
    bool used_once(const Expr& e) const { return uses(e) == 1; }

    // `x` with its last two axes swapped.
    Expr swap_last(const Expr& x) {
        const Op* transpose = find_op("transpose");
        auto* t = x->type.as<TensorType>();
        if (!t || t->ndim() < 2) return {};  // a 1-D product: not attention
        ops::TransposeAttrs attrs;
        for (size_t i = 0; i < t->ndim(); ++i) attrs.axes.push_back(static_cast<int64_t>(i));
        std::swap(attrs.axes[t->ndim() - 1], attrs.axes[t->ndim() - 2]);
        return make_call(*transpose, {x}, make_ref<ops::TransposeAttrs>(attrs), x->loc);
    }

    Expr rewrite(const Expr& self) override {
        if (as_op_call(self, "reshape")) return merge_heads(self);
        return fuse_products(self);
    }

    // reshape(transpose(x, axes), shape) with x an attention whose heads axis (the last batch
    // axis) the transpose moves after the rows, nothing else: the attention with merged heads.
    Expr merge_heads(const Expr& self) {
        const Call* reshape = as_op_call(self, "reshape");
        const Call* transpose = as_op_call(reshape->args[0], "transpose");
        if (!transpose || !used_once(reshape->args[0]) || !used_once(transpose->args[0])) {
            return {};
        }
        auto* xt = transpose->args[0]->type.as<TensorType>();
        const std::vector<int64_t>& axes = attrs_of<ops::TransposeAttrs>(*transpose).axes;
        if (!xt || xt->ndim() < 3 || axes.size() != xt->ndim()) return {};
        const int64_t rank = static_cast<int64_t>(xt->ndim());
        for (int64_t i = 0; i < rank; ++i) {
            int64_t want = i == rank - 3 ? rank - 2 : i == rank - 2 ? rank - 3 : i;
            int64_t axis = axes[static_cast<size_t>(i)];
            if ((axis < 0 ? axis + rank : axis) != want) return {};
        }
        Expr x = mutate(transpose->args[0]);
        const Call* a = as_op_call(x, "nn.attention");
        if (!a || attrs_of<ops::AttentionAttrs>(*a).merge_heads) return {};
        if (!as_const_int(xt->shape.back())) return {};
        ops::AttentionAttrs merging = attrs_of<ops::AttentionAttrs>(*a);
        merging.merge_heads = true;
        Expr merged = make_call(a->op, a->args, make_ref<ops::AttentionAttrs>(merging), a->loc);
        if (type_equal(merged->type, self->type)) return merged;
        // Another shape of the same elements: a reshape of the merged output, to static sizes (a
        // symbolic one keeps the transpose and reshape as they were).
        auto* out = self->type.as<TensorType>();
        std::vector<int64_t> shape;
        for (const PrimExpr& d : out->shape) {
            auto* c = as_const_int(d);
            if (!c) return {};
            shape.push_back(*c);
        }
        // allowzero: every entry is a size (a 0 is an empty axis, not a copy of the input's).
        ops::ReshapeAttrs to_shape;
        to_shape.newshape = shape;
        to_shape.allowzero = true;
        return make_call(reshape->op, {merged}, make_ref<ops::ReshapeAttrs>(to_shape),
                         reshape->loc);
    }

    // The attention op for the last product; its operands are their mutated (memoized) forms.
    Expr fuse_products(const Expr& self) {
        const Op* attention = find_op("nn.attention");
        const Call* pv = as_product(self);
        if (!pv || attrs_of<ops::MatmulAttrs>(*pv).transpose_a) return {};
        const Call* softmax = as_op_call(pv->args[0], "nn.softmax");
        if (!softmax || !used_once(pv->args[0])) return {};
        auto* st = softmax->type.as<TensorType>();
        const int64_t axis = attrs_of<ops::SoftmaxAttrs>(*softmax).axis;
        if (!st || (axis != -1 && axis != static_cast<int64_t>(st->ndim()) - 1)) {
            return {};
        }
        // Down from the softmax: [+ bias], [* scale], the product q · kᵀ.
        Expr x = softmax->args[0];
        Expr bias;
        double scale = 1;
        if (auto* add = as_op_call(x, "add"); add && used_once(x)) {
            for (int side = 0; side < 2 && !bias.defined(); ++side) {
                const Expr& s = add->args[side];
                auto sc = as_scaled(s);
                if (as_product(s) || (sc && as_product(sc->operand))) {
                    bias = add->args[1 - side];
                    x = s;
                }
            }
            if (!bias.defined() || !type_equal(x->type, add->type)) return {};
        }
        if (auto sc = as_scaled(x); sc && used_once(x)) {
            scale *= sc->factor;
            x = sc->operand;
        }
        const Call* qk = as_product(x);
        if (!qk || !used_once(x)) return {};
        Expr q = qk->args[0], k = qk->args[1], v = pv->args[1];
        if (auto sc = as_scaled(q)) {
            scale *= sc->factor;
            q = sc->operand;
        }
        if (attrs_of<ops::MatmulAttrs>(*qk).transpose_a) q = swap_last(q);
        if (!attrs_of<ops::MatmulAttrs>(*qk).transpose_b) k = swap_last(k);
        if (attrs_of<ops::MatmulAttrs>(*pv).transpose_b) v = swap_last(v);
        if (!q.defined() || !k.defined() || !v.defined() || !same_batch(q, k, v)) return {};
        if (!(scale > 0) || !std::isfinite(scale)) return {};
        std::vector<Expr> args = {mutate(q), mutate(k), mutate(v)};
        if (bias.defined()) args.push_back(mutate(bias));
        ops::AttentionAttrs attrs;
        attrs.scale = scale;
        return make_call(*attention, args, make_ref<ops::AttentionAttrs>(attrs), pv->loc);
    }

    static bool same_batch(const Expr& q, const Expr& k, const Expr& v) {
        auto* qt = q->type.as<TensorType>();
        auto* kt = k->type.as<TensorType>();
        auto* vt = v->type.as<TensorType>();
        if (!qt || !kt || !vt || qt->ndim() < 2) return false;
        if (kt->ndim() != qt->ndim() || vt->ndim() != qt->ndim()) return false;
        if (!qt->dtype.is_floating() || kt->dtype != qt->dtype || vt->dtype != qt->dtype) {
            return false;
        }
        for (size_t d = 0; d + 2 < qt->ndim(); ++d) {
            if (!structural_equal(qt->shape[d], kt->shape[d]) ||
                !structural_equal(qt->shape[d], vt->shape[d])) {
                return false;
            }
        }
        // The kernel's register tiles are sized by the head sizes (the key count may vary).
        return as_const_int(qt->shape.back()) && as_const_int(kt->shape.back()) &&
               as_const_int(vt->shape.back());
    }
};

}  // namespace

IRModule fuse_attention(const IRModule& m, const PassContext& ctx) {
    return rewrite_calls<AttentionFuser>(m, ctx);
}

}  // namespace anvil::graph
