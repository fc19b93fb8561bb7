// `anvil compile` of TorchScript models (torch.jit.save): PyTorch writes the models, their inputs
// and its own outputs at test time (torchscript_models.py, run with Debian's python3-torch);
// the compiled models run with `anvil run` and match PyTorch. The errors: a model with
// unsupported ops lists them all with their Python lines, a corrupt file, a Python without
// PyTorch and missing --input-shapes each exit 1 with a message and no stack trace.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_run.h"
#include "require_package.h"
#include "runtime/npz.h"
#include "scoped_env.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;
using cli::testing::Result;
using cli::testing::run;
using cli::testing::temp_path;
using cli::testing::temp_so;

const char kPython[] = "/usr/bin/python3";

class TorchScriptCli : public ::testing::Test {
protected:
    // The models are written once for the suite; `models_` stays empty when that failed.
    static void SetUpTestSuite() {
        fs::path dir = temp_path("torchscript_models", "");
        fs::create_directories(dir);
        std::string script =
            (fs::path(ANVIL_SOURCE_DIR) / "tests" / "cli" / "torchscript_models.py").string();
        std::string cmd = std::string(kPython) + " " + script + " " + dir.string() + " 2>&1";
        if (std::system(cmd.c_str()) == 0) models_ = dir;
    }
    static void TearDownTestSuite() {
        if (!models_.empty()) fs::remove_all(models_);
    }
    void SetUp() override {
        ANVIL_REQUIRE_PACKAGE(!models_.empty(), "PyTorch for /usr/bin/python3 (python3-torch)",
                              "apt-get install python3-torch python3-numpy");
    }
    static std::string model(const std::string& name) { return (models_ / name).string(); }

    static inline fs::path models_;
};

// No stack trace, no abort: what a user error looks like.
void expect_clean_error(const Result& r) {
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("error: "), std::string::npos) << r.output;
    for (const char* bad : {"Traceback", "terminate called", "Aborted", "internal error"}) {
        EXPECT_EQ(r.output.find(bad), std::string::npos) << bad << " in:\n" << r.output;
    }
}

// Every array of `got` (the outputs `anvil run` wrote) against PyTorch's, in order.
void expect_outputs_match(const std::string& got_path, const std::string& want_path) {
    auto got = runtime::read_npz(got_path);
    auto want = runtime::read_npz(want_path);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
        const runtime::NDArray& g = got[k].second;
        const runtime::NDArray& w = want[k].second;
        ASSERT_EQ(std::vector<int64_t>(g.shape().begin(), g.shape().end()),
                  std::vector<int64_t>(w.shape().begin(), w.shape().end()))
            << "output " << k;
        // Every output of these models is float32.
        ASSERT_EQ(g.dtype().code, kDLFloat) << "output " << k;
        ASSERT_EQ(w.dtype().code, kDLFloat) << "output " << k;
        std::vector<float> gv = g.to_vector<float>(), wv = w.to_vector<float>();
        float scale = 0;
        for (float v : wv) scale = std::max(scale, std::fabs(v));
        for (size_t i = 0; i < wv.size(); ++i) {
            ASSERT_NEAR(gv[i], wv[i], 1e-3f * scale + 1e-4f) << "output " << k << " [" << i << "]";
        }
    }
}

// Compiles `name`.pt with `shapes`, runs it on `name`_input.npz and compares with PyTorch.
void compile_run_compare(const std::string& pt, const std::string& shapes,
                         const std::string& inputs, const std::string& reference,
                         const std::string& tag) {
    std::string so = temp_so(tag);
    Result c = run("compile " + pt + " --input-shapes '" + shapes + "' -O 3 -o " + so);
    ASSERT_EQ(c.status, 0) << c.output;
    std::string out = temp_path(tag + "_out", ".npz");
    Result r = run("run " + so + " --inputs " + inputs + " --outputs " + out);
    ASSERT_EQ(r.status, 0) << r.output;
    expect_outputs_match(out, reference);
    fs::remove(so);
    fs::remove(out);
}

TEST_F(TorchScriptCli, TracedCnnCompilesRunsAndMatchesPyTorch) {
    compile_run_compare(model("small.pt"), "input0:[2,3,16,16]", model("small_input.npz"),
                        model("small_output.npz"), "ts_small");
}

TEST_F(TorchScriptCli, ScriptedModuleWithTwoInputsADtypeAndATupleOutput) {
    // n is int64: added to float32 x it promotes as PyTorch does.
    compile_run_compare(model("two_inputs.pt"), "x:[4,8] n:[8]:int64",
                        model("two_inputs_input.npz"), model("two_inputs_output.npz"),
                        "ts_two_inputs");
}

TEST_F(TorchScriptCli, SymbolicBatchRunsOnTheVm) {
    // Traced at batch 2, compiled for any batch, run at batch 3.
    compile_run_compare(model("batch.pt"), "x:[batch,8]", model("batch_input.npz"),
                        model("batch_output.npz"), "ts_batch");
}

