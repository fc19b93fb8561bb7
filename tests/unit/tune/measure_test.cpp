// Measuring candidates in a child process (tune/measure.h): a correct kernel is timed and its
// outputs written; a crash, a hang, a failing kernel or a missing library cost one trial and
// leave the session running; outputs are checked against a reference.
#include "tune/measure.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "runtime/npz.h"
#include "scoped_env.h"
#include "support/error.h"
#include "unit/codegen/codegen_test_util.h"
#include "unit/tune/tune_test_util.h"

namespace anvil::tune {
namespace {

using runtime::NDArray;
using testing::TempDir;
using testing::write_file;
using Arrays = std::vector<std::pair<std::string, NDArray>>;

const DLDataType kF32{kDLFloat, 32, 1};
constexpr int64_t kN = 4096;

// vadd(A[kN], B[kN], C[kN]): C = A + B, compiled and exported as a shared library.
std::string build_vadd(const TempDir& dir) {
    const DataType f32 = DataType::float32();
    auto f = codegen_test::elementwise2("vadd", f32, f32, f32, kN, 1,
                                        [](PrimExpr a, PrimExpr b) { return a + b; });
    runtime::Module m = codegen::build_llvm({f}, codegen_test::host_target());
    std::string path = dir / "vadd.so";
    codegen::export_library(m, path);
    return path;
}

// A library in the shape load_module accepts, whose kernels misbehave: `segfault` writes through
// a null pointer, `spin` never returns, `fail` reports an error the way generated kernels do.
std::string build_bad_kernels(const TempDir& dir) {
    std::string source = dir / "bad.c";
    write_file(source, R"(
const char __anvil_function_names[] = "segfault\0spin\0fail\0";
void anvil_set_last_error(const char* message);
int segfault(const void* a, const int* c, int n, void* r, int* rc) {
    *(volatile int*)0 = 1;
    return 0;
}
int spin(const void* a, const int* c, int n, void* r, int* rc) {
    for (;;) __asm__ volatile("");
}
int fail(const void* a, const int* c, int n, void* r, int* rc) {
    anvil_set_last_error("fail: this kernel always refuses");
    return -1;
}
)");
    std::string lib = dir / "bad.so";
    std::string cmd = "cc -shared -fPIC -O1 -o '" + lib + "' '" + source + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return lib;
}

std::vector<KernelArg> vadd_args() {
    return {{"A", {kN}, kF32, false}, {"B", {kN}, kF32, false}, {"C", {kN}, kF32, true}};
}

// A request for vadd with random inputs written to `dir`.
MeasureRequest vadd_request(const TempDir& dir, Arrays* inputs = nullptr) {
    MeasureRequest r;
    r.library = build_vadd(dir);
    r.function = "vadd";
    r.args = vadd_args();
    r.inputs_npz = dir / "inputs.npz";
    r.outputs_npz = dir / "outputs.npz";
    Arrays in = random_inputs(r.args, 7);
    runtime::write_npz(r.inputs_npz, in);
    if (inputs) *inputs = in;
    return r;
}

// A request for one of the bad kernels (no arguments).
MeasureRequest bad_request(const TempDir& dir, const std::string& function) {
    MeasureRequest r;
    r.library = build_bad_kernels(dir);
    r.function = function;
    return r;
}

NDArray reference_sum(const Arrays& inputs) {
    NDArray c = NDArray::empty({kN}, kF32);
    const float* a = inputs[0].second.data<float>();
    const float* b = inputs[1].second.data<float>();
    for (int64_t i = 0; i < kN; ++i) c.data<float>()[i] = a[i] + b[i];
    return c;
}

NDArray floats(const std::vector<float>& values, std::vector<int64_t> shape) {
    NDArray a = NDArray::empty(shape, kF32);
    a.copy_from(values);
    return a;
}

TEST(Measure, TimesACorrectKernelAndWritesItsOutputs) {
    TempDir dir;
    Arrays inputs;
    MeasureRequest request = vadd_request(dir, &inputs);
    MeasureOption option;
    option.number = 3;
    option.repeat = 4;
    MeasureResult result = measure_in_child(request, option);
    ASSERT_EQ(result.error, MeasureError::none) << result.message;
    ASSERT_EQ(result.costs.size(), 4u);
    for (double c : result.costs) {
        EXPECT_GT(c, 0);
        EXPECT_LT(c, 0.1);  // 4096 additions
    }
    EXPECT_GT(result.elapsed_s, 0);

    Arrays outputs = runtime::read_npz(request.outputs_npz);
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0].first, "C");
    std::string why;
    EXPECT_TRUE(outputs_match({{"C", reference_sum(inputs)}}, outputs, 0, 0, &why)) << why;
}

