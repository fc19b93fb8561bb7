// What the importer harnesses (onnx_import, tflite_import) do with a model that imported: compile
// it at -O1 and build what the runtime would load, the executor's plan (with its memory plan) or
// the VM's program, so that every pass and planner sees the imported graph.
#pragma once

#include "graph/module.h"

namespace anvil::fuzz {

void compile_imported_model(const graph::IRModule& m);

}  // namespace anvil::fuzz
