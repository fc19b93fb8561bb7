// Cross-compilation from the command line (tvmc's --cross-compiler / --cross-compiler-options): a
// model compiled for AArch64 is linked by the cross compiler with the options given, and its
// kernel runs under qemu-aarch64 with the correct result.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

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

Result shell(const std::string& command) {
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Loads the model library, takes its first function (the one kernel: exp) from its function
// list, and runs it on 20 values.
// After kAArch64DriverStubs; -rdynamic exports the stand-ins to the model library.
const char* kDriver = R"(
#include <dlfcn.h>
int main(int argc, char** argv) {
    void* lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) { printf("dlopen: %s\n", dlerror()); return 1; }
    const char* names = dlsym(lib, "__anvil_function_names");
    Kernel k = names ? (Kernel)dlsym(lib, names) : 0;
    if (!k) { printf("no kernel\n"); return 1; }
    enum { N = 20 };
    float* x = aligned_alloc(64, 128); float* y = aligned_alloc(64, 128);
    for (int i = 0; i < N; ++i) { x[i] = 0.25f * (float)(i - 10); y[i] = 0; }
    int64_t n = N;
    DLTensor tx = {x, {1, 0}, 1, {2, 32, 1}, &n, 0, 0}, ty = {y, {1, 0}, 1, {2, 32, 1}, &n, 0, 0};
    AnvilValue args[2] = {{.v_handle = &tx}, {.v_handle = &ty}};
    int codes[2] = {7, 7};
    if (k(args, codes, 2, 0, 0, 0) != 0) { printf("failed: %s\n", last_error); return 1; }
    int bad = 0;
    for (int i = 0; i < N; ++i) bad += fabsf(y[i] - expf(x[i])) > 1e-5f * expf(x[i]);
    printf("%s %s\n", names, bad ? "result wrong" : "result ok");
    return bad;
}
)";

TEST(CrossCompile, AArch64ModelLinkedByTheCrossCompilerRunsUnderQemu) {
    ANVIL_REQUIRE_PACKAGE(have_tool("aarch64-linux-gnu-gcc") && have_tool("qemu-aarch64"),
                          "aarch64-linux-gnu-gcc or qemu-aarch64",
                          "apt-get install g++-aarch64-linux-gnu qemu-user");
    std::string model =
        write_temp_module("cross_exp", "def @main(%x: Tensor[(20), float32]) {\n  exp(%x)\n}\n");
    std::string so = temp_path("cross_exp", ".so");
    Result c = run("compile " + model + " -o " + so +
                   " --target 'llvm -mtriple=aarch64-linux-gnu -mattr=+neon'"
                   " --cross-compiler aarch64-linux-gnu-gcc"
                   " --cross-compiler-options '-Wl,-soname,anvil_cross_exp.so'");
    ASSERT_EQ(c.status, 0) << c.output;
    std::ifstream in(so, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 20u);
    EXPECT_EQ(static_cast<unsigned char>(bytes[18]), 183) << "e_machine is not EM_AARCH64";
    // The options reached the linker.
    EXPECT_NE(bytes.find("anvil_cross_exp.so"), std::string::npos);

    std::string driver = temp_path("cross_driver", ".c"), exe = temp_path("cross_driver", "");
    std::ofstream(driver) << anvil::testing::kAArch64DriverStubs << kDriver;
    Result link =
        shell("aarch64-linux-gnu-gcc -O1 -rdynamic -o " + exe + " " + driver + " -ldl -lm");
    ASSERT_EQ(link.status, 0) << link.output;
    Result r = shell("qemu-aarch64 -L /usr/aarch64-linux-gnu " + exe + " " + so);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("result ok"), std::string::npos) << r.output;

    // A cross compiler that fails is named with its options.
    Result bad = run("compile " + model + " -o " + so +
                     " --target 'llvm -mtriple=aarch64-linux-gnu' --cross-compiler "
                     "aarch64-linux-gnu-gcc --cross-compiler-options '-Wl,--no-such-flag'");
    EXPECT_EQ(bad.status, 1) << bad.output;
    EXPECT_NE(bad.output.find("with 'aarch64-linux-gnu-gcc -Wl,--no-such-flag' failed"),
              std::string::npos)
        << bad.output;
    fs::remove(so);
    fs::remove(driver);
    fs::remove(exe);
}

}  // namespace
