#include "driver/tune_tasks.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "codegen/target.h"
#include "driver/compile.h"
#include "driver/conv_algorithm.h"
#include "driver/layout_block.h"
#include "driver/lower_graph.h"
#include "driver/workload_key.h"
#include "graph/attr_fields.h"
#include "graph/expr_functor.h"
#include "graph/printer.h"
#include "ir/channel_block.h"
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

// The distinct fused kernels an optimized module's graph functions call, in the order of their
// first call, each with its workload key and its calls per run.
struct KernelUse {
    std::string workload;
    VariantKernel kernel;
};

std::vector<KernelUse> kernel_uses(const graph::IRModule& optimized) {
    std::vector<KernelUse> uses;
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
                VariantKernel k{call->callee.cast<graph::Function>(), call->args, 0};
                it = index.emplace(key, uses.size()).first;
                uses.push_back({key, std::move(k)});
            }
            ++uses[it->second].kernel.weight;
        });
    }
    return uses;
}

std::vector<TuneTask> extract_on_this_thread(const graph::IRModule& m, const std::string& target,
                                             const PipelineOptions& options) {
    Target t = Target::parse(target);
    graph::IRModule optimized = run_graph_pipeline(m, compile_pass_context(options, t), options);
    std::vector<TuneTask> tasks;
    for (KernelUse& use : kernel_uses(optimized)) {
        TuneTask task;
        task.workload = use.workload;
        task.function = use.kernel.function;
        task.name = kernel_base_name(*task.function);
        task.args = std::move(use.kernel.args);
        task.weight = use.kernel.weight;
        task.static_shapes = has_static_shapes(*task.function);
        if (task.static_shapes) {
            LoweredFunction lowered =
                lower_primitive_function(*task.function, task.name, t, options);
            task.space = lowered.space;
            task.default_schedule = lowered.schedule;
        }
        tasks.push_back(std::move(task));
    }
    return tasks;
}

// The fused function of `m`'s main that computes one of `ops`, and the arguments main calls it
// with.
Ref<graph::Function> conv_kernel_function(const graph::IRModule& m,
                                          const std::vector<std::string>& ops,
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
                    std::find(ops.begin(), ops.end(), c->op->name) != ops.end()) {
                    found = call->callee.cast<graph::Function>();
                    *args = call->args;
                }
            });
        });
    }
    return found;
}

// A 1x1 stride-1 unpadded convolution with one group: its compute reads the weight as it is
// over a whole plane (ops/conv.cpp, the pointwise form), whatever block it is packed in, so a
// weight block changes nothing worth measuring. (Planes too small for that form are blocked
// like any other convolution; they are counted here too, a small loss.)
bool pointwise_over_plane(const graph::Call& conv) {
    auto w = conv.args[1]->type.as<graph::TensorType>()->static_shape();
    auto strides = graph::attr_ints(*conv.attrs, "strides");
    auto padding = graph::attr_ints(*conv.attrs, "padding");
    auto groups = graph::attr_int(*conv.attrs, "groups");
    bool unpadded =
        padding && std::all_of(padding->begin(), padding->end(), [](int64_t p) { return p == 0; });
    return w[2] == 1 && w[3] == 1 && groups == 1 && strides &&
           *strides == std::vector<int64_t>{1, 1} && unpadded;
}

// Whether `limit_s` seconds (0: no limit) have passed since `start`.
bool out_of_time(std::chrono::steady_clock::time_point start, double limit_s) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return limit_s > 0 && elapsed >= limit_s;
}

// "conv2d 64x56x56 -> 64, <what>": a convolution by its sizes.
std::string conv_task_name(const graph::Call& conv, const std::string& what) {
    auto d = conv.args[0]->type.as<graph::TensorType>()->static_shape();
    auto w = conv.args[1]->type.as<graph::TensorType>()->static_shape();
    return "conv2d " + std::to_string(d[1]) + "x" + std::to_string(d[2]) + "x" +
           std::to_string(d[3]) + " -> " + std::to_string(w[0]) + ", " + what;
}

