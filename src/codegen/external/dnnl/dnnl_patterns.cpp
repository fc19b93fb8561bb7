// The oneDNN pattern table and the layer chains its composites hold.
#include <algorithm>
#include <cmath>
#include <optional>

#include "codegen/external/dnnl/dnnl_compiler.h"
#include "codegen/external/dnnl/dnnl_format.h"
#include "graph/constant_values.h"
#include "graph/pattern/matcher.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/pool.h"
#include "ops/qnn.h"
#include "ops/transform.h"

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

// A tensor type with a static shape and one of `dtypes`.
bool is_static_of(const graph::Type& type, std::initializer_list<DataType> dtypes) {
    auto* t = type.as<graph::TensorType>();
    return t && t->is_static() && std::find(dtypes.begin(), dtypes.end(), t->dtype) != dtypes.end();
}

const graph::Call* as_call(const graph::Expr& e) {
    auto* c = e.as<graph::Call>();
    return c && c->op.defined() ? c : nullptr;
}

// A constant bias of `channels` values of type `dtype` along axis 1 of a rank-`rank` result:
// [C], [C, 1, 1] or [1, C, 1, 1] for a convolution, [C] or [1, C] for a dense layer.
bool is_channel_bias(const graph::Call& add, const graph::Expr& bias, int64_t channels, size_t rank,
                     DataType dtype = DataType::float32()) {
    if (!bias.is<graph::Constant>() || !is_static_of(bias->type, {dtype})) return false;
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
    return is_static_of(t, {DataType::float32()});
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

namespace {

// The integer value of a constant scalar (or of a constant all of whose elements are one
// integer), as zero points are written.
std::optional<int32_t> integer_constant(const graph::Expr& e) {
    std::optional<double> v = graph::uniform_value(e);
    if (!v || *v != std::floor(*v) || std::fabs(*v) > (1 << 24)) return std::nullopt;
    return static_cast<int32_t>(*v);
}

// The values of a float32 scale constant: one, or `channels` along the channel axis; empty when
// it is neither or a value is not positive and finite.
std::vector<double> scale_values(const graph::Expr& e, int64_t channels) {
    if (!is_static_of(e->type, {DataType::float32()})) return {};
    std::optional<std::vector<double>> v = graph::constant_values(e);
    if (!v || (v->size() != 1 && static_cast<int64_t>(v->size()) != channels)) return {};
    for (double x : *v) {
        if (!(x > 0) || !std::isfinite(x)) return {};
    }
    return *v;
}

// Adds to `padding` ([top, left, bottom, right]) the spatial padding of an nn.pad of NCHW data
// with the data's zero point (what a convolution with that zero point pads with itself).
bool fold_pad(const graph::Call& pad, int32_t zero_point, std::vector<int64_t>* padding) {
    const auto& a = dynamic_cast<const ops::PadAttrs&>(*pad.attrs);
    const std::vector<int64_t>& w = a.pad_width;  // (before, after) per dimension
    if (a.pad_mode != "constant" || !a.dynamic_pad_width.empty() || w.size() != 8 || w[0] || w[1] ||
        w[2] || w[3] || *std::min_element(w.begin(), w.end()) < 0) {
        return false;
    }
    if (pad.args.size() == 2 ? integer_constant(pad.args[1]) != zero_point
                             : a.pad_value != static_cast<double>(zero_point)) {
        return false;
    }
    const int64_t extra[4] = {w[4], w[6], w[5], w[7]};
    for (int i = 0; i < 4; ++i) (*padding)[i] += extra[i];
    return true;
}

// Reads `root` as [nn.pad ->] qnn.conv2d|qnn.dense [+ int32 bias] -> qnn.requantize [-> clip]
// [-> cast].
bool read_qnn_chain(const graph::Expr& root, bool padded, QnnLayer* layer) {
    const graph::Call* c = as_call(root);
    if (!c || !is_static_of(root->type, {DataType::uint(8), DataType::int_(8)})) return false;
    const DataType result = root->type.as<graph::TensorType>()->dtype;
    // The cast of a requantized int32 value to 8 bits wraps where oneDNN's saturates: only a clip
    // to the 8-bit range before it makes them agree.
    const graph::Call* cast = nullptr;
    if (c->op->name == "cast") {
        cast = c;
        c = as_call(c->args[0]);
        if (!c || c->op->name != "clip" || !is_static_of(c->type, {DataType::int32()})) {
            return false;
        }
    }
    const graph::Call* clip = nullptr;
    if (c->op->name == "clip") {
        clip = c;
        c = as_call(c->args[0]);
        if (!c) return false;
    }
    if (c->op->name != "qnn.requantize" || c->args.size() != 5) return false;
    const graph::Call* requantize = c;
    const auto& rq = dynamic_cast<const ops::RequantizeAttrs&>(*requantize->attrs);
    if (cast ? rq.out_dtype != DataType::int32() : rq.out_dtype != result) return false;
    const graph::Expr& below = requantize->args[0];
    const graph::Call* core = as_call(below);
    graph::Expr bias;
    if (core && (core->op->name == "add" || core->op->name == "nn.bias_add")) {
        // An add's operands commute (the pattern matches them either way).
        int b = core->op->name == "add" && core->args[0].is<graph::Constant>() ? 0 : 1;
        bias = core->args[b];
        core = as_call(core->args[1 - b]);
    }
    if (!core || core->args.size() != 6) return false;
    bool conv = core->op->name == "qnn.conv2d";
    if (!conv && core->op->name != "qnn.dense") return false;
    size_t rank = conv ? 4 : 2;
    graph::Expr data = core->args[0];
    const graph::Expr& weight = core->args[1];
    std::optional<int32_t> data_zp = integer_constant(core->args[2]);
    std::vector<int64_t> padding;
    if (conv) padding = dynamic_cast<const ops::QnnConv2DAttrs&>(*core->attrs).padding;
    if (padded) {
        const graph::Call* pad = as_call(data);
        if (!conv || !pad || pad->op->name != "nn.pad" || !data_zp ||
            !fold_pad(*pad, *data_zp, &padding)) {
            return false;
        }
        data = pad->args[0];
    }
    if (!is_static_of(data->type, {DataType::uint(8), DataType::int_(8)}) ||
        !weight.is<graph::Constant>() || !is_static_of(weight->type, {DataType::int_(8)}) ||
        !is_static_of(core->type, {DataType::int32()}) || shape_of(data).size() != rank ||
        shape_of(weight).size() != rank) {
        return false;
    }
    int64_t channels = shape_of(core->type)[1];
    // oneDNN 2.6 has zero points for the data only, one for the whole tensor.
    std::optional<int32_t> weight_zp = integer_constant(core->args[3]);
    if (!data_zp || !weight_zp || *weight_zp != 0) return false;
    if (bias.defined() &&
        !is_channel_bias(*as_call(below), bias, channels, rank, DataType::int32())) {
        return false;
    }
    // requantize: (x - in_zp) * in_scale / out_scale + out_zp, the input scale per channel.
    std::vector<double> in_scale = scale_values(requantize->args[1], channels);
    std::vector<double> out_scale = scale_values(requantize->args[3], 1);
    std::optional<int32_t> in_zp = integer_constant(requantize->args[2]);
    std::optional<int32_t> out_zp = integer_constant(requantize->args[4]);
    int64_t axis = rq.axis < 0 ? rq.axis + static_cast<int64_t>(rank) : rq.axis;
    if (in_scale.empty() || out_scale.empty() || !in_zp || !out_zp ||
        (in_scale.size() > 1 && axis != 1)) {
        return false;
    }
    *layer = QnnLayer{.core = core,
                      .data = data,
                      .padding = padding,
                      .src_zero_point = *data_zp,
                      .dst_zero_point = *out_zp,
                      .dst_dtype = result};
    std::vector<double> bias_values(channels, 0.0);
    if (bias.defined()) bias_values = *graph::constant_values(bias);
    for (double b : bias_values) {
        double folded = b - *in_zp;
        if (std::fabs(folded) >= 2147483648.0) return false;
        if (bias.defined() || *in_zp != 0) layer->bias.push_back(static_cast<int32_t>(folded));
    }
    for (double s : in_scale) {
        // The ratio in float32, as requantize's compute_dtype "float32" computes it; one the
        // runtime refuses (dnnl_check.cpp) stays native.
        float ratio = static_cast<float>(s) / static_cast<float>(out_scale[0]);
        if (!(ratio > 0) || !(ratio <= 1e30f)) return false;
        layer->scales.push_back(ratio);
    }
    if (clip) {
        const auto& a = dynamic_cast<const ops::ClipAttrs&>(*clip->attrs);
        auto [lo, hi] = ops::quantized_range(result);
        lo = std::max(lo, a.a_min);
        hi = std::min(hi, a.a_max);
        // Integer bounds clip a rounded value as they clip the value before rounding.
        if (std::isnan(a.a_min) || std::isnan(a.a_max) || lo != std::floor(lo) ||
            hi != std::floor(hi) || lo > hi) {
            return false;
        }
        if (cast && (a.a_min < ops::quantized_range(result).first ||
                     a.a_max > ops::quantized_range(result).second)) {
            return false;
        }
        layer->clip = {lo - *out_zp, hi - *out_zp};
    }
    return true;
}

}  // namespace

QnnLayer read_qnn_layer(const graph::Expr& root, bool padded) {
    QnnLayer layer;
    if (!read_qnn_chain(root, padded, &layer)) return QnnLayer{};
    layer.valid = true;
    return layer;
}

bool sums_every_int8_exactly(const Target& target) {
    const std::string& triple = target.mtriple;
    bool x86 = triple.starts_with("x86_64") ||
               (triple.size() > 4 && triple[0] == 'i' && triple.substr(2, 3) == "86-");
    return !x86 || target.has_feature("avx512vnni") || target.has_feature("avxvnni") ||
           target.has_feature("amx-int8");
}

bool sums_int8_exactly(const QnnLayer& layer, bool every_exactly) {
    if (every_exactly) return true;
    // read_qnn_layer checked that the weights are an int8 constant.
    const runtime::NDArray& weights = layer.core->args[1].as<graph::Constant>()->data;
    return sums_exactly_without_vnni(
        static_cast<const int8_t*>(weights.raw_data()), size_t(weights.num_elements()),
        layer.core->op->name == "qnn.conv2d" &&
            layer.data->type.as<graph::TensorType>()->dtype == DataType::int_(8));
}

PatternTable dnnl_pattern_table(const Target& target) {
    auto check = [](const graph::Expr& root) { return read_layer_chain(root).valid; };
    const bool every_exactly = sums_every_int8_exactly(target);
    auto qnn_check = [every_exactly](bool padded) {
        return [every_exactly, padded](const graph::Expr& root) {
            QnnLayer layer = read_qnn_layer(root, padded);
            return layer.valid && sums_int8_exactly(layer, every_exactly);
        };
    };
    auto check_qnn = qnn_check(false);
    auto check_padded = qnn_check(true);
    DFPattern conv = is_op("nn.conv2d")({wildcard(), is_constant()});
    DFPattern dense = is_op("nn.dense")({wildcard(), is_constant()});
    // [pad ->] core [+ bias] -> requantize [-> clip] [-> cast], every operand but the data
    // constant. The entry with the pad comes first: a pad the check refuses (not of the zero
    // point) is left out by the entry without it.
    auto quantized = [](const char* op, bool padded) {
        DFPattern data =
            padded ? is_op("nn.pad")({wildcard()}) | is_op("nn.pad")({wildcard(), is_constant()})
                   : wildcard();
        DFPattern core = is_op(op)(
            {data, is_constant(), is_constant(), is_constant(), is_constant(), is_constant()});
        core = core.optional([](const DFPattern& x) {
            return is_op("add")({x, is_constant()}) | is_op("nn.bias_add")({x, is_constant()});
        });
        DFPattern p = is_op("qnn.requantize")(
            {core, is_constant(), is_constant(), is_constant(), is_constant()});
        p = p.optional([](const DFPattern& x) { return is_op("clip")({x}); });
        return p.optional([](const DFPattern& x) { return is_op("cast")({x}); });
    };
    return {
        {"dnnl.conv2d", layer(conv, /*residual=*/true), check},
        {"dnnl.dense", layer(dense, /*residual=*/false), check},
        {"dnnl.qnn.conv2d", quantized("qnn.conv2d", true), check_padded},
        {"dnnl.qnn.conv2d", quantized("qnn.conv2d", false), check_qnn},
        {"dnnl.qnn.dense", quantized("qnn.dense", false), check_qnn},
    };
}

}  // namespace anvil::codegen::dnnl
