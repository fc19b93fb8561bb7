// Kernels calling functions of the global registry (CallPacked): tensors and scalars reach the
// callee, its writes are visible to the rest of the kernel, and failures name the kernel and the
// function.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>

#include "codegen_test_util.h"
#include "runtime/module.h"
#include "runtime/registry.h"
#include "tir/parser.h"
#include "tir/passes/passes.h"
#include "tir/printer.h"
#include "tir/verifier.h"

namespace anvil {
namespace {

using namespace codegen_test;

const DataType f32 = DataType::float32();

// What a registered function saw of one tensor argument.
struct SeenTensor {
    std::vector<int64_t> shape;
    DLDataType dtype{};
    bool compact = false;
};

SeenTensor describe(const DLTensor* t) {
    SeenTensor s;
    s.shape.assign(t->shape, t->shape + t->ndim);
    s.dtype = t->dtype;
    s.compact = t->strides == nullptr && t->byte_offset == 0 && t->device.device_type == kDLCPU;
    return s;
}

// Registers `name` for the duration of a test.
class ScopedFunc {
public:
    ScopedFunc(std::string name, runtime::PackedFunc::Body body) : name_(std::move(name)) {
        runtime::register_global_func(name_, runtime::PackedFunc(std::move(body)), true);
    }
    ~ScopedFunc() { runtime::remove_global_func(name_); }

private:
    std::string name_;
};

Ref<tir::PrimFunc> lower(const std::string& text) {
    Ref<tir::PrimFunc> f = tir::parse_prim_func(text);
    tir::verify(f);
    f = tir::flatten_storage(f, tir::LowerContext{});
    tir::verify(f);
    return f;
}

TEST(CallPacked, PassesTensorsAndScalarsAndSeesTheCalleesWrites) {
    SeenTensor seen;
    int64_t seen_count = 0;
    double seen_factor = 0;
    ScopedFunc scale("test.kernel_scale", [&](const runtime::Args& args, runtime::RetValue* ret) {
        DLTensor* t = args[0].as_tensor();
        seen = describe(t);
        seen_factor = args[1].as_float();
        seen_count = args[2].as_int();
        auto* data = static_cast<float*>(t->data);
        for (int64_t k = 0; k < 32; ++k) data[k] *= static_cast<float>(seen_factor);
        *ret = 1;  // discarded
    });
    // B = (A + 1) * 2.5 by the callee, then + 0.5 by the kernel after the call.
    runtime::PackedFunc f = jit(lower(R"(
prim_func k(A: float32[4, 8], B: float32[4, 8], n: int32) {
  for i in [0, 32) { B[i] = A[i] + 1f }
  call_packed("test.kernel_scale", B, 2.5f, n + 1)
  for i in [0, 32) { B[i] = B[i] + 0.5f }
}
)"));
    std::vector<float> a(32);
    for (int k = 0; k < 32; ++k) a[k] = static_cast<float>(k);
    runtime::NDArray A = make_array(a, f32, {4, 8}), B = make_empty(f32, {4, 8});
    f(A, B, 6);
    std::vector<float> b = B.to_vector<float>();
    for (int k = 0; k < 32; ++k) EXPECT_EQ(b[k], (a[k] + 1) * 2.5f + 0.5f) << k;
    EXPECT_EQ(seen.shape, (std::vector<int64_t>{4, 8}));
    EXPECT_EQ(seen.dtype.code, kDLFloat);
    EXPECT_EQ(seen.dtype.bits, 32);
    EXPECT_EQ(seen.dtype.lanes, 1);
    EXPECT_TRUE(seen.compact);
    EXPECT_EQ(seen_factor, 2.5);
    EXPECT_EQ(seen_count, 7);
}

TEST(CallPacked, ScalarsOfEveryTypeArriveAsNumbers) {
    // Floats of every width arrive as float64, integers and bool as int64.
    std::vector<std::pair<int, double>> seen;
    ScopedFunc note("test.kernel_scalars", [&](const runtime::Args& args, runtime::RetValue*) {
        seen.clear();
        for (int k = 0; k < args.size(); ++k) {
            int code = args.type_codes()[k];
            seen.emplace_back(code, code == kAnvilFloat ? args[k].as_float()
                                                        : static_cast<double>(args[k].as_int()));
        }
    });
    runtime::PackedFunc f = jit(lower(R"(
prim_func k(A: float32[1]) {
  call_packed("test.kernel_scalars", 1.5f16, cast<bfloat16>(2.5f), 0.25f64, true, 7u64, -3i8)
}
)"));
    runtime::NDArray A = make_empty(f32, {1});
    f(A);
    std::vector<std::pair<int, double>> want{{kAnvilFloat, 1.5},  {kAnvilFloat, 2.5},
                                             {kAnvilFloat, 0.25}, {kAnvilInt, 1},
                                             {kAnvilInt, 7},      {kAnvilInt, -3}};
    EXPECT_EQ(seen, want);
}

TEST(CallPacked, AFlattenedAllocationKeepsItsShapeForTheCallee) {
    std::vector<SeenTensor> seen;
    ScopedFunc fill("test.kernel_fill", [&](const runtime::Args& args, runtime::RetValue*) {
        DLTensor* t = args[0].as_tensor();
        seen.push_back(describe(t));
        auto* data = static_cast<int32_t*>(t->data);
        for (int64_t k = 0; k < t->shape[0] * t->shape[1]; ++k) data[k] = static_cast<int32_t>(k);
    });
    Ref<tir::PrimFunc> f = lower(R"(
prim_func k(O: int32[m, 3], m: int32) {
  allocate T: int32[m, 3] {
    call_packed("test.kernel_fill", T)
    for i in [0, m * 3) { O[i] = T[i] * 10 }
  }
}
)");
    // After flattening T has one dimension; the call still describes it as [m, 3].
    std::string text = tir::print(f);
    EXPECT_NE(text.find("call_packed(\"test.kernel_fill\", T as [m, 3])"), std::string::npos)
        << text;
    runtime::NDArray O = make_empty(DataType::int32(), {5, 3});
    jit(f)(O, 5);
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].shape, (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(seen[0].dtype.code, kDLInt);
    std::vector<int32_t> o = O.to_vector<int32_t>();
    for (int k = 0; k < 15; ++k) EXPECT_EQ(o[k], 10 * k);
}

TEST(CallPacked, RunsFromEveryTaskOfAParallelLoop) {
    std::mutex mu;
    std::vector<int64_t> rows;
    ScopedFunc row("test.kernel_row", [&](const runtime::Args& args, runtime::RetValue*) {
        DLTensor* t = args[0].as_tensor();
        int64_t r = args[1].as_int();
        auto* data = static_cast<float*>(t->data);
        for (int64_t c = 0; c < 16; ++c) data[r * 16 + c] = static_cast<float>(r);
        std::lock_guard<std::mutex> lock(mu);
        rows.push_back(r);
    });
    runtime::PackedFunc f = jit(lower(R"(
prim_func k(B: float32[64, 16]) {
  for r in [0, 64) parallel { call_packed("test.kernel_row", B, r) }
}
)"));
    for (int run = 0; run < 3; ++run) {
        rows.clear();
        runtime::NDArray B = make_empty(f32, {64, 16});
        f(B);
        std::sort(rows.begin(), rows.end());
        ASSERT_EQ(rows.size(), 64u);
        for (int64_t r = 0; r < 64; ++r) EXPECT_EQ(rows[r], r);
        std::vector<float> b = B.to_vector<float>();
        for (int k = 0; k < 64 * 16; ++k) EXPECT_EQ(b[k], static_cast<float>(k / 16));
    }
}

TEST(CallPacked, UnregisteredFunctionIsAClearError) {
    runtime::PackedFunc f = jit(lower(R"(
prim_func needs_missing(A: float32[4]) { call_packed("test.never_registered", A) }
)"));
    runtime::NDArray A = make_empty(f32, {4});
    std::string e = error_of([&] { f(A); });
    EXPECT_NE(e.find("needs_missing: call_packed(\"test.never_registered\"): no function named "
                     "'test.never_registered' is registered"),
              std::string::npos)
        << e;
    // Registered later, the same kernel finds it (a failed lookup is not cached).
    bool called = false;
    ScopedFunc late("test.never_registered",
                    [&](const runtime::Args&, runtime::RetValue*) { called = true; });
    f(A);
    EXPECT_TRUE(called);
}

TEST(CallPacked, CalleeFailureNamesTheKernelAndTheFunction) {
    ScopedFunc fail("test.kernel_fail", [](const runtime::Args& args, runtime::RetValue*) {
        user_error() << "width " << args[0].as_int() << " is 100% wrong";
    });
    std::atomic<int> after{0};
    ScopedFunc mark("test.kernel_mark",
                    [&](const runtime::Args&, runtime::RetValue*) { after.fetch_add(1); });
    runtime::PackedFunc f = jit(lower(R"(
prim_func k(A: float32[4]) {
  allocate W: float32[4096] { call_packed("test.kernel_fail", 3) }
  call_packed("test.kernel_mark")
}
)"));
    runtime::NDArray A = make_empty(f32, {4});
    std::string e = error_of([&] { f(A); });
    EXPECT_NE(e.find("k: call_packed(\"test.kernel_fail\") failed: "), std::string::npos) << e;
    EXPECT_NE(e.find("width 3 is 100% wrong"), std::string::npos) << e;
    EXPECT_EQ(after.load(), 0);  // the kernel stopped at the failure
}

TEST(CallPacked, ExportedLibraryCallsTheHostsRegistry) {
    std::vector<int64_t> seen;
    ScopedFunc note("test.kernel_note", [&](const runtime::Args& args, runtime::RetValue*) {
        seen = describe(args[0].as_tensor()).shape;
    });
    runtime::Module built = codegen::build_llvm({lower(R"(
prim_func noted(A: float32[n, 2]) { call_packed("test.kernel_note", A) }
)")},
                                                host_target());
    namespace fs = std::filesystem;
    fs::path lib =
        fs::temp_directory_path() / ("anvil_call_packed_" + std::to_string(getpid()) + ".so");
    codegen::export_library(built, lib.string());
    runtime::Module loaded = runtime::load_module(lib.string());
    runtime::NDArray A = make_empty(f32, {3, 2});
    loaded.get_function("noted")(A);
    EXPECT_EQ(seen, (std::vector<int64_t>{3, 2}));
    fs::remove(lib);
}

// A kernel keeps the functions it called for the life of its module; unloading the module gives
// them back, so what they own is freed once the registry lets go too (it leaked before).
TEST(CallPacked, UnloadingTheModuleReleasesTheFunctionsItsKernelsCalled) {
    const std::string text = R"(
prim_func ticks(A: float32[4]) { call_packed("test.kernel_tick", A) }
)";
    auto register_tick = [](std::weak_ptr<int>* watch) {
        auto count = std::make_shared<int>(0);
        *watch = count;
        return std::make_unique<ScopedFunc>(
            "test.kernel_tick", [count](const runtime::Args&, runtime::RetValue*) { ++*count; });
    };
    runtime::NDArray A = make_empty(f32, {4});

    // The JIT.
    std::weak_ptr<int> jit_count;
    auto tick = register_tick(&jit_count);
    runtime::PackedFunc f = jit(lower(text));
    f(A);
    f(A);
    EXPECT_EQ(*jit_count.lock(), 2);
    tick.reset();  // out of the registry; the kernel still holds it
    ASSERT_FALSE(jit_count.expired());
    f = runtime::PackedFunc();
    EXPECT_TRUE(jit_count.expired());

    // An exported library, loaded twice: the copies share the library's cache, so the function
    // stays until the last one is unloaded, and a reload looks it up again.
    namespace fs = std::filesystem;
    fs::path lib = fs::temp_directory_path() /
                   ("anvil_call_packed_release_" + std::to_string(getpid()) + ".so");
    codegen::export_library(codegen::build_llvm({lower(text)}, host_target()), lib.string());
    std::weak_ptr<int> lib_count;
    tick = register_tick(&lib_count);
    runtime::Module first = runtime::load_module(lib.string());
    runtime::Module second = runtime::load_module(lib.string());
    first.get_function("ticks")(A);
    second.get_function("ticks")(A);
    EXPECT_EQ(*lib_count.lock(), 2);
    tick.reset();
    first = runtime::Module();
    ASSERT_FALSE(lib_count.expired());
    second.get_function("ticks")(A);
    EXPECT_EQ(*lib_count.lock(), 3);
    second = runtime::Module();
    EXPECT_TRUE(lib_count.expired());

    // Loaded again after the release, the kernel finds the function registered now.
    std::weak_ptr<int> again_count;
    tick = register_tick(&again_count);
    runtime::Module again = runtime::load_module(lib.string());
    again.get_function("ticks")(A);
    EXPECT_EQ(*again_count.lock(), 1);
    again = runtime::Module();
    tick.reset();
    EXPECT_TRUE(again_count.expired());
    fs::remove(lib);
}

}  // namespace
}  // namespace anvil
