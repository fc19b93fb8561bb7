// BYOC from the command line: a composite target ("dnnl, llvm") partitions the graph for oneDNN,
// the library holds oneDNN's regions, and `anvil run` loads libanvil_runtime_dnnl.so for them.
// Every shared and generated model must match its reference outputs this way too.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "cli/cli_run.h"
#include "require_package.h"

namespace {

namespace fs = std::filesystem;
using anvil::cli::testing::compile_and_compare;
using anvil::cli::testing::generated_models;
using anvil::cli::testing::Result;
using anvil::cli::testing::run;
using anvil::cli::testing::temp_so;

const char kDnnl[] = "--target 'dnnl, llvm'";

fs::path shared_model(const std::string& name) {
    return fs::path(ANVIL_SOURCE_DIR) / ".." / "shared" / "models" / name;
}

// The percentage of FLOPs the summary line says oneDNN took.
double offloaded_percent(const std::string& output) {
    std::smatch m;
    std::regex line(R"(dnnl: (\d+) regions?, \d+ of \d+ ops, [^(]*\(([0-9.]+) %)");
    if (!std::regex_search(output, m, line)) return -1;
    return std::stod(m[2]);
}

class DnnlSharedModels : public ::testing::TestWithParam<std::string> {};

TEST_P(DnnlSharedModels, MatchReferenceWithMostFlopsOffloaded) {
    fs::path dir = shared_model(GetParam());
    ANVIL_REQUIRE_SHARED_MODELS(fs::exists(dir / "model.onnx"));
    compile_and_compare(dir, 3, kDnnl);
    std::string so = temp_so(GetParam() + "_dnnl_summary");
    Result c = run("compile " + (dir / "model.onnx").string() + " -o " + so + " " + kDnnl);
    ASSERT_EQ(c.status, 0) << c.output;
    EXPECT_GE(offloaded_percent(c.output), 95.0) << c.output;
    fs::remove(so);
}

INSTANTIATE_TEST_SUITE_P(SharedModels, DnnlSharedModels,
                         ::testing::Values("resnet18", "mobilenet_v2"));

class DnnlGeneratedModels : public ::testing::TestWithParam<std::string> {};

TEST_P(DnnlGeneratedModels, MatchReferenceWithSomethingOffloaded) {
    fs::path dir = fs::path(ANVIL_SOURCE_DIR) / "tests" / "models" / GetParam();
    compile_and_compare(dir, 3, kDnnl);
    std::string so = temp_so(GetParam() + "_dnnl_summary");
    Result c = run("compile " + (dir / "model.onnx").string() + " -o " + so + " " + kDnnl);
    ASSERT_EQ(c.status, 0) << c.output;
    // oneDNN takes static shapes only: a model with symbolic dimensions (run on the VM) keeps
    // its kernels.
    if (c.output.find("vm program") == std::string::npos) {
        EXPECT_GT(offloaded_percent(c.output), 0.0) << c.output;
    }
    fs::remove(so);
}

INSTANTIATE_TEST_SUITE_P(PyTorchExports, DnnlGeneratedModels,
                         ::testing::ValuesIn(generated_models()),
                         [](const auto& info) { return info.param; });

TEST(DnnlCli, PrintAfterPartitionShowsRegionsAndProfileTimesThem) {
    fs::path dir = shared_model("resnet18");
    ANVIL_REQUIRE_SHARED_MODELS(fs::exists(dir / "model.onnx"));
    std::string so = temp_so("resnet18_dnnl_print");
    Result c = run("compile " + (dir / "model.onnx").string() + " -o " + so + " " + kDnnl +
                   " --print-after partition_graph");
    ASSERT_EQ(c.status, 0) << c.output;
    EXPECT_NE(c.output.find("// after partition_graph"), std::string::npos) << c.output;
    EXPECT_NE(c.output.find("Compiler=\"dnnl\", global_symbol=\"tvmgen_default_dnnl_main_0\""),
              std::string::npos);
    EXPECT_NE(c.output.find("Composite=\"dnnl.conv2d\""), std::string::npos);
    std::string data = (dir / "test_data_set_0").string();
    Result r = run("run " + so + " --inputs " + data + " --profile --repeat 1");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_NE(r.output.find("tvmgen_default_dnnl_main_0"), std::string::npos) << r.output;
    fs::remove(so);
}

TEST(DnnlCli, VmCallsExternalFunctionsToo) {
    fs::path dir = shared_model("mobilenet_v2");
    ANVIL_REQUIRE_SHARED_MODELS(fs::exists(dir / "model.onnx"));
    compile_and_compare(dir, 3, std::string(kDnnl) + " --executor vm");
}

std::string write_module(const std::string& name, const std::string& text) {
    fs::path path = fs::temp_directory_path() / name;
    std::ofstream(path) << text;
    return path.string();
}

TEST(DnnlCliErrors, UnknownExternalCompilerIsNamed) {
    std::string m = write_module("byoc_relu.anvil",
                                 "def @main(%x: Tensor[(1, 4), float32]) {\n  nn.relu(%x)\n}\n");
    Result r = run("compile " + m + " -o " + temp_so("byoc_unknown") + " --target 'acme, llvm'");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("unknown external code generator 'acme'; this build of Anvil has: "
                            "dnnl"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("terminate"), std::string::npos);
}

TEST(DnnlCliErrors, RegionTheCodegenRejectsIsNamed) {
    // A hand-partitioned region holding an op oneDNN does not compute.
    std::string m = write_module("byoc_sin.anvil",
                                 "def @main(%x: Tensor[(1, 4), float32]) {\n"
                                 "  %0 = fn (%p0: Tensor[(1, 4), float32], Compiler=\"dnnl\") {\n"
                                 "    sin(%p0)\n"
                                 "  };\n"
                                 "  %0(%x)\n"
                                 "}\n");
    Result r = run("compile " + m + " -o " + temp_so("byoc_sin"));
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("the external code generator 'dnnl' cannot compute sin (in region "
                            "tvmgen_default_dnnl_main_0)"),
              std::string::npos)
        << r.output;
}

}  // namespace
