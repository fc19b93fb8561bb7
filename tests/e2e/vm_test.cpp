// The VM on compiled models with symbolic dimensions: one compilation, several sizes; the memory
// pool's reuse; run-time shape errors; the artifact loaded back by the runtime alone.
#include "runtime/vm.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "driver/compile.h"
#include "driver/vm_compiler.h"
#include "e2e/vm_test_util.h"
#include "graph/parser.h"
#include "ops/op_table.h"

namespace anvil {
namespace {

using runtime::NDArray;
using runtime::VirtualMachine;
using testing::bytes_of;
using testing::error_of;
using testing::random_array;

// y = relu(x @ w^T + b) * 2 with a symbolic batch n: dense, bias and an elementwise tail.
constexpr const char* kMLP = R"(
def @main(%x: Tensor[(n, 24), float32], %w: Tensor[(16, 24), float32], %b: Tensor[(16,), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.bias_add(%0, %b, axis=1);
  %2 = nn.relu(%1);
  multiply(%2, %2)
}
)";

std::vector<float> reference_mlp(const NDArray& x, const NDArray& w, const NDArray& b) {
    int64_t n = x.shape()[0];
    std::vector<float> y(n * 16);
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < 16; ++j) {
            float acc = b.data<float>()[j];
            for (int64_t k = 0; k < 24; ++k) {
                acc += x.data<float>()[i * 24 + k] * w.data<float>()[j * 24 + k];
            }
            float r = std::max(acc, 0.0f);
            y[i * 16 + j] = r * r;
        }
    }
    return y;
}

struct CompiledVM {
    driver::CompiledModel model;
    driver::VMExecutable vm;
};

CompiledVM compile_text(const char* text) {
    graph::IRModule m = graph::parse_module(text, ops::op_table());
    CompiledVM c{driver::compile_model(m, "llvm"), {}};
    c.vm = driver::compile_vm(c.model.module);
    return c;
}

TEST(VM, SymbolicBatchCompilesOnceAndRunsAtEverySize) {
    CompiledVM c = compile_text(kMLP);
    EXPECT_TRUE(driver::needs_vm(c.model.module));
    VirtualMachine vm(c.vm.program, bytes_of(c.vm.params), c.model.kernels);
    NDArray w = random_array({16, 24}, 1), b = random_array({16}, 2);
    // Sizes around the register tile and vector width: the tails of symbolic loops run; at 0
    // the kernels have nothing to write.
    for (int64_t n : {0, 1, 3, 8, 17, 64, 131}) {
        NDArray x = random_array({n, 24}, static_cast<unsigned>(n));
        std::vector<NDArray> out = vm.run({x, w, b});
        ASSERT_EQ(out.size(), 1u);
        ASSERT_EQ(out[0].shape().size(), 2u);
        EXPECT_EQ(out[0].shape()[0], n);
        std::vector<float> want = reference_mlp(x, w, b);
        std::vector<float> got = out[0].to_vector<float>();
        for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i])))
                << "n=" << n << " i=" << i;
        }
    }
}

TEST(VM, MemoryPoolReusesStorageAcrossRuns) {
    CompiledVM c = compile_text(kMLP);
    VirtualMachine vm(c.vm.program, bytes_of(c.vm.params), c.model.kernels);
    NDArray x = random_array({5, 24}, 3), w = random_array({16, 24}, 1), b = random_array({16}, 2);
    vm.run({x, w, b});
    runtime::MemoryPoolStats first = vm.pool_stats();
    vm.run({x, w, b});
    runtime::MemoryPoolStats second = vm.pool_stats();
    EXPECT_GT(second.allocations, first.allocations);
    // The second run at the same size allocates nothing new from the system.
    EXPECT_EQ(second.bytes_held, first.bytes_held);
    EXPECT_EQ(second.reuses - first.reuses, second.allocations - first.allocations);
}

TEST(VM, RunTimeShapeMismatchIsAClearError) {
    CompiledVM c = compile_text(kMLP);
    VirtualMachine vm(c.vm.program, bytes_of(c.vm.params), c.model.kernels);
    NDArray w = random_array({16, 24}, 1), b = random_array({16}, 2);
    std::string e = error_of([&] { vm.run({random_array({4, 23}, 1), w, b}); });
    EXPECT_NE(e.find("input 'x' has shape [4, 23], expected [n, 24] with n = 4"), std::string::npos)
        << e;
    e = error_of([&] { vm.run({random_array({4, 24, 1}, 1), w, b}); });
    EXPECT_NE(e.find("input 'x' has shape [4, 24, 1], expected [n, 24]"), std::string::npos) << e;
    e = error_of([&] { vm.run({random_array({4, 24}, 1), w}); });
    EXPECT_NE(e.find("takes 3 input(s), given 2"), std::string::npos) << e;
}

