#include "driver/compile.h"

#include <iostream>
#include <set>

#include "codegen/llvm/llvm_module.h"
#include "driver/conv_algorithm.h"
#include "driver/evaluate.h"
#include "driver/layout_block.h"
#include "driver/lower_external.h"
#include "driver/lower_graph.h"
#include "driver/make_plan.h"
#include "driver/partition_summary.h"
#include "driver/plan_memory.h"
#include "driver/shape_buckets.h"
#include "driver/vm_compiler.h"
#include "graph/expr_functor.h"
#include "graph/printer.h"
#include "ops/call_tir.h"
#include "ops/control_flow.h"
#include "ops/op_table.h"
#include "runtime/external_module.h"
#include "support/error.h"
#include "support/large_stack.h"

namespace anvil::driver {

graph::PassContext compile_pass_context(const PipelineOptions& options, const Target& target) {
    graph::PassContext ctx;
    ctx.target = target;
    ctx.evaluate = evaluate_constant;
    // Tuning records are for the kernels' target, whatever regions go elsewhere.
    const std::string kernel_target = target.without_externals().str();
    ctx.conv2d_algorithm = conv2d_algorithm_from_records(options.tuning_records, kernel_target);
    ctx.layout_block = layout_block_from_records(options.tuning_records, kernel_target);
    ctx.conv2d_weight_block =
        conv2d_weight_block_from_records(options.tuning_records, kernel_target);
    return ctx;
}

namespace {

runtime::Module build_kernels(const graph::IRModule& m, const Target& target) {
    std::vector<Ref<tir::PrimFunc>> kernels;
    for (const auto& [name, k] : m.kernels) kernels.push_back(k);
    return codegen::build_llvm(kernels, target);
}

// Every call_tir of the graph functions against its kernel (hand-written modules can get them
// wrong; the lowering's own calls fit by construction). Calls of external regions' symbols have
// no loop IR to check against.
void check_kernel_calls(const graph::IRModule& m, const std::set<std::string>& external) {
    for (const auto& [name, f] : m.functions) {
        graph::post_order_visit(f->body, [&](const graph::Expr& e) {
            const auto* attrs = ops::call_tir_attrs(e);
            if (!attrs || external.count(attrs->kernel)) return;
            std::vector<std::string> callees = {attrs->kernel};
            callees.insert(callees.end(), attrs->bucket_kernels.begin(),
                           attrs->bucket_kernels.end());
            for (const auto& name : callees) {
                auto k = m.kernels.find(name);
                if (k == m.kernels.end()) {
                    user_error(e->loc) << "call_tir @" << attrs->kernel
                                       << ": the module has no kernel named '" << name << "'";
                }
                ops::check_call_tir(e, *k->second);
            }
        });
    }
}

}  // namespace

namespace {

CompiledModel compile_on_this_thread(const graph::IRModule& m, const std::string& target,
                                     const PipelineOptions& options) {
    Target t = Target::parse(target);
    const Target kernel_target = t.without_externals();
    if (t.kind != "llvm") {
        user_error() << "target '" << target << "': only llvm targets can be built so far";
    }
    // Kernels written by hand in the module (prim_funcs beside graph functions) go through the
    // loop-IR pipeline like generated ones; it leaves already-lowered ones as they are.
    check_shape_buckets(m, options.shape_buckets);
    graph::IRModule input = m;
    tir::LowerContext lower_ctx = make_lower_context(t);
    for (auto& [name, k] : input.kernels) k = run_tir_pipeline(k, lower_ctx, options);
    graph::IRModule optimized =
        run_graph_pipeline(input, compile_pass_context(options, t), options);
    PartitionSummary partition = summarize_partition(optimized);
    ExternalLowering external = lower_external_regions(optimized);
    std::vector<KernelTuning> tuning;
    graph::IRModule lowered =
        lower_fused_functions(external.module, kernel_target, options, &tuning);
    if (options.print_after == "all" || options.print_after == kLowerFusedFunctions) {
        std::ostream& log = options.log ? *options.log : std::cerr;
        log << "// after " << kLowerFusedFunctions << "\n"
            << graph::print(lowered, graph::PrintOptions{.metadata = false}) << "\n";
    }
    check_kernel_calls(lowered, external.symbols);
    ops::check_control_flow(lowered);
    runtime::Module kernels = build_kernels(lowered, kernel_target);
    for (const auto& ext : external.modules) kernels.import_module(ext);
    return {lowered, kernels, t, options.max_memory_bytes, std::move(tuning), std::move(partition)};
}

}  // namespace

CompiledModel compile_model(const graph::IRModule& m, const std::string& target,
                            const PipelineOptions& options) {
    // The passes recurse once per nested expression: a deep graph needs a deep stack.
    return call_with_large_stack([&] { return compile_on_this_thread(m, target, options); });
}

Executor parse_executor(const std::string& text) {
    if (text == "graph") return Executor::graph;
    if (text == "vm") return Executor::vm;
    if (text == "auto") return Executor::automatic;
    user_error() << "unknown executor '" << text << "' (expected graph, vm or auto)";
    ANVIL_UNREACHABLE();
}

namespace {

// The external code generators' modules the kernels import, as blobs the runtime loads them from
// (ANVIL_EXTERNAL_MODULES_SYMBOL).
void add_external_blobs(const runtime::Module& kernels) {
    std::string list;
    int i = 0;
    for (const auto& m : kernels->imports()) {
        auto* ext = dynamic_cast<const runtime::ExternalModuleNode*>(m.get());
        if (!ext) continue;
        std::string symbol = "__anvil_external_" + std::to_string(i++);
        list += ext->compiler() + " " + symbol + "\n";
        codegen::add_blob(kernels, symbol, ext->bytes());
    }
    if (!list.empty()) codegen::add_blob(kernels, ANVIL_EXTERNAL_MODULES_SYMBOL, list);
}

}  // namespace

std::string export_model(const CompiledModel& c, const std::string& path, Executor executor,
                         const std::string& cross_compiler,
                         const std::string& cross_compiler_options) {
    bool dynamic = needs_vm(c.module);
    add_external_blobs(c.kernels);
    if (executor == Executor::graph && dynamic) {
        user_error() << "the graph executor cannot run this model: its shapes are known only at "
                        "run time (symbolic dimensions), it has control flow or it calls "
                        "registry functions; use the VM (--executor vm)";
    }
    if (executor == Executor::vm || (executor == Executor::automatic && dynamic)) {
        if (c.max_memory_bytes > 0) {
            // A limit that cannot be checked is refused rather than silently ignored.
            user_error() << "--max-memory: the model runs on the VM, whose memory depends on "
                            "shapes known only at run time and is not planned at compile time; "
                            "give static shapes (--input-shapes) or leave out the limit";
        }
        VMExecutable vm = compile_vm(c.module);
        size_t instructions = 0;
        for (const auto& f : vm.program.functions) instructions += f.code.size();
        codegen::add_blob(c.kernels, ANVIL_VM_PROGRAM_SYMBOL, runtime::program_to_json(vm.program));
        codegen::add_blob(c.kernels, ANVIL_GRAPH_PARAMS_SYMBOL, std::move(vm.params));
        codegen::export_library(c.kernels, path, cross_compiler, cross_compiler_options);
        return "vm program: " + std::to_string(instructions) + " instructions in " +
               std::to_string(vm.program.functions.size()) + " function(s), " +
               std::to_string(c.module.kernels.size()) + " kernels";
    }
    ExecutablePlan p = make_plan(c.module);
    MemoryPlan memory = plan_graph_memory(p.plan);
    check_memory_limit(memory, static_cast<int64_t>(p.params.size()), c.max_memory_bytes);
    codegen::add_blob(c.kernels, ANVIL_GRAPH_PLAN_SYMBOL, runtime::plan_to_json(p.plan));
    codegen::add_blob(c.kernels, ANVIL_GRAPH_PARAMS_SYMBOL, std::move(p.params));
    codegen::export_library(c.kernels, path, cross_compiler, cross_compiler_options);
    return memory.summary();
}

std::string export_bundle_model(const CompiledModel& c, const std::string& path,
                                const BundleOptions& options) {
    if (needs_vm(c.module)) {
        user_error() << "--bundle: the model needs the VM (shapes known only at run time, control "
                        "flow or registry calls); a bundle runs the graph executor: give static "
                        "shapes (--input-shapes)";
    }
    for (const auto& m : c.kernels->imports()) {
        if (dynamic_cast<const runtime::ExternalModuleNode*>(m.get()) != nullptr) {
            user_error() << "--bundle: the model has parts compiled by an external code generator, "
                            "whose runtime library would be loaded at run time; compile without "
                            "it to bundle";
        }
    }
    ExecutablePlan p = make_plan(c.module);
    MemoryPlan memory = plan_graph_memory(p.plan);
    check_memory_limit(memory, static_cast<int64_t>(p.params.size()), c.max_memory_bytes);
    std::string plan = runtime::plan_to_json(p.plan);
    uint64_t plan_size = plan.size(), params_size = p.params.size();
    codegen::add_blob(c.kernels, ANVIL_GRAPH_PLAN_SYMBOL, std::move(plan));
    codegen::add_blob(c.kernels, ANVIL_GRAPH_PARAMS_SYMBOL, std::move(p.params));
    std::string symbol = export_bundle(c.kernels, path, plan_size, params_size, options);
    return memory.summary() + "\nbundle descriptor: " + symbol;
}

runtime::NDArray evaluate_constant(const graph::Expr& e) {
    graph::IRModule m;
    m.functions["main"] = graph::make_function({}, e);
    // Only what lowering needs (QNN ops have no kernels; fusion): the expression is folded as it
    // is, with no further folding inside.
    PipelineOptions options;
    options.opt_level = 0;
    options.verify = false;
    graph::PassContext ctx;
    graph::IRModule fused = graph::fuse_ops(graph::canonicalize_qnn(m, ctx), ctx);
    Target host = Target::host();
    graph::IRModule lowered = lower_fused_functions(fused, host, options);
    std::vector<runtime::NDArray> out = evaluate_lowered(lowered, build_kernels(lowered, host), {});
    ANVIL_CHECK(out.size() == 1) << "a folded constant with " << out.size() << " values";
    return out[0];
}

}  // namespace anvil::driver
