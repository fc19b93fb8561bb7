// How the runtime's messages write a shape or a list of strides: "[1, 3, 224, 224]".
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace anvil::runtime {

inline std::string shape_text(std::span<const int64_t> shape) {
    std::string out = "[";
    for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
    return out + "]";
}

}  // namespace anvil::runtime
