// Cross-compilation from the command line (tvmc's --cross-compiler / --cross-compiler-options): a
// model compiled for AArch64 is linked by the cross compiler with the options given, and its
// kernel runs under qemu-aarch64 with the correct result.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cli/cli_run.h"
#include "require_package.h"

namespace {

namespace fs = std::filesystem;
using anvil::cli::testing::Result;
using anvil::cli::testing::run;
using anvil::cli::testing::temp_path;
using anvil::cli::testing::write_temp_module;

bool have_tool(const std::string& name) {
    return std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0;
}

Result shell(const std::string& command) {
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    std::string out;
    char buf[4096];
    while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    int status = pclose(p);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Loads the model library, takes its first function (the one kernel: exp) from its function
// list, and runs it on 20 values. The runtime functions the kernel calls are serial stand-ins,
// exported to the library by -rdynamic.
const char* kDriver = R"(
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef union { int64_t v_int64; double v_float64; void* v_handle; const char* v_str; } AnvilValue;
typedef struct { int32_t device_type, device_id; } DLDevice;
typedef struct { uint8_t code, bits; uint16_t lanes; } DLDataType;
typedef struct {
    void* data; DLDevice device; int32_t ndim; DLDataType dtype;
    int64_t* shape; int64_t* strides; uint64_t byte_offset;
} DLTensor;
typedef int (*Kernel)(const AnvilValue*, const int*, int, AnvilValue*, int*, void*);
static char last_error[1024];
void anvil_set_last_error(const char* m) { snprintf(last_error, sizeof last_error, "%s", m); }
typedef int (*Lambda)(int, int, void*);
int anvil_parallel_launch(Lambda f, void* closure, int n) {
    if (n <= 0) n = 2;
    for (int t = 0; t < n; ++t) { int r = f(t, n, closure); if (r != 0) return r; }
    return 0;
}
int anvil_num_threads(void) { return 1; }
void* anvil_workspace_alloc(int64_t n) { return aligned_alloc(64, (size_t)((n + 63) / 64 * 64)); }
void anvil_workspace_free(void* p) { free(p); }
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
    std::ofstream(driver) << kDriver;
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
