// Fuzz harness: bytes → ONNX import (with type inference) → compile at -O1 → the executor's
// plan or the VM's program. Seeds: the ONNX backend test suite's node models and the models
// under tests/models.
#include "driver/compile.h"
#include "driver/make_plan.h"
#include "driver/plan_memory.h"
#include "driver/vm_compiler.h"
#include "frontend/onnx/from_onnx.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    anvil::fuzz::write_seeds_if_asked({});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    fuzz::expect_only_user_errors([&] {
        graph::IRModule m = frontend::from_onnx_bytes(fuzz::as_text(data, size), {}, "fuzz.onnx");
        driver::PipelineOptions options;
        options.opt_level = 1;
        driver::CompiledModel c = driver::compile_model(m, "llvm", options);
        if (driver::needs_vm(c.module)) {
            driver::compile_vm(c.module);
        } else {
            driver::ExecutablePlan p = driver::make_plan(c.module);
            driver::plan_graph_memory(p.plan);
        }
    });
    return 0;
}
