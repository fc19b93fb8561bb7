// The graph executor's plan (runtime/graph_plan.h) for a lowered module: one node per graph
// input, weight and kernel call of "main", in execution order, with the weights packed into the
// parameter blob. Storage ids start one per tensor; plan_memory then shares them. Each kernel
// node records the floating-point operations of one call (driver/count_flops.h), for profiling.
#pragma once

#include <string>

#include "graph/module.h"
#include "runtime/graph_plan.h"

namespace anvil::driver {

struct ExecutablePlan {
    runtime::GraphPlan plan;
    std::string params;  // the parameter blob the plan's params point into
};

// `m` must be lowered: main's body is made of call_tir calls, tuples, constants and its params.
ExecutablePlan make_plan(const graph::IRModule& m);

}  // namespace anvil::driver
