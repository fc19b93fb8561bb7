// Test support: build a schedule, fill inputs with reproducible random values, run, read back.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "driver/build.h"
#include "runtime/ndarray.h"

namespace anvil::testing {

// Random float tensor of the given shape (values in [lo, hi)).
inline runtime::NDArray random_tensor(const std::vector<int64_t>& shape, uint32_t seed,
                                      float lo = -1.0f, float hi = 1.0f) {
    auto t = runtime::NDArray::empty(shape, runtime::dl_dtype_from_string("float32"));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    float* p = t.data<float>();
    for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = dist(rng);
    return t;
}

inline runtime::NDArray zeros(const std::vector<int64_t>& shape,
                              const std::string& dtype = "float32") {
    auto t = runtime::NDArray::empty(shape, runtime::dl_dtype_from_string(dtype));
    std::memset(t.raw_data(), 0, t.nbytes());
    return t;
}

// Builds with the host target and calls the function on `args` (inputs, then outputs).
inline void build_and_run(const te::Schedule& s, const std::vector<te::Tensor>& tensors,
                          const std::vector<runtime::NDArray>& args) {
    runtime::Module m = driver::build(s, tensors, "llvm -mcpu=native", "kernel");
    runtime::PackedFunc f = m.get_function("kernel");
    std::vector<AnvilValue> values(args.size());
    std::vector<int> codes(args.size(), kAnvilDLTensor);
    for (size_t i = 0; i < args.size(); ++i) values[i].v_handle = args[i].tensor();
    f.call(values.data(), codes.data(), static_cast<int>(args.size()));
}

}  // namespace anvil::testing
