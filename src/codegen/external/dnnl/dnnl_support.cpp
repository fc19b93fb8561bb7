// Which single ops oneDNN takes (annotate_target), as dnnl_codegen.cpp can write them.
#include "codegen/external/dnnl/dnnl_compiler.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/pool.h"
#include "ops/softmax.h"

namespace anvil::codegen::dnnl {

namespace {

bool all_static_float(const graph::Call& c) {
    if (!is_static_float(c.type)) return false;
    for (const auto& a : c.args) {
        if (!is_static_float(a->type)) return false;
    }
    return true;
}

size_t rank_of(const graph::Expr& e) {
    return e->type.as<graph::TensorType>()->ndim();
}

bool lone_layer(const graph::Call& c) {
    return read_layer_chain(graph::Expr(Ref<graph::Call>(&c))).valid;
}

// oneDNN's binary primitive: src0 has the result's shape, src1 broadcasts to it (the same rank
// once leading 1s are added). A commutative op may have them the other way round.
bool binary_fits(const graph::Call& c) {
    if (!all_static_float(c) || c.args.size() != 2) return false;
    auto out = c.type.as<graph::TensorType>()->static_shape();
    if (out.empty() || out.size() > 5) return false;
    auto fits = [&](const graph::Expr& a, const graph::Expr& b) {
        auto sa = a->type.as<graph::TensorType>()->static_shape();
        auto sb = b->type.as<graph::TensorType>()->static_shape();
        if (sa != out || sb.size() > out.size()) return false;
        for (size_t i = 0; i < sb.size(); ++i) {
            int64_t d = sb[i], o = out[out.size() - sb.size() + i];
            if (d != 1 && d != o) return false;
        }
        return true;
    };
    bool commutative = c.op->name == "add" || c.op->name == "multiply" || c.op->name == "maximum" ||
                       c.op->name == "minimum";
    return fits(c.args[0], c.args[1]) || (commutative && fits(c.args[1], c.args[0]));
}

bool pool_fits(const graph::Call& c) {
    auto* a = dynamic_cast<const ops::Pool2DAttrs*>(c.attrs.get());
    if (!a || !all_static_float(c) || rank_of(c.args[0]) != 4 || a->layout != "NCHW") return false;
    // oneDNN 2.6's pooling takes no dilation, and refuses a padding as large as the window (a
    // window of padding alone). Ceil mode is more padding at the end (dnnl_pool_padding), which
    // is what it means for max pooling and averages that leave padding out.
    if (a->dilation != std::vector<int64_t>{1, 1} || a->pool_size.size() != 2) return false;
    std::vector<int64_t> pad = dnnl_pool_padding(c);
    // An average over windows that ceil mode extends counts the extension as padding in
    // oneDNN, not in nn.avg_pool2d.
    if (pad != a->padding && c.op->name == "nn.avg_pool2d" && a->count_include_pad) return false;
    for (size_t i = 0; i < 4; ++i) {
        if (pad[i] >= a->pool_size[i % 2]) return false;
    }
    return true;
}

bool global_pool_fits(const graph::Call& c) {
    auto* a = dynamic_cast<const ops::GlobalPool2DAttrs*>(c.attrs.get());
    return a && a->layout == "NCHW" && all_static_float(c) && rank_of(c.args[0]) == 4;
}

bool eltwise_fits(const graph::Call& c) {
    if (!all_static_float(c) || c.args.size() != 1 ||
        (c.op->name != "nn.hardsigmoid" && !is_eltwise(c))) {
        return false;
    }
    if (auto* g = dynamic_cast<const ops::GeluAttrs*>(c.attrs.get())) {
        return g->approximate == "none" || g->approximate == "tanh";
    }
    return true;
}

bool matmul_fits(const graph::Call& c) {
    if (!all_static_float(c) || c.args.size() != 2) return false;
    size_t ra = rank_of(c.args[0]), rb = rank_of(c.args[1]);
    if (ra < 2 || ra != rb || ra > 4) return false;
    // The batch dimensions must be equal (oneDNN broadcasts them only in newer versions).
    auto sa = c.args[0]->type.as<graph::TensorType>()->static_shape();
    auto sb = c.args[1]->type.as<graph::TensorType>()->static_shape();
    return std::equal(sa.begin(), sa.end() - 2, sb.begin());
}

bool reshape_fits(const graph::Call& c) {
    return all_static_float(c) && c.args.size() == 1;
}

// oneDNN's concat: float32 tensors of one rank.
bool concat_fits(const graph::Call& c) {
    if (c.args.empty() || !all_static_float(c)) return false;
    size_t rank = c.type.as<graph::TensorType>()->ndim();
    for (const auto& a : c.args) {
        if (rank_of(a) != rank) return false;
    }
    return rank >= 1 && rank <= 6;
}

bool softmax_fits(const graph::Call& c) {
    auto* a = dynamic_cast<const ops::SoftmaxAttrs*>(c.attrs.get());
    return a && all_static_float(c) && rank_of(c.args[0]) <= 5;
}

}  // namespace

std::vector<std::pair<std::string, SupportCheck>> dnnl_support_checks() {
    std::vector<std::pair<std::string, SupportCheck>> checks = {
        {"nn.conv2d", lone_layer},
        {"nn.dense", lone_layer},
        {"nn.matmul", matmul_fits},
        {"nn.max_pool2d", pool_fits},
        {"nn.avg_pool2d", pool_fits},
        {"nn.global_max_pool2d", global_pool_fits},
        {"nn.global_avg_pool2d", global_pool_fits},
        {"nn.softmax", softmax_fits},
        {"concatenate", concat_fits},
        {"reshape", reshape_fits},
        {"flatten", reshape_fits},
        {"squeeze", reshape_fits},
        {"expand_dims", reshape_fits},
    };
    for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
        checks.emplace_back(op, binary_fits);
    }
    for (const char* op : {"nn.relu", "clip", "nn.gelu", "sigmoid", "tanh", "exp", "log", "sqrt",
                           "abs", "nn.elu", "nn.leaky_relu", "nn.hardswish", "nn.hardsigmoid"}) {
        checks.emplace_back(op, eltwise_fits);
    }
    return checks;
}

}  // namespace anvil::codegen::dnnl
