// Channel-blocked layouts, TVM's AlterOpLayout for the x86 convolutions: nn.conv2d with a
// constant weight becomes nn.conv2d_nchwc on NCHW<b>c data with its weight packed to
// OIHW<i>i<o>o (a layout_transform that fold_constants evaluates at compile time), and its
// output stays blocked through the elementwise and broadcast ops after it, so that the next
// convolution reads it as it is:
//
//   conv2d(x, W) -> add(., bias[C,1,1]) -> relu -> conv2d(., W2)
//   =>
//   conv2d_nchwc(layout_transform(x, NCHW, NCHW16c), layout_transform(W, OIHW, OIHW16i16o))
//     -> add(., layout_transform(bias as [1,C,1,1], NCHW, NCHW16c)) -> relu
//     -> conv2d_nchwc(., W2 packed)
//
// Pools of a blocked value, windowed or global, pool the blocks (their layout attribute); a
// bias_add becomes an add of the blocked bias; a concatenation along the channels concatenates
// blocks. Layout transforms appear only where a value crosses between a blocked producer and a
// consumer that reads NCHW (a reshape, the function's result), once per value and layout, so
// two transforms never undo each other. The block is a function of the channel count alone, so
// the operands of a residual add agree: by default 16 (one AVX-512 vector of float32) when it
// divides the channels, else 8; tuning records may choose another block per channel count, or 0
// (values with that many channels stay NCHW: the convolutions producing them stay nn.conv2d, those
// reading them read NCHW data), through ctx.layout_block.
// Which convolutions are blocked, and in which blocks: blockable_convs.h. Written with the
// dataflow pattern language (graph/pattern/): one rewrite, LayoutRewrite below.
#include <algorithm>
#include <map>
#include <numeric>

#include "graph/attr_fields.h"
#include "graph/expr_functor.h"
#include "graph/passes/blockable_convs.h"
#include "graph/passes/graph_rewrite.h"
#include "graph/pattern/rewrite.h"
#include "ir/channel_block.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/op_table.h"
#include "ops/pool.h"
#include "ops/transform.h"

namespace anvil::graph {

using blockable::blockable_conv_groups;
using blockable::data_layout;
using blockable::rewritable;
using blockable::static_nchw;

namespace {

// The rules, one pattern each (a call of nn.conv2d with a constant weight; of an elementwise or
// broadcast op; of a pool; of nn.bias_add; of concatenate), in one rewrite whose callback
// dispatches on the op. A blocked value v is carried as layout_transform(v, NCHW<b>c, NCHW):
// what every consumer reads unless a rule rewrites it, and what a rule unwraps when it computes
// on the blocks. Callbacks see `post`, whose operands are rewritten first, so one walk carries
// the blocks from the first convolution to the result; the transforms left are those where a
// blocked value meets a consumer that reads NCHW.
class LayoutRewrite : public DFPatternRewrite {
public:
    LayoutRewrite(const PassContext& ctx, std::map<int64_t, int64_t> chosen)
        : ctx_(ctx),
          transform_(*find_op("layout_transform")),
          conv_(*find_op("nn.conv2d_nchwc")),
          chosen_(std::move(chosen)) {
        DFPattern conv = is_op("nn.conv2d")({wildcard(), is_constant()});
        pattern_ = conv | elementwise_pattern() | is_op("nn.max_pool2d") | is_op("nn.avg_pool2d") |
                   is_op("nn.global_max_pool2d") | is_op("nn.global_avg_pool2d") |
                   is_op("nn.bias_add")({wildcard(), wildcard()}) | is_op("concatenate");
        // One walk does it all (operands are rewritten before their users); a second would
        // find nothing to change.
        rewrite_once_ = true;
    }

    Expr callback(const Expr& pre, const Expr& post, const NodeMap&) const override {
        const Call* call = post.as<Call>();
        if (!call || !call->op.defined()) return post;
        Expr r = rewrite_conv(*pre.as<Call>(), *call);
        if (!r.defined()) r = rewrite_elementwise(*call);
        if (!r.defined()) r = rewrite_pool(*call);
        if (!r.defined()) r = rewrite_bias_add(*call);
        if (!r.defined()) r = rewrite_concatenate(*call);
        return r.defined() ? r : post;
    }

private:
    // Every elementwise or broadcast op of the op table, as one alternative.
    static DFPattern elementwise_pattern() {
        DFPattern p;
        for (const auto& op : ops::op_table().all()) {
            if (op->pattern != OpPattern::ElemWise && op->pattern != OpPattern::Broadcast) continue;
            p = p.defined() ? p | is_op(op->name) : is_op(op->name);
        }
        return p;
    }

