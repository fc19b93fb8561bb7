// Profiling a compiled model: the compiler stores each kernel's floating-point operation count in
// the graph plan, the runtime alone (the model loaded from its .so) times every kernel call, and
// the report has one line per kernel and a total. Timings vary; the test checks everything else.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "driver/compile.h"
#include "graph/parser.h"
#include "ops/op_table.h"
#include "run_kernel.h"
#include "runtime/graph_executor.h"

namespace anvil {
namespace {

using runtime::GraphExecutor;
using runtime::Profile;

// conv2d 3x3 (padding 1) + relu, flatten, dense: two or three kernels whichever way they fuse.
constexpr const char* kModel = R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(32, 3, 3, 3), float32], %v: Tensor[(32, 2048), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.relu(%0);
  %2 = flatten(%1);
  nn.dense(%2, %v)
}
)";

// The operations of one run: conv 2 x (32 x 8 x 8 outputs x 27 taps), relu 1 per output (a max),
// dense 2 x (32 x 2048). The count is of what the kernels execute, padding included: channel
// and output counts of 32 fill the schedules' blocks, so nothing is padded here (4 output
// channels would count as 8 or 16, the block the packed weights are padded to).
constexpr int64_t kConvFlops = 2 * 32 * 8 * 8 * 27 + 32 * 8 * 8;
constexpr int64_t kDenseFlops = 2 * 32 * 2048;

class ProfiledModel : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ =
            std::filesystem::temp_directory_path() / ("anvil_profile_" + std::to_string(getpid()));
        std::filesystem::create_directories(dir_);
        path_ = (dir_ / "model.so").string();
        graph::IRModule m = graph::parse_module(kModel, ops::op_table());
        driver::export_model(driver::compile_model(m, "llvm"), path_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    GraphExecutor load() const {
        GraphExecutor ex = GraphExecutor::load(path_);
        ex.set_input("x", testing::random_tensor({1, 3, 8, 8}, 1));
        ex.set_input("w", testing::random_tensor({32, 3, 3, 3}, 2));
        ex.set_input("v", testing::random_tensor({32, 2048}, 3));
        return ex;
    }

    std::filesystem::path dir_;
    std::string path_;
};

TEST_F(ProfiledModel, ThePlanCarriesEachKernelsOperationCount) {
    GraphExecutor ex = load();
    int64_t total = 0;
    int kernels = 0;
    for (const auto& node : ex.plan().nodes) {
        if (node.kind != runtime::PlanNodeKind::kernel) continue;
        ++kernels;
        EXPECT_GE(node.flops, 0) << node.kernel;
        total += node.flops;
        if (node.kernel.find("conv2d") != std::string::npos) {
            EXPECT_EQ(node.flops, kConvFlops) << node.kernel;
        }
        if (node.kernel.find("dense") != std::string::npos) {
            EXPECT_EQ(node.flops, kDenseFlops) << node.kernel;
        }
    }
    EXPECT_GE(kernels, 2);
    EXPECT_EQ(total, kConvFlops + kDenseFlops);
}

TEST_F(ProfiledModel, ProfiledRunsAddUpPerKernel) {
    GraphExecutor ex = load();
    ex.run();  // not profiled
    EXPECT_EQ(ex.profile().runs, 0);
    EXPECT_TRUE(ex.profile().kernels.empty());
    std::vector<float> plain = ex.get_output(0).to_vector<float>();

    for (int i = 0; i < 5; ++i) ex.run_profiled();
    EXPECT_EQ(ex.get_output(0).to_vector<float>(), plain);  // the same results
    ex.run();                                               // adds nothing
    Profile p = ex.profile();
    EXPECT_EQ(p.runs, 5);
    std::map<std::string, int64_t> nodes_per_kernel;
    for (const auto& node : ex.plan().nodes) {
        if (node.kind == runtime::PlanNodeKind::kernel) ++nodes_per_kernel[node.kernel];
    }
    ASSERT_EQ(p.kernels.size(), nodes_per_kernel.size());
    int64_t flops = 0;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
        const runtime::KernelProfile& k = p.kernels[i];
        EXPECT_EQ(k.calls, 5 * nodes_per_kernel.at(k.kernel)) << k.kernel;
        EXPECT_GE(k.total_ms, 0.0);
        if (i > 0) EXPECT_LE(k.total_ms, p.kernels[i - 1].total_ms);  // longest first
        flops += k.flops * nodes_per_kernel.at(k.kernel);
    }
    EXPECT_EQ(flops, kConvFlops + kDenseFlops);
    EXPECT_GT(p.total_ms(), 0.0);

    // The report: a heading, the column names, one line per kernel, the total.
    std::string text = runtime::format_profile(p);
    std::istringstream in(text);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), p.kernels.size() + 3) << text;
    EXPECT_EQ(lines[0],
              "profile: 5 runs, " + std::to_string(p.calls() / 5) + " kernel calls per run");
    EXPECT_EQ(lines[1].rfind("kernel ", 0), 0u) << text;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
        std::istringstream fields(lines[2 + i]);
        std::string name, calls;
        fields >> name >> calls;
        EXPECT_EQ(name, p.kernels[i].kernel);
        EXPECT_EQ(calls, std::to_string(p.kernels[i].calls));
    }
    EXPECT_EQ(lines.back().rfind("total ", 0), 0u) << text;
    EXPECT_NE(lines.back().find("100.0%"), std::string::npos) << text;
    // Its last field: MFLOP per run.
    char mflop[32];
    std::snprintf(mflop, sizeof mflop, " %.2f", (kConvFlops + kDenseFlops) / 1e6);
    EXPECT_EQ(lines.back().substr(lines.back().size() - std::strlen(mflop)), mflop) << text;

    ex.reset_profile();
    EXPECT_EQ(ex.profile().runs, 0);
    EXPECT_TRUE(ex.profile().kernels.empty());
}

TEST_F(ProfiledModel, TheCApiReportsTheSameTable) {
    AnvilGraphExecutorHandle h = nullptr;
    ASSERT_EQ(anvil_graph_executor_create_from_file(path_.c_str(), &h), 0)
        << anvil_get_last_error();
    ASSERT_EQ(anvil_graph_executor_run_profiled(h), 0) << anvil_get_last_error();
    ASSERT_EQ(anvil_graph_executor_run_profiled(h), 0) << anvil_get_last_error();
    const char* text = nullptr;
    ASSERT_EQ(anvil_graph_executor_get_profile(h, &text), 0) << anvil_get_last_error();
    ASSERT_NE(text, nullptr);
    EXPECT_EQ(std::string(text).rfind("profile: 2 runs, ", 0), 0u) << text;
    EXPECT_NE(std::string(text).find("\ntotal "), std::string::npos) << text;
    ASSERT_EQ(anvil_graph_executor_reset_profile(h), 0);
    ASSERT_EQ(anvil_graph_executor_get_profile(h, &text), 0);
    EXPECT_STREQ(text, "profile: no profiled runs\n");
    EXPECT_EQ(anvil_graph_executor_get_profile(h, nullptr), -1);
    anvil_graph_executor_free(h);
}

}  // namespace
}  // namespace anvil
