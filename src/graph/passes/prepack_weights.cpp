// Weight pre-packing, the minimal form of TVM's AlterOpLayout: the blocked weight layout the
// x86 micro-kernels read becomes a value of the graph instead of a stage inside every kernel.
//   nn.conv2d(x, W)  ->  nn.conv2d_packed(x, nn.conv2d_pack_weight(W), channels=O, ...)
//                        (float weights; the int8 weights of uint8 x int8 convolutions and
//                        the bfloat16 weights of bfloat16 ones pack in 32-bit words of input
//                        channels, and an nn.dense of those types becomes such a 1x1
//                        convolution)
//   nn.dense(x, W)   ->  nn.dense_packed(x, nn.dense_pack_weight(W), units=N)
// for constant weights W only, so that fold_constants (which runs next) evaluates the packing
// once at compile time; a kernel then reads the packed constant directly. The block size is the
// pack op's decision (its type rule, in ops/), so this pass holds no layout rule of its own: a
// conv whose weight the pack op leaves unchanged (depthwise, narrow groups: no blocked compute)
// stays an nn.conv2d. Tuning records may choose the block instead (PassContext::
// conv2d_weight_block), 0 being the direct form: nn.conv2d_packed of the unpacked weight.
#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/transform.h"

namespace anvil::graph {

namespace {

class WeightPacker : public ExprMutator {
public:
    explicit WeightPacker(const PassContext& ctx) : ctx_(ctx) {}

protected:
    Expr mutate_(const Call* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        const Call* call = e.as<Call>();
        if (!call || !call->op.defined() || call->args.size() != 2) return e;
        const bool word_dense = is_word_dense(*call);
        if (!is_static_float_constant(call->args[1]) && word_channels(*call) == 0 && !word_dense) {
            return e;
        }
        Expr r;
        if (call->op->name == "nn.conv2d") r = pack_conv2d(*call);
        if (call->op->name == "nn.dense") r = word_dense ? dense_as_conv(*call) : pack_dense(*call);
        // The rewrite keeps the result type; anything else leaves the call as it was.
        return r.defined() && type_equal(r->type, call->type) ? r : e;
    }

private:
    // The input channels per word of a convolution with a constant weight that packs in words
    // (ops::pack_weight_words): 4 for uint8 data and an int8 weight summed in int32 (a quantized
    // one), 2 for bfloat16 data and weight summed in float32, one group; else 0.
    static int64_t word_channels(const Call& call) {
        if (call.op->name != "nn.conv2d" || !call.args[1].as<Constant>()) return 0;
        const auto* x = call.args[0]->type.as<TensorType>();
        const auto* w = call.args[1]->type.as<TensorType>();
        const auto& a = attrs_of<ops::Conv2DAttrs>(call);
        if (!x || !w || !w->is_static()) return 0;
        return ops::conv_channels_per_word(x->dtype, w->dtype, a.out_dtype, a.groups);
    }

    // nn.dense of data [M, K] and a constant weight [N, K] of those types.
    static bool is_word_dense(const Call& call) {
        if (call.op->name != "nn.dense" || !call.args[1].as<Constant>()) return false;
        const auto* x = call.args[0]->type.as<TensorType>();
        const auto* w = call.args[1]->type.as<TensorType>();
        return x && w && x->ndim() == 2 && x->is_static() && w->ndim() == 2 && w->is_static() &&
               ops::conv_channels_per_word(x->dtype, w->dtype,
                                           attrs_of<ops::DenseAttrs>(call).out_dtype, 1) != 0;
    }

    // That dense as a 1x1 convolution of M images of K channels, which the word-packed
    // convolution kernel computes (vpdpbusd or vdpbf16ps), with its weight packed in words.
    Expr dense_as_conv(const Call& call) {
        auto reshape = [&](const Expr& e, std::vector<int64_t> shape) {
            auto a = make_ref<ops::ReshapeAttrs>();
            const_cast<ops::ReshapeAttrs*>(a.get())->newshape = std::move(shape);
            return make_call(*find_op("reshape"), {e}, a, call.loc);
        };
        std::vector<int64_t> xs = call.args[0]->type.as<TensorType>()->static_shape();
        const auto* w = call.args[1].as<Constant>();
        std::vector<int64_t> ws = w->type.as<TensorType>()->static_shape();
        Expr w4 = make_constant(w->data.view({ws[0], ws[1], 1, 1}, w->data.dtype()), w->loc);
        auto conv = make_ref<ops::Conv2DAttrs>();
        const_cast<ops::Conv2DAttrs*>(conv.get())->out_dtype =
            attrs_of<ops::DenseAttrs>(call).out_dtype;
        Expr c = make_call(*find_op("nn.conv2d"), {reshape(call.args[0], {xs[0], xs[1], 1, 1}), w4},
                           conv, call.loc);
        Expr packed = pack_conv2d(*c.as<Call>());
        if (!packed.defined()) return {};
        return reshape(packed, {xs[0], ws[0]});
    }

    Expr pack_conv2d(const Call& call) {
        const Op* pack = find_op("nn.conv2d_pack_weight");
        const Op* packed = find_op("nn.conv2d_packed");
        const auto& conv = attrs_of<ops::Conv2DAttrs>(call);
        const Expr& w = call.args[1];
        // A tuning record's block (validated by the driver against the pack op's choices); words
        // have one block.
        const int64_t per_word = word_channels(call);
        const int64_t block =
            ctx_.conv2d_weight_block && per_word == 0 ? ctx_.conv2d_weight_block(call) : -1;
        ops::Conv2DPackWeightAttrs pack_attrs;
        pack_attrs.groups = conv.groups;
        pack_attrs.words = per_word != 0;
        // (With 0, the pack op applies its rule: whether that blocks decides the form.)
        if (block > 0) pack_attrs.block = block;
        Expr pw = make_call(*pack, {w}, make_ref<ops::Conv2DPackWeightAttrs>(pack_attrs), w->loc);
        // Not blocked (by the rule, or chosen when the rule does not block either): stays
        // nn.conv2d, whose compute makes the same choice.
        const bool blocked = pw->type.as<TensorType>()->ndim() == 5;
        if (!blocked) return {};
        // The direct form chosen where the rule blocks: the weight as it is.
        if (block == 0) pw = w;
        ops::Conv2DPackedAttrs a;
        a.strides = conv.strides;
        a.padding = conv.padding;
        a.dilation = conv.dilation;
        a.groups = conv.groups;
        a.channels = w->type.as<TensorType>()->static_shape()[0];
        a.words = per_word;
        return make_call(*packed, {call.args[0], pw}, make_ref<ops::Conv2DPackedAttrs>(a),
                         call.loc);
    }

    Expr pack_dense(const Call& call) {
        const Op* pack = find_op("nn.dense_pack_weight");
        const Op* packed = find_op("nn.dense_packed");
        if (call.args[1]->type.as<TensorType>()->ndim() != 2) return {};
        const Expr& w = call.args[1];
        Expr pw = make_call(*pack, {w}, nullptr, w->loc);
        ops::DensePackedAttrs a;
        a.units = w->type.as<TensorType>()->static_shape()[0];
        return make_call(*packed, {call.args[0], pw}, make_ref<ops::DensePackedAttrs>(a), call.loc);
    }

    const PassContext& ctx_;
};

}  // namespace

IRModule prepack_weights(const IRModule& m, const PassContext& ctx) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Expr body = WeightPacker(ctx).mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
