// Fuzz harness: bytes → ONNX import (with type inference) → compile at -O1 → the executor's
// plan or the VM's program. Seeds: the ONNX backend test suite's node models and the models
// under tests/models.
#include "frontend/onnx/from_onnx.h"
#include "fuzz_target.h"
#include "imported_model.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    anvil::fuzz::write_seeds_if_asked({});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    fuzz::expect_only_user_errors([&] {
        graph::IRModule m = frontend::from_onnx_bytes(fuzz::as_text(data, size), {}, "fuzz.onnx");
        fuzz::compile_imported_model(m);
    });
    return 0;
}
