// Building candidates in a child process (tune/build_in_child.h): printed kernels compile into a
// library that runs; a compiler error, a crash or a build past its time limit cost one
// candidate, come back as a BuildResult and leave no library behind.
#include "tune/build_in_child.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "runtime/npz.h"
#include "scoped_env.h"
#include "support/error.h"
#include "tir/printer.h"
#include "tune/measure.h"
#include "unit/codegen/codegen_test_util.h"
#include "unit/tune/tune_test_util.h"

namespace anvil::tune {
namespace {

using runtime::NDArray;
using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

constexpr int64_t kN = 1000;
const DLDataType kF32{kDLFloat, 32, 1};

std::string vadd_text(const std::string& name) {
    const DataType f32 = DataType::float32();
    return tir::print(codegen_test::elementwise2(name, f32, f32, f32, kN, 1,
                                                 [](PrimExpr a, PrimExpr b) { return a + b; }));
}

std::string host() {
    return codegen_test::host_target().str();
}

// A stand-in for anvil-build: a shell script with the given body, made executable.
std::string fake_worker(const TempDir& dir, const std::string& body) {
    std::string path = dir / "fake-anvil-build";
    write_file(path, "#!/bin/sh\n" + body + "\n");
    chmod(path.c_str(), 0755);
    return path;
}

TEST(BuildInChild, PrintedKernelsCompileIntoALibraryThatRuns) {
    TempDir dir;
    const std::string library = dir / "vadd.so";
    BuildResult built =
        build_in_child({vadd_text("vadd"), vadd_text("vadd2")}, host(), library, 60);
    ASSERT_TRUE(built.ok()) << built.message;
    EXPECT_GT(built.elapsed_s, 0);
    ASSERT_TRUE(fs::exists(library));

    // Both kernels are in it, and compute what they say.
    for (const char* function : {"vadd", "vadd2"}) {
        MeasureRequest request;
        request.library = library;
        request.function = function;
        request.args = {
            {"A", {kN}, kF32, false}, {"B", {kN}, kF32, false}, {"C", {kN}, kF32, true}};
        request.inputs_npz = dir / "inputs.npz";
        request.outputs_npz = dir / "outputs.npz";
        auto inputs = random_inputs(request.args, 3);
        runtime::write_npz(request.inputs_npz, inputs);
        MeasureResult measured = measure_in_child(request, {});
        ASSERT_EQ(measured.error, MeasureError::none) << measured.message;
        auto outputs = runtime::read_npz(request.outputs_npz);
        ASSERT_EQ(outputs.size(), 1u);
        const float* a = inputs[0].second.data<float>();
        const float* b = inputs[1].second.data<float>();
        const float* c = outputs[0].second.data<float>();
        for (int64_t i = 0; i < kN; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << function << " at " << i;
    }
}

TEST(BuildInChild, ACompilerErrorIsTheCandidatesCompileError) {
    TempDir dir;
    const std::string library = dir / "dup.so";
    // Two kernels of one name: the code generator refuses the module.
    BuildResult built = build_in_child({vadd_text("same"), vadd_text("same")}, host(), library, 60);
    EXPECT_EQ(built.error, MeasureError::compile);
    EXPECT_NE(built.message.find("same"), std::string::npos) << built.message;
    EXPECT_FALSE(fs::exists(library));
}

TEST(BuildInChild, ABuildPastItsTimeLimitIsKilled) {
    TempDir dir;
    const std::string library = dir / "slow.so";
    // It writes part of a library, then compiles "forever".
    anvil::testing::ScopedEnv env("ANVIL_BUILD_WORKER",
                                  fake_worker(dir, "echo partial > \"$2\"; exec sleep 60").c_str());
    auto start = std::chrono::steady_clock::now();
    BuildResult built = build_in_child({vadd_text("vadd")}, host(), library, 0.5);
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(built.error, MeasureError::build_timeout);
    EXPECT_NE(built.message.find("longer than 0.5 s"), std::string::npos) << built.message;
    EXPECT_LT(waited, 10);
    EXPECT_GE(built.elapsed_s, 0.5);
    EXPECT_FALSE(fs::exists(library)) << "the killed build's partial library is left";
}

TEST(BuildInChild, ATimeoutAlsoKillsWhatTheBuildStarted) {
    // anvil-build links through `cc`: a linker still running at the timeout must die with it,
    // not write its output later.
    TempDir dir;
    const std::string marker = dir / "written-after-the-timeout";
    anvil::testing::ScopedEnv env(
        "ANVIL_BUILD_WORKER",
        fake_worker(dir, "(sleep 1; touch '" + marker + "') & exec sleep 60").c_str());
    BuildResult built = build_in_child({vadd_text("vadd")}, host(), dir / "late.so", 0.3);
    EXPECT_EQ(built.error, MeasureError::build_timeout);
    EXPECT_NE(built.message.find("was killed"), std::string::npos) << built.message;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_FALSE(fs::exists(marker)) << "a process the build started outlived it";
    EXPECT_FALSE(fs::exists(dir / "late.so"));
}

TEST(BuildInChild, ACrashingCompilerCostsOneCandidate) {
    TempDir dir;
    const std::string library = dir / "crash.so";
    anvil::testing::ScopedEnv env(
        "ANVIL_BUILD_WORKER",
        fake_worker(dir, "echo 'LLVM ERROR: out of luck' >&2; kill -SEGV $$").c_str());
    BuildResult built = build_in_child({vadd_text("vadd")}, host(), library, 30);
    EXPECT_EQ(built.error, MeasureError::compile);
    EXPECT_NE(built.message.find("SIGSEGV"), std::string::npos) << built.message;
    EXPECT_NE(built.message.find("out of luck"), std::string::npos) << built.message;
}

TEST(BuildInChild, AWorkerThatWritesNothingIsAnError) {
    TempDir dir;
    anvil::testing::ScopedEnv env("ANVIL_BUILD_WORKER", fake_worker(dir, "exit 0").c_str());
    BuildResult built = build_in_child({vadd_text("vadd")}, host(), dir / "none.so", 30);
    EXPECT_EQ(built.error, MeasureError::compile);
    EXPECT_NE(built.message.find("without writing the library"), std::string::npos)
        << built.message;
}

TEST(BuildInChild, BadOptionsAndAMissingWorkerAreUserErrors) {
    TempDir dir;
    EXPECT_THROW(build_in_child({vadd_text("vadd")}, host(), dir / "a.so", 0), UserError);
    EXPECT_EQ(fs::path(build_worker_path()).filename(), "anvil-build");
    anvil::testing::ScopedEnv env("ANVIL_BUILD_WORKER", "/nonexistent/anvil-build");
    try {
        build_in_child({vadd_text("vadd")}, host(), dir / "a.so", 10);
        FAIL() << "no UserError";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("ANVIL_BUILD_WORKER"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace anvil::tune
