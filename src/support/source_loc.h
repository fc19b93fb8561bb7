// Where an IR node came from: a model node (graph level) or the user's call site (TE, schedules).
// Passes copy it to the nodes they create so that errors can always name the origin.
#pragma once

#include <source_location>
#include <string>

namespace anvil {

struct SourceLoc {
    std::string file;  // model file or C++/Python source file
    int line = 0;
    std::string node_name;  // model node name, when the origin is a model
    std::string op_type;    // model op type, e.g. "Conv"
    int opset = -1;

    static SourceLoc here(const std::source_location& loc = std::source_location::current()) {
        return SourceLoc{.file = loc.file_name(), .line = static_cast<int>(loc.line())};
    }
    bool empty() const { return file.empty() && node_name.empty(); }
    // "file:line" or "model.onnx: node 'Conv_12' (Conv, opset 13)"; empty when unknown.
    std::string str() const;
};

}  // namespace anvil
