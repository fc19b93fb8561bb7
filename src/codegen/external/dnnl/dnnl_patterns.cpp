// The oneDNN pattern table and the layer chains its composites hold.
#include <algorithm>
#include <cmath>

#include "codegen/external/dnnl/dnnl_compiler.h"
#include "graph/pattern/matcher.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/pool.h"

namespace anvil::codegen::dnnl {

namespace {

using graph::DFPattern;
using graph::is_constant;
using graph::is_op;
using graph::wildcard;

DFPattern activation(const DFPattern& x) {
    return is_op("nn.relu")({x}) | is_op("clip")({x}) | is_op("nn.gelu")({x}) |
           is_op("sigmoid")({x}) | is_op("tanh")({x}) | is_op("nn.hardswish")({x});
}

DFPattern with_bias(const DFPattern& core) {
    return core.optional([](const DFPattern& x) {
        return is_op("add")({x, is_constant()}) | is_op("nn.bias_add")({x, is_constant()});
    });
}

// A convolution or dense layer with an optional bias: what a residual add's layer operand is.
const DFPattern& biased_layer() {
    static const DFPattern p = with_bias(is_op("nn.conv2d")({wildcard(), is_constant()}) |
                                         is_op("nn.dense")({wildcard(), is_constant()}));
    return p;
}

// core [+ bias] [+ residual] [activation]
DFPattern layer(const DFPattern& core, bool residual) {
    DFPattern p = with_bias(core);
    if (residual) p = p.optional([](const DFPattern& x) { return is_op("add")({x, wildcard()}); });
    return p.optional(activation);
}

const graph::Call* as_call(const graph::Expr& e) {
    auto* c = e.as<graph::Call>();
    return c && c->op.defined() ? c : nullptr;
}

// A bias of `channels` values along axis 1 of a rank-`rank` result: [C], [C, 1, 1] or
// [1, C, 1, 1] for a convolution, [C] or [1, C] for a dense layer.
bool is_channel_bias(const graph::Call& add, const graph::Expr& bias, int64_t channels,
                     size_t rank) {
    if (!bias.is<graph::Constant>() || !is_static_float(bias->type)) return false;
    std::vector<int64_t> s = shape_of(bias);
    if (add.op->name == "nn.bias_add") {
        auto* a = dynamic_cast<const ops::BiasAddAttrs*>(add.attrs.get());
        return a && a->axis == 1 && s == std::vector<int64_t>{channels};
    }
    // numpy broadcasting: trailing dimensions align with the result's.
    if (s.empty() || s.size() > rank) return false;
    int64_t count = 1;
    size_t axis_pos = rank - s.size();  // where s[0] sits in the result
    for (size_t i = 0; i < s.size(); ++i) {
        size_t axis = axis_pos + i;
        if (axis == 1) {
            if (s[i] != channels) return false;
        } else if (s[i] != 1) {
            return false;
        }
        count *= s[i];
    }
    return count == channels && axis_pos <= 1;
}

}  // namespace

std::vector<int64_t> shape_of(const graph::Type& type) {
    auto* t = type.as<graph::TensorType>();
    return t && t->is_static() ? t->static_shape() : std::vector<int64_t>{};
}
std::vector<int64_t> shape_of(const graph::Expr& e) {
    return shape_of(e->type);
}

bool is_static_float(const graph::Type& t) {
    auto* tt = t.as<graph::TensorType>();
    return tt && tt->is_static() && tt->dtype == DataType::float32();
}

std::vector<int64_t> dnnl_pool_padding(const graph::Call& pool) {
    const auto& a = dynamic_cast<const ops::Pool2DAttrs&>(*pool.attrs);
    std::vector<int64_t> pad = a.padding;
    if (!a.ceil_mode) return pad;
    auto in = shape_of(pool.args[0]), out = shape_of(pool.type);
    for (int d = 0; d < 2; ++d) {  // the last window's end, past the input and its padding
        int64_t end = (out[2 + d] - 1) * a.strides[d] + a.pool_size[d];
        pad[2 + d] = std::max(pad[2 + d], end - in[2 + d] - pad[d]);
    }
    return pad;
}

bool is_eltwise(const graph::Call& call) {
    static const char* const kOps[] = {"nn.relu", "clip",   "nn.gelu",       "sigmoid",
                                       "tanh",    "exp",    "log",           "sqrt",
                                       "abs",     "nn.elu", "nn.leaky_relu", "nn.hardswish"};
    for (const char* op : kOps) {
        if (call.op->name != op) continue;
        // A NaN clip bound has no oneDNN counterpart.
        auto* clip = dynamic_cast<const ops::ClipAttrs*>(call.attrs.get());
        return !clip || (!std::isnan(clip->a_min) && !std::isnan(clip->a_max));
    }
    return false;
}

namespace {

// Reads `e` as core [bias] [residual] [activation], where `outer` is the outermost stage `e` may
// be (0: the core, 1: a bias, 2: a residual sum, 3: an activation). An add's operands are tried
// both ways: in a graph both may be calls (a residual of two convolution branches).
bool read_chain(const graph::Expr& e, int outer, LayerChain* chain) {
    const graph::Call* c = as_call(e);
    if (!c) return false;
    const std::string& op = c->op->name;
    if (op == "nn.conv2d" || op == "nn.dense") {
        if (c->args.size() != 2 || !c->args[1].is<graph::Constant>()) return false;
        if (!is_static_float(c->type) || !is_static_float(c->args[0]->type) ||
            !is_static_float(c->args[1]->type)) {
            return false;
        }
        // oneDNN's convolution is of NCHW data, its inner product of [batch, K] data.
        size_t rank = shape_of(c->args[0]).size();
        if (rank != (op == "nn.conv2d" ? 4u : 2u) || shape_of(c->args[1]).size() != rank) {
            return false;
        }
        *chain = LayerChain{.core = c};
        return true;
    }
    if (!is_static_float(c->type)) return false;
    if (is_eltwise(*c) && c->args.size() == 1 && outer >= 3) {
        if (!read_chain(c->args[0], 2, chain)) return false;
        chain->activation = c;
        return true;
    }
    if ((op == "add" || op == "nn.bias_add") && c->args.size() == 2) {
        // The operand that continues the chain is the one the pattern's matcher takes: the
        // first that the layer pattern (core [+ bias]) matches (an add's operands commute). Both
        // may look like layers (a residual of two convolution branches).
        int first = 0;
        if (op == "add" && !graph::match(biased_layer(), c->args[0]) &&
            graph::match(biased_layer(), c->args[1])) {
            first = 1;
        }
        const graph::Expr& below = c->args[first];
        const graph::Expr& other = c->args[1 - first];
        LayerChain sub;
        if (outer >= 2 && op == "add" && read_chain(below, 1, &sub) &&
            sub.core->op->name == "nn.conv2d" && shape_of(other) == shape_of(e) &&
            is_static_float(other->type)) {
            sub.residual = other;
            *chain = sub;
            return true;
        }
        if (outer >= 1 && read_chain(below, 0, &sub)) {
            std::vector<int64_t> out = shape_of(sub.core->type);
            if (is_channel_bias(*c, other, out[1], out.size())) {
                sub.bias = other;
                *chain = sub;
                return true;
            }
        }
    }
    return false;
}

}  // namespace

LayerChain read_layer_chain(const graph::Expr& root) {
    LayerChain chain;
    if (!read_chain(root, 3, &chain)) return LayerChain{};
    // Every step keeps the core's shape (a bias or residual never broadcasts the result wider).
    if (shape_of(root) != shape_of(chain.core->type) || shape_of(root).size() < 2) {
        return LayerChain{};
    }
    chain.valid = true;
    return chain;
}

PatternTable dnnl_pattern_table() {
    auto check = [](const graph::Expr& root) { return read_layer_chain(root).valid; };
    DFPattern conv = is_op("nn.conv2d")({wildcard(), is_constant()});
    DFPattern dense = is_op("nn.dense")({wildcard(), is_constant()});
    return {
        {"dnnl.conv2d", layer(conv, /*residual=*/true), check},
        {"dnnl.dense", layer(dense, /*residual=*/false), check},
    };
}

}  // namespace anvil::codegen::dnnl
