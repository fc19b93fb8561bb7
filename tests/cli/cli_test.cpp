// The `anvil` command line end to end: compile ONNX models and run them against their reference
// outputs with --compare; errors exit 1 (model, files) or 2 (usage) with a message and no stack.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_run.h"
#include "require_package.h"

namespace {

namespace fs = std::filesystem;
using anvil::cli::testing::compile_and_compare;
using anvil::cli::testing::generated_models;
using anvil::cli::testing::Result;
using anvil::cli::testing::run;
using anvil::cli::testing::temp_so;

const fs::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

class OnnxNodeModels : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNodeModels, CompileRunCompare) {
    fs::path dir = kNodeTests / GetParam();
    ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(dir));
    compile_and_compare(dir, 3);
}

INSTANTIATE_TEST_SUITE_P(Elementwise, OnnxNodeModels,
                         ::testing::Values("test_relu", "test_add_bcast", "test_sigmoid",
                                           "test_exp", "test_mul_bcast", "test_where_example",
                                           "test_less_bcast", "test_tanh"));
// Control flow: the artifact holds a VM program with the branch and body functions.
INSTANTIATE_TEST_SUITE_P(ControlFlow, OnnxNodeModels,
                         ::testing::Values("test_if", "test_scan9_sum",
                                           "test_range_float_type_positive_delta_expanded"));

class ReferenceModels : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(ReferenceModels, CompileRunCompare) {
    fs::path dir =
        fs::path(ANVIL_SOURCE_DIR) / ".." / "shared" / "models" / std::get<0>(GetParam());
    ANVIL_REQUIRE_SHARED_MODELS(fs::exists(dir / "model.onnx"));
    compile_and_compare(dir, std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(SharedModels, ReferenceModels,
                         ::testing::Combine(::testing::Values("resnet18", "mobilenet_v2"),
                                            ::testing::Values(0, 3)),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_O" +
                                    std::to_string(std::get<1>(info.param));
                         });

// Models exported from PyTorch by tests/models/generate_models.py: standard vision CNNs and
// transformer encoders that Anvil was not developed against.
class GeneratedModels : public ::testing::TestWithParam<std::string> {};

TEST_P(GeneratedModels, CompileRunCompare) {
    compile_and_compare(fs::path(ANVIL_SOURCE_DIR) / "tests" / "models" / GetParam(), 3);
}

INSTANTIATE_TEST_SUITE_P(PyTorchExports, GeneratedModels, ::testing::ValuesIn(generated_models()),
                         [](const auto& info) { return info.param; });

TEST(CliErrors, MissingModelFileExitsOne) {
    Result r = run("compile /nonexistent/model.onnx -o /tmp/x.so");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("error: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("/nonexistent/model.onnx"), std::string::npos) << r.output;
}

TEST(CliErrors, BadUsageExitsTwo) {
    EXPECT_EQ(run("compile").status, 2);
    EXPECT_EQ(run("frobnicate").status, 2);
    EXPECT_EQ(run("compile m.onnx -O 7").status, 2);
}

TEST(CliErrors, BadTargetAndShapesNameTheArgument) {
    fs::path model = kNodeTests / "test_relu" / "model.onnx";
    ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(model));
    Result t = run("compile " + model.string() + " --target 'llvm -mcpu=pentium9000' -o /tmp/x.so");
    EXPECT_EQ(t.status, 1);
    EXPECT_NE(t.output.find("pentium9000"), std::string::npos) << t.output;
    Result s = run("compile " + model.string() + " --input-shapes 'x:[3,four]' -o /tmp/x.so");
    EXPECT_EQ(s.status, 1);
    EXPECT_NE(s.output.find("'four'"), std::string::npos) << s.output;
}

TEST(CliErrors, CompareMismatchExitsOne) {
    fs::path dir = kNodeTests / "test_relu";
    fs::path other = kNodeTests / "test_sigmoid" / "test_data_set_0";
    ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(dir) && fs::exists(other));
    std::string so = temp_so("relu_mismatch");
    ASSERT_EQ(run("compile " + (dir / "model.onnx").string() + " -o " + so).status, 0);
    Result r = run("run " + so + " --inputs " + (dir / "test_data_set_0").string() + " --compare " +
                   other.string());
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("MISMATCH"), std::string::npos) << r.output;
    fs::remove(so);
}

