// The graph executor on real kernels: a hand-made plan over two tensor-expression kernels, run
// from the JIT, exported as one artifact (.so with kernels + plan + params), loaded back by the
// runtime alone, and run by the C deployment example (examples/c_deploy/run_model.c).
#include "runtime/graph_executor.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/llvm/llvm_module.h"
#include "driver/plan_memory.h"
#include "run_kernel.h"

namespace anvil {
namespace {

using runtime::GraphExecutor;
using runtime::GraphPlan;
using runtime::NDArray;
using runtime::PlanNodeKind;

struct TinyModel {
    runtime::Module kernels;
    GraphPlan plan;
    std::string params;
    std::vector<float> w;
};

runtime::PlanTensor f32(std::vector<int64_t> shape) {
    return {.shape = std::move(shape), .dtype = {kDLFloat, 32, 1}, .storage = -1};
}

// Two kernels, "add" (C = A + B) and "scale" (C = 2 A + 1), on [1, n] float32, and the plan
//   y = scale(add(scale(add(x, w)), w))
// whose intermediate tensors share storage.
TinyModel make_tiny_model(int64_t n) {
    PrimExpr extent = static_cast<int>(n);
    te::Tensor A = te::placeholder({1, extent}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({1, extent}, DataType::float32(), "B");
    te::Tensor sum = te::compute(
        {1, extent}, [&](PrimExpr i, PrimExpr j) { return A(i, j) + B(i, j); }, "C");
    te::Tensor scaled = te::compute(
        {1, extent}, [&](PrimExpr i, PrimExpr j) { return A(i, j) * 2.0f + 1.0f; }, "C");
    Target host = Target::host();
    auto add = driver::lower(te::create_schedule({sum}), {A, B, sum}, "add", host);
    auto scale = driver::lower(te::create_schedule({scaled}), {A, scaled}, "scale", host);

    TinyModel model;
    model.kernels = codegen::build_llvm({add, scale}, host);
    GraphPlan& plan = model.plan;
    auto kernel = [&](const char* name, const char* k, std::vector<runtime::PlanEntry> args) {
        plan.nodes.push_back({.kind = PlanNodeKind::kernel,
                              .name = name,
                              .kernel = k,
                              .args = std::move(args),
                              .outputs = {f32({1, n})}});
        return static_cast<int>(plan.nodes.size()) - 1;
    };
    plan.nodes.push_back({.kind = PlanNodeKind::input, .name = "x", .outputs = {f32({1, n})}});
    plan.nodes.push_back({.kind = PlanNodeKind::param, .name = "w", .outputs = {f32({1, n})}});
    int a = kernel("add0", "add", {{0, 0}, {1, 0}});
    int b = kernel("scale0", "scale", {{a, 0}});
    int c = kernel("add1", "add", {{b, 0}, {1, 0}});
    int d = kernel("scale1", "scale", {{c, 0}});
    plan.inputs = {{"x", 0}};
    plan.outputs = {{"y", {d, 0}}};
    NDArray w = NDArray::empty({1, n}, {kDLFloat, 32, 1});
    for (int64_t i = 0; i < n; ++i) model.w.push_back(static_cast<float>((i * 7) % n) * 0.25f);
    w.copy_from(model.w);
    model.params = runtime::pack_params({{"w", w}}, &plan);
    driver::plan_graph_memory(plan);
    return model;
}

std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& w) {
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = 2 * (2 * (x[i] + w[i]) + 1 + w[i]) + 1;
    return y;
}

std::span<const std::byte> bytes_of(const std::string& s) {
    return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

class TempDir {
public:
    TempDir() {
        static int counter = 0;
        path_ = std::filesystem::temp_directory_path() /
                ("anvil_graph_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() { std::filesystem::remove_all(path_); }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

std::string export_model(const TinyModel& model, const TempDir& dir) {
    codegen::add_blob(model.kernels, ANVIL_GRAPH_PLAN_SYMBOL, runtime::plan_to_json(model.plan));
    codegen::add_blob(model.kernels, ANVIL_GRAPH_PARAMS_SYMBOL, model.params);
    std::string path = dir.file("model.so");
    codegen::export_library(model.kernels, path);
    return path;
}

TEST(GraphExecutor, RunsTeKernelsAndSharesStorage) {
    TinyModel model = make_tiny_model(37);
    GraphExecutor ex(model.plan, bytes_of(model.params), model.kernels);
    // add0 and add1 never overlap, nor scale0 and scale1; y (output) and x (input) share nothing.
    EXPECT_EQ(ex.plan().storage.size(), 4u);
    EXPECT_LT(ex.planned_bytes(), ex.unshared_bytes());
    for (uint32_t seed : {1u, 2u}) {  // the second run reuses the same buffers
        NDArray x = testing::random_tensor({1, 37}, seed);
        ex.set_input("x", x);
        ex.run();
        EXPECT_EQ(ex.get_output(0).to_vector<float>(), reference(x.to_vector<float>(), model.w));
    }
}

TEST(GraphExecutor, PropagatesKernelErrorsWithTheNode) {
    TinyModel model = make_tiny_model(16);
    // The plan claims [1, 8] tensors for kernels compiled for [1, 16]: the kernel's own check
    // fires and the executor names the node.
    GraphPlan plan = model.plan;
    plan.nodes[0].outputs[0].shape = {1, 8};
    GraphExecutor ex(plan, bytes_of(model.params), model.kernels);
    try {
        ex.run();
        ADD_FAILURE() << "a mismatched kernel ran";
    } catch (const UserError& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("node 2 'add0' (kernel 'add') failed: add: argument 0 'A' has shape "
                           "[1, 8]"),
                  std::string::npos)
            << msg;
    }
}

TEST(GraphArtifact, RoundTripsThroughOneSharedLibrary) {
    TempDir dir;
    TinyModel model = make_tiny_model(50);
    std::string path = export_model(model, dir);

    GraphExecutor ex = GraphExecutor::load(path);
    EXPECT_EQ(ex.num_inputs(), 1);
    EXPECT_EQ(ex.input_info(0).name, "x");
    EXPECT_EQ(ex.output_info(0).shape, (std::vector<int64_t>{1, 50}));
    EXPECT_EQ(ex.param_bytes(), 200);
    NDArray x = testing::random_tensor({1, 50}, 5);
    ex.set_input(0, x);
    ex.run();
    NDArray y = ex.get_output(0);
    EXPECT_EQ(y.to_vector<float>(), reference(x.to_vector<float>(), model.w));

    // Params are read in place from the loaded library, not copied.
    void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(library, nullptr);
    EXPECT_EQ(ex.get_param("w").raw_data(), dlsym(library, ANVIL_GRAPH_PARAMS_SYMBOL));
    dlclose(library);
    EXPECT_EQ(ex.get_param("w").to_vector<float>(), model.w);

    // The output view outlives the executor.
    std::vector<float> expected = y.to_vector<float>();
    { GraphExecutor moved = std::move(ex); }
    EXPECT_EQ(y.to_vector<float>(), expected);

    // The C API on the same file.
    AnvilGraphExecutorHandle h = nullptr;
    ASSERT_EQ(anvil_graph_executor_create_from_file(path.c_str(), &h), 0) << anvil_get_last_error();
    int num_outputs = 0;
    ASSERT_EQ(anvil_graph_executor_get_num_outputs(h, &num_outputs), 0);
    EXPECT_EQ(num_outputs, 1);
    ASSERT_EQ(anvil_graph_executor_set_input(h, "x", x.tensor()), 0) << anvil_get_last_error();
    ASSERT_EQ(anvil_graph_executor_run(h), 0) << anvil_get_last_error();
    NDArray out = testing::zeros({1, 50});
    ASSERT_EQ(anvil_graph_executor_copy_output(h, 0, out.tensor()), 0) << anvil_get_last_error();
    EXPECT_EQ(out.to_vector<float>(), expected);
    NDArray wrong = testing::zeros({50});
    EXPECT_EQ(anvil_graph_executor_set_input(h, "x", wrong.tensor()), -1);
    EXPECT_NE(std::string(anvil_get_last_error()).find("expected float32[1, 50], got float32[50]"),
              std::string::npos)
        << anvil_get_last_error();
    EXPECT_EQ(anvil_graph_executor_set_input(h, "image", x.tensor()), -1);
    EXPECT_NE(std::string(anvil_get_last_error()).find("no input named 'image'"),
              std::string::npos);
    anvil_graph_executor_free(h);
}

TEST(GraphArtifact, AKernelLibraryWithoutAPlanIsNotAModel) {
    TempDir dir;
    TinyModel model = make_tiny_model(8);
    std::string path = dir.file("kernels.so");
    codegen::export_library(model.kernels, path);
    try {
        GraphExecutor::load(path);
        ADD_FAILURE() << "a library without a plan loaded as a model";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("holds no graph"), std::string::npos) << e.what();
    }
}

TEST(GraphArtifact, BlobNamesAreChecked) {
    TinyModel model = make_tiny_model(8);
    for (const char* bad : {"add", "9lives", "a-b", ANVIL_MODULE_FUNCTION_LIST_SYMBOL}) {
        EXPECT_THROW(codegen::add_blob(model.kernels, bad, "x"), UserError) << bad;
    }
}

TEST(GraphArtifact, LargeParamsAreEmbeddedQuickly) {
    TempDir dir;
    constexpr int64_t n = 3 << 20;  // 12 MiB of params
    TinyModel model = make_tiny_model(n);
    auto start = std::chrono::steady_clock::now();
    std::string path = export_model(model, dir);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 20.0);
    GraphExecutor ex = GraphExecutor::load(path);
    NDArray x = testing::zeros({1, n});
    ex.set_input("x", x);
    ex.run();
    std::vector<float> y = ex.get_output(0).to_vector<float>();
    std::vector<float> expected = reference(std::vector<float>(n, 0.0f), model.w);
    EXPECT_EQ(y, expected);
}

#ifdef ANVIL_RUN_MODEL_EXE
std::string run_command(const std::string& command, int* status) {
    std::string output;
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return "popen failed";
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) output.append(buf, n);
    *status = pclose(pipe);
    return output;
}

TEST(CDeployExample, RunsTheArtifactAndPrintsTopFive) {
    TempDir dir;
    TinyModel model = make_tiny_model(10);
    std::string path = export_model(model, dir);
    // x = -i: y = 2 (2 (x + w) + 1 + w) + 1 with w = (7 i mod 10) / 4.
    std::vector<float> x(10);
    for (int i = 0; i < 10; ++i) x[i] = -0.5f * static_cast<float>(i);
    std::string input = dir.file("input.raw");
    std::ofstream(input, std::ios::binary)
        .write(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(float));
    int status = 0;
    std::string out =
        run_command(std::string(ANVIL_RUN_MODEL_EXE) + " " + path + " " + input, &status);
    ASSERT_EQ(status, 0) << out;

    std::vector<float> y = reference(x, model.w);
    std::vector<int> order(10);
    for (int i = 0; i < 10; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return y[a] > y[b]; });
    std::istringstream lines(out);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "output 0 shape [1, 10]");
    for (int r = 0; r < 5; ++r) {
        int index = -1;
        float value = 0;
        ASSERT_TRUE(lines >> index >> value) << out;
        EXPECT_EQ(index, order[r]) << out;
        EXPECT_FLOAT_EQ(value, y[order[r]]);
    }
    EXPECT_NE(out.find("memory planned"), std::string::npos) << out;

    // Zeros without an input file; a clean message for a file that is not a model.
    out = run_command(std::string(ANVIL_RUN_MODEL_EXE) + " " + path, &status);
    EXPECT_EQ(status, 0) << out;
    out = run_command(std::string(ANVIL_RUN_MODEL_EXE) + " " + input, &status);
    EXPECT_NE(status, 0);
    EXPECT_NE(out.find("run_model: cannot load"), std::string::npos) << out;
}
#endif

}  // namespace
}  // namespace anvil
