// Converters of ONNX's losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss) as
// compositions of existing graph ops, following ONNX's reference definitions exactly:
//
//   loss[n, d...] = -logp[n, target[n, d...], d...] * w[n, d...]
//   w = weight[target] (1 without weights), 0 where target == ignore_index
//   reduction none: loss; sum: sum(loss); mean: sum(loss) / sum(w) with weights or
//   ignore_index, else the plain mean.
//
// SoftmaxCrossEntropyLoss is the same on log_softmax(scores, axis=1), with the log
// probabilities as its optional second output.
#include "frontend/onnx/convert_ops.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

Expr reduce_all(ConvertContext& ctx, const char* op, const Expr& x) {
    auto [attrs, a] = new_attrs<ops::ReduceAttrs>();
    a->keepdims = false;
    return ctx.call(op, {x}, attrs);
}

// The loss of log probabilities `logp` [N, C, d...] for class indices `target` [N, d...].
Expr nll_loss(ConvertContext& ctx, const Expr& logp, const Expr& target, const Expr& weight) {
    const auto& lt = ctx.tensor_type(logp, "the input");
    const auto& tt = ctx.tensor_type(target, "the target");
    DataType dt = lt.dtype;
    if (!dt.is_floating()) ctx.error() << "the input must be floating-point, got " << dt.str();
    if (!tt.dtype.is_integer()) {
        ctx.error() << "the target must be an integer tensor, got " << tt.dtype.str();
    }
    int64_t rank = ctx.rank(logp);
    if (rank < 2) ctx.error() << "the input must have rank 2 or more, got " << rank;
    if (ctx.rank(target) != rank - 1) {
        ctx.error() << "the target must have rank " << rank - 1 << ", got " << ctx.rank(target);
    }
    std::string reduction = ctx.attr_string("reduction", "mean");
    if (reduction != "none" && reduction != "sum" && reduction != "mean") {
        ctx.error() << "reduction '" << reduction << "' is not one of none, sum, mean";
    }
    Expr tgt = cast_to(ctx, target, DataType::int64());
    bool has_ii = ctx.has_attr("ignore_index");
    Expr ignored;
    if (has_ii) {
        Expr ii = ctx.constant_scalar(DataType::int64(), double(ctx.attr_int("ignore_index", 0)));
        ignored = ctx.call("equal", {tgt, ii});
        tgt = ctx.call("where", {ignored, ctx.constant_scalar(DataType::int64(), 0), tgt});
    }
    auto [ed_attrs, ed] = new_attrs<ops::ExpandDimsAttrs>();
    ed->axis = 1;
    Expr index = ctx.call("expand_dims", {tgt}, ed_attrs);
    auto [ge_attrs, ge] = new_attrs<ops::GatherElementsAttrs>();
    ge->axis = 1;
    Expr picked = ctx.call("gather_elements", {logp, index}, ge_attrs);
    auto [sq_attrs, sq] = new_attrs<ops::SqueezeAttrs>();
    sq->axes = {1};
    Expr loss = ctx.call("negative", {ctx.call("squeeze", {picked}, sq_attrs)});
    Expr w;
    Expr zero = ctx.constant_scalar(dt, 0.0);
    if (weight.defined()) {
        auto [tk_attrs, tk] = new_attrs<ops::TakeAttrs>();
        tk->axis = 0;
        w = ctx.call("take", {weight, tgt}, tk_attrs);
        if (has_ii) w = ctx.call("where", {ignored, zero, w});
    } else if (has_ii) {
        w = ctx.call("where", {ignored, zero, ctx.constant_scalar(dt, 1.0)});
    }
    if (w.defined()) loss = ctx.call("multiply", {loss, w});
    if (reduction == "none") return loss;
    if (reduction == "sum") return reduce_all(ctx, "sum", loss);
    if (!w.defined()) return reduce_all(ctx, "mean", loss);
    return ctx.call("divide", {reduce_all(ctx, "sum", loss), reduce_all(ctx, "sum", w)});
}

}  // namespace

Exprs convert_nll_loss(ConvertContext& ctx) {
    return {nll_loss(ctx, ctx.input(0), ctx.input(1), ctx.optional_input(2))};
}

Exprs convert_softmax_cross_entropy_loss(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    if (ctx.rank(x) < 2) ctx.error() << "the scores must have rank 2 or more";
    auto [attrs, a] = new_attrs<ops::SoftmaxAttrs>();
    a->axis = 1;
    Expr logp = ctx.call("nn.log_softmax", {x}, attrs);
    return {nll_loss(ctx, logp, ctx.input(1), ctx.optional_input(2)), logp};
}

}  // namespace anvil::frontend