    // The block of values with `channels` channels (0: not blocked).
    int64_t channel_block(int64_t channels) const {
        auto it = chosen_.find(channels);
        return it == chosen_.end() ? default_layout_block(channels) : it->second;
    }

    // When `e` is layout_transform(v, NCHW<b>c, NCHW) with b a block the kernels are built for
    // (8, 16 or 32; ir/channel_block.h): v, and b in *block. Else `e` and 0. (A model's own
    // transform to NCHW is read like the rules' own.)
    static Expr blocked_value(const Expr& e, int64_t* block) {
        *block = 0;
        const auto* a = call_attrs_of<ops::LayoutTransformAttrs>(e, "layout_transform");
        if (!a || a->dst_layout != "NCHW") return e;
        for (int64_t b : {8, 16, 32}) {
            if (a->src_layout != data_layout(b)) continue;
            *block = b;
            return e.as<Call>()->args[0];
        }
        return e;
    }

    Expr relayout(const Expr& e, const std::string& src, const std::string& dst) const {
        ops::LayoutTransformAttrs a;
        a.src_layout = src;
        a.dst_layout = dst;
        return make_call(transform_, {e}, make_ref<ops::LayoutTransformAttrs>(a), e->loc);
    }

    // `e` (an operand as the rewrite left it) in the layout with channel block `block` (0:
    // NCHW): a carried blocked value is unwrapped, or converted straight from its block; one
    // transform per value and layout.
    Expr to_block(const Expr& e, int64_t block) const {
        int64_t from;
        Expr v = blocked_value(e, &from);
        if (from == block) return v;
        if (!from && !block) return e;
        auto key = std::make_pair(v.get(), block);
        auto it = transforms_.find(key);
        if (it != transforms_.end()) return it->second;
        Expr t = relayout(v, data_layout(from), data_layout(block));
        transforms_.emplace(key, t);
        return t;
    }

    // The blocked value `e` as its consumers read it: carried in a transform to NCHW.
    Expr blocked_result(const Expr& e, int64_t block) const {
        return relayout(e, data_layout(block), "NCHW");
    }

    // expand_dims(e, axis, count).
    static Expr expand_dims(const Expr& e, int64_t axis, int64_t count) {
        ops::ExpandDimsAttrs a;
        a.axis = axis;
        a.num_newaxis = count;
        return make_call(*find_op("expand_dims"), {e}, make_ref<ops::ExpandDimsAttrs>(a), e->loc);
    }

    // The block of the first blocked operand of `call` (0: none).
    static int64_t first_block(const Call& call) {
        for (const Expr& a : call.args) {
            int64_t block;
            blocked_value(a, &block);
            if (block) return block;
        }
        return 0;
    }

    Expr rewrite_conv(const Call& pre, const Call& call) const {
        const int64_t groups = blockable_conv_groups(call);
        if (!groups) return {};
        const int64_t channels = call.args[0]->type.as<TensorType>()->static_shape()[1];
        const int64_t outputs = call.type.as<TensorType>()->static_shape()[1];
        const bool depthwise = groups > 1;
        const int64_t out_block = channel_block(outputs);
        if (out_block == 0) return {};
        const auto& conv = attrs_of<ops::Conv2DAttrs>(call);
        // Quantized or bfloat16 with one group: the weight in words of 4 or 2 input channels,
        // output blocks of 8 or 16 (the word packing's).
        const DataType data_type = call.args[0]->type.as<TensorType>()->dtype;
        const bool words = data_type != DataType::float32() && !depthwise;
        if (words && out_block != 8 && out_block != 16) return {};
        int64_t in_block;
        blocked_value(call.args[0], &in_block);
        if (!in_block) in_block = channel_block(channels);
        if (depthwise) in_block = out_block;
        Expr x = to_block(call.args[0], in_block);
        // The weight's input block: 1 channel per group for depthwise, all of them for NCHW data.
        int64_t weight_in = depthwise ? 1 : in_block ? in_block : channels;
        if (Expr w = rewrite_winograd(pre, call, x, in_block, out_block); w.defined()) return w;
        Expr packed = words ? pack_words(call.args[1], out_block)
                            : relayout(call.args[1], "OIHW",
                                       "OIHW" + std::to_string(weight_in) + "i" +
                                           std::to_string(out_block) + "o");
        ops::Conv2DNCHWcAttrs a;
        a.strides = conv.strides;
        a.padding = conv.padding;
        a.dilation = conv.dilation;
        a.groups = groups;
        a.out_dtype = conv.out_dtype;
        return blocked_result(
            make_call(conv_, {x, packed}, make_ref<ops::Conv2DNCHWcAttrs>(a), call.loc), out_block);
    }

