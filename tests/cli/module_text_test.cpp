// `anvil compile` of modules in Anvil's text format (examples/modules/mlp.anvil, the Relax
// tutorial's MLP with loop-IR kernels): weights bound from an .npz or given as inputs, a symbolic
// batch on the VM and a static module on the graph executor, run by `anvil run` at several sizes
// against a C++ reference; mistakes in the text name the file, line and column.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli/cli_run.h"
#include "e2e/vm_test_util.h"
#include "runtime/npz.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;
using cli::testing::Result;
using cli::testing::run;
using cli::testing::temp_path;
using cli::testing::temp_so;
using cli::testing::write_temp_module;
using runtime::NDArray;
using testing::random_array;

const fs::path kMlp = fs::path(ANVIL_SOURCE_DIR) / "examples" / "modules" / "mlp.anvil";

std::map<std::string, NDArray> mlp_weights() {
    return {{"w0", random_array({32, 16}, 1)},
            {"b0", random_array({32}, 2)},
            {"w1", random_array({8, 32}, 3)},
            {"b1", random_array({8}, 4)}};
}

// Z = X W^T + B, row-major.
std::vector<float> linear(const std::vector<float>& x, const NDArray& w, const NDArray& b,
                          int64_t n) {
    int64_t m = w.shape()[0], k = w.shape()[1];
    std::vector<float> z(n * m);
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < m; ++j) {
            float acc = b.data<float>()[j];
            for (int64_t r = 0; r < k; ++r) acc += x[i * k + r] * w.data<float>()[j * k + r];
            z[i * m + j] = acc;
        }
    }
    return z;
}

std::vector<float> mlp_reference(const NDArray& x, const std::map<std::string, NDArray>& p) {
    int64_t n = x.shape()[0];
    std::vector<float> h = linear(x.to_vector<float>(), p.at("w0"), p.at("b0"), n);
    for (float& v : h) v = std::max(v, 0.0f);
    return linear(h, p.at("w1"), p.at("b1"), n);
}

void write_npz(const std::string& path, const std::map<std::string, NDArray>& arrays) {
    runtime::write_npz(path, {arrays.begin(), arrays.end()});
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs `so` on x (and `extra` inputs) and checks its one output against the reference.
void run_and_check(const std::string& so, int64_t n, const std::map<std::string, NDArray>& weights,
                   std::map<std::string, NDArray> extra = {}) {
    NDArray x = random_array({n, 16}, static_cast<unsigned>(10 + n));
    extra["x"] = x;
    std::string in = temp_path("mlp_in", ".npz"), out = temp_path("mlp_out", ".npz");
    write_npz(in, extra);
    Result r = run("run " + so + " --inputs " + in + " --outputs " + out);
    ASSERT_EQ(r.status, 0) << r.output;
    auto outputs = runtime::read_npz(out);
    ASSERT_EQ(outputs.size(), 1u);
    const NDArray& y = outputs[0].second;
    ASSERT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()),
              (std::vector<int64_t>{n, 8}));
    std::vector<float> want = mlp_reference(x, weights), got = y.to_vector<float>();
    for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-4f * (1 + std::abs(want[i]))) << "n=" << n << " i=" << i;
    }
    fs::remove(in);
    fs::remove(out);
}

TEST(CliModuleText, MlpWithBoundWeightsRunsOnTheVmAtSeveralBatches) {
    std::map<std::string, NDArray> weights = mlp_weights();
    std::string params = temp_path("mlp_weights", ".npz"), so = temp_so("mlp_text");
    write_npz(params, weights);
    Result c = run("compile " + kMlp.string() + " --params " + params + " -o " + so);
    ASSERT_EQ(c.status, 0) << c.output;
    EXPECT_NE(c.output.find("vm program"), std::string::npos) << c.output;
    for (int64_t n : {1, 3, 8}) run_and_check(so, n, weights);
    Result inspect = run("inspect " + kMlp.string());
    EXPECT_EQ(inspect.status, 0) << inspect.output;
    EXPECT_NE(inspect.output.find("x: Tensor[(n, 16), float32]"), std::string::npos)
        << inspect.output;
    fs::remove(params);
    fs::remove(so);
}