TEST(Measure, MinRepeatMsGrowsTheNumberOfRuns) {
    TempDir dir;
    MeasureRequest request = vadd_request(dir);
    MeasureOption option;
    option.repeat = 3;
    option.min_repeat_ms = 30;
    MeasureResult result = measure_in_child(request, option);
    ASSERT_EQ(result.error, MeasureError::none) << result.message;
    ASSERT_EQ(result.costs.size(), 3u);
    // One run takes microseconds: only repeated runs make each measurement last 30 ms.
    EXPECT_GE(result.elapsed_s, 3 * 0.030);
    for (double c : result.costs) EXPECT_LT(c, 0.005);
}

TEST(Measure, FlushesTheCacheAndSetsThreads) {
    TempDir dir;
    MeasureRequest request = vadd_request(dir);
    MeasureOption option;
    option.repeat = 2;
    option.flush_cache = true;
    option.threads = 1;
    MeasureResult result = measure_in_child(request, option);
    ASSERT_EQ(result.error, MeasureError::none) << result.message;
    EXPECT_EQ(result.costs.size(), 2u);
}

TEST(Measure, ACrashCostsOneTrial) {
    TempDir dir;
    MeasureResult crash = measure_in_child(bad_request(dir, "segfault"), {});
    EXPECT_EQ(crash.error, MeasureError::runtime);
    // The signal's name; under AddressSanitizer, whose handler reports the fault and exits 1,
    // its report (which names the faulting function).
    EXPECT_TRUE(crash.message.find("SIGSEGV") != std::string::npos ||
                crash.message.find("in segfault") != std::string::npos)
        << crash.message;
    EXPECT_TRUE(crash.costs.empty());
    // The session goes on.
    MeasureResult next = measure_in_child(vadd_request(dir), {});
    EXPECT_EQ(next.error, MeasureError::none) << next.message;
}

TEST(Measure, AHangIsKilledAtTheTimeout) {
    TempDir dir;
    MeasureOption option;
    option.timeout_s = 0.5;
    MeasureResult hang = measure_in_child(bad_request(dir, "spin"), option);
    EXPECT_EQ(hang.error, MeasureError::timeout);
    EXPECT_NE(hang.message.find("longer than 0.5 s"), std::string::npos) << hang.message;
    EXPECT_GE(hang.elapsed_s, 0.5);
    EXPECT_LT(hang.elapsed_s, 1.5);
}

TEST(Measure, AKernelErrorIsARuntimeError) {
    TempDir dir;
    MeasureResult failed = measure_in_child(bad_request(dir, "fail"), {});
    EXPECT_EQ(failed.error, MeasureError::runtime);
    EXPECT_NE(failed.message.find("this kernel always refuses"), std::string::npos)
        << failed.message;
}

TEST(Measure, ArgumentsTheKernelRejectsAreARuntimeError) {
    TempDir dir;
    MeasureRequest request = vadd_request(dir);
    // The kernel checks its arguments against the shapes it was compiled for.
    request.args = {{"A", {8}, kF32, false}, {"B", {8}, kF32, false}, {"C", {8}, kF32, true}};
    runtime::write_npz(request.inputs_npz, random_inputs(request.args, 1));
    MeasureResult r = measure_in_child(request, {});
    EXPECT_EQ(r.error, MeasureError::runtime);
    EXPECT_NE(r.message.find("has shape [8]"), std::string::npos) << r.message;

    // An input file that does not fit the request.
    request.args = vadd_args();
    MeasureResult wrong_file = measure_in_child(request, {});
    EXPECT_EQ(wrong_file.error, MeasureError::runtime);
    EXPECT_NE(wrong_file.message.find("input 'A'"), std::string::npos) << wrong_file.message;
}

