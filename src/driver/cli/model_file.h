// The model files `anvil compile` and `anvil inspect` read: an ONNX model, a TorchScript model
// (torchscript_model.h), a TFLite model, or a module in Anvil's text format (graph/parser.h:
// graph functions with dataflow blocks, prim_func kernels, call_tir, call_packed; what
// `anvil.parse` reads and `IRModule.astext()` / graph::print write). The extension decides:
// ".anvil" (or ".txt", as the golden test files name graph text) is module text,
// ".pt"/".pth"/".torchscript" (or a zip archive) TorchScript, ".tflite" (or a file with TFLite's
// "TFL3" identifier) TFLite, anything else ONNX.
#pragma once

#include <string>
#include <vector>

#include "graph/module.h"

namespace anvil::cli {

bool is_module_text(const std::string& path);
bool is_tflite(const std::string& path);

// Parses the module text at `path`. A mistake in the text is a UserError reading
// "PATH:LINE:COL: message".
graph::IRModule read_module_text(const std::string& path);

// `m` with parameters of main replaced by the arrays of the .npz at `path` that are named after
// them (graph::bind_params); UserError naming the file for a name main has no parameter of, or
// a value of the wrong shape or dtype.
graph::IRModule bind_params_npz(const graph::IRModule& m, const std::string& path);

// The model of `anvil compile` / `anvil tune`: module text (with `params`, an .npz bound to
// main's parameters), a TorchScript model (with `input_shapes`, one spec per input of forward),
// a TFLite model or an ONNX model (`input_shapes` override their declared shapes). UserError for
// options that do not apply to the model's kind. `tflite_rounding` (a TFLite model's
// TfliteImportOptions::rounding; empty: the default) applies to TFLite models only.
graph::IRModule load_model(const std::string& path, const std::vector<std::string>& input_shapes,
                           const std::string& params, const std::string& tflite_rounding = "");

}  // namespace anvil::cli