TEST(CliCompile, PrintsBothLevelsAfterLowering) {
    fs::path model =
        fs::path(ANVIL_SOURCE_DIR) / "tests" / "models" / "transformer_encoder_relu" / "model.onnx";
    std::string so = temp_so("print_after");
    Result r = run("compile " + model.string() + " -o " + so +
                   " --print-after lower_fused_functions --time-passes");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("def @main("), std::string::npos);
    EXPECT_NE(r.output.find("call_tir("), std::string::npos);
    EXPECT_NE(r.output.find("prim_func fused_dense_packed("), std::string::npos);
    EXPECT_NE(r.output.find("pass fuse_ops: "), std::string::npos);
    Result bad = run("compile " + model.string() + " -o " + so + " --print-after fuse_everything");
    EXPECT_EQ(bad.status, 1);
    EXPECT_NE(bad.output.find("unknown pass 'fuse_everything'"), std::string::npos) << bad.output;
    fs::remove(so);
}

TEST(CliRun, TimingAndTopK) {
    fs::path dir = kNodeTests / "test_relu";
    ANVIL_REQUIRE_ONNX_TESTDATA(fs::exists(dir));
    std::string so = temp_so("relu_time");
    ASSERT_EQ(run("compile " + (dir / "model.onnx").string() + " -o " + so).status, 0);
    Result r = run("run " + so + " --inputs " + (dir / "test_data_set_0").string() +
                   " --print-time --repeat 5 --number 2 --print-top 3 --threads 1");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("time_ms median="), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("runs=5"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("top-3 of output 0:"), std::string::npos) << r.output;
    Result inspect = run("inspect " + so);
    EXPECT_EQ(inspect.status, 0) << inspect.output;
    EXPECT_NE(inspect.output.find("kernels: 1 distinct"), std::string::npos) << inspect.output;
    fs::remove(so);
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
        lines.push_back(text.substr(start, end - start));
    }
    return lines;
}

std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string f; in >> f;) fields.push_back(f);
    return fields;
}

// --profile: after the timed runs, one line per kernel (name, calls, total and mean ms, share,
// GFLOP/s, MFLOP per call) and a total; the values themselves are timings, the test checks the
// form and the counts.
TEST(CliRun, ProfilePrintsOneLinePerKernelAndATotal) {
    fs::path dir = fs::path(ANVIL_SOURCE_DIR) / "tests" / "models" / "transformer_encoder_relu";
    std::string so = temp_so("profile");
    ASSERT_EQ(run("compile " + (dir / "model.onnx").string() + " -o " + so).status, 0);
    Result r = run("run " + so + " --inputs " + (dir / "test_data_set_0").string() +
                   " --profile --repeat 3 --number 2 --threads 1");
    ASSERT_EQ(r.status, 0) << r.output;
    std::vector<std::string> lines = split_lines(r.output);
    auto heading = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
        return l.rfind("profile: 6 runs, ", 0) == 0;
    });
    ASSERT_NE(heading, lines.end()) << r.output;
    int per_run = std::stoi(heading->substr(std::string("profile: 6 runs, ").size()));
    EXPECT_GT(per_run, 1);
    ASSERT_NE(heading + 1, lines.end());
    EXPECT_EQ(split_fields(*(heading + 1)),
              (std::vector<std::string>{"kernel", "calls", "total_ms", "mean_ms", "share",
                                        "GFLOP/s", "MFLOP"}));
    int calls = 0, kernels = 0;
    double share = 0;
    bool some_flops = false;
    for (auto it = heading + 2; it != lines.end() && it->rfind("total ", 0) != 0; ++it) {
        std::vector<std::string> f = split_fields(*it);
        ASSERT_EQ(f.size(), 7u) << *it;
        EXPECT_EQ(f[0].rfind("fused_", 0), 0u) << *it;
        EXPECT_EQ(std::stoi(f[1]) % 6, 0) << *it;  // every kernel runs the same times per run
        calls += std::stoi(f[1]);
        ASSERT_EQ(f[4].back(), '%') << *it;
        share += std::stod(f[4]);
        some_flops |= f[5] != "-" && std::stod(f[6]) > 0;
        ++kernels;
    }
    EXPECT_GT(kernels, 1);
    EXPECT_TRUE(some_flops) << r.output;  // the dense kernels at least
    EXPECT_NEAR(share, 100.0, 0.1 * kernels);
    std::vector<std::string> total = split_fields(lines.back());
    ASSERT_EQ(total.size(), 7u) << r.output;
    EXPECT_EQ(total[0], "total");
    EXPECT_EQ(std::stoi(total[1]), calls);
    EXPECT_EQ(calls, 6 * per_run);
    EXPECT_EQ(total[4], "100.0%");
    // Without --print-time there is no time_ms line; with it, both.
    EXPECT_EQ(r.output.find("time_ms"), std::string::npos) << r.output;
    Result both = run("run " + so + " --inputs " + (dir / "test_data_set_0").string() +
                      " --profile --print-time --repeat 2");
    EXPECT_EQ(both.status, 0) << both.output;
    EXPECT_NE(both.output.find("time_ms median="), std::string::npos) << both.output;
    EXPECT_NE(both.output.find("profile: 2 runs, "), std::string::npos) << both.output;
    fs::remove(so);
}

}  // namespace

