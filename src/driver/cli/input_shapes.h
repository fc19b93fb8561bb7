// --input-shapes: the shapes (and, for TorchScript models, element types) of a model's inputs.
//
//   --input-shapes "input0:[1,3,224,224]"            one input
//   --input-shapes "x:[N,3,224,224] idx:[N]:int64"   several, in the order of forward's inputs
//
// A spec is NAME:[d0,d1,...] with an optional :DTYPE after it. A dimension is a size (>= 0) or,
// for TorchScript models, a symbolic size: -1 (a fresh one) or a name (the same name is the same
// size). Several specs may share one argument (separated by spaces) and the option may repeat;
// their order is kept, since a TorchScript forward takes its inputs by position. ONNX models
// declare their inputs' names and element types: for them a spec only overrides the shape of the
// input it names, and its sizes must be numbers. TFLite models likewise; a dtype given for one of
// their inputs must be the model's.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "frontend/tflite/from_tflite.h"

namespace anvil::cli {

struct InputSpec {
    std::string text;  // the spec as written, for messages
    std::string name;
    std::vector<int64_t> dims;           // -1: symbolic
    std::vector<std::string> dim_names;  // the name of each symbolic size ("" for -1 or a size)
    std::string dtype;                   // "" when not given
};

// Parses the --input-shapes arguments; a malformed spec or a name given twice is a UserError.
std::vector<InputSpec> parse_input_specs(const std::vector<std::string>& args);

// The specs as an ONNX import's input shape overrides; a symbolic size or a dtype is a
// UserError (an ONNX model declares those itself).
std::map<std::string, std::vector<int64_t>> onnx_input_shapes(const std::vector<InputSpec>& specs);

// The specs as a TFLite import's options: shape overrides (sizes only) and, where given, the
// element types, which must be the model's.
frontend::TfliteImportOptions tflite_import_options(const std::vector<InputSpec>& specs);

}  // namespace anvil::cli
