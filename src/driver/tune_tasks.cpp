#include "driver/tune_tasks.h"

#include <unordered_map>

#include "codegen/target.h"
#include "driver/compile.h"
#include "driver/conv_algorithm.h"
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
    graph::IRModule optimized = run_graph_pipeline(m, compile_pass_context(options, t), options);
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
                task.args = call->args;
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

// The fused function of `m`'s main that computes the blocked or Winograd convolution, and the
// arguments main calls it with.
Ref<graph::Function> conv_kernel_function(const graph::IRModule& m,
                                          std::vector<graph::Expr>* args) {
    Ref<graph::Function> found;
    for (const auto& [name, fn] : m.functions) {
        graph::post_order_visit(fn->body, [&](const graph::Expr& e) {
            auto* call = e.as<graph::Call>();
            if (!call || !call->callee.defined()) return;
            auto* callee = call->callee.as<graph::Function>();
            if (!callee || !callee->primitive) return;
            graph::post_order_visit(callee->body, [&](const graph::Expr& inner) {
                auto* c = inner.as<graph::Call>();
                if (c && c->op.defined() &&
                    (c->op->name == "nn.conv2d_nchwc" ||
                     c->op->name == "nn.conv2d_winograd_nchwc")) {
                    found = call->callee.cast<graph::Function>();
                    *args = call->args;
                }
            });
        });
    }
    return found;
}

std::vector<TuneTask> extract_algorithms_on_this_thread(const graph::IRModule& m,
                                                        const std::string& target,
                                                        const PipelineOptions& options) {
    Target t = Target::parse(target);
    struct Query {
        Ref<graph::Call> conv;
        int64_t in_block, out_block;
    };
    std::vector<TuneTask> tasks;
    std::vector<Query> queries;
    std::unordered_map<std::string, size_t> index;
    graph::PassContext ctx = compile_pass_context(options, t);
    ctx.conv2d_algorithm = [&](const graph::Call& conv, int64_t in_block, int64_t out_block) {
        std::string key = conv2d_algorithm_key(conv, in_block, out_block);
        auto it = index.find(key);
        if (it == index.end()) {
            TuneTask task;
            task.workload = key;
            task.name = "conv2d_algorithm";
            task.space.knobs.push_back({kAlgorithmKnob, {0, 2, 4}, 0});
            it = index.emplace(key, tasks.size()).first;
            tasks.push_back(std::move(task));
            queries.push_back({Ref<graph::Call>(&conv), in_block, out_block});
        }
        ++tasks[it->second].weight;
        return 0;
    };
    run_graph_pipeline(m, ctx, options);
    // Each variant: the convolution alone, compiled with its algorithm forced.
    for (size_t i = 0; i < tasks.size(); ++i) {
        const graph::Call& conv = *queries[i].conv;
        auto x = graph::make_var("x", conv.args[0]->type);
        graph::IRModule one;
        one.functions["main"] = graph::make_function(
            {x}, graph::make_call(*conv.op, {graph::Expr(x), conv.args[1]}, conv.attrs, conv.loc));
        for (int64_t algorithm : tasks[i].space.knobs[0].choices) {
            graph::PassContext forced = compile_pass_context(options, t);
            forced.conv2d_algorithm = [&](const graph::Call&, int64_t, int64_t) {
                return static_cast<int>(algorithm);
            };
            std::vector<graph::Expr> args;
            Ref<graph::Function> f =
                conv_kernel_function(run_graph_pipeline(one, forced, options), &args);
            // The one-convolution module may block its data otherwise than the model does; a
            // Winograd choice must then really give a Winograd kernel.
            if (f.defined() && algorithm != 0 &&
                kernel_base_name(*f).find("winograd") == std::string::npos) {
                f = {};
            }
            if (!f.defined()) {
                tasks[i].variants.clear();  // the form is not available: not tunable
                break;
            }
            tasks[i].variants.push_back(f);
            tasks[i].variant_args.push_back(args);
        }
        tasks[i].static_shapes = tasks[i].variants.size() == 3;
        if (tasks[i].static_shapes) {
            tasks[i].function = tasks[i].variants[0];
            tasks[i].args = tasks[i].variant_args[0];
            // "conv2d 64x56x56 -> 64, algorithm": the convolution by its sizes.
            auto d = conv.args[0]->type.as<graph::TensorType>()->static_shape();
            auto w = conv.args[1]->type.as<graph::TensorType>()->static_shape();
            tasks[i].name = "conv2d " + std::to_string(d[1]) + "x" + std::to_string(d[2]) + "x" +
                            std::to_string(d[3]) + " -> " + std::to_string(w[0]) + ", algorithm";
        }
    }
    return tasks;
}

}  // namespace

std::vector<TuneTask> extract_algorithm_tasks(const graph::IRModule& m, const std::string& target,
                                              const PipelineOptions& options) {
    return call_with_large_stack(
        [&] { return extract_algorithms_on_this_thread(m, target, options); });
}

std::vector<TuneTask> extract_tasks(const graph::IRModule& m, const std::string& target,
                                    const PipelineOptions& options) {
    // The passes recurse once per nested expression: a deep graph needs a deep stack.
    return call_with_large_stack([&] { return extract_on_this_thread(m, target, options); });
}

}  // namespace anvil::driver
