// Outputs other than the JIT: shared libraries loaded by the runtime, sources, and AArch64
// objects (run under qemu when a cross toolchain is installed).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "aarch64_driver_stubs.h"
#include "codegen_test_util.h"
#include "ir/intrinsics.h"
#include "require_package.h"
#include "runtime/module.h"

namespace anvil {
namespace {

using testing::have_tool;

namespace fs = std::filesystem;
using namespace codegen_test;

const DataType f32 = DataType::float32();

fs::path make_temp_dir(const std::string& tag) {
    static int counter = 0;
    fs::path dir =
        fs::temp_directory_path() /
        ("anvil_codegen_" + tag + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    fs::create_directories(dir);
    return dir;
}

// vadd_exp(A[n], B[n], C[n]): C = A + exp(B), four lanes at a time in a parallel loop, with a
// local scratch buffer so the kernel needs every runtime function but the pool's size.
Ref<tir::PrimFunc> vadd_exp() {
    auto n = make_var("n");
    auto A = make_buffer("A", f32, {n}), B = make_buffer("B", f32, {n}),
         C = make_buffer("C", f32, {n});
    auto tmp = make_buffer("tmp", f32, {i32(4)}, "local");
    auto i = make_var("i");
    PrimExpr r = make_ramp(i * 4, i32(1), 4), l = make_ramp(i32(0), i32(1), 4);
    PrimExpr e = make_call(DataType::float_(32, 4), intrin::kExp, {make_load(B, {r})});
    tir::Stmt body = tir::make_for(
        i, i32(0), floordiv(n, i32(4)), tir::ForKind::Parallel,
        tir::make_allocate(
            tmp,
            tir::make_seq({tir::make_store(tmp, e, {l}),
                           tir::make_store(C, make_load(A, {r}) + make_load(tmp, {l}), {r})})));
    return tir::make_prim_func("vadd_exp", {A, B, C}, body);
}

Ref<tir::PrimFunc> scale() {
    auto A = make_buffer("A", f32, {i32(8)});
    auto s = make_var("s", f32);
    auto i = make_var("i");
    return tir::make_prim_func("scale", {A},
                               tir::make_for(i, i32(0), i32(8), tir::ForKind::Serial,
                                             tir::make_store(A, make_load(A, {i}) * s, {i})),
                               {s});
}

TEST(Export, SharedLibraryLoadsAndRuns) {
    runtime::Module built = codegen::build_llvm({vadd_exp(), scale()}, host_target());
    fs::path dir = make_temp_dir("so");
    fs::path lib = dir / "kernels.so";
    codegen::export_library(built, lib.string());
    ASSERT_TRUE(fs::exists(lib));
    runtime::Module loaded = runtime::load_module(lib.string());
    EXPECT_EQ(loaded.type_key(), "shared_library");
    EXPECT_EQ(loaded.function_names(), (std::vector<std::string>{"vadd_exp", "scale"}));

    const int n = 32;
    std::vector<float> a(n), b(n);
    for (int k = 0; k < n; ++k) {
        a[k] = static_cast<float>(k);
        b[k] = 0.1f * static_cast<float>(k - 16);
    }
    runtime::NDArray An = make_array(a, f32), Bn = make_array(b, f32);
    runtime::NDArray C_jit = make_empty(f32, {n}), C_so = make_empty(f32, {n});
    built.get_function("vadd_exp")(An, Bn, C_jit);
    loaded.get_function("vadd_exp")(An, Bn, C_so);
    EXPECT_EQ(C_jit.to_vector<float>(), C_so.to_vector<float>());
    for (int k = 0; k < n; ++k)
        EXPECT_NEAR(C_so.to_vector<float>()[k], a[k] + std::exp(b[k]), 1e-4);

    runtime::NDArray S = make_array<float>({1, 2, 3, 4, 5, 6, 7, 8}, f32);
    loaded.get_function("scale")(S, 2.0);
    EXPECT_EQ(S.to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16}));

