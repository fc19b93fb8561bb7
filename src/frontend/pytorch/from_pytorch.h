// The PyTorch front end: a TorchScript module → a graph IRModule.
//
// PyTorch itself reads the module (python/anvil/_torchscript.py, run in process by
// anvil.frontend.from_pytorch or as a script by the CLI) and hands over a graph description
// (torchscript_graph.h) and its tensors; libtorch never enters Anvil's libraries.
//
// The module's "main" takes the inputs (named as the user names them, typed by the shapes and
// dtypes the user gives), then one parameter per tensor of the module's state that the graph
// uses, named by its PyTorch name (`layer1.0.conv1.weight`), and returns the forward's result
// (a tuple for a tuple or list). Those tensors come back as `params`, which build binds to the
// parameters of those names. Other tensors the graph holds are constants.
//
// Every call carries the SourceLoc of its TorchScript node: the Python line TorchScript recorded
// (file, line), the node's output name and its kind (`aten::conv2d`). A model with ops the
// importer does not support is refused with one error listing every such op kind and where the
// model uses it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/module.h"
#include "runtime/ndarray.h"

namespace anvil::frontend {

// One input of the module's forward, in order: a tensor (or a number, as a 0-d tensor), None,
// or a tuple/list: a group entry whose `elements` next entries are its items. A dimension of -1
// is symbolic, named by `dim_names` (when given and not empty) or "<name>_<axis>".
struct TorchInput {
    static constexpr int64_t kTensor = -1;
    static constexpr int64_t kNone = -2;
    std::string name;
    std::vector<int64_t> shape;
    DataType dtype = DataType::float32();
    std::vector<std::string> dim_names;
    int64_t elements = kTensor;  // kTensor, kNone, or the item count of a tuple/list
};

struct TorchImport {
    graph::IRModule mod;
    std::vector<std::pair<std::string, runtime::NDArray>> params;
};

// Imports a description (JSON) and its tensors (by the names the description uses). `origin`
// names the model in errors.
TorchImport from_torchscript(std::string_view description,
                             const std::map<std::string, runtime::NDArray>& tensors,
                             const std::vector<TorchInput>& inputs,
                             const std::string& origin = "<memory>");

// What PyTorch's reader makes of a TorchScript file: the description and its tensors, the
// arguments of from_torchscript.
struct TorchScriptFile {
    std::string description;
    std::map<std::string, runtime::NDArray> tensors;
};

// Reads a TorchScript file (torch.jit.save) through PyTorch: runs the reader with Python
// (Debian's /usr/bin/python3 by default, or $ANVIL_PYTHON). A UserError says so when that
// Python cannot run, has no PyTorch, or PyTorch cannot read the file.
TorchScriptFile read_torchscript_file(const std::string& path);

// read_torchscript_file, then from_torchscript with the file's path as the origin.
TorchImport from_torchscript_file(const std::string& path, const std::vector<TorchInput>& inputs);

}  // namespace anvil::frontend
