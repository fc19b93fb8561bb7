#include "imported_model.h"

#include "driver/compile.h"
#include "driver/make_plan.h"
#include "driver/plan_memory.h"
#include "driver/vm_compiler.h"

namespace anvil::fuzz {

void compile_imported_model(const graph::IRModule& m) {
    driver::PipelineOptions options;
    options.opt_level = 1;
    driver::CompiledModel c = driver::compile_model(m, "llvm", options);
    if (driver::needs_vm(c.module)) {
        driver::compile_vm(c.module);
    } else {
        driver::ExecutablePlan p = driver::make_plan(c.module);
        driver::plan_graph_memory(p.plan);
    }
}

}  // namespace anvil::fuzz
