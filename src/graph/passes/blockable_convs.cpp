#include "graph/passes/blockable_convs.h"

#include <algorithm>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "ir/channel_block.h"
#include "ops/conv.h"

namespace anvil::graph {

namespace blockable {

namespace {

// A static 4-D float32 tensor type, else null.
const TensorType* static_float_nchw(const Type& type) {
    const TensorType* t = static_nchw(type);
    return t && t->dtype == DataType::float32() ? t : nullptr;
}

// Whether a convolution of data `d` and weight `w` into `out` has a blocked form: float32
// throughout; bfloat16 data and weight summed in float32 (to_mixed_precision's: words of 2
// channels for vdpbf16ps); or quantized (uint8 or int8 data, int8 weight, int32 sums; for one
// group uint8 data, whose words of 4 channels vpdpbusd reads).
bool blockable_types(const TensorType& d, const TensorType& w, const TensorType& out,
                     bool depthwise) {
    if (d.dtype == DataType::float32() || d.dtype == DataType::bfloat16()) {
        return w.dtype == d.dtype && out.dtype == DataType::float32();
    }
    const bool data_ok =
        d.dtype == DataType::uint(8) || (depthwise && d.dtype == DataType::int_(8));
    return data_ok && w.dtype == DataType::int_(8) && out.dtype == DataType::int32();
}

// The blockable convolutions of a body, operands first, in the functions the rules apply in.
class BlockableConvs : public ExprVisitor {
public:
    std::vector<const Call*> convs;

protected:
    void visit_(const Function* op) override {
        if (rewritable(*op)) ExprVisitor::visit_(op);
    }
    void visit_(const Call* op) override;
};

}  // namespace

std::string data_layout(int64_t block) {
    return block ? "NCHW" + std::to_string(block) + "c" : "NCHW";
}

const TensorType* static_nchw(const Type& type) {
    auto* t = type.as<TensorType>();
    if (!t || t->ndim() != 4 || !t->is_static()) return nullptr;
    return t;
}

bool rewritable(const Function& f) {
    return !f.primitive && !f.attrs.count("Compiler") && !f.attrs.count("Composite");
}

int64_t blockable_conv_groups(const Call& call) {
    if (!call.op.defined() || call.op->name != "nn.conv2d" || call.args.size() != 2) return 0;
    const TensorType* d = static_nchw(call.args[0]->type);
    const TensorType* w = static_nchw(call.args[1]->type);
    const TensorType* out = static_nchw(call.type);
    if (!d || !w || !out || !call.args[1].is<Constant>()) return 0;
    const int64_t groups = attrs_of<ops::Conv2DAttrs>(call).groups;
    const int64_t channels = d->static_shape()[1], outputs = w->static_shape()[0];
    const bool depthwise = groups == channels && groups == outputs && groups > 1;
    if (!blockable_types(*d, *w, *out, depthwise)) return 0;
    return groups == 1 || depthwise ? groups : 0;
}

void BlockableConvs::visit_(const Call* op) {
    ExprVisitor::visit_(op);
    if (blockable_conv_groups(*op)) convs.push_back(op);
}

std::map<int64_t, int64_t> chosen_blocks(const Expr& body, const PassContext& ctx) {
    std::map<int64_t, int64_t> chosen;
    if (!ctx.layout_block) return chosen;
    std::map<int64_t, std::vector<const Call*>> convs;  // channel count -> convs touching it
    BlockableConvs visitor;
    visitor.visit(body);
    for (const Call* call : visitor.convs) {
        const int64_t in = call->args[0]->type.as<TensorType>()->static_shape()[1];
        const int64_t out = call->type.as<TensorType>()->static_shape()[1];
        convs[in].push_back(call);
        if (out != in) convs[out].push_back(call);
    }
    for (const auto& [channels, touching] : convs) {
        std::vector<int64_t> choices = layout_block_choices(channels);
        const bool winograd = std::any_of(touching.begin(), touching.end(),
                                          [](const Call* c) { return winograd_applicable(*c, 1); });
        if (winograd) std::erase(choices, int64_t{0});
        if (choices.size() < 2) continue;
        const int64_t b = ctx.layout_block(channels, touching, choices);
        if (std::find(choices.begin(), choices.end(), b) != choices.end()) chosen[channels] = b;
    }
    return chosen;
}

}  // namespace blockable

bool winograd_applicable(const Call& conv, int64_t in_block) {
    if (!conv.op.defined() || conv.op->name != "nn.conv2d" || conv.args.size() != 2) return false;
    const TensorType* w = blockable::static_float_nchw(conv.args[1]->type);
    if (!w || in_block == 0 || !blockable::static_float_nchw(conv.args[0]->type)) return false;
    auto s = w->static_shape();
    const auto& a = attrs_of<ops::Conv2DAttrs>(conv);
    return s[2] == 3 && s[3] == 3 && a.groups == 1 && a.strides == std::vector<int64_t>{1, 1} &&
           a.dilation == std::vector<int64_t>{1, 1};
}

}  // namespace anvil::graph
