// `anvil compile --checked` (and ANVIL_CHECKED=1): a kernel that reads past its buffer makes
// `anvil run` fail with an error naming the kernel, the buffer and the index, on the graph
// executor and on the VM, instead of reading garbage; a real model compiled checked computes
// exactly what it computes unchecked.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "cli/cli_run.h"
#include "e2e/vm_test_util.h"
#include "runtime/npz.h"
#include "scoped_env.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;
using cli::testing::Result;
using cli::testing::run;
using cli::testing::temp_path;
using cli::testing::temp_so;
using cli::testing::write_temp_module;
using testing::random_array;
using testing::ScopedEnv;

// main calls `shift`, whose loop reads X one element past its end: X[i + 1] for the last i.
// SHAPE is "(4, 16)" (the graph executor) or "(n, 16)" (the VM).
std::string shift_module(const std::string& shape) {
    return R"(def @main(%x: Tensor[)" + shape + R"(, float32]) -> Tensor[)" + shape +
           R"(, float32] {
  call_tir(@shift, (%x,), Tensor[)" +
           shape + R"(, float32])
}

prim_func shift(X: float32[n, k], Y: float32[n, k]) {
  for i in [0, n * k) { Y[i] = X[i + 1] }
}
)";
}

// Compiles `module` with `flags` and runs it on an x of `rows` rows.
Result compile_and_run(const std::string& name, const std::string& module, int64_t rows,
                       const std::string& flags) {
    std::string path = write_temp_module(name, module), so = temp_so(name);
    std::string in = temp_path(name + "_in", ".npz");
    runtime::write_npz(in, {{"x", random_array({rows, 16}, 1)}});
    Result c = run("compile " + path + " -o " + so + " " + flags);
    EXPECT_EQ(c.status, 0) << c.output;
    Result r = run("run " + so + " --inputs " + in);
    fs::remove(path);
    fs::remove(so);
    fs::remove(in);
    return r;
}

TEST(CliChecked, OutOfBoundsReadFailsTheRunNamingKernelBufferAndIndex) {
    Result r = compile_and_run("checked_graph", shift_module("(4, 16)"), 4, "--checked");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("kernel shift: buffer 'X' index 64 out of bounds [0, 64) (load)"),
              std::string::npos)
        << r.output;
    // The VM, with the extent known only at run time.
    r = compile_and_run("checked_vm", shift_module("(n, 16)"), 3, "--checked");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("kernel shift: buffer 'X' index 48 out of bounds [0, 48) (load)"),
              std::string::npos)
        << r.output;
}

TEST(CliChecked, TheEnvironmentTurnsItOn) {
    ScopedEnv env("ANVIL_CHECKED", "1");
    Result r = compile_and_run("checked_env", shift_module("(4, 16)"), 4, "");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("kernel shift: buffer 'X' index 64"), std::string::npos) << r.output;
}

// The outputs of `so` on `data`'s inputs, compared with its reference outputs too.
std::vector<std::pair<std::string, runtime::NDArray>> run_model(const std::string& so,
                                                                const fs::path& data) {
    std::string out = temp_path(fs::path(so).stem().string() + "_out", ".npz");
    Result r = run("run " + so + " --inputs " + data.string() + " --compare " + data.string() +
                   " --outputs " + out);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output.find("MISMATCH"), std::string::npos) << r.output;
    auto outputs = runtime::read_npz(out);
    fs::remove(out);
    return outputs;
}

TEST(CliChecked, MobileNetV2ComputesExactlyWhatItComputesUnchecked) {
    fs::path dir = fs::path(ANVIL_SOURCE_DIR) / "models" / "mobilenet_v2";
    ASSERT_TRUE(fs::exists(dir / "model.onnx")) << dir;
    std::string plain = temp_so("mobilenet_v2_plain"), checked = temp_so("mobilenet_v2_checked");
    Result c;
    {
        ScopedEnv env("ANVIL_CHECKED", "0");  // unchecked even when the suite runs checked
        c = run("compile " + (dir / "model.onnx").string() + " -o " + plain);
    }
    ASSERT_EQ(c.status, 0) << c.output;
    c = run("compile " + (dir / "model.onnx").string() + " --checked -o " + checked);
    ASSERT_EQ(c.status, 0) << c.output;
    auto a = run_model(plain, dir / "test_data_set_0");
    auto b = run_model(checked, dir / "test_data_set_0");
    ASSERT_EQ(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k) {
        const runtime::NDArray &x = a[k].second, &y = b[k].second;
        ASSERT_EQ(x.nbytes(), y.nbytes());
        EXPECT_EQ(std::memcmp(x.raw_data(), y.raw_data(), x.nbytes()), 0) << a[k].first;
    }
    fs::remove(plain);
    fs::remove(checked);
}

}  // namespace
}  // namespace anvil
