#include "driver/compile.h"

#include <iostream>

#include "codegen/llvm/llvm_module.h"
#include "driver/evaluate.h"
#include "driver/lower_graph.h"
#include "driver/make_plan.h"
#include "driver/plan_memory.h"
#include "driver/vm_compiler.h"
#include "graph/printer.h"
#include "ops/op_table.h"
#include "support/error.h"

namespace anvil::driver {

namespace {

graph::PassContext pass_context() {
    graph::PassContext ctx;
    ctx.ops = &ops::op_table();
    ctx.evaluate = evaluate_constant;
    return ctx;
}

runtime::Module build_kernels(const graph::IRModule& m, const Target& target) {
    std::vector<Ref<tir::PrimFunc>> kernels;
    for (const auto& [name, k] : m.kernels) kernels.push_back(k);
    return codegen::build_llvm(kernels, target);
}

}  // namespace

CompiledModel compile_model(const graph::IRModule& m, const std::string& target,
                            const PipelineOptions& options) {
    Target t = Target::parse(target);
    if (t.kind != "llvm") {
        user_error() << "target '" << target << "': only llvm targets can be built so far";
    }
    graph::IRModule optimized = run_graph_pipeline(m, pass_context(), options);
    graph::IRModule lowered = lower_fused_functions(optimized, t, options);
    if (options.print_after == "all" || options.print_after == kLowerFusedFunctions) {
        std::ostream& log = options.log ? *options.log : std::cerr;
        log << "// after " << kLowerFusedFunctions << "\n"
            << graph::print(lowered, graph::PrintOptions{.metadata = false}) << "\n";
    }
    return {lowered, build_kernels(lowered, t), t};
}

Executor parse_executor(const std::string& text) {
    if (text == "graph") return Executor::graph;
    if (text == "vm") return Executor::vm;
    if (text == "auto") return Executor::automatic;
    user_error() << "unknown executor '" << text << "' (expected graph, vm or auto)";
    ANVIL_UNREACHABLE();
}

std::string export_model(const CompiledModel& c, const std::string& path, Executor executor) {
    bool dynamic = needs_vm(c.module);
    if (executor == Executor::graph && dynamic) {
        user_error() << "the graph executor cannot run this model: its shapes are known only at "
                        "run time (symbolic dimensions) or it has control flow; use the VM "
                        "(--executor vm)";
    }
    if (executor == Executor::vm || (executor == Executor::automatic && dynamic)) {
        VMExecutable vm = compile_vm(c.module);
        size_t instructions = 0;
        for (const auto& f : vm.program.functions) instructions += f.code.size();
        codegen::add_blob(c.kernels, ANVIL_VM_PROGRAM_SYMBOL, runtime::program_to_json(vm.program));
        codegen::add_blob(c.kernels, ANVIL_GRAPH_PARAMS_SYMBOL, std::move(vm.params));
        codegen::export_library(c.kernels, path);
        return "vm program: " + std::to_string(instructions) + " instructions in " +
               std::to_string(vm.program.functions.size()) + " function(s), " +
               std::to_string(c.module.kernels.size()) + " kernels";
    }
    ExecutablePlan p = make_plan(c.module);
    MemoryPlan memory = plan_graph_memory(p.plan);
    codegen::add_blob(c.kernels, ANVIL_GRAPH_PLAN_SYMBOL, runtime::plan_to_json(p.plan));
    codegen::add_blob(c.kernels, ANVIL_GRAPH_PARAMS_SYMBOL, std::move(p.params));
    codegen::export_library(c.kernels, path);
    return memory.summary();
}

runtime::NDArray evaluate_constant(const graph::Expr& e) {
    graph::IRModule m;
    m.functions["main"] = graph::make_function({}, e);
    // Only fusion: the expression is folded as it is, with no further folding inside.
    PipelineOptions options;
    options.opt_level = 0;
    options.verify = false;
    graph::PassContext ctx;
    ctx.ops = &ops::op_table();
    graph::IRModule fused = graph::fuse_ops(m, ctx);
    Target host = Target::host();
    graph::IRModule lowered = lower_fused_functions(fused, host, options);
    std::vector<runtime::NDArray> out = evaluate_lowered(lowered, build_kernels(lowered, host), {});
    ANVIL_CHECK(out.size() == 1) << "a folded constant with " << out.size() << " values";
    return out[0];
}

}  // namespace anvil::driver
