// Fuzz harness: bytes → TFLite import (the flatbuffer reader with its Verifier checks, then the
// converters and type inference) → compile at -O1 → the executor's plan. Seeds: the TFLite
// models of ../shared/models/tflite and the regression inputs.
#include "frontend/tflite/from_tflite.h"
#include "fuzz_target.h"
#include "imported_model.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    anvil::fuzz::write_seeds_if_asked({});
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace anvil;
    fuzz::expect_only_user_errors([&] {
        graph::IRModule m =
            frontend::from_tflite_bytes(fuzz::as_text(data, size), {}, "fuzz.tflite");
        fuzz::compile_imported_model(m);
    });
    return 0;
}