TEST(VM, TwoInputsSharingADimensionMustAgree) {
    CompiledVM c = compile_text(R"(
def @main(%a: Tensor[(n, 4), float32], %b: Tensor[(n, 4), float32]) {
  add(%a, %b)
}
)");
    VirtualMachine vm(c.vm.program, bytes_of(c.vm.params), c.model.kernels);
    std::vector<NDArray> ok = vm.run({random_array({3, 4}, 1), random_array({3, 4}, 2)});
    EXPECT_EQ(ok[0].shape()[0], 3);
    std::string e = error_of([&] { vm.run({random_array({3, 4}, 1), random_array({5, 4}, 2)}); });
    EXPECT_NE(e.find("input 'b' has shape [5, 4], expected [n, 4] with n = 3"), std::string::npos)
        << e;
}

// The kernels that would be empty at n = 0 skip their work; a sum over the symbolic axis still
// has its outputs to write (zeros at n = 0).
TEST(VM, ReductionOverASymbolicAxisAtEverySizeIncludingZero) {
    CompiledVM c = compile_text(R"(
def @main(%x: Tensor[(n, 24), float32]) {
  %0 = multiply(%x, %x);
  sum(%0, axes=[0])
}
)");
    VirtualMachine vm(c.vm.program, bytes_of(c.vm.params), c.model.kernels);
    for (int64_t n : {0, 1, 9, 40}) {
        NDArray x = random_array({n, 24}, static_cast<unsigned>(n + 7));
        std::vector<NDArray> out = vm.run({x});
        ASSERT_EQ(out.size(), 1u);
        std::vector<float> got = out[0].to_vector<float>();
        ASSERT_EQ(got.size(), 24u);
        for (int64_t j = 0; j < 24; ++j) {
            float want = 0;
            for (int64_t i = 0; i < n; ++i)
                want += x.data<float>()[i * 24 + j] * x.data<float>()[i * 24 + j];
            ASSERT_NEAR(got[j], want, 1e-4f * (1 + want)) << "n=" << n << " j=" << j;
        }
    }
}

// Kernels over a symbolic token count keep vector loops: a layer norm's rows and an elementwise
// or transposing copy vectorize their constant trailing axes, the symbolic ones run outside.
TEST(VM, SymbolicRowsKeepVectorLoops) {
    graph::IRModule m = graph::parse_module(R"(
def @main(%x: Tensor[(n, 4, 64), float32], %g: Tensor[(64,), float32], %y: Tensor[(4, n, 64), float32]) {
  %0 = nn.layer_norm(%x, %g);
  %1 = transpose(%y, axes=[1, 0, 2]);
  add(%0, %1)
}
)",
                                            ops::op_table());
    std::ostringstream log;
    driver::PipelineOptions options{.print_after = "vectorize_loops", .log = &log};
    driver::CompiledModel model = driver::compile_model(m, "llvm -mcpu=x86-64-v4", options);
    std::string text = log.str();
    int kernels = 0;
    for (size_t at = text.find("prim_func "); at != std::string::npos;
         at = text.find("prim_func ", at + 1)) {
        size_t end = text.find("\nprim_func ", at + 1);
        std::string kernel = text.substr(at, end == std::string::npos ? end : end - at);
        EXPECT_NE(kernel.find("[ramp("), std::string::npos) << kernel;  // vector accesses
        // No index divided by the symbolic size (a loop fused over it): n closes an argument
        // list only as a loop's extent.
        auto count = [&](const std::string& what) {
            int k = 0;
            for (size_t p = kernel.find(what); p != std::string::npos; p = kernel.find(what, p + 1))
                ++k;
            return k;
        };
        EXPECT_EQ(count(", cast<int32>(n))"), count("[0, cast<int32>(n))")) << kernel;
        EXPECT_EQ(count(", broadcast(cast<int32>(n), 16))"), 0) << kernel;
        ++kernels;
    }
    EXPECT_GE(kernels, 1) << text;
}

TEST(VM, ArtifactLoadsWithTheRuntimeAlone) {
    CompiledVM c = compile_text(kMLP);
    std::string path =
        (std::filesystem::temp_directory_path() / ("anvil_vm_" + std::to_string(getpid()) + ".so"))
            .string();
    driver::export_model(c.model, path, driver::Executor::vm);
    ASSERT_TRUE(VirtualMachine::is_vm_artifact(path));
    VirtualMachine vm = VirtualMachine::load(path);
    EXPECT_EQ(vm.input_names(), (std::vector<std::string>{"x", "w", "b"}));
    NDArray x = random_array({6, 24}, 4), w = random_array({16, 24}, 1), b = random_array({16}, 2);
    std::vector<float> want = reference_mlp(x, w, b);
    std::vector<float> got = vm.run({x, w, b})[0].to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i])));
    std::filesystem::remove(path);
}

TEST(VM, StaticModelsKeepTheGraphExecutor) {
    CompiledVM c = compile_text(R"(
def @main(%a: Tensor[(2, 4), float32]) {
  nn.relu(%a)
}
)");
    EXPECT_FALSE(driver::needs_vm(c.model.module));
    // The VM runs it too.
    VirtualMachine vm(c.vm.program, bytes_of(c.vm.params), c.model.kernels);
    NDArray a = random_array({2, 4}, 1);
    std::vector<float> got = vm.run({a})[0].to_vector<float>();
    for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], std::max(a.data<float>()[i], 0.0f));
}

}  // namespace
}  // namespace anvil
