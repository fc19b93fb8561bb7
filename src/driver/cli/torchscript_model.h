// TorchScript models (torch.jit.save) for `anvil compile` and `anvil inspect`: PyTorch reads the
// file in a child process (frontend::read_torchscript_file, with /usr/bin/python3 or
// $ANVIL_PYTHON), the PyTorch importer converts it, and the module's weights, which the importer
// returns as params, are bound to main as constants, as anvil.build(mod, params=params) does.
#pragma once

#include <string>
#include <vector>

#include "graph/module.h"
#include "input_shapes.h"

namespace anvil::cli {

// ".pt", ".pth" or ".torchscript", or another file that is a zip archive (what torch.jit.save
// writes; an ONNX model is a protobuf message, never one).
bool is_torchscript(const std::string& path);

// The model at `path` with one input per spec, in the order of forward's inputs. No specs, or
// not one per input, is a UserError naming forward's inputs.
graph::IRModule read_torchscript_model(const std::string& path,
                                       const std::vector<InputSpec>& inputs);

}  // namespace anvil::cli
