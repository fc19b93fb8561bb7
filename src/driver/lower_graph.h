// Lowering the graph to kernels: every fused (primitive) function that a graph function calls
// becomes one loop-IR kernel of the module, built from its ops' TE computes and scheduled by
// its anchor op (the op with the highest fusion pattern: conv2d, dense, a reduction, ...);
// the call becomes call_tir(kernel, args). Identical fused functions share one kernel. With
// options.shape_buckets, a function using bucketed dimensions is also lowered once per
// combination of their sizes (driver/shape_buckets.h), and its calls name those variants.
#pragma once

#include <string>
#include <vector>

#include "codegen/target.h"
#include "driver/pipeline.h"
#include "graph/module.h"

namespace anvil::driver {

struct LoweredFunction {
    Ref<tir::PrimFunc> kernel;
    // Constants used inside the function, passed as extra kernel arguments after its params.
    std::vector<graph::Expr> lifted_constants;
    // The knobs the anchor's schedule rule declared (the task's search space), the value each
    // took, and the primitives the schedule applied.
    te::ConfigSpace space;
    te::KnobValues config;
    te::ScheduleRecord schedule;
};

// One primitive function → a kernel named `name` (params, lifted constants, then outputs),
// scheduled with the knob values `config` (knobs it does not name take their defaults; a value
// outside a knob's choices is a UserError).
LoweredFunction lower_primitive_function(const graph::Function& f, const std::string& name,
                                         const Target& target, const PipelineOptions& options,
                                         const te::KnobValues& config = {});

// The tensor-expression computation of a primitive function, unscheduled: its inputs (params,
// then lifted constants, as the kernel takes them) and its distinct outputs. What the
// auto-scheduler makes fresh schedules of.
struct FunctionComputation {
    std::vector<te::Tensor> inputs;
    std::vector<te::Tensor> outputs;
    std::vector<graph::Expr> lifted_constants;
};
FunctionComputation function_computation(const graph::Function& f);

// The same function scheduled by a program of the auto-scheduler instead: `program` replayed on
// a fresh schedule of function_computation(f) (no default inlining; the program says what is
// inlined). UserError when the program does not apply to this computation.
LoweredFunction lower_primitive_function_with_program(const graph::Function& f,
                                                      const std::string& name, const Target& target,
                                                      const PipelineOptions& options,
                                                      const te::ScheduleRecord& program);

// "fused_conv2d_add_relu": a kernel name from the first four ops of a fused function.
std::string kernel_base_name(const graph::Function& f);

// How one kernel was scheduled: by a tuning record or by default.
struct KernelTuning {
    std::string kernel;      // the kernel's name in the module
    std::string workload;    // its workload key
    int calls = 0;           // calls from the graph functions (the task's weight)
    bool tunable = false;    // its schedule declares knobs
    bool applied = false;    // a tuning record chose its configuration
    bool program = false;    // ... an auto-scheduler record, whose program was replayed
    double record_cost = 0;  // the applied record's mean cost, seconds
    std::string note;        // why a record was not applied, when one was found
};

// Lowers every primitive function called from the module's graph functions. `tuning`, when
// given, receives one entry per distinct kernel (not per bucket variant).
graph::IRModule lower_fused_functions(const graph::IRModule& m, const Target& target,
                                      const PipelineOptions& options,
                                      std::vector<KernelTuning>* tuning = nullptr);

}  // namespace anvil::driver
