// Kernels specialized for shape buckets (driver/shape_buckets.h): a model with symbolic
// dimensions compiled once with buckets runs on the VM at bucket sizes (the specialized kernels,
// seen in the VM's kernel profile) and at any other size (the generic kernels), matching a C++
// reference; the calls, the program and the exported artifact carry the variants; a module
// written by hand names variants in its text.
#include "driver/shape_buckets.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "driver/compile.h"
#include "driver/vm_compiler.h"
#include "e2e/vm_test_util.h"
#include "graph/expr_functor.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/structural_equal.h"
#include "ops/call_tir.h"
#include "ops/op_table.h"
#include "runtime/vm.h"
#include "tir/printer.h"

namespace anvil {
namespace {

using runtime::NDArray;
using runtime::VirtualMachine;
using testing::bytes_of;
using testing::error_of;
using testing::random_array;

// h = relu(x @ w^T + b) over a batch n, and h broadcast against y over (n, m): one group uses n
// only, the other n and m.
constexpr const char* kModel = R"(
def @main(%x: Tensor[(n, 24), float32], %w: Tensor[(16, 24), float32], %b: Tensor[(16,), float32],
          %y: Tensor[(m, 16), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.bias_add(%0, %b, axis=1);
  %2 = nn.relu(%1);
  %3 = expand_dims(%2, axis=1);
  %4 = multiply(%3, %y);
  (%2, %4)
}
)";

// The model's outputs computed directly: h (n x 16) and h[i] * y[j] (n x m x 16).
std::pair<std::vector<float>, std::vector<float>> reference(const NDArray& x, const NDArray& w,
                                                            const NDArray& b, const NDArray& y) {
    int64_t n = x.shape()[0], m = y.shape()[0];
    std::vector<float> h(n * 16), z(n * m * 16);
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < 16; ++j) {
            float acc = b.data<float>()[j];
            for (int64_t k = 0; k < 24; ++k) {
                acc += x.data<float>()[i * 24 + k] * w.data<float>()[j * 24 + k];
            }
            h[i * 16 + j] = std::max(acc, 0.0f);
        }
    }
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
            for (int64_t k = 0; k < 16; ++k) {
                z[(i * m + j) * 16 + k] = h[i * 16 + k] * y.data<float>()[j * 16 + k];
            }
        }
    }
    return {h, z};
}

