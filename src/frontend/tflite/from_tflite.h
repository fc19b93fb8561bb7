// The TFLite front end: a TensorFlow Lite flatbuffer (.tflite) → a graph IRModule.
//
// The module's "main" takes the main subgraph's inputs, named by their tensor names, in the
// model's order, and returns its outputs (a tuple when there are several) in TFLite's layout
// (NHWC for images); inside, convolutions and pools compute channels first (tflite_context.h).
// Weights and other constant tensors become graph Constants. A quantized tensor is held as its
// integers; quantized operators compute as TFLite's integer kernels do, except LOGISTIC, TANH,
// HARD_SWISH, a bilinear RESIZE and a 16-bit SOFTMAX, which compute on the real values and may
// differ from TFLite by one step.
//
// Every call carries the SourceLoc of its operator: the model file, "operator N" (its index in
// the subgraph), its builtin name and its version (printed where ONNX prints the opset). A model
// using operators the importer does not convert is refused with one UserError listing each of
// them with its index. A malformed file is a UserError naming the file (tflite_model.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/module.h"
#include "ir/data_type.h"

namespace anvil::frontend {

struct TfliteImportOptions {
    // Input name → shape, replacing the model's (a batch size, or a dimension the model leaves
    // unknown: -1 in its shape signature). Naming an input the model does not have is an error.
    // Shapes the model states as constants (a RESHAPE's target, a TRANSPOSE_CONV's output) stay
    // as they are: a model that hard-codes its batch size does not change it.
    std::map<std::string, std::vector<int64_t>> input_shapes;
    // Input name → element type; it must be the model's (TVM's dtype_dict, checked).
    std::map<std::string, DataType> input_dtypes;
    // How quantized products (convolutions, TRANSPOSE_CONV, FULLY_CONNECTED, BATCH_MATMUL) and
    // an int8 MEAN over H and W rescale their int32 sums to the output's scale. "TFLITE": in
    // fixed point, as TFLite's reference kernels (and TFLite Micro) do: the TFLite quantization
    // spec, bit-exact with them. "XNNPACK": in float32, rounding half to even, as the XNNPACK
    // delegate (TFLite's default CPU path for int8 on x86 and WebAssembly) does; results may
    // differ from "TFLITE" by one step.
    std::string rounding = "TFLITE";
};

graph::IRModule from_tflite_file(const std::string& path, const TfliteImportOptions& options = {});
// `origin` names the model in messages.
graph::IRModule from_tflite_bytes(std::string_view bytes, const TfliteImportOptions& options = {},
                                  const std::string& origin = "<memory>");

}  // namespace anvil::frontend
