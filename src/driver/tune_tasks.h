// Tuning tasks: the distinct fused kernels of a model, each with its weight and search space.
//
//   std::vector<TuneTask> tasks = extract_tasks(module, "llvm", options);
//
// The model goes through the graph pipeline exactly as anvil compile runs it (so the kernels
// are the ones the compiled model calls); every primitive function called from a graph function
// is one call of its workload (driver/workload_key.h). One task per workload: its weight is the
// number of calls per run, its space the knobs its anchor's schedule declares with the default
// configuration (te/config_space.h). A kernel with symbolic dimensions is listed but not
// tunable: its candidates could not be measured without knowing the sizes.
#pragma once

#include <string>
#include <vector>

#include "driver/pipeline.h"
#include "graph/module.h"
#include "te/config_space.h"
#include "te/schedule_record.h"

namespace anvil::driver {

struct TuneTask {
    std::string workload;                 // the workload key
    std::string name;                     // a readable kernel name (kernel_base_name)
    Ref<graph::Function> function;        // the first fused function with this workload
    int weight = 0;                       // calls per run of the model
    bool static_shapes = true;            // every dimension of the function is a constant
    te::ConfigSpace space;                // declared by the default schedule
    te::ScheduleRecord default_schedule;  // the primitives of the default configuration
    // An algorithm task (driver/conv_algorithm.h): the kernel each choice of its one knob
    // makes, in the order of the knob's choices; `function` is then the first. Empty for a
    // kernel task, whose configurations are its schedule's knob values.
    std::vector<Ref<graph::Function>> variants;
    // The arguments the graph calls the function (each variant) with: weights are constants
    // there, which measurements use as the kernel's inputs instead of random values.
    std::vector<graph::Expr> args;
    std::vector<std::vector<graph::Expr>> variant_args;

    bool tunable() const { return static_shapes && !space.knobs.empty(); }
};

// The tasks of a module for a target, in the order the graph first calls them.
std::vector<TuneTask> extract_tasks(const graph::IRModule& m, const std::string& target,
                                    const PipelineOptions& options = {});

// The algorithm tasks of a module: one per distinct convolution that alter_op_layout could
// compute with Winograd (its key: conv2d_algorithm_key), weighted by its calls, with the knob
// "algorithm" (0: direct, 2: F(2,3), 4: F(4,3)); each variant is the convolution's kernel alone
// (no fused epilogue), compiled from a module of that one convolution with the algorithm forced.
std::vector<TuneTask> extract_algorithm_tasks(const graph::IRModule& m, const std::string& target,
                                              const PipelineOptions& options = {});

}  // namespace anvil::driver
