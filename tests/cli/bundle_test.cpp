// anvil compile --bundle: one static library with the runtime, kernels, plan and weights, linked
// into examples/bundle_deploy/main.c (a plain C program) dynamically against libc/libstdc++ only
// and fully statically, run without any model file or libanvil_runtime.so; two bundles in one
// program; a bundle for AArch64 run under qemu; and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "aarch64_driver_stubs.h"
#include "cli/cli_run.h"
#include "require_package.h"

namespace {

namespace fs = std::filesystem;
using anvil::cli::testing::Result;
using anvil::cli::testing::run;
using anvil::cli::testing::temp_path;
using anvil::cli::testing::write_temp_module;
using anvil::testing::have_tool;

const std::string kExample = std::string(ANVIL_SOURCE_DIR) + "/examples/bundle_deploy/main.c";
const std::string kInclude = std::string(ANVIL_SOURCE_DIR) + "/include";
const std::string kSanitizerFlags = ANVIL_SANITIZER_LINK_FLAGS;
// This build's C compiler, with its sanitizers when it has them.
const std::string kCompiler = std::string(ANVIL_C_COMPILER) + " " + kSanitizerFlags;

// A file in this process's own directory of bundles: its name is the bundle's name.
std::string bundle_path(const std::string& name) {
    fs::path dir = temp_path("bundles", "");
    fs::create_directories(dir);
    return (dir / (name + ".a")).string();
}

Result shell(const std::string& command) {
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// softmax over [0, 1, ..., 9] * scale: the top five are 9..5.
const char* kSoftmax =
    "def @main(%x: Tensor[(1, 10), float32]) {\n  nn.softmax(multiply(%x, 0.5f))\n}\n";

std::string write_ramp() {
    std::string path = temp_path("ramp", ".raw");
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 10; ++i) {
        float v = static_cast<float>(i);
        out.write(reinterpret_cast<const char*>(&v), sizeof v);
    }
    return path;
}

// The five "index value" lines the example prints, checked against softmax(0.5 * [0..9]).
void expect_top5(const std::string& output) {
    double sum = 0;
    for (int i = 0; i < 10; ++i) sum += std::exp(0.5 * i);
    std::istringstream in(output);
    for (int rank = 0; rank < 5; ++rank) {
        int index = -1;
        double value = 0;
        ASSERT_TRUE(in >> index >> value) << output;
        EXPECT_EQ(index, 9 - rank) << output;
        EXPECT_NEAR(value, std::exp(0.5 * (9 - rank)) / sum, 1e-5) << output;
    }
}

TEST(CliBundle, AProgramRunsTheBundledModelWithNothingLoaded) {
    std::string source = write_temp_module("bundle_softmax", kSoftmax);
    std::string lib = bundle_path("softmax");
    Result compiled = run("compile " + source + " --bundle -o " + lib);
    ASSERT_EQ(compiled.status, 0) << compiled.output;
    EXPECT_NE(compiled.output.find("bundle descriptor: anvil_bundle_softmax"), std::string::npos)
        << compiled.output;
    std::string input = write_ramp();
    std::string flags = " -O2 -I " + kInclude + " -DANVIL_BUNDLE=anvil_bundle_softmax " + kExample +
                        " " + lib + " -lstdc++ -lm -lz -lpthread";
    // (In a sanitizer build the program links the sanitizers' runtimes, which are shared only.)
    const bool sanitized = !kSanitizerFlags.empty();
    for (bool fully_static : {false, true}) {
        if (fully_static && sanitized) continue;
        std::string exe = temp_path(fully_static ? "classify_static" : "classify", "");
        Result linked = shell(kCompiler + (fully_static ? " -static" : "") + flags + " -o " + exe);
        ASSERT_EQ(linked.status, 0) << linked.output;
        Result libs = shell("ldd " + exe);
        EXPECT_EQ(libs.output.find("anvil"), std::string::npos) << libs.output;
        if (fully_static)
            EXPECT_NE(libs.output.find("not a dynamic executable"), std::string::npos);
        // From another directory, with no library path: nothing is looked up at run time.
        Result r = shell("cd / && env -u LD_LIBRARY_PATH " + exe + " " + input);
        EXPECT_EQ(r.status, 0) << r.output;
        expect_top5(r.output);
        fs::remove(exe);
    }
    fs::remove(lib);
    fs::remove(source);
}

// Kernels and blobs are local to each bundle's object: two models link into one program.
TEST(CliBundle, TwoBundlesLinkIntoOneProgram) {
    std::string a_src = write_temp_module("bundle_a", kSoftmax);
    std::string b_src = write_temp_module(
        "bundle_b", "def @main(%x: Tensor[(1, 10), float32]) {\n  nn.softmax(negative(%x))\n}\n");
    std::string a = bundle_path("first"), b = bundle_path("second");
    ASSERT_EQ(run("compile " + a_src + " --bundle -o " + a).status, 0);
    ASSERT_EQ(run("compile " + b_src + " --bundle -o " + b).status, 0);
    std::string main_c = temp_path("two_models", ".c");
    std::ofstream(main_c) << R"(#include <anvil/runtime.h>
#include <stdio.h>
extern const AnvilBundle anvil_bundle_first, anvil_bundle_second;
static int top(const AnvilBundle* bundle) {
    AnvilGraphExecutorHandle ex;
    if (anvil_graph_executor_create_from_bundle(bundle, &ex)) return -1;
    int64_t shape[2] = {1, 10};
    DLTensor* x;
    anvil_tensor_alloc(shape, 2, (DLDataType){kDLFloat, 32, 1}, (DLDevice){kDLCPU, 0}, &x);
    for (int i = 0; i < 10; ++i) ((float*)x->data)[i] = (float)i;
    DLTensor* y;
    if (anvil_graph_executor_set_input_index(ex, 0, x) || anvil_graph_executor_run(ex) ||
        anvil_graph_executor_get_output(ex, 0, &y)) return -1;
    int best = 0;
    for (int i = 1; i < 10; ++i) if (((float*)y->data)[i] > ((float*)y->data)[best]) best = i;
    anvil_tensor_free(x);
    anvil_graph_executor_free(ex);
    return best;
}
int main(void) { printf("%d %d\n", top(&anvil_bundle_first), top(&anvil_bundle_second)); return 0; }
)";
    std::string exe = temp_path("two_models", "");
    Result linked = shell(kCompiler + " -O2 -I " + kInclude + " " + main_c + " " + a + " " + b +
                          " -lstdc++ -lm -lz -lpthread -o " + exe);
    ASSERT_EQ(linked.status, 0) << linked.output;
    Result r = shell(exe);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output, "9 0\n");
    for (const std::string& f : {a_src, b_src, a, b, main_c, exe}) fs::remove(f);
}