    // The int8 or bfloat16 weight `w` in words of 4 or 2 input channels, `block` output channels
    // per block (fold_constants packs it at compile time).
    static Expr pack_words(const Expr& w, int64_t block) {
        ops::Conv2DPackWeightAttrs a;
        a.words = true;
        a.block = block;
        return make_call(*find_op("nn.conv2d_pack_weight"), {w},
                         make_ref<ops::Conv2DPackWeightAttrs>(a), w->loc);
    }

    // Winograd F(m, 3) instead of the direct blocked form, when ctx.conv2d_algorithm picks it
    // for this convolution (`pre`, as the graph had it): the weight's transform (a constant:
    // fold_constants computes it at compile time) and nn.conv2d_winograd_nchwc on the blocked
    // data `x`. Undefined otherwise.
    Expr rewrite_winograd(const Call& pre, const Call& call, const Expr& x, int64_t in_block,
                          int64_t out_block) const {
        if (!ctx_.conv2d_algorithm || !winograd_applicable(call, in_block)) return {};
        const int m = ctx_.conv2d_algorithm(pre, in_block, out_block);
        if (m != 2 && m != 4) return {};
        ops::Conv2DWinogradWeightAttrs ta;
        ta.tile_size = m;
        ta.out_block = out_block;
        Expr u = make_call(*find_op("nn.winograd_weight_transform"), {call.args[1]},
                           make_ref<ops::Conv2DWinogradWeightAttrs>(ta), call.loc);
        ops::Conv2DWinogradAttrs ca;
        ca.tile_size = m;
        ca.padding = attrs_of<ops::Conv2DAttrs>(call).padding;
        return blocked_result(make_call(*find_op("nn.conv2d_winograd_nchwc"), {x, u},
                                        make_ref<ops::Conv2DWinogradAttrs>(ca), call.loc),
                              out_block);
    }

    // `arg` (an NCHW operand broadcast against the 4-D `shape`) in the blocked layout:
    // per-channel values through a transform, values that broadcast over the channels with a
    // trailing block axis of 1, single values as they are. Undefined when the operand broadcasts
    // in another way (or its shape is not static).
    Expr broadcast_operand(const Expr& arg, const std::vector<int64_t>& shape,
                           int64_t block) const {
        auto* t = arg->type.as<TensorType>();
        if (!t || !t->is_static() || t->ndim() > 4) return {};
        std::vector<int64_t> s = t->static_shape();
        bool single = true;
        for (int64_t v : s) single &= v == 1;
        if (single) return arg;
        Expr e = arg;
        if (s.size() < 4) {
            e = expand_dims(e, 0, static_cast<int64_t>(4 - s.size()));
            if (!e.defined()) return {};
            s.insert(s.begin(), 4 - s.size(), 1);
        }
        if (s[1] == shape[1]) return to_block(e, block);
        return s[1] == 1 ? expand_dims(e, 4, 1) : Expr();
    }

    // An elementwise or broadcast op (without an axis attribute: prelu and bias_add name the
    // channel axis) reading a blocked value computes on the blocks.
    Expr rewrite_elementwise(const Call& call) const {
        OpPattern p = call.op->pattern;
        if (call.args.empty() || (p != OpPattern::ElemWise && p != OpPattern::Broadcast)) {
            return {};
        }
        // (Read through the field list: any op of these patterns with an axis, present or
        // future, is left alone.)
        if (call.attrs.defined() && attr_int(*call.attrs, "axis")) return {};
        const TensorType* out = static_nchw(call.type);
        const int64_t block = first_block(call);
        if (!out || !block) return {};
        std::vector<int64_t> shape = out->static_shape();
        std::vector<Expr> args;
        for (const Expr& a : call.args) {
            int64_t b;
            blocked_value(a, &b);
            args.push_back(b ? to_block(a, block) : broadcast_operand(a, shape, block));
            if (!args.back().defined()) return {};
        }
        Expr r = make_call(call.op, args, call.attrs, call.loc);
        auto* rt = r->type.as<TensorType>();
        if (!rt || rt->ndim() != 5) return {};
        return blocked_result(r, block);
    }

    // A pool (windowed or global) of a blocked value pools the blocks (its layout attribute).
    Expr rewrite_pool(const Call& call) const {
        if (call.args.size() != 1) return {};
        const std::string& name = call.op->name;
        if (name == "nn.max_pool2d" || name == "nn.avg_pool2d") {
            return rewrite_pool_as<ops::Pool2DAttrs>(call);
        }
        if (name == "nn.global_max_pool2d" || name == "nn.global_avg_pool2d") {
            return rewrite_pool_as<ops::GlobalPool2DAttrs>(call);
        }
        return {};
    }
    template <typename A>
    Expr rewrite_pool_as(const Call& call) const {
        A a = attrs_of<A>(call);
        int64_t block;
        Expr x = blocked_value(call.args[0], &block);
        if (a.layout != "NCHW" || !block) return {};
        a.layout = data_layout(block);
        return blocked_result(make_call(call.op, {x}, make_ref<A>(a), call.loc), block);
    }

