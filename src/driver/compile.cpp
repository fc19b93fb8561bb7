#include "driver/compile.h"

#include <iostream>

#include "codegen/llvm/llvm_module.h"
#include "driver/evaluate.h"
#include "driver/lower_graph.h"
#include "driver/make_plan.h"
#include "driver/plan_memory.h"
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

std::string export_model(const CompiledModel& c, const std::string& path) {
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
