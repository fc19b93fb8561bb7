#include "driver/make_plan.h"

#include <unordered_map>
#include <unordered_set>

#include "driver/count_flops.h"
#include "graph/expr_functor.h"
#include "ops/call_tir.h"
#include "support/error.h"

namespace anvil::driver {

using graph::Expr;
using runtime::PlanEntry;

namespace {

runtime::PlanTensor plan_tensor(const graph::Type& t, int storage) {
    const auto& tt = graph::expect_tensor(t, {}, "a planned value");
    return {.shape = tt.static_shape(), .dtype = graph::dl_dtype_of(tt.dtype), .storage = storage};
}

}  // namespace

ExecutablePlan make_plan(const graph::IRModule& m) {
    const auto& main = m.main();
    runtime::GraphPlan plan;
    std::vector<std::pair<std::string, runtime::NDArray>> params;
    std::unordered_map<const graph::ExprNode*, std::vector<PlanEntry>> entries;
    auto add_storage = [&](const runtime::PlanTensor& t) {
        int id = static_cast<int>(plan.storage.size());
        plan.storage.push_back({.id = id, .bytes = t.nbytes()});
        return id;
    };
    auto add_node = [&](runtime::PlanNode node) {
        int id = static_cast<int>(plan.nodes.size());
        std::vector<PlanEntry> out;
        for (size_t k = 0; k < node.outputs.size(); ++k) out.push_back({id, static_cast<int>(k)});
        plan.nodes.push_back(std::move(node));
        return out;
    };
    for (const auto& p : main->params) {
        runtime::PlanTensor t = plan_tensor(p->type, 0);
        t.storage = add_storage(t);
        auto out =
            add_node({.kind = runtime::PlanNodeKind::input, .name = p->name, .outputs = {t}});
        plan.inputs.push_back({p->name, out[0].node});
        entries[p.get()] = out;
    }
    std::unordered_map<std::string, int> kernel_uses;
    std::unordered_map<std::string, int64_t> kernel_flops;  // counted once per kernel
    auto flops_of = [&](const std::string& kernel) {
        auto it = kernel_flops.find(kernel);
        if (it != kernel_flops.end()) return it->second;
        auto k = m.kernels.find(kernel);
        int64_t n = k != m.kernels.end() ? count_flops(*k->second) : -1;
        return kernel_flops[kernel] = n;
    };
    graph::post_order_visit(main->body, [&](const Expr& e) {
        if (entries.count(e.get())) return;
        if (auto* c = e.as<graph::Constant>()) {
            std::string name = "p" + std::to_string(params.size());
            params.emplace_back(name, c->data);
            entries[c] = add_node({.kind = runtime::PlanNodeKind::param,
                                   .name = name,
                                   .outputs = {plan_tensor(e->type, -1)}});
        } else if (auto* call = e.as<graph::Call>()) {
            if (!call->op.defined() || call->op->name != "call_tir") {
                user_error(e->loc) << "make_plan: main still calls "
                                   << (call->op.defined() ? call->op->name : "a function")
                                   << "; lower the module first";
            }
            const auto& attrs = static_cast<const ops::CallTirAttrs&>(*call->attrs);
            runtime::PlanNode node{.kind = runtime::PlanNodeKind::kernel,
                                   .kernel = attrs.kernel,
                                   .flops = flops_of(attrs.kernel)};
            node.name = !e->loc.node_name.empty()
                            ? e->loc.node_name
                            : attrs.kernel + "_" + std::to_string(kernel_uses[attrs.kernel]++);
            for (const auto& a : call->args) {
                const auto& v = entries.at(a.get());
                node.args.insert(node.args.end(), v.begin(), v.end());
            }
            for (const auto& t : ops::call_tir_outputs(attrs)) {
                runtime::PlanTensor pt = plan_tensor(t, 0);
                pt.storage = add_storage(pt);
                node.outputs.push_back(pt);
            }
            entries[call] = add_node(std::move(node));
        } else if (auto* tuple = e.as<graph::Tuple>()) {
            std::vector<PlanEntry> all;
            for (const auto& f : tuple->fields) {
                const auto& v = entries.at(f.get());
                all.insert(all.end(), v.begin(), v.end());
            }
            entries[tuple] = all;
        } else if (auto* item = e.as<graph::TupleGetItem>()) {
            entries[item] = {entries.at(item->tuple.get()).at(item->index)};
        } else if (!e.is<graph::Var>()) {
            user_error(e->loc) << "make_plan: cannot plan a " << graph::expr_kind_name(e->kind);
        }
    });
    const auto& outs = entries.at(main->body.get());
    for (size_t i = 0; i < outs.size(); ++i) {
        plan.outputs.push_back({"output" + std::to_string(i), outs[i]});
    }
    // Node names must be unique; model node names normally are, fused copies may repeat. A
    // repeat gets the first suffix _1, _2, ... that no node is named (PyTorch's ONNX export
    // names nodes /Relu, /Relu_1, ...).
    std::unordered_set<std::string> given;
    for (const auto& n : plan.nodes) given.insert(n.name);
    std::unordered_set<std::string> used;
    std::unordered_map<std::string, int> last_suffix;
    for (auto& n : plan.nodes) {
        if (used.insert(n.name).second) continue;
        int& k = last_suffix[n.name];
        std::string name;
        do {
            name = n.name + "_" + std::to_string(++k);
        } while (given.count(name) || used.count(name));
        n.name = name;
        used.insert(name);
    }
    ExecutablePlan out;
    out.params = runtime::pack_params(params, &plan);
    out.plan = std::move(plan);
    return out;
}

}  // namespace anvil::driver
