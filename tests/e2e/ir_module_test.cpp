// Programming Anvil at the IRModule level, as TVM Relax allows: the two-layer MLP of the Relax
// tutorial written by hand as module text — linear → relu → linear — with loop-IR kernels, with
// library functions from the registry (env.linear, env.relu registered from C++ here; from
// Python in python/tests/test_vm.py), and a mix; weights bound with bind_params; built once and
// run on the VM at several batch sizes against a C++ reference.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "driver/compile.h"
#include "driver/vm_compiler.h"
#include "e2e/vm_test_util.h"
#include "graph/parser.h"
#include "graph/passes/passes.h"
#include "graph/printer.h"
#include "graph/structural_equal.h"
#include "ops/op_table.h"
#include "runtime/registry.h"
#include "runtime/vm.h"

namespace anvil {
namespace {

using runtime::NDArray;
using testing::bytes_of;
using testing::error_of;
using testing::random_array;

// A generic kernel: the same linear serves both layers, its sizes bound from the arguments.
constexpr const char* kKernels = R"(
prim_func linear(X: float32[n, k], W: float32[m, k], B: float32[m], Z: float32[n, m]) {
  for i in [0, n) {
    for j in [0, m) {
      Z[i, j] = B[j]
      for r in [0, k) {
        Z[i, j] = Z[i, j] + X[i, r] * W[j, r]
      }
    }
  }
}

prim_func relu(X: float32[n, m], Y: float32[n, m]) {
  for i in [0, n) {
    for j in [0, m) {
      Y[i, j] = max(X[i, j], 0.0f)
    }
  }
}

prim_func linear_relu_via_env(X: float32[n, k], W: float32[m, k], B: float32[m], Z: float32[n, m]) {
  call_packed("env.linear", X, W, B, Z)
  for i in [0, n) {
    for j in [0, m) {
      Z[i, j] = max(Z[i, j], 0.0f)
    }
  }
}
)";

std::string mlp_module(const std::string& linear0, const std::string& relu,
                       const std::string& linear1) {
    return R"(
def @main(%x: Tensor[(n, 16), float32], %w0: Tensor[(32, 16), float32], %b0: Tensor[(32,), float32],
          %w1: Tensor[(8, 32), float32], %b1: Tensor[(8,), float32]) -> Tensor[(n, 8), float32] {
  dataflow {
    %lv0 = )" +
           linear0 +
           R"(, (%x, %w0, %b0), Tensor[(n, 32), float32]);
    %lv1 = )" +
           relu +
           R"(, (%lv0,), Tensor[(n, 32), float32]);
    %gv = )" +
           linear1 +
           R"(, (%lv1, %w1, %b1), Tensor[(n, 8), float32]);
    output %gv;
  }
  %gv
}
)" + kKernels;
}

// The head of each call, up to its callee; mlp_module adds the arguments and the result type.
const std::string kTirLinear = "call_tir(@linear";
const std::string kTirRelu = "call_tir(@relu";
const std::string kPackedLinear = R"(call_packed("env.linear")";
const std::string kPackedRelu = R"(call_packed("env.relu")";
// A compiled kernel that calls env.linear itself, then applies relu in its own loop.
const std::string kTirLinearReluViaEnv = "call_tir(@linear_relu_via_env";

// Z = X W^T + B on row-major float tensors.
void linear_reference(const float* x, const float* w, const float* b, float* z, int64_t n,
                      int64_t k, int64_t m) {
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
            float acc = b[j];
            for (int64_t r = 0; r < k; ++r) acc += x[i * k + r] * w[j * k + r];
            z[i * m + j] = acc;
        }
    }
}

std::vector<float> mlp_reference(const NDArray& x, const std::map<std::string, NDArray>& p) {
    int64_t n = x.shape()[0];
    std::vector<float> h(n * 32), y(n * 8);
    linear_reference(x.data<float>(), p.at("w0").data<float>(), p.at("b0").data<float>(), h.data(),
                     n, 16, 32);
    for (float& v : h) v = std::max(v, 0.0f);
    linear_reference(h.data(), p.at("w1").data<float>(), p.at("b1").data<float>(), y.data(), n, 32,
                     8);
    return y;
}

