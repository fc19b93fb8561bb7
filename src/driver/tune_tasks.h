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

    bool tunable() const { return static_shapes && !space.knobs.empty(); }
};

// The tasks of a module for a target, in the order the graph first calls them.
std::vector<TuneTask> extract_tasks(const graph::IRModule& m, const std::string& target,
                                    const PipelineOptions& options = {});

}  // namespace anvil::driver