TEST(Measure, AMissingLibraryOrFunctionIsARuntimeError) {
    TempDir dir;
    MeasureRequest request = vadd_request(dir);
    request.function = "vsub";
    MeasureResult no_function = measure_in_child(request, {});
    EXPECT_EQ(no_function.error, MeasureError::runtime);
    EXPECT_NE(no_function.message.find("no function 'vsub'"), std::string::npos)
        << no_function.message;

    request.library = dir / "missing.so";
    MeasureResult no_library = measure_in_child(request, {});
    EXPECT_EQ(no_library.error, MeasureError::runtime);
    EXPECT_NE(no_library.message.find("missing.so"), std::string::npos) << no_library.message;
}

TEST(Measure, WorkerPathAndMissingWorker) {
    std::string found = measure_worker_path();
    EXPECT_EQ(std::filesystem::path(found).filename(), "anvil-measure");
    EXPECT_TRUE(std::filesystem::exists(found));
    {
        anvil::testing::ScopedEnv env("ANVIL_MEASURE_WORKER", found.c_str());
        EXPECT_EQ(measure_worker_path(), found);
    }
    anvil::testing::ScopedEnv env("ANVIL_MEASURE_WORKER", "/nonexistent/anvil-measure");
    try {
        measure_worker_path();
        FAIL() << "no UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/anvil-measure"), std::string::npos)
            << e.what();
    }
    MeasureRequest request;
    request.library = "x.so";
    request.function = "f";
    EXPECT_THROW(measure_in_child(request, {}), UserError);
}

TEST(Measure, BadOptionsAreUserErrors) {
    MeasureRequest request;
    MeasureOption option;
    option.repeat = 0;
    EXPECT_THROW(measure_in_child(request, option), UserError);
    option = {};
    option.timeout_s = 0;
    EXPECT_THROW(measure_in_child(request, option), UserError);
}

// The cost of one trial beyond the kernel: starting the worker, loading the runtime and the
// candidate, reading the inputs and writing the outputs. The tuner's budget is 0.5 s per trial,
// compilation included.
TEST(Measure, OverheadPerTrialIsSmall) {
    TempDir dir;
    MeasureRequest request = vadd_request(dir);
    MeasureOption option;
    option.repeat = 1;
    const int trials = 10;
    double total = 0;
    for (int i = 0; i < trials; ++i) {
        MeasureResult r = measure_in_child(request, option);
        ASSERT_EQ(r.error, MeasureError::none) << r.message;
        total += r.elapsed_s;
    }
    double mean = total / trials;
    std::cout << "mean measure_in_child time of a tiny kernel: " << mean * 1000 << " ms\n";
    EXPECT_LT(mean, 0.1);
}

TEST(RandomInputs, DeterministicInRangeAndOnlyInputs) {
    std::vector<KernelArg> args = {{"x", {3, 5}, kF32, false},
                                   {"idx", {4}, DLDataType{kDLInt, 64, 1}, false},
                                   {"h", {6}, DLDataType{kDLFloat, 16, 1}, false},
                                   {"d", {6}, DLDataType{kDLFloat, 64, 1}, false},
                                   {"y", {3, 5}, kF32, true}};
    Arrays a = random_inputs(args, 42), b = random_inputs(args, 42), c = random_inputs(args, 43);
    ASSERT_EQ(a.size(), 4u);
    EXPECT_EQ(a[0].first, "x");
    EXPECT_EQ(a[3].first, "d");
    std::string why;
    EXPECT_TRUE(outputs_match(a, b, 0, 0, &why)) << why;
    EXPECT_FALSE(outputs_match(a, c, 0, 0, &why));
    std::vector<float> x = a[0].second.to_vector<float>();
    bool all_same = true;
    for (float v : x) {
        EXPECT_GE(v, -1.0f);
        EXPECT_LT(v, 1.0f);
        all_same = all_same && v == x[0];
    }
    EXPECT_FALSE(all_same);
    for (int64_t v : a[1].second.to_vector<int64_t>()) EXPECT_EQ(v, 0);
    for (double v : a[3].second.to_vector<double>()) {
        EXPECT_GE(v, -1.0);
        EXPECT_LT(v, 1.0);
    }
    // float16 values in range (the bits of |v| <= 1.0 are at most 0x3c00).
    std::vector<uint16_t> h(6);
    a[2].second.copy_to(h.data(), 12);
    bool any_nonzero = false;
    for (uint16_t bits : h) {
        EXPECT_LE(bits & 0x7fff, 0x3c00);
        any_nonzero = any_nonzero || bits != 0;
    }
    EXPECT_TRUE(any_nonzero);
}