// The library functions, registered from C++ (a host program's own code, called by the VM in
// destination-passing style: the output comes last).
void register_env_functions() {
    runtime::register_global_func(
        "env.linear", runtime::PackedFunc([](const runtime::Args& args, runtime::RetValue*) {
            const DLTensor* x = args[0].as_tensor();
            const DLTensor* w = args[1].as_tensor();
            const DLTensor* b = args[2].as_tensor();
            DLTensor* z = args[3].as_tensor();
            linear_reference(static_cast<const float*>(x->data), static_cast<const float*>(w->data),
                             static_cast<const float*>(b->data), static_cast<float*>(z->data),
                             x->shape[0], x->shape[1], w->shape[0]);
        }),
        true);
    runtime::register_global_func(
        "env.relu", runtime::PackedFunc([](const runtime::Args& args, runtime::RetValue*) {
            const DLTensor* x = args[0].as_tensor();
            DLTensor* y = args[1].as_tensor();
            int64_t count = x->shape[0] * x->shape[1];
            for (int64_t i = 0; i < count; ++i) {
                static_cast<float*>(y->data)[i] =
                    std::max(static_cast<const float*>(x->data)[i], 0.0f);
            }
        }),
        true);
}

std::map<std::string, NDArray> mlp_params() {
    return {{"w0", random_array({32, 16}, 1)},
            {"b0", random_array({32}, 2)},
            {"w1", random_array({8, 32}, 3)},
            {"b1", random_array({8}, 4)}};
}

// Parses, binds the weights, builds and runs at batch 1, 3 and 8.
void build_and_check(const std::string& text) {
    register_env_functions();
    graph::IRModule m = graph::parse_module(text, ops::op_table());
    std::map<std::string, NDArray> params = mlp_params();
    m = graph::bind_params(m, "main", params);
    ASSERT_EQ(m.main()->params.size(), 1u);
    driver::CompiledModel c = driver::compile_model(m, "llvm");
    ASSERT_TRUE(driver::needs_vm(c.module));
    driver::VMExecutable exe = driver::compile_vm(c.module);
    runtime::VirtualMachine vm(exe.program, bytes_of(exe.params), c.kernels);
    for (int64_t n : {1, 3, 8}) {
        NDArray x = random_array({n, 16}, static_cast<unsigned>(10 + n));
        std::vector<NDArray> out = vm.run({x});
        ASSERT_EQ(out.size(), 1u);
        ASSERT_EQ(std::vector<int64_t>(out[0].shape().begin(), out[0].shape().end()),
                  (std::vector<int64_t>{n, 8}));
        std::vector<float> want = mlp_reference(x, params);
        std::vector<float> got = out[0].to_vector<float>();
        for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "n=" << n;
        }
    }
}

TEST(IRModule, HandWrittenMlpWithTirKernels) {
    build_and_check(mlp_module(kTirLinear, kTirRelu, kTirLinear));
}

TEST(IRModule, HandWrittenMlpWithLibraryFunctions) {
    build_and_check(mlp_module(kPackedLinear, kPackedRelu, kPackedLinear));
}

TEST(IRModule, HandWrittenMlpMixingKernelsAndLibraryFunctions) {
    build_and_check(mlp_module(kPackedLinear, kTirRelu, kTirLinear));
}

TEST(IRModule, HandWrittenMlpWithAKernelThatCallsALibraryFunction) {
    // relu(relu(h)) == relu(h): the middle call keeps the module's three-call shape.
    build_and_check(mlp_module(kTirLinearReluViaEnv, kTirRelu, kTirLinear));
}

