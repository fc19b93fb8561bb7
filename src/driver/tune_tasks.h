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

// One kernel a choice of a graph-choice task makes, with its calls per run and the arguments
// the graph calls it with (weights are constants there, which measurements use as the kernel's
// inputs instead of random values).
struct VariantKernel {
    Ref<graph::Function> function;
    std::vector<graph::Expr> args;
    int weight = 1;
};

struct TuneTask {
    std::string workload;                 // the workload key
    std::string name;                     // a readable kernel name (kernel_base_name)
    Ref<graph::Function> function;        // the first fused function with this workload
    int weight = 0;                       // calls per run of the model
    bool static_shapes = true;            // every dimension of the function is a constant
    te::ConfigSpace space;                // declared by the default schedule
    te::ScheduleRecord default_schedule;  // the primitives of the default configuration
    // The arguments the graph calls `function` with.
    std::vector<graph::Expr> args;
    // A graph-choice task — a convolution's algorithm (driver/conv_algorithm.h) or a channel
    // count's layout block (driver/layout_block.h) — has one knob whose choices change the
    // graph: for each choice, in the knob's order, the kernels it makes (one for an algorithm;
    // for a layout block those in which the model compiled with that block differs from every
    // other choice), each measured with its default schedule. A choice's cost is their weighted
    // time. Empty for a kernel task, whose configurations are its schedule's knob values.
    std::vector<std::vector<VariantKernel>> variants;
    // Why a choice could not be compiled ("" where it could), for each variant; such a choice
    // is a failed trial.
    std::vector<std::string> variant_errors;
    // Whether a choice's outputs must match the default choice's: an algorithm's variants
    // compute the same convolution of the same data (their weight in another form); a layout
    // block's kernels differ in shape and count from one choice to the next.
    bool compare_variants = true;
    // A layout-block task (its cost is a part of the model's, not one kernel's).
    bool layout = false;

    bool tunable() const { return static_shapes && !space.knobs.empty(); }
};

// The tasks of a module for a target, in the order the graph first calls them.
std::vector<TuneTask> extract_tasks(const graph::IRModule& m, const std::string& target,
                                    const PipelineOptions& options = {});

// The layout-block tasks of a module: one per channel count for which alter_op_layout has a
// choice of block (its key: layout_block_key), weight 1, with the knob "block"; each variant is
// the set of kernels in which the module compiled with that block (the other channel counts as
// `options`' tuning records choose, else their defaults) differs from every other choice,
// weighted by their calls. Each task compiles the module once per choice: once `time_limit_s`
// (0: none) has passed, the remaining tasks are listed but not tunable.
std::vector<TuneTask> extract_layout_tasks(const graph::IRModule& m, const std::string& target,
                                           const PipelineOptions& options = {},
                                           double time_limit_s = 0);

// The algorithm tasks of a module, in the layouts `options`' records choose: one per distinct
// convolution that alter_op_layout could compute with Winograd (its key: conv2d_algorithm_key),
// with the knob "algorithm" (0: direct, 2: F(2,3), 4: F(4,3)), and one per distinct
// convolution it leaves unblocked whose weight has a choice of block (conv2d_weight_block_key),
// with the knob "weight_block" (0: direct, else the output-channel block); each weighted by its
// calls. Each variant is the convolution's kernel alone (no fused epilogue), compiled from a
// module of that one convolution with the choice forced; once `time_limit_s` (0: none) has
// passed, the remaining tasks are listed but not tunable. (A 1x1 convolution over a whole plane
// computes the same for every weight block: no weight-block task.)
std::vector<TuneTask> extract_algorithm_tasks(const graph::IRModule& m, const std::string& target,
                                              const PipelineOptions& options = {},
                                              double time_limit_s = 0);

}  // namespace anvil::driver
