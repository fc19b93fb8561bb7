#include "support/source_loc.h"

namespace anvil {

std::string SourceLoc::str() const {
    std::string out;
    if (!file.empty()) {
        out = file;
        if (line > 0) out += ":" + std::to_string(line);
    }
    if (!node_name.empty() || !op_type.empty()) {
        if (!out.empty()) out += ": ";
        out += "node '" + node_name + "'";
        if (!op_type.empty()) {
            out += " (" + op_type;
            if (opset >= 0) out += ", opset " + std::to_string(opset);
            out += ")";
        }
    }
    return out;
}

}  // namespace anvil
