// What the conformance suite's own tests share: a node test's model (Debian's libonnx-testdata),
// or one built in code, compiled once for the VM, run with other values than the test's, and
// small tensors.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "driver/compile.h"
#include "driver/vm_compiler.h"
#include "e2e/vm_test_util.h"
#include "frontend/onnx/from_onnx.h"
#include "require_package.h"
#include "runtime/vm.h"

namespace anvil::testing {

inline const std::filesystem::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

class CompiledNodeModel {
public:
    explicit CompiledNodeModel(const std::string& test)
        : CompiledNodeModel(frontend::from_onnx((kNodeTests / test / "model.onnx").string())) {}
    // A model imported otherwise (built in code); `dynamic` says whether it needs the VM (a
    // static one runs on the VM all the same).
    explicit CompiledNodeModel(graph::IRModule imported, bool dynamic = true)
        : module_(std::move(imported)) {
        model_ = driver::compile_model(module_, "llvm");
        EXPECT_EQ(driver::needs_vm(model_.module), dynamic);
        exe_ = driver::compile_vm(model_.module);
        vm_ = std::make_unique<runtime::VirtualMachine>(exe_.program, bytes_of(exe_.params),
                                                        model_.kernels);
    }
    std::vector<runtime::NDArray> run(const std::vector<runtime::NDArray>& inputs) {
        return vm_->run(inputs);
    }
    // Runs main on values that may be sequences or empty optionals; a tuple when main gives
    // several results.
    runtime::VMValue invoke(std::vector<runtime::VMValue> inputs) {
        return vm_->invoke("main", std::move(inputs));
    }
    const graph::IRModule& imported() const { return module_; }
    runtime::VirtualMachine& vm() { return *vm_; }
    const driver::VMExecutable& executable() const { return exe_; }

private:
    graph::IRModule module_;
    driver::CompiledModel model_;
    driver::VMExecutable exe_;
    std::unique_ptr<runtime::VirtualMachine> vm_;
};

template <typename T>
runtime::NDArray array(std::vector<int64_t> shape, std::vector<T> values, const char* dtype) {
    runtime::NDArray a =
        runtime::NDArray::empty(std::move(shape), runtime::dl_dtype_from_string(dtype));
    a.copy_from(values);
    return a;
}

inline std::vector<int64_t> shape_of(const runtime::NDArray& a) {
    return {a.shape().begin(), a.shape().end()};
}

// Fails (under CI) or skips a test when libonnx-testdata is not installed.
class NodeModelTest : public ::testing::Test {
protected:
    void SetUp() override {
        ANVIL_REQUIRE_PACKAGE(std::filesystem::exists(kNodeTests),
                              "the ONNX backend test data (/usr/share/libonnx-testdata)",
                              "apt-get install libonnx-testdata");
    }
};

}  // namespace anvil::testing
