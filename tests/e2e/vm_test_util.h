// Helpers of the VM tests (tests/e2e, tests/conformance, tests/unit/runtime): deterministic
// inputs, a compiled program's parameter blob as bytes, a kernel module without kernels, the
// message of a UserError and a check that a message says something.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "runtime/module.h"
#include "runtime/ndarray.h"
#include "support/error.h"

namespace anvil::testing {

// A float32 tensor of `shape` with values in [-1, 1], different for each seed.
inline runtime::NDArray random_array(std::vector<int64_t> shape, unsigned seed) {
    runtime::NDArray a = runtime::NDArray::empty(shape, {kDLFloat, 32, 1});
    float* p = a.data<float>();
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        p[i] = static_cast<float>((i * 7919 + seed * 104729) % 2001) / 1000.0f - 1.0f;
    }
    return a;
}

inline std::span<const std::byte> bytes_of(const std::string& s) {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// The message of the UserError `f` raises; "" when it raises none.
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

// `text` contains `part`; the failure message shows both.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// A kernel module with no kernels, for programs of VM instructions only.
class NoKernels : public runtime::ModuleNode {
public:
    runtime::PackedFunc get_function(const std::string&) override { return {}; }
    std::vector<std::string> function_names() const override { return {}; }
};

}  // namespace anvil::testing
