#include "torchscript_model.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#include "frontend/pytorch/from_pytorch.h"
#include "frontend/pytorch/torchscript_graph.h"
#include "graph/passes/passes.h"
#include "support/error.h"

namespace anvil::cli {

namespace {

// forward's input as the user wrote it: TorchScript names the value "x.1" for the argument x.
std::string argument_name(const std::string& debug_name) {
    size_t dot = debug_name.rfind('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == debug_name.size()) return debug_name;
    for (size_t i = dot + 1; i < debug_name.size(); ++i) {
        if (!std::isdigit(static_cast<unsigned char>(debug_name[i]))) return debug_name;
    }
    return debug_name.substr(0, dot);
}

// "2 inputs (x: Tensor, idx: Tensor)".
std::string describe_inputs(const frontend::pytorch::TsBlock& graph) {
    std::string out =
        std::to_string(graph.inputs.size()) + (graph.inputs.size() == 1 ? " input" : " inputs");
    if (graph.inputs.empty()) return out;
    out += " (";
    for (size_t i = 0; i < graph.inputs.size(); ++i) {
        if (i) out += ", ";
        out += argument_name(graph.inputs[i].name);
        out += ": ";
        out += frontend::pytorch::type_str(graph.inputs[i].type);
    }
    return out + ")";
}

}  // namespace

bool is_torchscript(const std::string& path) {
    std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".pt" || ext == ".pth" || ext == ".torchscript") return true;
    if (ext == ".onnx") return false;
    std::ifstream in(path, std::ios::binary);
    char magic[4] = {};
    return in.read(magic, 4) && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 &&
           magic[3] == 4;
}

graph::IRModule read_torchscript_model(const std::string& path,
                                       const std::vector<InputSpec>& inputs) {
    frontend::TorchScriptFile file = frontend::read_torchscript_file(path);
    frontend::pytorch::TsGraph g =
        frontend::pytorch::parse_torchscript_graph(file.description, path);
    if (inputs.size() != g.graph.inputs.size()) {
        std::string example;
        for (const auto& in : g.graph.inputs) {
            if (!example.empty()) example += ' ';
            example += argument_name(in.name);
            example += ":[d0,d1,...]";
        }
        user_error() << path << ": the module's forward takes " << describe_inputs(g.graph)
                     << ", and --input-shapes "
                     << (inputs.empty() ? "is not given" : "gives " + std::to_string(inputs.size()))
                     << ": a TorchScript model needs one NAME:[d0,d1,...][:DTYPE] per input, in "
                        "order (e.g. --input-shapes \""
                     << example << "\"; the dtype defaults to float32)";
    }
    std::vector<frontend::TorchInput> torch_inputs;
    for (const auto& spec : inputs) {
        frontend::TorchInput in;
        in.name = spec.name;
        in.shape = spec.dims;
        in.dim_names = spec.dim_names;
        if (!spec.dtype.empty() && !DataType::parse(spec.dtype, &in.dtype)) {
            user_error() << "--input-shapes: '" << spec.dtype << "' in '" << spec.text
                         << "' is not a dtype (float32, int64, bool, ...)";
        }
        torch_inputs.push_back(std::move(in));
    }
    frontend::TorchImport imported =
        frontend::from_torchscript(file.description, file.tensors, torch_inputs, path);
    std::map<std::string, runtime::NDArray> params(imported.params.begin(), imported.params.end());
    return params.empty() ? imported.mod : graph::bind_params(imported.mod, "main", params);
}

}  // namespace anvil::cli