std::vector<TuneTask> extract_algorithms_on_this_thread(const graph::IRModule& m,
                                                        const std::string& target,
                                                        const PipelineOptions& options,
                                                        double time_limit_s) {
    const auto start = std::chrono::steady_clock::now();
    Target t = Target::parse(target);
    // A convolution's algorithm (Winograd or not) or its weight block (when left unblocked).
    struct Query {
        Ref<graph::Call> conv;
        int64_t in_block = 0, out_block = 0;
        bool weight_block = false;
    };
    std::vector<TuneTask> tasks;
    std::vector<Query> queries;
    std::unordered_map<std::string, size_t> index;
    graph::PassContext ctx = compile_pass_context(options, t);
    // A task per key, counting its convolutions.
    auto count = [&](std::string key, const te::Knob& knob, Query q) {
        auto it = index.find(key);
        if (it == index.end()) {
            TuneTask task;
            task.workload = std::move(key);
            task.name = knob.name == kAlgorithmKnob ? "conv2d_algorithm" : "conv2d_weight_block";
            task.space.knobs.push_back(knob);
            it = index.emplace(task.workload, tasks.size()).first;
            tasks.push_back(std::move(task));
            queries.push_back(std::move(q));
        }
        ++tasks[it->second].weight;
    };
    ctx.conv2d_algorithm = [&](const graph::Call& conv, int64_t in_block, int64_t out_block) {
        count(conv2d_algorithm_key(conv, in_block, out_block), {kAlgorithmKnob, {0, 2, 4}, 0},
              {Ref<graph::Call>(&conv), in_block, out_block, false});
        return 0;
    };
    const auto applied_weight_block = ctx.conv2d_weight_block;
    ctx.conv2d_weight_block = [&](const graph::Call& conv) {
        std::vector<int64_t> choices = conv2d_weight_block_choices(conv);
        if (choices.size() > 1 && conv.args[0]->type.as<graph::TensorType>()->is_static() &&
            !pointwise_over_plane(conv)) {
            count(conv2d_weight_block_key(conv),
                  {kWeightBlockKnob, choices, default_conv2d_weight_block(conv)},
                  {Ref<graph::Call>(&conv), 0, 0, true});
        }
        return applied_weight_block ? applied_weight_block(conv) : int64_t{-1};
    };
    run_graph_pipeline(m, ctx, options);
    // Each variant: the convolution alone, compiled with the choice forced.
    for (size_t i = 0; i < tasks.size(); ++i) {
        if (out_of_time(start, time_limit_s)) {
            tasks[i].static_shapes = false;  // listed, not tunable
            continue;
        }
        const Query& q = queries[i];
        const graph::Call& conv = *q.conv;
        auto x = graph::make_var("x", conv.args[0]->type);
        graph::IRModule one;
        one.functions["main"] = graph::make_function(
            {x}, graph::make_call(*conv.op, {graph::Expr(x), conv.args[1]}, conv.attrs, conv.loc));
        const int64_t in_channels = conv.args[0]->type.as<graph::TensorType>()->static_shape()[1];
        const int64_t out_channels = conv.type.as<graph::TensorType>()->static_shape()[1];
        for (int64_t choice : tasks[i].space.knobs[0].choices) {
            graph::PassContext forced = compile_pass_context(options, t);
            if (q.weight_block) {
                // Unblocked by the layout pass, as in the model.
                forced.layout_block = [](int64_t, const std::vector<const graph::Call*>&,
                                         const std::vector<int64_t>& choices) {
                    bool can = std::find(choices.begin(), choices.end(), 0) != choices.end();
                    return can ? int64_t{0} : int64_t{-1};
                };
                forced.conv2d_weight_block = [&](const graph::Call&) { return choice; };
            } else {
                forced.conv2d_algorithm = [&](const graph::Call&, int64_t, int64_t) {
                    return static_cast<int>(choice);
                };
                // Blocked as in the model (whose blocks tuning records may have chosen).
                forced.layout_block = [&](int64_t channels, const std::vector<const graph::Call*>&,
                                          const std::vector<int64_t>&) {
                    if (channels == out_channels) return q.out_block;
                    return channels == in_channels ? q.in_block : int64_t{-1};
                };
            }
            std::vector<graph::Expr> args;
            Ref<graph::Function> f = conv_kernel_function(
                run_graph_pipeline(one, forced, options),
                q.weight_block
                    ? std::vector<std::string>{"nn.conv2d_packed", "nn.conv2d"}
                    : std::vector<std::string>{"nn.conv2d_nchwc", "nn.conv2d_winograd_nchwc"},
                &args);
            // The one-convolution module may block its data otherwise than the model does; a
            // Winograd choice must then really give a Winograd kernel.
            if (f.defined() && !q.weight_block && choice != 0 &&
                kernel_base_name(*f).find("winograd") == std::string::npos) {
                f = {};
            }
            if (!f.defined()) {
                tasks[i].variants.clear();  // the form is not available: not tunable
                break;
            }
            tasks[i].variants.push_back({{f, args, 1}});
        }
        tasks[i].static_shapes = tasks[i].variants.size() == tasks[i].space.knobs[0].choices.size();
        tasks[i].variant_errors.assign(tasks[i].variants.size(), "");
        if (tasks[i].static_shapes) {
            tasks[i].function = tasks[i].variants[0][0].function;
            tasks[i].args = tasks[i].variants[0][0].args;
            tasks[i].name = conv_task_name(conv, q.weight_block ? "weight block" : "algorithm");
        }
    }
    return tasks;
}

