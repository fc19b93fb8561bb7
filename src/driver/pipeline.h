// The lowering pipeline: every loop-IR pass, in order, in one list (pipeline.cpp), run by one
// runner that does the cross-cutting work for each pass: timing, printing, disabling, verifying.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/module.h"
#include "graph/passes/passes.h"
#include "tir/passes/passes.h"
#include "tune/record.h"

namespace anvil::driver {

// The checked mode the environment asks for: ANVIL_CHECKED unset, "" or "0": off; "all": all;
// anything else: on.
tir::BoundChecks checked_by_default();

struct PipelineOptions {
    int opt_level = 3;                         // graph passes above this level are skipped
    std::vector<std::string> disabled_passes;  // pass names (graph or loop IR) to skip
    std::string print_after;                   // a pass name, or "all"
    bool time_passes = false;                  // report each pass's wall time
    bool verify = true;                        // run the loop-IR verifier after every pass
    std::ostream* log = nullptr;               // where printing and timing go (default: stderr)
    // Sizes of symbolic dimensions to compile specialized kernels for, beside the generic ones
    // (driver/shape_buckets.h): {"n": {1, 8, 32}}.
    std::map<std::string, std::vector<int64_t>> shape_buckets;
    // The most memory the compiled model may need, in bytes (0: no limit): the graph
    // executor's planned intermediate tensors plus its weights. export_model refuses a model
    // over it, and one whose memory is not planned at compile time (the VM's). anvil compile
    // --max-memory SIZE.
    int64_t max_memory_bytes = 0;
    // The checked mode: every buffer access of every kernel is bounds-checked at run time
    // (tir::instrument_bound_checkers); a kernel that would access memory out of bounds fails
    // with a message naming it, the buffer and the index. The default comes from the
    // environment (ANVIL_CHECKED=1 or =all), so whole test suites can run checked.
    tir::BoundChecks checked = checked_by_default();
    // Tuning records to apply: a kernel whose workload (driver/workload_key.h) has a record for
    // the target is scheduled with the record's knob values. A record that no longer fits its
    // workload's space is ignored with a note (KernelTuning::note). anvil compile
    // --tuning-records FILE, Python apply_history_best.
    std::shared_ptr<const tune::BestRecords> tuning_records;
    // The half type to compute in where it is safe (graph pass to_mixed_precision): bfloat16 or
    // float16; void (the default) keeps float32. anvil compile --mixed-precision bf16.
    DataType mixed_precision = DataType::void_();
};

// The step between the graph and loop-IR pipelines that turns each fused group into a kernel
// (driver/lower_graph.h); --print-after accepts it to show main calling kernels next to the
// kernels' loop IR.
inline constexpr const char* kLowerFusedFunctions = "lower_fused_functions";

// The names of the loop-IR passes, in pipeline order.
std::vector<std::string> tir_pass_names();
// The names of the graph passes (graph/passes/pass_table.h), each once, in the recommended order.
std::vector<std::string> graph_pass_names();

// Runs the graph pass named `name` alone, with the runner's cross-cutting work (its UserErrors
// noted with its name, --time-passes, --print-after, the verifier). UserError for an unknown
// name, listing the passes. (anvil.transform.<name>()(mod) from Python.)
graph::IRModule run_graph_pass(const graph::IRModule& m, const std::string& name,
                               const graph::PassContext& ctx, const PipelineOptions& options);

// Runs the graph pipeline (ending with fuse_ops). `ctx` carries the evaluator and the target;
// its opt_level and disabled passes come from `options`.
graph::IRModule run_graph_pipeline(const graph::IRModule& m, graph::PassContext ctx,
                                   const PipelineOptions& options);

// Runs the loop-IR pipeline on a function produced by schedule_to_loops.
// UserError for an unknown name in disabled_passes or print_after.
Ref<tir::PrimFunc> run_tir_pipeline(const Ref<tir::PrimFunc>& f, const tir::LowerContext& ctx,
                                    const PipelineOptions& options);

}  // namespace anvil::driver
