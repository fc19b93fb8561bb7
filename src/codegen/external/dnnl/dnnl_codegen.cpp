// oneDNN's code generator: each region function becomes steps of oneDNN primitives over numbered
// values, with its constants in a weights section (dnnl_format.h). The runtime library
// (runtime/dnnl_module.cpp) creates the primitives from that once, at load.
#include <algorithm>
#include <cfloat>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "codegen/external/dnnl/dnnl_compiler.h"
#include "codegen/external/dnnl/dnnl_format.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/pool.h"
#include "ops/qnn.h"
#include "ops/softmax.h"
#include "ops/transform.h"
#include "support/error.h"

namespace anvil::codegen::dnnl {

namespace {

using nlohmann::json;

class RegionWriter {
public:
    RegionWriter(const ExternalRegion& region, std::string* weights)
        : region_(region), weights_(weights) {}

    json write() {
        const graph::Function& f = *region_.function;
        json fn;
        fn["symbol"] = region_.symbol;
        for (const auto& p : f.params) {
            if (dtype_name(p->type).empty() || dtype_name(p->type) == "s32") {
                reject(p->loc,
                       "a parameter that is not float32, uint8 or int8 with a static shape");
            }
            inputs_.push_back(new_value(graph::Expr(p)));
            values_[p.get()] = inputs_.back();
        }
        std::vector<graph::Expr> results;
        if (auto* t = f.body.as<graph::Tuple>()) {
            results = t->fields;
        } else {
            results = {f.body};
        }
        std::vector<int> outputs;
        for (const auto& r : results) {
            int v = value_of(r);
            // An output is written by its own step into the caller's buffer: a value that is
            // an input, a constant or another output already is copied.
            bool taken = produced_.count(v) == 0;
            for (int o : outputs) taken |= o == v;
            if (taken) {
                int copy = new_value(r);
                steps_.push_back({{"op", "copy"}, {"src", v}, {"dst", copy}});
                v = copy;
            }
            outputs.push_back(v);
        }
        fn["values"] = shapes_;
        fn["dtypes"] = dtypes_;
        fn["inputs"] = inputs_;
        fn["outputs"] = outputs;
        fn["constants"] = constants_;
        fn["steps"] = steps_;
        return fn;
    }

private:
    [[noreturn]] void reject(const SourceLoc& loc, const std::string& what) {
        user_error(loc) << "the external code generator 'dnnl' cannot compute " << what
                        << " (in region " << region_.symbol
                        << "); leave it out of the region to compile it natively";
        ANVIL_UNREACHABLE();
    }

    // The format's name of a static tensor type's element type (kValueTypes); empty for any
    // other type.
    static std::string dtype_name(const graph::Type& type) {
        auto* t = type.as<graph::TensorType>();
        const ValueType* v = t && t->is_static() ? find_value_type(t->dtype.str(), true) : nullptr;
        return v ? v->name : "";
    }

    int new_value(std::vector<int64_t> shape, const std::string& dtype) {
        // A scalar is a one-element tensor to oneDNN (the same bytes).
        if (shape.empty()) shape = {1};
        shapes_.push_back(shape);
        dtypes_.push_back(dtype);
        return static_cast<int>(shapes_.size()) - 1;
    }
    int new_value(const graph::Expr& e) { return new_value(shape_of(e), dtype_name(e->type)); }

    int constant(const graph::Expr& e) {
        auto it = values_.find(e.get());
        if (it != values_.end()) return it->second;
        auto* c = e.as<graph::Constant>();
        if (dtype_name(e->type).empty()) {
            reject(e->loc, "a constant that is not float32, uint8, int8 or int32");
        }
        int v = new_value(e);
        add_weights(v, c->data.raw_data(), c->data.nbytes());
        values_[e.get()] = v;
        return v;
    }

    // An int32 constant of the region's own making (a quantized layer's folded bias).
    int int32_constant(const std::vector<int32_t>& values) {
        int v = new_value({static_cast<int64_t>(values.size())}, "s32");
        add_weights(v, values.data(), values.size() * sizeof(int32_t));
        return v;
    }

    void add_weights(int v, const void* bytes, size_t size) {
        weights_->resize((weights_->size() + 63) / 64 * 64, '\0');
        constants_.push_back({{"value", v}, {"offset", weights_->size()}});
        weights_->append(static_cast<const char*>(bytes), size);
    }