// PassContext::evaluate with a memory: folding evaluates the same weight transforms under every
// choice of a layout task, most of them unchanged by it (but on constants that earlier passes
// made anew, so not the same buffers). An expression's key is its text and a hash of each
// constant's bytes; a hit whose constants differ in their bytes (a hash collision) is
// evaluated, not reused.
class RememberingEvaluate {
public:
    explicit RememberingEvaluate(std::function<runtime::NDArray(const graph::Expr&)> evaluate)
        : evaluate_(std::move(evaluate)) {}

    runtime::NDArray operator()(const graph::Expr& e) {
        std::string key = graph::print(e, graph::PrintOptions{.metadata = false});
        std::vector<runtime::NDArray> operands;
        graph::post_order_visit(e, [&](const graph::Expr& x) {
            if (auto* c = x.as<graph::Constant>()) {
                std::string_view bytes(static_cast<const char*>(c->data.raw_data()),
                                       static_cast<size_t>(c->data.nbytes()));
                key += " " + graph::type_str(c->type) + " " +
                       std::to_string(std::hash<std::string_view>{}(bytes));
                operands.push_back(c->data);
            }
        });
        auto it = values_.find(key);
        if (it != values_.end() && same_bytes(it->second.operands, operands)) {
            return it->second.value;
        }
        runtime::NDArray value = evaluate_(e);
        // Beyond the cap (a model with very large weights), new values are not remembered.
        int64_t bytes = value.nbytes();
        for (const auto& o : operands) bytes += o.nbytes();
        if (held_bytes_ + bytes <= kMaxHeldBytes) {
            held_bytes_ += bytes;
            values_[key] = {std::move(operands), value};
        }
        return value;
    }

private:
    static bool same_bytes(const std::vector<runtime::NDArray>& a,
                           const std::vector<runtime::NDArray>& b) {
        if (a.size() != b.size()) return false;
        for (size_t i = 0; i < a.size(); ++i) {
            if (a[i].nbytes() != b[i].nbytes() ||
                std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()) != 0) {
                return false;
            }
        }
        return true;
    }

    struct Entry {
        std::vector<runtime::NDArray> operands;
        runtime::NDArray value;
    };
    static constexpr int64_t kMaxHeldBytes = int64_t{2} << 30;
    std::function<runtime::NDArray(const graph::Expr&)> evaluate_;
    std::unordered_map<std::string, Entry> values_;
    int64_t held_bytes_ = 0;  // of the values and operands held (shared ones counted again)
};

