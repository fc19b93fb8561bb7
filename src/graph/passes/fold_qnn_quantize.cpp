// qnn.quantize of constants (a model's float weights and biases with their scales) becomes the
// quantized constant, while the graph is still QNN: the products then read int8 / int32 weights,
// which is what integer kernels and the external code generators' QNN patterns match. Written
// with the dataflow pattern language as TVM writes such folds:
//   is_op("qnn.quantize")(is_constant(), is_constant(), is_constant()) and a callback that
//   computes the call (PassContext::evaluate, canonicalize_qnn's arithmetic) into a constant.
#include "graph/passes/graph_rewrite.h"
#include "graph/pattern/rewrite.h"

namespace anvil::graph {

namespace {

class QnnQuantizeConstFold : public DFPatternRewrite {
public:
    explicit QnnQuantizeConstFold(const PassContext& ctx) : ctx_(ctx) {
        pattern_ = is_op("qnn.quantize")({is_constant(), is_constant(), is_constant()});
    }

    Expr callback(const Expr&, const Expr& post, const NodeMap&) const override {
        auto* t = post->type.as<TensorType>();
        if (!t || !t->is_static()) return post;
        runtime::NDArray value = ctx_.evaluate(post);
        ANVIL_CHECK(value.defined()) << "fold_qnn_quantize: evaluate returned no value";
        Expr folded = make_constant(std::move(value), post->loc);
        ANVIL_CHECK(type_equal(folded->type, post->type))
            << "fold_qnn_quantize: evaluate gave a " << type_str(folded->type) << " for a "
            << type_str(post->type);
        return folded;
    }

private:
    const PassContext& ctx_;
};

}  // namespace

IRModule fold_qnn_quantize(const IRModule& m, const PassContext& ctx) {
    if (!ctx.evaluate) return m;
    return rewrite({make_ref<QnnQuantizeConstFold>(ctx)}, m);
}

}  // namespace anvil::graph
