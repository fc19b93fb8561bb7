// The execution plan the graph executor's unit tests run over kernels written in C++: y = x + w
// over float32[2, 3], where x is input 0, w a param (the blob's first 24 bytes) and "k" the
// kernel node 'add' calls; one storage buffer per tensor.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

namespace anvil::runtime {

inline constexpr const char* kAddPlan = R"({
  "version": 1,
  "inputs": [{"name": "x", "node": 0}],
  "outputs": [{"node": 2, "name": "y"}],
  "nodes": [
    {"kind": "input", "name": "x", "shape": [2, 3], "dtype": "float32", "storage": 0},
    {"kind": "param", "name": "w", "shape": [2, 3], "dtype": "float32"},
    {"kind": "kernel", "name": "add", "kernel": "k", "args": [0, [1, 0]],
     "shape": [2, 3], "dtype": "float32", "storage": 1}
  ],
  "storage": [{"id": 0, "bytes": 24}, {"id": 1, "bytes": 24, "device": "cpu"}],
  "params": {"w": {"offset": 0, "nbytes": 24, "shape": [2, 3], "dtype": "float32"}}
})";

// `values` as a parameter blob holds them.
inline std::vector<std::byte> float_bytes(const std::vector<float>& values) {
    std::vector<std::byte> out(values.size() * sizeof(float));
    if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
    return out;
}

}  // namespace anvil::runtime