    // The value of `e`, writing the steps that compute it first.
    int value_of(const graph::Expr& e) {
        auto it = values_.find(e.get());
        if (it != values_.end()) return it->second;
        int v = -1;
        if (e.is<graph::Constant>()) return constant(e);
        auto* call = e.as<graph::Call>();
        if (!call) reject(e->loc, std::string("a ") + graph::expr_kind_name(e->kind));
        if (!call->op.defined()) {
            v = composite(*call);
        } else if (!is_static_float(e->type)) {
            reject(e->loc, "a value that is not float32 with a static shape");
        } else if (call->op->name == "nn.conv2d" || call->op->name == "nn.dense") {
            v = layer(read_layer_chain(e), e);
        } else {
            v = single_op(*call, e);
        }
        values_[e.get()] = v;
        produced_.insert(v);
        return v;
    }

    // A call of a dnnl.* composite: its body read with the call's arguments as its parameters.
    int composite(const graph::Call& call) {
        auto* fn = call.callee.defined() ? call.callee.as<graph::Function>() : nullptr;
        if (!fn) reject(call.loc, "a call of something other than a function");
        auto name = fn->attrs.find("Composite");
        bool quantized = name != fn->attrs.end() &&
                         (name->second == "dnnl.qnn.conv2d" || name->second == "dnnl.qnn.dense");
        if (name == fn->attrs.end() ||
            (name->second != "dnnl.conv2d" && name->second != "dnnl.dense" && !quantized)) {
            reject(call.loc, "a call of a function that is no dnnl composite");
        }
        for (size_t i = 0; i < fn->params.size(); ++i) {
            values_[fn->params[i].get()] = value_of(call.args[i]);
        }
        if (quantized) {
            // A composite of the padded entry holds the nn.pad; one of the other, a parameter.
            QnnLayer q = read_qnn_layer(fn->body, true);
            return qnn_layer(q.valid ? q : read_qnn_layer(fn->body, false), fn->body);
        }
        if (!is_static_float(call.type)) {
            reject(call.loc, "a value that is not float32 with a static shape");
        }
        LayerChain chain = read_layer_chain(fn->body);
        // A composite is one primitive with post-ops; one whose body reads otherwise than the
        // pattern table's check saw it (an add whose other operand took the role of the layer)
        // is computed op by op, each a step of its own.
        return chain.valid ? layer(chain, fn->body) : value_of(fn->body);
    }

    int layer(const LayerChain& chain, const graph::Expr& root) {
        if (!chain.valid)
            reject(root->loc,
                   "this layer (a convolution or dense layer followed "
                   "by other than a bias, a residual sum and an "
                   "activation)");
        const graph::Call& core = *chain.core;
        json step;
        step["src"] = value_of(core.args[0]);
        step["weights"] = constant(core.args[1]);
        step["bias"] = chain.bias.defined() ? constant(chain.bias) : -1;
        step["sum"] = chain.residual.defined() ? value_of(chain.residual) : -1;
        step["post_op"] = chain.activation ? eltwise(*chain.activation) : json();
        if (core.op->name == "nn.conv2d") {
            auto* a = dynamic_cast<const ops::Conv2DAttrs*>(core.attrs.get());
            if (shape_of(core.args[0]).size() != 4) reject(core.loc, "a convolution not 2-D");
            convolution(&step, a->strides, a->padding, a->dilation, a->groups);
        } else {
            if (shape_of(core.args[0]).size() != 2) {
                reject(core.loc, "nn.dense of data that is not 2-D");
            }
            step["op"] = "inner_product";
        }
        int dst = new_value(root);
        step["dst"] = dst;
        steps_.push_back(step);
        return dst;
    }

    static void convolution(json* step, const std::vector<int64_t>& strides,
                            const std::vector<int64_t>& padding,
                            const std::vector<int64_t>& dilation, int64_t groups) {
        (*step)["op"] = "conv2d";
        (*step)["strides"] = strides;
        (*step)["padding"] = padding;
        (*step)["dilation"] = dilation;
        (*step)["groups"] = groups;
    }

