// Compiling a graph module: the graph pipeline (driver/pipeline.cpp), lowering of every fused
// group to a kernel (driver/lower_graph.h), and LLVM code generation of all kernels.
//
//   graph::IRModule m = frontend::onnx::from_onnx("model.onnx", {});
//   driver::CompiledModel c = driver::compile_model(m, "llvm -mcpu=native", {});
//   auto outputs = driver::evaluate_lowered(c.module, c.kernels, inputs);
#pragma once

#include <string>
#include <vector>

#include "codegen/target.h"
#include "driver/export_bundle.h"
#include "driver/lower_graph.h"
#include "driver/partition_summary.h"
#include "driver/pipeline.h"
#include "graph/module.h"
#include "runtime/module.h"

namespace anvil::driver {

struct CompiledModel {
    graph::IRModule module;  // main calls kernels through call_tir; kernels holds their loop IR
    // The compiled kernels (JIT; export with export_model), importing the external code
    // generators' modules.
    runtime::Module kernels;
    Target target;
    int64_t max_memory_bytes = 0;  // PipelineOptions::max_memory_bytes, checked by export_model
    // How each kernel was scheduled (by a tuning record or by default).
    std::vector<KernelTuning> tuning;
    // What went to external code generators (a composite target, "dnnl, llvm"); the kernels
    // module imports their modules.
    PartitionSummary partition;
};

// The pass context compile_model runs the graph pipeline with: the ops table, the constant
// evaluator, and the convolution algorithms options.tuning_records choose on `target`.
graph::PassContext compile_pass_context(const PipelineOptions& options, const Target& target);

CompiledModel compile_model(const graph::IRModule& m, const std::string& target,
                            const PipelineOptions& options = {});

// Which executor an artifact is for: the graph executor (a static plan, memory planned at compile
// time) or the VM (run-time shapes, control flow). `automatic` picks the graph executor whenever
// the model is static (driver::needs_vm).
enum class Executor { automatic, graph, vm };
// "graph" | "vm" | "auto"; UserError otherwise.
Executor parse_executor(const std::string& text);

// Writes the deployable artifact: one shared library with the kernels, the executor's plan or
// program and the weights, loadable by the runtime alone (runtime::GraphExecutor::load,
// runtime::VirtualMachine::load). Returns a summary line (the memory plan, or the VM program's
// size). UserError when the graph executor is asked for a model only the VM can run, and when
// the model needs more memory than c.max_memory_bytes (driver/plan_memory.h:
// check_memory_limit).
// `cross_compiler` / `cross_compiler_options` link the library for a target other than the
// host (codegen::export_library's cc and cc_options; tvmc's --cross-compiler and
// --cross-compiler-options).
std::string export_model(const CompiledModel& c, const std::string& path,
                         Executor executor = Executor::automatic,
                         const std::string& cross_compiler = "",
                         const std::string& cross_compiler_options = "");

// Writes the model as a bundle (driver/export_bundle.h: one static library with the runtime)
// instead of a shared library; returns the memory plan's summary and the descriptor's symbol.
// UserError for a model only the VM can run and for one with external code generators' modules
// (their runtime libraries are loaded at run time, which a bundle does not do).
std::string export_bundle_model(const CompiledModel& c, const std::string& path,
                                const BundleOptions& options);

// Compiles and runs a closed expression (no free variables) on the host; constant folding's
// evaluator.
runtime::NDArray evaluate_constant(const graph::Expr& e);

}  // namespace anvil::driver