TEST(OutputsMatch, CatchesWrongValuesShapesAndNames) {
    Arrays ref = {{"y", floats({1, 2, 3, 4, 5, 6}, {2, 3})}};
    std::string why;
    EXPECT_TRUE(outputs_match(ref, {{"y", floats({1, 2, 3, 4, 5, 6}, {2, 3})}}, 0, 0, &why));
    EXPECT_TRUE(why.empty());

    EXPECT_FALSE(
        outputs_match(ref, {{"y", floats({1, 2, 3, 4, 5.5f, 6}, {2, 3})}}, 1e-5, 1e-5, &why));
    EXPECT_NE(why.find("output 'y' differs at element 4 (index [1, 1]): 5.5, the reference 5"),
              std::string::npos)
        << why;
    // Within tolerance.
    EXPECT_TRUE(
        outputs_match(ref, {{"y", floats({1, 2, 3, 4, 5.00001f, 6}, {2, 3})}}, 1e-4, 0, &why))
        << why;

    EXPECT_FALSE(outputs_match(ref, {{"y", floats({1, 2, 3, 4, 5, 6}, {3, 2})}}, 0, 0, &why));
    EXPECT_NE(why.find("float32[3, 2], the reference float32[2, 3]"), std::string::npos) << why;
    EXPECT_FALSE(outputs_match(ref, {{"z", floats({1, 2, 3, 4, 5, 6}, {2, 3})}}, 0, 0, &why));
    EXPECT_NE(why.find("'z' is not in the reference"), std::string::npos) << why;
    EXPECT_FALSE(outputs_match(ref, {}, 0, 0, &why));
    EXPECT_NE(why.find("'y' is missing"), std::string::npos) << why;

    // NaN equals NaN, but not a number.
    const float nan = std::nanf("");
    Arrays with_nan = {{"y", floats({nan, 1}, {2})}};
    EXPECT_TRUE(outputs_match(with_nan, {{"y", floats({nan, 1}, {2})}}, 0, 0, &why)) << why;
    EXPECT_FALSE(outputs_match(with_nan, {{"y", floats({0, 1}, {2})}}, 1, 1, &why));

    // Integers compare exactly, whatever the tolerance.
    NDArray i1 = NDArray::empty({3}, DLDataType{kDLInt, 32, 1});
    NDArray i2 = NDArray::empty({3}, DLDataType{kDLInt, 32, 1});
    i1.copy_from(std::vector<int32_t>{1, 2, 3});
    i2.copy_from(std::vector<int32_t>{1, 2, 4});
    EXPECT_FALSE(outputs_match({{"i", i1}}, {{"i", i2}}, 1, 1, &why));
    EXPECT_NE(why.find("element 2 (index [2]): 4, the reference 3"), std::string::npos) << why;
    // A dtype mismatch.
    EXPECT_FALSE(outputs_match({{"i", i1}}, {{"i", floats({1, 2, 3}, {3})}}, 1, 1, &why));
    EXPECT_NE(why.find("float32[3], the reference int32[3]"), std::string::npos) << why;
}

}  // namespace
}  // namespace anvil::tune