    // An int8 layer (dnnl.qnn.conv2d / dnnl.qnn.dense): the primitive of layer() on 8-bit data,
    // with its zero points, output scales and a clip.
    int qnn_layer(const QnnLayer& q, const graph::Expr& root) {
        if (!q.valid) {
            reject(root->loc,
                   "this quantized layer (an int8 convolution or dense layer followed by other "
                   "than an int32 bias, a requantize, a clip and a cast to 8 bits)");
        }
        const graph::Call& core = *q.core;
        json step;
        step["src"] = value_of(q.data);
        step["weights"] = constant(core.args[1]);
        step["bias"] = q.bias.empty() ? -1 : int32_constant(q.bias);
        step["sum"] = -1;
        step["post_op"] = json();
        if (q.clip) {
            step["post_op"] = {{"alg", "clip"}, {"alpha", q.clip->first}, {"beta", q.clip->second}};
        }
        step["quantized"] = {{"src_zero_point", q.src_zero_point},
                             {"dst_zero_point", q.dst_zero_point},
                             {"scales", q.scales}};
        if (core.op->name == "qnn.conv2d") {
            const auto& a = dynamic_cast<const ops::QnnConv2DAttrs&>(*core.attrs);
            convolution(&step, a.strides, q.padding, a.dilation, a.groups);
        } else {
            step["op"] = "inner_product";
        }
        int dst = new_value(root);
        step["dst"] = dst;
        steps_.push_back(step);
        return dst;
    }

    json eltwise(const graph::Call& c) {
        const std::string& op = c.op->name;
        double alpha = 0, beta = 0;
        std::string alg;
        if (op == "nn.relu") {
            alg = "relu";
        } else if (op == "nn.leaky_relu") {
            alg = "relu";
            alpha = dynamic_cast<const ops::LeakyReluAttrs&>(*c.attrs).alpha;
        } else if (op == "clip") {
            const auto& a = dynamic_cast<const ops::ClipAttrs&>(*c.attrs);
            if (a.a_min == 0 && a.a_max == std::numeric_limits<double>::infinity()) {
                return {{"alg", "relu"}, {"alpha", 0.0}, {"beta", 0.0}};
            }
            alg = "clip";
            // Infinite bounds (ONNX Clip without min or max) as the largest floats: JSON has
            // no infinity, and clipping at FLT_MAX changes every finite float as clip
            // does (an infinite input becomes FLT_MAX instead of staying infinite).
            alpha = std::clamp<double>(a.a_min, -FLT_MAX, FLT_MAX);
            beta = std::clamp<double>(a.a_max, -FLT_MAX, FLT_MAX);
        } else if (op == "nn.gelu") {
            alg = dynamic_cast<const ops::GeluAttrs&>(*c.attrs).approximate == "tanh" ? "gelu_tanh"
                                                                                      : "gelu_erf";
        } else if (op == "nn.elu") {
            alg = "elu";
            alpha = dynamic_cast<const ops::EluAttrs&>(*c.attrs).alpha;
        } else if (op == "nn.hardswish") {
            alg = "hardswish";  // x * min(max(x + 3, 0), 6) / 6, as nn.hardswish
        } else if (op == "sigmoid") {
            alg = "logistic";
        } else if (op == "tanh" || op == "exp" || op == "log" || op == "sqrt" || op == "abs") {
            alg = op;
        } else {
            reject(c.loc, op + " as an eltwise operation");
        }
        return {{"alg", alg}, {"alpha", alpha}, {"beta", beta}};
    }