// The executors: a model with a symbolic batch needs the VM, and the VM runs static models too.
TEST(CliExecutor, SymbolicModelRefusesTheGraphExecutor) {
    fs::path model =
        fs::path(ANVIL_SOURCE_DIR) / "tests" / "models" / "cnn_dynamic_batch" / "model.onnx";
    Result r = run("compile " + model.string() + " --executor graph -o " + temp_so("refuse"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("--executor vm"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;
    Result bad = run("compile " + model.string() + " --executor fast -o " + temp_so("refuse"));
    EXPECT_NE(bad.status, 0);
    EXPECT_NE(bad.output.find("unknown executor 'fast'"), std::string::npos) << bad.output;
}

TEST(CliExecutor, VmRunsAStaticModel) {
    compile_and_compare(
        fs::path(ANVIL_SOURCE_DIR) / "tests" / "models" / "transformer_encoder_relu", 3,
        "--executor vm");
}

// The kernel names of a --profile table (the lines between its heading and its total).
std::vector<std::string> profiled_kernels(const std::string& output) {
    std::vector<std::string> lines = split_lines(output);
    auto it = std::find_if(lines.begin(), lines.end(),
                           [](const std::string& l) { return l.rfind("kernel ", 0) == 0; });
    std::vector<std::string> names;
    if (it == lines.end()) return names;
    for (++it; it != lines.end() && it->rfind("total ", 0) != 0; ++it) {
        names.push_back(split_fields(*it).at(0));
    }
    return names;
}

// The VM times its kernels too.
TEST(CliExecutor, VmProfilePrintsOneLinePerKernel) {
    fs::path dir = fs::path(ANVIL_SOURCE_DIR) / "tests" / "models" / "transformer_encoder_relu";
    std::string so = temp_so("vm_profile");
    ASSERT_EQ(run("compile " + (dir / "model.onnx").string() + " --executor vm -o " + so).status,
              0);
    Result r = run("run " + so + " --inputs " + (dir / "test_data_set_0").string() +
                   " --profile --print-time --repeat 2");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("time_ms median="), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("profile: 2 runs, "), std::string::npos) << r.output;
    std::vector<std::string> kernels = profiled_kernels(r.output);
    EXPECT_GT(kernels.size(), 1u) << r.output;
    for (const auto& k : kernels) EXPECT_EQ(k.rfind("fused_", 0), 0u) << r.output;
    fs::remove(so);
}

// --shape-buckets: the transformer with symbolic batch n and sequence seq compiled once, with
// kernels for n in {1, 8} x seq in {5, 12}; its data sets are (1, 5), (3, 7) and (8, 12). All
// three match the reference; the bucketed sizes run only specialized kernels, (3, 7) only
// generic ones.
TEST(CliExecutor, ShapeBucketsRunSpecializedKernelsAtTheirSizes) {
    fs::path dir =
        fs::path(ANVIL_SOURCE_DIR) / "tests" / "models" / "transformer_dynamic_batch_seq";
    std::string so = temp_so("buckets");
    Result c = run("compile " + (dir / "model.onnx").string() + " -o " + so +
                   " --shape-buckets n=1,8 seq=5,12");
    ASSERT_EQ(c.status, 0) << c.output;
    const char* suffixes[] = {"_n1_seq5", "", "_n8_seq12"};
    for (int k = 0; k < 3; ++k) {
        std::string data = (dir / ("test_data_set_" + std::to_string(k))).string();
        Result r =
            run("run " + so + " --inputs " + data + " --compare " + data + " --profile --repeat 1");
        EXPECT_EQ(r.status, 0) << data << "\n" << r.output;
        EXPECT_EQ(r.output.find("MISMATCH"), std::string::npos) << data << "\n" << r.output;
        std::vector<std::string> kernels = profiled_kernels(r.output);
        EXPECT_GT(kernels.size(), 5u) << r.output;
        for (const auto& name : kernels) {
            std::string suffix = suffixes[k];
            bool specialized = name.find("_n1_seq5") != std::string::npos ||
                               name.find("_n8_seq12") != std::string::npos;
            if (suffix.empty()) {
                EXPECT_FALSE(specialized) << data << ": " << name;
            } else {
                EXPECT_TRUE(name.size() > suffix.size() &&
                            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
                    << data << ": " << name;
            }
        }
    }
    fs::remove(so);
}

TEST(CliExecutor, BadShapeBucketsAreClearErrors) {
    fs::path model =
        fs::path(ANVIL_SOURCE_DIR) / "tests" / "models" / "cnn_dynamic_batch" / "model.onnx";
    std::string so = temp_so("bad_buckets");
    struct Case {
        const char* flag;
        const char* message;
    };
    const Case cases[] = {
        {"n", "--shape-buckets: 'n' is not NAME=SIZE,SIZE,... (e.g. n=1,8,32)"},
        {"n=1,x", "--shape-buckets: 'x' in 'n=1,x' is not a size"},
        {"n=0", "--shape-buckets: 'n=0': sizes must be positive, not 0"},
        {"batch=1",
         "--shape-buckets: the model has no symbolic dimension 'batch' (its symbolic "
         "dimensions: n)"},
    };
    for (const Case& k : cases) {
        Result r = run("compile " + model.string() + " -o " + so + " --shape-buckets " + k.flag);
        EXPECT_EQ(r.status, 1) << k.flag << "\n" << r.output;
        EXPECT_NE(r.output.find(k.message), std::string::npos) << k.flag << "\n" << r.output;
        EXPECT_EQ(r.output.find("terminate"), std::string::npos) << r.output;
    }
    EXPECT_FALSE(fs::exists(so));
}

TEST(CliExecutor, VmInputOfTheWrongShapeIsAClearError) {
    fs::path models = fs::path(ANVIL_SOURCE_DIR) / "tests" / "models";
    std::string so = temp_so("vm_wrong_shape");
    ASSERT_EQ(run("compile " + (models / "cnn_dynamic_batch" / "model.onnx").string() + " -o " + so)
                  .status,
              0);
    // A [2, 7, 32] sequence is not an [n, 3, 32, 32] image.
    Result r = run("run " + so + " --inputs " +
                   (models / "transformer_encoder_relu" / "test_data_set_0").string());
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("input 'input_0' has shape [2, 7, 32], expected [n, 3, 32, 32]"),
              std::string::npos)
        << r.output;
    fs::remove(so);
}