void expect_near(const NDArray& got, const std::vector<float>& want, const std::string& what) {
    std::vector<float> g = got.to_vector<float>();
    ASSERT_EQ(g.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(g[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << what << " i=" << i;
    }
}

driver::CompiledModel compile_with_buckets(const char* text, driver::ShapeBuckets buckets) {
    driver::PipelineOptions options;
    options.shape_buckets = std::move(buckets);
    return driver::compile_model(graph::parse_module(text, ops::op_table()), "llvm", options);
}

// The call_tir calls of main, in order.
std::vector<const ops::CallTirAttrs*> kernel_calls(const graph::IRModule& m) {
    std::vector<const ops::CallTirAttrs*> calls;
    graph::post_order_visit(m.main()->body, [&](const graph::Expr& e) {
        if (const auto* a = ops::call_tir_attrs(e)) calls.push_back(a);
    });
    return calls;
}

// The kernels one run called (the VM's profile).
std::set<std::string> kernels_called(VirtualMachine& vm, const std::vector<NDArray>& inputs) {
    vm.reset_profile();
    vm.set_profiling(true);
    vm.run(inputs);
    vm.set_profiling(false);
    std::set<std::string> names;
    for (const auto& k : vm.profile().kernels) names.insert(k.kernel);
    return names;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() &&
           s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(ShapeBuckets, EachKernelGetsAVariantPerCombinationOfItsBucketedSizes) {
    driver::CompiledModel c = compile_with_buckets(kModel, {{"n", {1, 8}}, {"m", {4}}});
    std::vector<const ops::CallTirAttrs*> calls = kernel_calls(c.module);
    ASSERT_EQ(calls.size(), 2u) << graph::print(c.module);
    // The dense group uses n: a variant per size of n. The broadcast uses n and m: every pair.
    const ops::CallTirAttrs& dense = *calls[0];
    ASSERT_EQ(dense.bucket_dims.size(), 1u);
    EXPECT_EQ(to_string(dense.bucket_dims[0]), "n");
    EXPECT_EQ(dense.bucket_values, (std::vector<int64_t>{1, 8}));
    EXPECT_EQ(dense.bucket_kernels,
              (std::vector<std::string>{dense.kernel + "_n1", dense.kernel + "_n8"}));
    const ops::CallTirAttrs& product = *calls[1];
    ASSERT_EQ(product.bucket_dims.size(), 2u);
    EXPECT_EQ(to_string(product.bucket_dims[0]), "m");  // ordered by name
    EXPECT_EQ(product.bucket_values, (std::vector<int64_t>{4, 1, 4, 8}));
    EXPECT_EQ(product.bucket_kernels.back(), product.kernel + "_m4_n8");
    // 2 generic kernels and 4 variants, each variant with the generic kernel's parameters.
    EXPECT_EQ(c.module.kernels.size(), 6u);
    for (const auto* call : calls) {
        const tir::PrimFunc& generic = *c.module.kernels.at(call->kernel);
        for (const auto& name : call->bucket_kernels) {
            const tir::PrimFunc& v = *c.module.kernels.at(name);
            EXPECT_EQ(v.params.size(), generic.params.size()) << name;
            EXPECT_EQ(v.scalar_params.size(), generic.scalar_params.size()) << name;
        }
    }
    // Fixed sizes: the variant's buffers have constant shapes, its loops constant extents.
    const Ref<tir::PrimFunc>& n8 = c.module.kernels.at(dense.kernel + "_n8");
    for (const auto& p : n8->params) {
        for (const auto& d : p->shape) EXPECT_TRUE(as_const_int(d)) << tir::print(n8);
    }
    std::string text = tir::print(n8);
    EXPECT_EQ(text.find("[0, n)"), std::string::npos) << text;
    EXPECT_EQ(text.find(" n)"), std::string::npos) << text;
}

TEST(ShapeBuckets, BucketSizesCallTheVariantsOtherSizesTheGenericKernels) {
    driver::CompiledModel c = compile_with_buckets(kModel, {{"n", {1, 8}}, {"m", {4}}});
    driver::VMExecutable exe = driver::compile_vm(c.module);
    VirtualMachine vm(exe.program, bytes_of(exe.params), c.kernels);
    std::vector<const ops::CallTirAttrs*> calls = kernel_calls(c.module);
    const std::string dense = calls[0]->kernel, product = calls[1]->kernel;
    NDArray w = random_array({16, 24}, 1), b = random_array({16}, 2);
    struct Case {
        int64_t n, m;
        std::set<std::string> called;
    };
    const Case cases[] = {
        {8, 4, {dense + "_n8", product + "_m4_n8"}},
        {1, 4, {dense + "_n1", product + "_m4_n1"}},
        {8, 5, {dense + "_n8", product}},  // m = 5 is no bucket: that kernel is generic
        {3, 4, {dense, product}},
        {17, 7, {dense, product}},
    };
    for (const Case& k : cases) {
        std::string where = "n=" + std::to_string(k.n) + " m=" + std::to_string(k.m);
        NDArray x = random_array({k.n, 24}, static_cast<unsigned>(k.n));
        NDArray y = random_array({k.m, 16}, static_cast<unsigned>(k.m + 100));
        std::vector<NDArray> out = vm.run({x, w, b, y});
        ASSERT_EQ(out.size(), 2u);
        auto [h, z] = reference(x, w, b, y);
        expect_near(out[0], h, where);
        expect_near(out[1], z, where);
        EXPECT_EQ(kernels_called(vm, {x, w, b, y}), k.called) << where;
    }
}

TEST(ShapeBuckets, ProgramCarriesTheVariantsIntoTheArtifact) {
    driver::CompiledModel c = compile_with_buckets(kModel, {{"n", {2}}});
    driver::VMExecutable exe = driver::compile_vm(c.module);
    std::string json = runtime::program_to_json(exe.program);
    EXPECT_NE(json.find("\"variants\":[{\"kernel\":\"fused_dense"), std::string::npos) << json;
    EXPECT_NE(json.find("\"when\":[\"$0\",2,\"==\"]"), std::string::npos) << json;
    std::string path = (std::filesystem::temp_directory_path() /
                        ("anvil_buckets_" + std::to_string(getpid()) + ".so"))
                           .string();
    driver::export_model(c, path, driver::Executor::vm);
    VirtualMachine vm = VirtualMachine::load(path);
    NDArray x = random_array({2, 24}, 4), w = random_array({16, 24}, 1), b = random_array({16}, 2),
            y = random_array({3, 16}, 5);
    std::vector<NDArray> out = vm.run({x, w, b, y});
    auto [h, z] = reference(x, w, b, y);
    expect_near(out[0], h, "n=2");
    expect_near(out[1], z, "n=2");
    std::set<std::string> called = kernels_called(vm, {x, w, b, y});
    EXPECT_EQ(called.size(), 2u);
    for (const auto& name : called) EXPECT_TRUE(ends_with(name, "_n2")) << name;
    std::filesystem::remove(path);
}

TEST(ShapeBuckets, NoBucketsNoVariants) {
    driver::CompiledModel c = compile_with_buckets(kModel, {});
    EXPECT_EQ(c.module.kernels.size(), 2u);
    for (const auto* call : kernel_calls(c.module)) EXPECT_TRUE(call->bucket_kernels.empty());
    EXPECT_EQ(graph::print(c.module).find("bucket_"), std::string::npos);
}

TEST(ShapeBuckets, LoweredModuleTextRoundTripsWithVariants) {
    driver::CompiledModel c = compile_with_buckets(kModel, {{"n", {1, 8}}});
    std::string printed = graph::print(c.module);
    EXPECT_NE(printed.find("bucket_dims=(n,), bucket_kernels=[\"fused_dense"), std::string::npos)
        << printed;
    graph::IRModule back = graph::parse_module(printed, ops::op_table());
    EXPECT_EQ(graph::print(back), printed);
    EXPECT_TRUE(graph::structural_equal(back.main(), c.module.main()));
}

// Variants written by hand: relu_n2 serves n = 2, the generic relu every other size.
constexpr const char* kHandWritten = R"(
def @main(%x: Tensor[(n, 4), float32]) {
  call_tir(@relu, (%x,), Tensor[(n, 4), float32], bucket_dims=(n,), bucket_kernels=["relu_n2"], bucket_values=[2])
}

prim_func relu(X: float32[n, m], Y: float32[n, m]) {
  for i in [0, n) {
    for j in [0, m) { Y[i, j] = max(X[i, j], 0.0f) }
  }
}

prim_func relu_n2(X: float32[2, 4], Y: float32[2, 4]) {
  for i in [0, 2) {
    for j in [0, 4) { Y[i, j] = max(X[i, j], 0.0f) }
  }
}
)";

TEST(ShapeBuckets, HandWrittenVariantsDispatchOnTheBoundSize) {
    driver::CompiledModel c = compile_with_buckets(kHandWritten, {});
    driver::VMExecutable exe = driver::compile_vm(c.module);
    VirtualMachine vm(exe.program, bytes_of(exe.params), c.kernels);
    for (int64_t n : {2, 3}) {
        NDArray x = random_array({n, 4}, static_cast<unsigned>(n));
        std::vector<float> want = x.to_vector<float>();
        for (float& v : want) v = std::max(v, 0.0f);
        expect_near(vm.run({x})[0], want, "n=" + std::to_string(n));
        EXPECT_EQ(kernels_called(vm, {x}), std::set<std::string>{n == 2 ? "relu_n2" : "relu"});
    }
    // A variant that does not fit the call is refused before anything runs.
    std::string wrong = kHandWritten;
    wrong.replace(wrong.find("prim_func relu_n2(X: float32[2, 4]"),
                  std::string("prim_func relu_n2(X: float32[2, 4]").size(),
                  "prim_func relu_n2(X: float32[2, 5]");
    EXPECT_TRUE(
        testing::contains(error_of([&] { compile_with_buckets(wrong.c_str(), {}); }),
                          "call_tir @relu_n2: argument 0 has type Tensor[(n, 4), float32]"));
    std::string missing = kHandWritten;
    missing.replace(missing.find("\"relu_n2\"]"), 9, "\"relu_n3\"");
    EXPECT_TRUE(testing::contains(error_of([&] { compile_with_buckets(missing.c_str(), {}); }),
                                  "call_tir @relu: the module has no kernel named 'relu_n3'"));
}

}  // namespace
}  // namespace anvil
