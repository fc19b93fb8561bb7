// Inference forms of training-time ops:
//   nn.batch_norm(x, gamma, beta, mean, var)  ->  x * scale + shift, per channel along `axis`,
//       scale = gamma / sqrt(var + epsilon), shift = beta - mean * scale
//     With constant statistics (the usual case: a model's parameters) scale and shift are
//     computed here, in double, as constants of shape (C, 1, ..., 1) that broadcast along the
//     axis; fold_scale_axis can then move the scale into a preceding conv's weights. Otherwise
//     the arithmetic is built from ops and reshaped to broadcast the same way.
// A batch_norm that returns a tuple (value, statistics) is replaced where its first field is
// read; the other fields have no inference meaning. (Dropout needs nothing here: the importers
// make it the identity, there is no dropout op.)
// nn.layer_norm stays an op: its statistics depend on the input, and it lowers to one kernel.
// Written with the dataflow pattern language (graph/pattern/): two rewrites, one for each form.
#include <array>
#include <cmath>
#include <tuple>

#include "graph/passes/graph_rewrite.h"
#include "graph/pattern/rewrite.h"
#include "ops/norm.h"
#include "ops/transform.h"

namespace anvil::graph {

namespace {

// Builds the inference form of a batch norm (its first output).
class BatchNormLowering {
public:
    Expr lower_batch_norm(const Call& call) {
        const Op* add = find_op("add");
        const Op* multiply = find_op("multiply");
        auto* xt = call.args[0]->type.as<TensorType>();
        const auto& attrs = attrs_of<ops::BatchNormAttrs>(call);
        const double epsilon = attrs.epsilon;
        if (!xt || call.args.size() != 5) return {};
        int64_t ndim = static_cast<int64_t>(xt->ndim());
        int64_t ax = attrs.axis < 0 ? attrs.axis + ndim : attrs.axis;
        if (ax < 0 || ax >= ndim) return {};
        const int64_t* channels = as_const_int(xt->shape[ax]);
        if (!channels) return {};
        // (C, 1, ..., 1): broadcasts along `axis` of x.
        std::vector<int64_t> shape(static_cast<size_t>(ndim - ax), 1);
        shape[0] = *channels;

        Expr scale, shift;
        bool host_dtype = xt->dtype == DataType::float32() || xt->dtype == DataType::float64();
        if (auto c = constant_statistics(call, *channels); c && host_dtype) {
            std::vector<double> s(c->size()), b(c->size());
            for (int64_t i = 0; i < *channels; ++i) {
                const auto& [gamma, beta, mean, var] = (*c)[i];
                s[i] = gamma / std::sqrt(var + epsilon);
                b[i] = beta - mean * s[i];
            }
            scale = make_constant_of(shape, xt->dtype, s, call.loc);
            shift = make_constant_of(shape, xt->dtype, b, call.loc);
        } else {
            auto arith = statistics_arith(call, shape, epsilon);
            if (!arith) return {};
            std::tie(scale, shift) = *arith;
        }
        Expr scaled = make_call(*multiply, {call.args[0], scale}, nullptr, call.loc);
        return make_call(*add, {scaled, shift}, nullptr, call.loc);
    }

    using Stats = std::vector<std::array<double, 4>>;  // gamma, beta, mean, var per channel
    static std::optional<Stats> constant_statistics(const Call& call, int64_t channels) {
        Stats out(static_cast<size_t>(channels));
        for (int k = 0; k < 4; ++k) {
            auto v = constant_values(call.args[1 + k]);
            if (!v || static_cast<int64_t>(v->size()) != channels) return std::nullopt;
            for (int64_t i = 0; i < channels; ++i) out[i][k] = (*v)[i];
        }
        return out;
    }

    // scale and shift built from ops, reshaped to `shape`.
    std::optional<std::pair<Expr, Expr>> statistics_arith(const Call& call,
                                                          const std::vector<int64_t>& shape,
                                                          double epsilon) {
        const Op* add = find_op("add");
        const Op* subtract = find_op("subtract");
        const Op* multiply = find_op("multiply");
        const Op* rsqrt = find_op("rsqrt");
        const Op* reshape = find_op("reshape");
        ops::ReshapeAttrs to_shape;
        to_shape.newshape = shape;
        Ref<Attrs> reshape_attrs = make_ref<ops::ReshapeAttrs>(to_shape);
        auto* vt = call.args[4]->type.as<TensorType>();
        if (!vt || !vt->dtype.is_float()) return std::nullopt;
        const SourceLoc& loc = call.loc;
        Expr eps = make_constant_of({}, vt->dtype, {epsilon}, loc);
        Expr scale =
            make_call(*rsqrt, {make_call(*add, {call.args[4], eps}, nullptr, loc)}, nullptr, loc);
        scale = make_call(*multiply, {call.args[1], scale}, nullptr, loc);
        Expr shift = make_call(*multiply, {call.args[3], scale}, nullptr, loc);
        shift = make_call(*subtract, {call.args[2], shift}, nullptr, loc);
        return std::make_pair(make_call(*reshape, {scale}, reshape_attrs, loc),
                              make_call(*reshape, {shift}, reshape_attrs, loc));
    }
};

// The inference form of a batch_norm call's first output, else null.
Expr inference_form(const Expr& e) {
    auto* call = as_op_call(e, "nn.batch_norm");
    return call ? BatchNormLowering().lower_batch_norm(*call) : Expr();
}

}  // namespace

IRModule simplify_inference(const IRModule& m, const PassContext&) {
    // The op itself where it returns one tensor...
    auto op_result =
        make_rewrite(is_op("nn.batch_norm"), [](const Expr&, const Expr& post, const NodeMap&) {
            if (!post->type.is<TensorType>()) return post;  // a tuple: rewritten where read
            Expr r = inference_form(post);
            return r.defined() ? r : post;
        });
    // ...and field 0 of the tuple it returns otherwise (the op stays outside the match: the
    // other fields may be read, and nothing of their inference meaning is lost by keeping it).
    DFPattern tuple = wildcard();
    auto field0 = make_rewrite(is_tuple_get_item(tuple, 0),
                               [tuple](const Expr&, const Expr& post, const NodeMap& node_map) {
                                   Expr r = inference_form(node_map[tuple][0]);
                                   return r.defined() ? r : post;
                               });
    return rewrite({op_result, field0}, m);
}

}  // namespace anvil::graph