TEST(CliBundle, AnArm64BundleRunsUnderQemu) {
    ANVIL_REQUIRE_PACKAGE(have_tool("aarch64-linux-gnu-gcc") && have_tool("qemu-aarch64") &&
                              fs::exists(ANVIL_AARCH64_RUNTIME_STATIC),
                          "aarch64-linux-gnu-gcc, qemu-aarch64 or the arm64 static runtime "
                          "(cross-built from cmake/aarch64-linux-gnu.cmake)",
                          "apt-get install g++-aarch64-linux-gnu qemu-user zlib1g:arm64");
    std::string source = write_temp_module("bundle_arm", kSoftmax);
    std::string lib = bundle_path("arm");
    Result compiled = run("compile " + source +
                          " --target \"llvm -mtriple=aarch64-linux-gnu -mattr=+neon\" --bundle "
                          "--bundle-runtime " +
                          std::string(ANVIL_AARCH64_RUNTIME_STATIC) + " -o " + lib);
    ASSERT_EQ(compiled.status, 0) << compiled.output;
    std::string exe = temp_path("classify_arm", "");
    Result linked = shell("aarch64-linux-gnu-g++ -O2 -I " + kInclude +
                          " -DANVIL_BUNDLE=anvil_bundle_arm -x c " + kExample + " -x none " + lib +
                          " /usr/lib/aarch64-linux-gnu/libz.so.1 -lm -lpthread -o " + exe);
    ASSERT_EQ(linked.status, 0) << linked.output;
    Result r = shell("qemu-aarch64 " + exe + " " + write_ramp());
    EXPECT_EQ(r.status, 0) << r.output;
    expect_top5(r.output);
    fs::remove(exe);
    fs::remove(lib);
}

TEST(CliBundle, WhatCannotBeBundledIsRefused) {
    std::string dynamic = write_temp_module(
        "bundle_dynamic", "def @main(%x: Tensor[(n, 10), float32]) {\n  nn.softmax(%x)\n}\n");
    Result vm = run("compile " + dynamic + " --bundle -o " + temp_path("dyn", ".a"));
    EXPECT_EQ(vm.status, 1) << vm.output;
    EXPECT_NE(vm.output.find("--bundle: the model needs the VM"), std::string::npos) << vm.output;
    std::string source = write_temp_module("bundle_refused", kSoftmax);
    Result foreign =
        run("compile " + source + " --target \"llvm -mtriple=aarch64-linux-gnu\" --bundle -o " +
            temp_path("foreign", ".a"));
    EXPECT_EQ(foreign.status, 1) << foreign.output;
    EXPECT_NE(foreign.output.find("needs the runtime built for that target: give --bundle-runtime"),
              std::string::npos)
        << foreign.output;
    Result missing = run("compile " + source + " --bundle --bundle-runtime /nonexistent.a -o " +
                         temp_path("missing", ".a"));
    EXPECT_EQ(missing.status, 1) << missing.output;
    EXPECT_NE(missing.output.find("--bundle-runtime: no file '/nonexistent.a'"), std::string::npos)
        << missing.output;
}

}  // namespace