    // Errors from a loaded library carry the same messages.
    runtime::NDArray short_b = make_empty(f32, {8});
    std::string e = error_of([&] { loaded.get_function("vadd_exp")(An, short_b, C_so); });
    EXPECT_NE(e.find("vadd_exp: argument 1 'B' has shape [8], expected [n] with n = 32"),
              std::string::npos)
        << e;
    fs::remove_all(dir);
}

TEST(Export, SourceFormats) {
    runtime::Module m = codegen::build_llvm({scale()}, host_target());
    EXPECT_NE(codegen::get_source(m, "ll").find("@scale(ptr"), std::string::npos);
    EXPECT_NE(codegen::get_source(m, "ll").find("__anvil_function_names"), std::string::npos);
    EXPECT_NE(codegen::get_source(m, "asm").find("scale:"), std::string::npos);
    std::string e = error_of([&] { codegen::get_source(m, "ptx"); });
    EXPECT_NE(e.find("unknown format 'ptx'"), std::string::npos) << e;
    EXPECT_EQ(codegen::module_target(m), host_target());
}

// The first 20 bytes of an ELF header: class, data encoding and e_machine.
struct ElfId {
    int elf_class = 0, data = 0, machine = 0, type = 0;
};

ElfId read_elf(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    unsigned char h[20] = {};
    in.read(reinterpret_cast<char*>(h), sizeof h);
    EXPECT_TRUE(h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F') << path;
    return ElfId{h[4], h[5], h[18] | (h[19] << 8), h[16] | (h[17] << 8)};
}

constexpr int kEmAArch64 = 183;
constexpr int kEtRel = 1;

// After kAArch64DriverStubs: runs the kernel and checks its result and its argument check.
const char* kAArch64Driver = R"(
int vadd_exp(const AnvilValue*, const int*, int, AnvilValue*, int*, void*);

static DLTensor tensor(float* data, int64_t* shape) {
    DLTensor t = {data, {1, 0}, 1, {2, 32, 1}, shape, 0, 0};
    return t;
}
int main(void) {
    enum { N = 20 };
    float* a = aligned_alloc(64, 128); float* b = aligned_alloc(64, 128);
    float* c = aligned_alloc(64, 128);
    for (int i = 0; i < N; ++i) { a[i] = (float)i; b[i] = 0.1f * (float)(i - 10); c[i] = 0; }
    int64_t n = N, short_n = 8;
    DLTensor ta = tensor(a, &n), tb = tensor(b, &n), tc = tensor(c, &n);
    DLTensor tshort = tensor(b, &short_n);
    AnvilValue args[3] = {{.v_handle = &ta}, {.v_handle = &tb}, {.v_handle = &tc}};
    int codes[3] = {7, 7, 7};
    if (vadd_exp(args, codes, 3, 0, 0, 0) != 0) { printf("failed: %s\n", last_error); return 1; }
    int bad = 0;
    for (int i = 0; i < N; ++i) {
        float want = a[i] + expf(b[i]);
        if (fabsf(c[i] - want) > 1e-4f * fabsf(want) + 1e-6f) {
            printf("c[%d] = %f, want %f\n", i, c[i], want);
            ++bad;
        }
    }
    printf(bad ? "result wrong\n" : "result ok\n");
    args[1].v_handle = &tshort;
    int rc = vadd_exp(args, codes, 3, 0, 0, 0);
    printf("rc %d: %s\n", rc, last_error);
    return bad;
}
)";

std::string run_capture(const std::string& command, int* status) {
    std::string out;
    FILE* p = popen((command + " 2>&1").c_str(), "r");
    if (!p) return out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    *status = pclose(p);
    return out;
}

TEST(Export, AArch64ObjectAndQemu) {
    Target arm = Target::parse("llvm -mtriple=aarch64-linux-gnu -mattr=+neon");
    runtime::Module m = codegen::build_llvm({vadd_exp()}, arm);
    std::string e = error_of([&] { m.get_function("vadd_exp"); });
    EXPECT_NE(e.find("cannot run in this process"), std::string::npos) << e;
    std::string asm_text = codegen::get_source(m, "asm");
    EXPECT_NE(asm_text.find("vadd_exp:"), std::string::npos);
    EXPECT_NE(asm_text.find(".4s"), std::string::npos) << "expected NEON vector code";

    fs::path dir = make_temp_dir("aarch64");
    fs::path obj = dir / "vadd_exp.o";
    codegen::emit_object(m, obj.string());
    ElfId id = read_elf(obj);
    EXPECT_EQ(id.elf_class, 2);  // 64-bit
    EXPECT_EQ(id.data, 1);       // little endian
    EXPECT_EQ(id.machine, kEmAArch64);
    EXPECT_EQ(id.type, kEtRel);

    if (!have_tool("aarch64-linux-gnu-gcc") || !have_tool("qemu-aarch64")) fs::remove_all(dir);
    ANVIL_REQUIRE_PACKAGE(have_tool("aarch64-linux-gnu-gcc") && have_tool("qemu-aarch64"),
                          "aarch64-linux-gnu-gcc or qemu-aarch64",
                          "apt-get install g++-aarch64-linux-gnu qemu-user");
    // A shared library for the foreign ISA, linked by the cross compiler.
    fs::path lib = dir / "vadd_exp.so";
    codegen::export_library(m, lib.string());
    EXPECT_EQ(read_elf(lib).machine, kEmAArch64);
    EXPECT_EQ(read_elf(lib).type, 3);  // ET_DYN

    fs::path driver = dir / "driver.c", exe = dir / "driver";
    std::ofstream(driver) << testing::kAArch64DriverStubs << kAArch64Driver;
    int status = 0;
    std::string link = run_capture("aarch64-linux-gnu-gcc -O1 -static -o " + exe.string() + " " +
                                       driver.string() + " " + obj.string() + " -lm",
                                   &status);
    ASSERT_EQ(status, 0) << link;
    std::string out = run_capture("qemu-aarch64 " + exe.string(), &status);
    EXPECT_EQ(status, 0) << out;
    EXPECT_NE(out.find("result ok"), std::string::npos) << out;
    EXPECT_NE(out.find("rc -1: vadd_exp: argument 1 'B' has shape [8], expected [n] with n = 20"),
              std::string::npos)
        << out;
    fs::remove_all(dir);
}

}  // namespace
}  // namespace anvil
