// Fuzz harness: bytes → TFLite import (the flatbuffer reader with its Verifier checks, then the
// converters and type inference) → compile at -O1 → the executor's plan. Seeds: the TFLite
// models of ../shared/models/tflite and the regression inputs.
#include "driver/compile.h"
#include "driver/make_plan.h"
#include "driver/plan_memory.h"
#include "driver/vm_compiler.h"
#include "frontend/tflite/from_tflite.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    anvil::fuzz::write_seeds_if_asked({});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    fuzz::expect_only_user_errors([&] {
        graph::IRModule m =
            frontend::from_tflite_bytes(fuzz::as_text(data, size), {}, "fuzz.tflite");
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
