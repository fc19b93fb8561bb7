// The nn anchors inside fused graph functions, lowered by the driver (intermediates inlined, the
// anchor's schedule applied to the group) and evaluated, against the op run alone plus the tail
// computed here.
#include <cmath>

#include "codegen/llvm/llvm_module.h"
#include "driver/evaluate.h"
#include "driver/lower_graph.h"
#include "nn_op_runner.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/norm.h"
#include "ops/pool.h"
#include "ops/softmax.h"

namespace anvil {
namespace {

using graph::Expr;
using runtime::NDArray;
using testing::random_tensor;

template <typename A>
Ref<graph::Attrs> attrs(const A& a) {
    return Ref<graph::Attrs>(new A(a));
}

// Lowers fn(params) as one fused group called from main and runs it on `inputs`.
NDArray run_group(const std::vector<Ref<graph::Var>>& params, const Expr& body,
                  const std::vector<NDArray>& inputs) {
    std::vector<Ref<graph::Var>> outer;
    std::vector<Expr> args;
    for (const auto& p : params) {
        outer.push_back(graph::make_var(p->name + "_in", p->type));
        args.push_back(outer.back());
    }
    auto f = graph::make_function(params, body, /*primitive=*/true);
    graph::IRModule m;
    m.functions["main"] = graph::make_function(outer, graph::make_call_function(f, args));
    graph::IRModule lowered = driver::lower_fused_functions(m, Target::host(), {});
    std::vector<Ref<tir::PrimFunc>> kernels;
    for (const auto& [name, k] : lowered.kernels) kernels.push_back(k);
    runtime::Module mod = codegen::build_llvm(kernels, Target::host());
    return driver::evaluate_lowered(lowered, mod, inputs).at(0);
}

Ref<graph::Var> param(const std::string& name, const NDArray& a) {
    return graph::make_var(name, testing::type_of(a));
}

std::vector<double> as_double(const NDArray& a) {
    return {a.data<float>(), a.data<float>() + a.num_elements()};
}

TEST(FusedGroup, Conv2DBiasAddRelu) {
    ops::Conv2DAttrs ca;
    ca.strides = {2, 2};
    ca.padding = {1, 1, 1, 1};
    auto x = random_tensor({1, 3, 15, 13}, 1), w = random_tensor({24, 3, 3, 3}, 2),
         b = random_tensor({24}, 3);
    auto px = param("x", x), pw = param("w", w), pb = param("b", b);
    Expr conv = graph::make_call(ops::get_op("nn.conv2d"), {px, pw}, attrs(ca));
    Expr biased =
        graph::make_call(ops::get_op("nn.bias_add"), {conv, pb}, attrs(ops::BiasAddAttrs()));
    Expr relu = graph::make_call(ops::get_op("nn.relu"), {biased});
    NDArray got = run_group({px, pw, pb}, relu, {x, w, b});
    std::vector<double> want = as_double(testing::run_op("nn.conv2d", ca, {x, w}));
    int64_t plane = static_cast<int64_t>(want.size()) / 24;
    for (size_t i = 0; i < want.size(); ++i) {
        want[i] = std::max(0.0, want[i] + b.data<float>()[i / plane]);
    }
    testing::expect_close(got, want, 1e-5, "conv2d+bias_add+relu group");
}

TEST(FusedGroup, DepthwiseBatchNormRelu) {
    ops::Conv2DAttrs ca;
    ca.padding = {1, 1, 1, 1};
    ca.groups = 8;
    auto x = random_tensor({1, 8, 14, 14}, 4), w = random_tensor({8, 1, 3, 3}, 5);
    auto g = random_tensor({8}, 6), be = random_tensor({8}, 7), mu = random_tensor({8}, 8),
         var = random_tensor({8}, 9, 0.5f, 2.0f);
    auto px = param("x", x), pw = param("w", w), pg = param("g", g), pbe = param("be", be),
         pmu = param("mu", mu), pvar = param("var", var);
    Expr conv = graph::make_call(ops::get_op("nn.conv2d"), {px, pw}, attrs(ca));
    Expr bn = graph::make_call(ops::get_op("nn.batch_norm"), {conv, pg, pbe, pmu, pvar},
                               attrs(ops::BatchNormAttrs()));
    Expr relu = graph::make_call(ops::get_op("nn.relu"), {bn});
    NDArray got = run_group({px, pw, pg, pbe, pmu, pvar}, relu, {x, w, g, be, mu, var});
    std::vector<double> want = as_double(testing::run_op("nn.conv2d", ca, {x, w}));
    for (size_t i = 0; i < want.size(); ++i) {
        int64_t c = static_cast<int64_t>(i) / 196;
        double v = (want[i] - mu.data<float>()[c]) / std::sqrt(var.data<float>()[c] + 1e-5) *
                       g.data<float>()[c] +
                   be.data<float>()[c];
        want[i] = std::max(0.0, v);
    }
    testing::expect_close(got, want, 1e-5, "depthwise+batch_norm+relu group");
}

TEST(FusedGroup, DenseBiasAdd) {
    auto x = random_tensor({5, 33}, 10), w = random_tensor({70, 33}, 11),
         b = random_tensor({70}, 12);
    auto px = param("x", x), pw = param("w", w), pb = param("b", b);
    Expr dense = graph::make_call(ops::get_op("nn.dense"), {px, pw});
    ops::BiasAddAttrs ba;
    ba.axis = -1;
    Expr biased = graph::make_call(ops::get_op("nn.bias_add"), {dense, pb}, attrs(ba));
    NDArray got = run_group({px, pw, pb}, biased, {x, w, b});
    std::vector<double> want = as_double(testing::run_op("nn.dense", ops::DenseAttrs(), {x, w}));
    for (size_t i = 0; i < want.size(); ++i) want[i] += b.data<float>()[i % 70];
    testing::expect_close(got, want, 1e-5, "dense+bias_add group");
}

TEST(FusedGroup, RowOpsWithTails) {
    auto x = random_tensor({2, 6, 7, 9}, 13);
    auto px = param("x", x);
    ops::SoftmaxAttrs sa;
    sa.axis = 1;
    Expr sm = graph::make_call(ops::get_op("nn.softmax"), {px}, attrs(sa));
    Expr ex = graph::make_call(ops::get_op("exp"), {sm});
    NDArray got = run_group({px}, ex, {x});
    std::vector<double> want = as_double(testing::run_op("nn.softmax", sa, {x}));
    for (auto& v : want) v = std::exp(v);
    testing::expect_close(got, want, 1e-5, "softmax+exp group");

    ops::Pool2DAttrs pa;
    pa.pool_size = {3, 3};
    pa.strides = {2, 2};
    pa.ceil_mode = true;
    Expr pool = graph::make_call(ops::get_op("nn.avg_pool2d"), {px}, attrs(pa));
    Expr neg = graph::make_call(ops::get_op("negative"), {pool});
    got = run_group({px}, neg, {x});
    want = as_double(testing::run_op("nn.avg_pool2d", pa, {x}));
    for (auto& v : want) v = -v;
    testing::expect_close(got, want, 1e-5, "avg_pool2d+negative group");

    auto gamma = random_tensor({9}, 14);
    auto pgamma = param("gamma", gamma);
    Expr ln =
        graph::make_call(ops::get_op("nn.layer_norm"), {px, pgamma}, attrs(ops::LayerNormAttrs()));
    Expr relu = graph::make_call(ops::get_op("nn.relu"), {ln});
    got = run_group({px, pgamma}, relu, {x, gamma});
    want = as_double(testing::run_op("nn.layer_norm", ops::LayerNormAttrs(), {x, gamma}));
    for (auto& v : want) v = std::max(0.0, v);
    testing::expect_close(got, want, 1e-5, "layer_norm+relu group");
}

}  // namespace
}  // namespace anvil