TEST(CliModuleText, UnboundWeightsAreInputs) {
    std::map<std::string, NDArray> weights = mlp_weights();
    std::string so = temp_so("mlp_text_inputs");
    ASSERT_EQ(run("compile " + kMlp.string() + " -o " + so).status, 0);
    run_and_check(so, 5, weights, weights);
    fs::remove(so);
}

// With a static batch the graph executor runs the module (the default, and when asked for).
TEST(CliModuleText, StaticModuleRunsOnTheGraphExecutor) {
    std::string text = read_text(kMlp);
    for (size_t at; (at = text.find("(n, ")) != std::string::npos;) text.replace(at, 4, "(4, ");
    std::string path = write_temp_module("mlp_static", text);
    std::map<std::string, NDArray> weights = mlp_weights();
    std::string params = temp_path("mlp_static_weights", ".npz"), so = temp_so("mlp_static");
    write_npz(params, weights);
    Result c = run("compile " + path + " --params " + params + " --executor graph -o " + so);
    ASSERT_EQ(c.status, 0) << c.output;
    EXPECT_EQ(c.output.find("vm program"), std::string::npos) << c.output;
    run_and_check(so, 4, weights);
    fs::remove(path);
    fs::remove(params);
    fs::remove(so);
}

TEST(CliModuleText, MistakesNameTheFileLineAndColumn) {
    std::string path =
        write_temp_module("mlp_undefined", R"(def @main(%x: Tensor[(4, 16), float32]) {
  nn.relu(%y)
}
)");
    Result r = run("compile " + path + " -o " + temp_so("mlp_undefined"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("error: " + path + ":2:11: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("'%y'"), std::string::npos) << r.output;
    fs::remove(path);
    // A syntax error inside a kernel is placed in the whole file.
    std::string text = read_text(kMlp);
    text.replace(text.find("Y[i, j] = max"), 1, "Y[");
    path = write_temp_module("mlp_kernel_syntax", text);
    r = run("compile " + path + " -o " + temp_so("mlp_kernel_syntax"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("error: " + path + ":"), std::string::npos) << r.output;
    size_t line = std::count(text.begin(), text.begin() + text.find("Y[["), '\n') + 1;
    EXPECT_NE(r.output.find(path + ":" + std::to_string(line) + ":"), std::string::npos)
        << r.output;
    fs::remove(path);
}

TEST(CliModuleText, OptionsForTheOtherKindOfModelAreRefused) {
    Result shapes =
        run("compile " + kMlp.string() + " --input-shapes 'x:[2,16]' -o " + temp_so("mlp_shapes"));
    EXPECT_EQ(shapes.status, 1) << shapes.output;
    EXPECT_NE(shapes.output.find("--input-shapes applies to ONNX, TorchScript and TFLite models"),
              std::string::npos)
        << shapes.output;
    std::string params = temp_path("mlp_bad_weights", ".npz");
    write_npz(params, {{"w9", random_array({2}, 1)}});
    Result unknown = run("compile " + kMlp.string() + " --params " + params + " -o " +
                         temp_so("mlp_bad_weights"));
    EXPECT_EQ(unknown.status, 1) << unknown.output;
    EXPECT_NE(unknown.output.find("--params " + params +
                                  ": bind_params: @main has no parameter "
                                  "%w9"),
              std::string::npos)
        << unknown.output;
    fs::remove(params);
}

// A registry function the running program does not have is a run-time error naming it.
TEST(CliModuleText, UnregisteredLibraryFunctionFailsAtRunTime) {
    std::string path = write_temp_module("packed", R"(def @main(%x: Tensor[(n, 16), float32]) {
  call_packed("env.not_registered", (%x,), Tensor[(n, 16), float32])
}
)");
    std::string so = temp_so("packed");
    ASSERT_EQ(run("compile " + path + " -o " + so).status, 0);
    std::string in = temp_path("packed_in", ".npz");
    write_npz(in, {{"x", random_array({2, 16}, 1)}});
    Result r = run("run " + so + " --inputs " + in);
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("env.not_registered"), std::string::npos) << r.output;
    fs::remove(path);
    fs::remove(so);
    fs::remove(in);
}

}  // namespace
}  // namespace anvil