std::vector<TuneTask> extract_layouts_on_this_thread(const graph::IRModule& m,
                                                     const std::string& target,
                                                     const PipelineOptions& options,
                                                     double time_limit_s) {
    const auto start = std::chrono::steady_clock::now();
    Target t = Target::parse(target);
    graph::PassContext ctx = compile_pass_context(options, t);
    auto remembering = std::make_shared<RememberingEvaluate>(ctx.evaluate);
    ctx.evaluate = [remembering](const graph::Expr& e) { return (*remembering)(e); };
    // The other channel counts' blocks while one is varied: as the records choose.
    const auto applied = ctx.layout_block;
    auto as_recorded = [&](int64_t channels, const std::vector<const graph::Call*>& convs,
                           const std::vector<int64_t>& choices) {
        return applied ? applied(channels, convs, choices) : int64_t{-1};
    };
    std::vector<TuneTask> tasks;
    std::unordered_map<std::string, size_t> index;
    ctx.layout_block = [&](int64_t channels, const std::vector<const graph::Call*>& convs,
                           const std::vector<int64_t>& choices) {
        std::string key = layout_block_key(channels, convs);
        if (!index.count(key)) {
            TuneTask task;
            task.workload = key;
            task.name = "channel block " + std::to_string(channels) + " (" +
                        std::to_string(convs.size()) + " convolutions)";
            task.weight = 1;
            task.layout = true;
            task.compare_variants = false;
            task.space.knobs.push_back({kLayoutBlockKnob, choices, default_layout_block(channels)});
            index.emplace(key, tasks.size());
            tasks.push_back(std::move(task));
        }
        return as_recorded(channels, convs, choices);
    };
    run_graph_pipeline(m, ctx, options);
    for (size_t i = 0; i < tasks.size(); ++i) {
        TuneTask& task = tasks[i];
        if (out_of_time(start, time_limit_s)) {  // the rest are listed, not tunable
            task.static_shapes = false;
            continue;
        }
        // The kernels of the module compiled with each choice, by workload.
        std::vector<std::vector<KernelUse>> uses;
        for (int64_t block : task.space.knobs[0].choices) {
            graph::PassContext forced = ctx;
            forced.layout_block = [&](int64_t channels,
                                      const std::vector<const graph::Call*>& convs,
                                      const std::vector<int64_t>& choices) {
                return layout_block_key(channels, convs) == task.workload
                           ? block
                           : as_recorded(channels, convs, choices);
            };
            try {
                uses.push_back(kernel_uses(run_graph_pipeline(m, forced, options)));
                task.variant_errors.emplace_back();
            } catch (const std::exception& e) {
                uses.emplace_back();
                task.variant_errors.push_back(e.what());
            }
        }
        // A kernel's calls common to every choice cost the same whichever is chosen: a variant
        // is what is left of its module. (A choice that failed to compile has no module.)
        std::unordered_map<std::string, int> common;
        bool first = true;
        for (size_t v = 0; v < uses.size(); ++v) {
            if (!task.variant_errors[v].empty()) continue;
            std::unordered_map<std::string, int> here;
            for (const KernelUse& u : uses[v]) here[u.workload] = u.kernel.weight;
            if (first) {
                common = here;
                first = false;
                continue;
            }
            for (auto& [key, calls] : common) calls = std::min(calls, here[key]);
        }
        bool differs = false, all_static = true;
        for (size_t v = 0; v < uses.size(); ++v) {
            std::vector<VariantKernel> kernels;
            for (KernelUse& u : uses[v]) {
                auto c = common.find(u.workload);
                u.kernel.weight -= c == common.end() ? 0 : c->second;
                if (u.kernel.weight <= 0) continue;
                all_static = all_static && has_static_shapes(*u.kernel.function);
                kernels.push_back(std::move(u.kernel));
            }
            differs = differs || !kernels.empty();
            task.variants.push_back(std::move(kernels));
        }
        // Choices that all make the same kernels leave nothing to tune.
        task.static_shapes = differs && all_static;
        for (const auto& v : task.variants) {
            if (!v.empty() && !task.function.defined()) {
                task.function = v[0].function;
                task.args = v[0].args;
            }
        }
    }
    return tasks;
}

}  // namespace

std::vector<TuneTask> extract_layout_tasks(const graph::IRModule& m, const std::string& target,
                                           const PipelineOptions& options, double time_limit_s) {
    return call_with_large_stack(
        [&] { return extract_layouts_on_this_thread(m, target, options, time_limit_s); });
}

std::vector<TuneTask> extract_algorithm_tasks(const graph::IRModule& m, const std::string& target,
                                              const PipelineOptions& options, double time_limit_s) {
    return call_with_large_stack(
        [&] { return extract_algorithms_on_this_thread(m, target, options, time_limit_s); });
}

std::vector<TuneTask> extract_tasks(const graph::IRModule& m, const std::string& target,
                                    const PipelineOptions& options) {
    // The passes recurse once per nested expression: a deep graph needs a deep stack.
    return call_with_large_stack([&] { return extract_on_this_thread(m, target, options); });
}

}  // namespace anvil::driver