    // The channel axis of a 4-D value (1 or -3).
    static bool on_channels(int64_t axis) { return axis == 1 || axis == -3; }

    // nn.bias_add(x, b[C]) of a blocked x along the channels: an add of b in the blocks.
    Expr rewrite_bias_add(const Call& call) const {
        if (call.op->name != "nn.bias_add" || call.args.size() != 2) return {};
        const TensorType* out = static_nchw(call.type);
        if (!out || !on_channels(attrs_of<ops::BiasAddAttrs>(call).axis)) return {};
        int64_t block;
        Expr x = blocked_value(call.args[0], &block);
        auto* bt = call.args[1]->type.as<TensorType>();
        if (!block || !bt || bt->ndim() != 1) return {};
        Expr b = expand_dims(call.args[1], 1, 2);  // [C] -> [C, 1, 1]
        if (b.defined()) b = broadcast_operand(b, out->static_shape(), block);
        if (!b.defined()) return {};
        return blocked_result(make_call(*find_op("add"), {x, b}, nullptr, call.loc), block);
    }

    // concatenate along the channels of blocked values concatenates their blocks: in the block
    // of the result's channel count when it divides every operand's channels (so that a tuning
    // choice for that count holds, 0 included), else in the first blocked operand's when that
    // does, else in the widest block dividing them all; with none, the operands are read as NCHW.
    Expr rewrite_concatenate(const Call& call) const {
        if (call.op->name != "concatenate") return {};
        const TensorType* out = static_nchw(call.type);
        if (!out || !on_channels(attrs_of<ops::ConcatenateAttrs>(call).axis)) return {};
        int64_t block = first_block(call);
        if (!block) return {};
        int64_t common = 0;  // the operands' channel counts' gcd
        for (const Expr& a : call.args) {
            const TensorType* t = static_nchw(a->type);
            if (!t) return {};
            common = std::gcd(common, t->static_shape()[1]);
        }
        const int64_t preferred = channel_block(out->static_shape()[1]);
        if (preferred == 0) return {};
        if (common % preferred == 0) {
            block = preferred;
        } else if (common % block != 0) {
            block = dividing_channel_block(common);
            if (block == 0) return {};
        }
        std::vector<Expr> args;
        for (const Expr& a : call.args) args.push_back(to_block(a, block));
        ops::ConcatenateAttrs attrs = attrs_of<ops::ConcatenateAttrs>(call);
        attrs.axis = 1;
        return blocked_result(
            make_call(call.op, args, make_ref<ops::ConcatenateAttrs>(attrs), call.loc), block);
    }

    const PassContext& ctx_;
    const Op& transform_;
    const Op& conv_;
    std::map<int64_t, int64_t> chosen_;  // channel count -> block, where tuning chose one
    // The transforms made, by the value they convert and the block they convert it to: what
    // several consumers of one value share. (The callback is const to the rewriter; this is
    // its memo.)
    mutable std::map<std::pair<const ExprNode*, int64_t>, Expr> transforms_;
};

// `rule` applied to the dataflow of `body`: a body that is itself a function is left to
// NestedFunctionLayouts (rewrite() would enter it again).
Expr rewrite_dataflow(const Ref<DFPatternRewrite>& rule, const Expr& body) {
    if (body.is<Function>()) return body;
    return rewrite({rule}, body);
}

// The rule applied in the functions nested in a body too (a loop's body, a closure), innermost
// first: rewrite() itself stays in one function's dataflow. Functions for an external compiler,
// composites and fused kernels are left alone (rewritable).
class NestedFunctionLayouts : public ExprMutator {
public:
    explicit NestedFunctionLayouts(Ref<DFPatternRewrite> rule) : rule_(std::move(rule)) {}

protected:
    Expr mutate_(const Function* op, const Expr& self) override {
        if (!rewritable(*op)) return self;
        Expr e = ExprMutator::mutate_(op, self);
        auto* f = e.as<Function>();
        Expr body = rewrite_dataflow(rule_, f->body);
        return body.same_as(f->body) ? e : Expr(with_body(*f, body));
    }

private:
    Ref<DFPatternRewrite> rule_;
};

}  // namespace

IRModule alter_op_layout(const IRModule& m, const PassContext& ctx) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Ref<DFPatternRewrite> rule =
            make_ref<LayoutRewrite>(ctx, blockable::chosen_blocks(f->body, ctx));
        Expr body = rewrite_dataflow(rule, NestedFunctionLayouts(rule).mutate(f->body));
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