TEST_F(TorchScriptCli, InspectShowsTheOpsWithTheWeightsBound) {
    Result r = run("inspect " + model("small.pt") + " --input-shapes input0:[1,3,16,16]");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("input0: Tensor[(1, 3, 16, 16), float32]"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("nn.conv2d"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("nn.batch_norm"), std::string::npos) << r.output;
    // The weights are bound as constants: main takes input0 alone.
    EXPECT_EQ(r.output.find("conv.weight"), std::string::npos) << r.output;
}

TEST_F(TorchScriptCli, MissingInputShapesNamesForwardsInputs) {
    Result r = run("compile " + model("two_inputs.pt") + " -o " + temp_so("ts_missing"));
    expect_clean_error(r);
    EXPECT_NE(r.output.find("forward takes 2 inputs (x: Tensor, n: Tensor)"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("--input-shapes is not given"), std::string::npos) << r.output;
    Result few = run("compile " + model("two_inputs.pt") + " --input-shapes x:[4,8] -o " +
                     temp_so("ts_missing"));
    expect_clean_error(few);
    EXPECT_NE(few.output.find("--input-shapes gives 1"), std::string::npos) << few.output;
}

TEST_F(TorchScriptCli, BadInputSpecsAreErrors) {
    Result dtype = run("compile " + model("small.pt") +
                       " --input-shapes input0:[1,3,16,16]:float99 -o " + temp_so("ts_bad"));
    expect_clean_error(dtype);
    EXPECT_NE(dtype.output.find("'float99'"), std::string::npos) << dtype.output;
    Result params =
        run("compile " + model("small.pt") +
            " --input-shapes input0:[1,3,16,16] --params w.npz -o " + temp_so("ts_bad"));
    expect_clean_error(params);
    EXPECT_NE(params.output.find("TorchScript model"), std::string::npos) << params.output;
}

TEST_F(TorchScriptCli, UnsupportedOpsAreListedWithTheirLines) {
    Result r = run("compile " + model("unsupported.pt") + " --input-shapes x:[2,3,3] -o " +
                   temp_so("ts_unsupported"));
    expect_clean_error(r);
    EXPECT_NE(r.output.find("2 op kind(s)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("aten::linalg_det (2 nodes)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("aten::linalg_inv (1 node)"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("torchscript_models.py:"), std::string::npos) << r.output;
}

TEST_F(TorchScriptCli, CorruptFilesAreErrors) {
    std::string garbage = temp_path("ts_garbage", ".pt");
    std::ofstream(garbage) << "this is not a TorchScript archive";
    Result g = run("compile " + garbage + " --input-shapes x:[1] -o " + temp_so("ts_garbage"));
    expect_clean_error(g);
    EXPECT_NE(g.output.find(garbage + ": cannot read the TorchScript module"), std::string::npos)
        << g.output;
    // A real archive cut in half.
    std::ifstream in(model("small.pt"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string truncated = temp_path("ts_truncated", ".pt");
    std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    Result t = run("compile " + truncated + " --input-shapes x:[1] -o " + temp_so("ts_truncated"));
    expect_clean_error(t);
    EXPECT_NE(t.output.find(truncated + ": cannot read the TorchScript module"), std::string::npos)
        << t.output;
    fs::remove(garbage);
    fs::remove(truncated);
}

TEST_F(TorchScriptCli, PythonWithoutPyTorchOrThatCannotRunSaysSo) {
    // Python without its site packages (-S) has no torch: a real ModuleNotFoundError.
    std::string wrapper = temp_path("python_without_torch", ".sh");
    std::ofstream(wrapper) << "#!/bin/sh\nexec " << kPython << " -S \"$@\"\n";
    ::chmod(wrapper.c_str(), 0755);
    {
        testing::ScopedEnv env("ANVIL_PYTHON", wrapper.c_str());
        Result r = run("compile " + model("small.pt") + " --input-shapes input0:[1,3,16,16] -o " +
                       temp_so("ts_no_torch"));
        expect_clean_error(r);
        EXPECT_NE(r.output.find("needs PyTorch"), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("python3-torch"), std::string::npos) << r.output;
    }
    {
        // A program that fails without a word.
        testing::ScopedEnv env("ANVIL_PYTHON", "/bin/false");
        Result r = run("compile " + model("small.pt") + " --input-shapes input0:[1,3,16,16] -o " +
                       temp_so("ts_false"));
        expect_clean_error(r);
        EXPECT_NE(r.output.find("/bin/false exited with status 1 and printed nothing"),
                  std::string::npos)
            << r.output;
    }
    {
        testing::ScopedEnv env("ANVIL_PYTHON", "/nonexistent/python3");
        Result r = run("compile " + model("small.pt") + " --input-shapes input0:[1,3,16,16] -o " +
                       temp_so("ts_no_python"));
        expect_clean_error(r);
        EXPECT_NE(r.output.find("/nonexistent/python3 does not exist"), std::string::npos)
            << r.output;
    }
    fs::remove(wrapper);
}

}  // namespace
}  // namespace anvil
