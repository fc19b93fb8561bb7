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
};

// One primitive function → a kernel named `name` (params, lifted constants, then outputs).
LoweredFunction lower_primitive_function(const graph::Function& f, const std::string& name,
                                         const Target& target, const PipelineOptions& options);

// Lowers every primitive function called from the module's graph functions.
graph::IRModule lower_fused_functions(const graph::IRModule& m, const Target& target,
                                      const PipelineOptions& options);

}  // namespace anvil::driver
