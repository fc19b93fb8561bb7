#include "driver/partition_summary.h"

#include <cstdio>
#include <map>

#include "driver/lower_external.h"
#include "graph/expr_functor.h"
#include "ops/dense.h"
#include "ops/qnn.h"

namespace anvil::driver {

namespace {

int64_t elements(const graph::Type& t) {
    auto* tt = t.as<graph::TensorType>();
    return tt && tt->is_static() ? tt->num_elements() : 0;
}

// The estimated FLOPs of one op call (PartitionSummary).
double op_flops(const graph::Call& c) {
    // A QNN product counts as its float form (its extra operands are zero points and scales).
    std::string op = c.op->name;
    bool quantized = op.rfind("qnn.", 0) == 0;
    if (quantized) op = "nn." + op.substr(4);
    size_t operands = quantized ? 6 : 2;
    double out = static_cast<double>(elements(c.type));
    auto shape = [](const graph::Expr& e) {
        auto* t = e->type.as<graph::TensorType>();
        return t && t->is_static() ? t->static_shape() : std::vector<int64_t>{};
    };
    if (op == "nn.conv2d" && c.args.size() == operands) {
        auto w = shape(c.args[1]);  // [O, C/g, KH, KW]
        if (w.size() == 4) return 2 * out * static_cast<double>(w[1] * w[2] * w[3]);
    }
    if ((op == "nn.dense" || op == "nn.matmul" || op == "nn.batch_matmul") &&
        c.args.size() == operands) {
        auto a = shape(c.args[0]);
        auto* attrs = dynamic_cast<const ops::MatmulAttrs*>(c.attrs.get());
        auto* qattrs = dynamic_cast<const ops::QnnBatchMatmulAttrs*>(c.attrs.get());
        bool transpose_a = (attrs && attrs->transpose_a) || (qattrs && qattrs->transpose_a);
        if (!a.empty()) {
            int64_t k = transpose_a && a.size() >= 2 ? a[a.size() - 2] : a.back();
            return 2 * out * static_cast<double>(k);
        }
    }
    return out;
}

// Op calls and FLOPs of an expression, through the functions it calls.
void count(const graph::Expr& body, int64_t* ops, double* flops) {
    graph::post_order_visit(body, [&](const graph::Expr& e) {
        auto* c = e.as<graph::Call>();
        if (!c || !c->op.defined() || c->op->executor_op) return;
        ++*ops;
        *flops += op_flops(*c);
    });
}

std::string gflops(double f) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g GFLOPs", f / 1e9);
    return buf;
}

}  // namespace

PartitionSummary summarize_partition(const graph::IRModule& m) {
    PartitionSummary s;
    std::map<std::string, size_t> index;
    for (const auto& [name, f] : m.functions) {
        count(f->body, &s.total_ops, &s.total_flops);
        graph::post_order_visit(f->body, [&](const graph::Expr& e) {
            std::string compiler;
            const graph::Function* region = external_region(e, &compiler);
            if (!region) return;
            auto it = index.find(compiler);
            if (it == index.end()) {
                it = index.emplace(compiler, s.compilers.size()).first;
                s.compilers.push_back({.name = compiler});
            }
            PartitionSummary::Compiler& c = s.compilers[it->second];
            ++c.regions;
            count(region->body, &c.ops, &c.flops);
        });
    }
    return s;
}

std::string PartitionSummary::str() const {
    std::string text;
    for (const auto& c : compilers) {
        char pct[32];
        std::snprintf(pct, sizeof pct, "%.1f %%",
                      total_flops > 0 ? 100 * c.flops / total_flops : 0.0);
        text += c.name + ": " + std::to_string(c.regions) +
                (c.regions == 1 ? " region, " : " regions, ") + std::to_string(c.ops) + " of " +
                std::to_string(total_ops) + " ops, " + gflops(c.flops) + " (" + pct + " of " +
                gflops(total_flops) + ")\n";
    }
    return text;
}

}  // namespace anvil::driver