    int single_op(const graph::Call& c, const graph::Expr& e) {
        const std::string& op = c.op->name;
        json step;
        if (op == "nn.hardsigmoid") {
            // clip(alpha * x + beta, 0, 1): oneDNN 2.6 has no hardsigmoid, so two steps.
            const auto& a = dynamic_cast<const ops::HardSigmoidAttrs&>(*c.attrs);
            int src = value_of(c.args[0]);
            int line = new_value(e);
            steps_.push_back({{"op", "eltwise"},
                              {"alg", "linear"},
                              {"alpha", a.alpha},
                              {"beta", a.beta},
                              {"src", src},
                              {"dst", line}});
            step = {
                {"op", "eltwise"}, {"alg", "clip"}, {"alpha", 0.0}, {"beta", 1.0}, {"src", line}};
        } else if (is_eltwise(c)) {
            step = eltwise(c);
            step["op"] = "eltwise";
            step["src"] = value_of(c.args[0]);
        } else if (op == "add" || op == "subtract" || op == "multiply" || op == "divide" ||
                   op == "maximum" || op == "minimum") {
            static const std::map<std::string, std::string> kAlg = {
                {"add", "add"},    {"subtract", "sub"}, {"multiply", "mul"},
                {"divide", "div"}, {"maximum", "max"},  {"minimum", "min"}};
            graph::Expr a = c.args[0], b = c.args[1];
            if (shape_of(a) != shape_of(e)) std::swap(a, b);  // commutative (dnnl_support.cpp)
            step = {{"op", "binary"}, {"alg", kAlg.at(op)}};
            step["src0"] = value_of(a);
            step["src1"] = value_of(b);
        } else if (op == "nn.max_pool2d" || op == "nn.avg_pool2d") {
            const auto& a = dynamic_cast<const ops::Pool2DAttrs&>(*c.attrs);
            step = {{"op", "pool"},
                    {"kernel", a.pool_size},
                    {"strides", a.strides},
                    {"padding", dnnl_pool_padding(c)}};
            step["alg"] = op == "nn.max_pool2d" ? "max"
                          : a.count_include_pad ? "avg_include"
                                                : "avg_exclude";
            step["src"] = value_of(c.args[0]);
        } else if (op == "nn.global_max_pool2d" || op == "nn.global_avg_pool2d") {
            auto in = shape_of(c.args[0]);
            step = {{"op", "pool"},
                    {"kernel", {in[2], in[3]}},
                    {"strides", {1, 1}},
                    {"padding", {0, 0, 0, 0}}};
            step["alg"] = op == "nn.global_max_pool2d" ? "max" : "avg_exclude";
            step["src"] = value_of(c.args[0]);
        } else if (op == "nn.softmax") {
            int64_t axis = dynamic_cast<const ops::SoftmaxAttrs&>(*c.attrs).axis;
            int64_t rank = static_cast<int64_t>(shape_of(e).size());
            step = {{"op", "softmax"}, {"axis", axis < 0 ? axis + rank : axis}};
            step["src"] = value_of(c.args[0]);
        } else if (op == "nn.matmul") {
            const auto& a = dynamic_cast<const ops::MatmulAttrs&>(*c.attrs);
            step = {
                {"op", "matmul"}, {"transpose_a", a.transpose_a}, {"transpose_b", a.transpose_b}};
            step["src0"] = value_of(c.args[0]);
            step["src1"] = value_of(c.args[1]);
        } else if (op == "concatenate") {
            int64_t axis = dynamic_cast<const ops::ConcatenateAttrs&>(*c.attrs).axis;
            int64_t rank = static_cast<int64_t>(shape_of(e).size());
            std::vector<int> srcs;
            for (const auto& a : c.args) srcs.push_back(value_of(a));
            step = {{"op", "concat"}, {"axis", axis < 0 ? axis + rank : axis}, {"srcs", srcs}};
        } else if (op == "reshape" || op == "flatten" || op == "squeeze" || op == "expand_dims") {
            step = {{"op", "copy"}};
            step["src"] = value_of(c.args[0]);
        } else {
            reject(c.loc, op);
        }
        int dst = new_value(e);
        step["dst"] = dst;
        steps_.push_back(step);
        return dst;
    }

    const ExternalRegion& region_;
    std::string* weights_;
    std::vector<std::vector<int64_t>> shapes_;
    std::vector<std::string> dtypes_;
    std::vector<int> inputs_;
    json constants_ = json::array();
    json steps_ = json::array();
    std::unordered_map<const graph::ExprNode*, int> values_;
    std::set<int> produced_;
};

}  // namespace

std::string dnnl_codegen(const std::vector<ExternalRegion>& regions) {
    std::string weights;
    json doc = {{"version", kDnnlFormatVersion}, {"functions", json::array()}};
    for (const auto& r : regions) doc["functions"].push_back(RegionWriter(r, &weights).write());
    std::string text = doc.dump();
    std::string bytes(kDnnlMagic, 8);
    uint64_t n = text.size();
    char size[8];
    for (int i = 0; i < 8; ++i) size[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    bytes.append(size, 8);
    bytes += text;
    bytes.resize((bytes.size() + 63) / 64 * 64, '\0');
    bytes += weights;
    return bytes;
}

const ExternalCompiler& dnnl_compiler() {
    static const ExternalCompiler compiler{"dnnl", dnnl_pattern_table, dnnl_codegen};
    return compiler;
}

}  // namespace anvil::codegen::dnnl