TEST(IRModule, TextRoundTripsWithKernelsAndCalls) {
    std::string text = mlp_module(kPackedLinear, kTirRelu, kTirLinear);
    graph::IRModule m = graph::parse_module(text, ops::op_table());
    std::string printed = graph::print(m);
    EXPECT_NE(printed.find("call_packed(\"env.linear\", (%x, %w0, %b0), "
                           "Tensor[(n, 32), float32])"),
              std::string::npos)
        << printed;
    EXPECT_NE(printed.find("call_tir(@relu, ("), std::string::npos) << printed;
    graph::IRModule back = graph::parse_module(printed, ops::op_table());
    EXPECT_EQ(graph::print(back), printed);
    EXPECT_TRUE(graph::structural_equal(back.main(), m.main())) << printed;
}

TEST(IRModule, MistakesInHandWrittenModulesAreClearErrors) {
    auto build = [](const std::string& text) {
        return
            [text] { driver::compile_model(graph::parse_module(text, ops::op_table()), "llvm"); };
    };
    // A kernel called with the wrong number of arguments, or a tensor of the wrong type.
    std::string wrong_arity = mlp_module(kTirLinear, kTirRelu, "call_tir(@relu");
    EXPECT_NE(error_of(build(wrong_arity))
                  .find("call_tir @relu: the kernel takes 2 tensor(s) and 0 scalar(s), the call "
                        "passes 3 argument(s) and 1 output(s)"),
              std::string::npos);
    std::string wrong_type = R"(
def @main(%x: Tensor[(4, 16), int32]) -> Tensor[(4, 16), float32] {
  call_tir(@relu, (%x,), Tensor[(4, 16), float32])
}
)" + std::string(kKernels);
    EXPECT_NE(error_of(build(wrong_type))
                  .find("call_tir @relu: argument 0 has type Tensor[(4, 16), int32], the "
                        "kernel's parameter X is float32[n, m]"),
              std::string::npos)
        << error_of(build(wrong_type));
    std::string missing = R"(
def @main(%x: Tensor[(4, 16), float32]) {
  call_tir(@gelu, (%x,), Tensor[(4, 16), float32])
}
)";
    EXPECT_NE(error_of(build(missing)).find("call_tir @gelu: the module has no kernel"),
              std::string::npos);
    // A dataflow block's inner names end with it.
    std::string leaked = R"(
def @main(%x: Tensor[(4, 16), float32]) {
  dataflow {
    %lv = call_packed("env.relu", (%x,), Tensor[(4, 16), float32]);
    %gv = call_packed("env.relu", (%lv,), Tensor[(4, 16), float32]);
    output %gv;
  }
  %lv
}
)";
    EXPECT_NE(error_of([&] {
                  graph::parse_module(leaked, ops::op_table());
              }).find("undefined variable '%lv'"),
              std::string::npos);
    // bind_params: unknown names and values of the wrong shape.
    graph::IRModule m =
        graph::parse_module(mlp_module(kTirLinear, kTirRelu, kTirLinear), ops::op_table());
    EXPECT_NE(error_of([&] {
                  graph::bind_params(m, "main", {{"w9", random_array({2}, 1)}});
              })
                  .find("bind_params: @main has no parameter %w9 (its parameters: %x, %w0, %b0, "
                        "%w1, %b1)"),
              std::string::npos);
    EXPECT_NE(error_of([&] {
                  graph::bind_params(m, "main", {{"w0", random_array({2}, 1)}});
              })
                  .find("bind_params: parameter %w0 of @main has type Tensor[(32, 16), float32], "
                        "the value bound to it Tensor[(2,), float32]"),
              std::string::npos);
}

TEST(IRModule, UnregisteredLibraryFunctionIsARunTimeErrorNamingIt) {
    std::string text = R"(
def @main(%x: Tensor[(4, 16), float32]) {
  call_packed("env.not_registered", (%x,), Tensor[(4, 16), float32])
}
)";
    driver::CompiledModel c =
        driver::compile_model(graph::parse_module(text, ops::op_table()), "llvm");
    driver::VMExecutable exe = driver::compile_vm(c.module);
    runtime::VirtualMachine vm(exe.program, bytes_of(exe.params), c.kernels);
    std::string message = error_of([&] { vm.run({random_array({4, 16}, 1)}); });
    EXPECT_NE(message.find("env.not_registered"), std::string::npos) << message;
}

}  // namespace
}  // namespace anvil
