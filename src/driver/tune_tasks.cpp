#include "driver/tune_tasks.h"

#include <unordered_map>

#include "codegen/target.h"
#include "driver/compile.h"
#include "driver/lower_graph.h"
#include "driver/workload_key.h"
#include "graph/expr_functor.h"
#include "support/large_stack.h"

namespace anvil::driver {

namespace {

bool is_static(const graph::Type& t) {
    if (auto* tt = t.as<graph::TensorType>()) return tt->is_static();
    if (auto* tuple = t.as<graph::TupleType>()) {
        for (const auto& f : tuple->fields) {
            if (!is_static(f)) return false;
        }
        return true;
    }
    return false;
}

bool has_static_shapes(const graph::Function& f) {
    for (const auto& p : f.params) {
        if (!is_static(p->type)) return false;
    }
    bool all = true;
    graph::post_order_visit(f.body, [&](const graph::Expr& e) {
        if (e->type.defined() && !is_static(e->type)) all = false;
    });
    return all;
}

std::vector<TuneTask> extract_on_this_thread(const graph::IRModule& m, const std::string& target,
                                             const PipelineOptions& options) {
    Target t = Target::parse(target);
    graph::IRModule optimized = run_graph_pipeline(m, compile_pass_context(), options);
    std::vector<TuneTask> tasks;
    std::unordered_map<std::string, size_t> index;
    for (const auto& [name, fn] : optimized.functions) {
        graph::post_order_visit(fn->body, [&](const graph::Expr& e) {
            auto* call = e.as<graph::Call>();
            if (!call || !call->callee.defined()) return;
            auto* callee = call->callee.as<graph::Function>();
            if (!callee || !callee->primitive) return;
            std::string key = workload_key(*callee);
            auto it = index.find(key);
            if (it == index.end()) {
                TuneTask task;
                task.workload = key;
                task.name = kernel_base_name(*callee);
                task.function = call->callee.cast<graph::Function>();
                task.static_shapes = has_static_shapes(*callee);
                if (task.static_shapes) {
                    LoweredFunction lowered =
                        lower_primitive_function(*callee, task.name, t, options);
                    task.space = lowered.space;
                    task.default_schedule = lowered.schedule;
                }
                it = index.emplace(key, tasks.size()).first;
                tasks.push_back(std::move(task));
            }
            ++tasks[it->second].weight;
        });
    }
    return tasks;
}

}  // namespace

std::vector<TuneTask> extract_tasks(const graph::IRModule& m, const std::string& target,
                                    const PipelineOptions& options) {
    // The passes recurse once per nested expression: a deep graph needs a deep stack.
    return call_with_large_stack([&] { return extract_on_this_thread(m, target, options); });
}

}  // namespace anvil::driver
