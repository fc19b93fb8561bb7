// One loaded model served from many threads, on compiled models (graph text with bound weights,
// exported to a .so and loaded back by the runtime): every output of 8 threads x 200 runs over
// two models at once equals the single-threaded result, through C++ and the C API; the VM serves
// many threads too; executors loaded from one library share its weights; and the stateful API
// shared by threads raises rather than answers wrongly. These need the compiler, so they run in
// the ordinary and the ASan + UBSan builds; ThreadSanitizer runs the runtime-only ones
// (tests/unit/runtime/graph_executor_concurrency_test.cpp, scripts/test.sh --sanitize).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "driver/compile.h"
#include "e2e/vm_test_util.h"
#include "graph/parser.h"
#include "graph/passes/passes.h"
#include "ops/op_table.h"
#include "runtime/graph_executor.h"
#include "runtime/vm.h"

namespace anvil {
namespace {

using runtime::GraphExecutor;
using runtime::NDArray;
using runtime::VirtualMachine;
using testing::contains;
using testing::error_of;
using testing::random_array;

// A convolution, a dense layer on its flattened output and an elementwise tail.
constexpr const char* kConvModel = R"(
def @main(%x: Tensor[(1, 3, 8, 8), float32], %w: Tensor[(8, 3, 3, 3), float32], %b: Tensor[(8,), float32], %v: Tensor[(10, 512), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.bias_add(%0, %b, axis=1);
  %2 = nn.relu(%1);
  %3 = flatten(%2);
  nn.dense(%3, %v)
}
)";

// Two inputs and two outputs.
constexpr const char* kTwoInputModel = R"(
def @main(%x: Tensor[(4, 16), float32], %y: Tensor[(4, 8), float32], %w: Tensor[(8, 16), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = add(%0, %y);
  (nn.relu(%1), multiply(%1, %1))
}
)";

// A symbolic batch: the VM runs it.
constexpr const char* kVMModel = R"(
def @main(%x: Tensor[(n, 24), float32], %w: Tensor[(16, 24), float32], %b: Tensor[(16,), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.bias_add(%0, %b, axis=1);
  nn.relu(%1)
}
)";

// Compiles `text` with the weights bound (so they live in the library's parameter blob) and
// exports it; the library is removed with the fixture.
class ConcurrencyModels : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        dir_ = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                         ("anvil_concurrency_" + std::to_string(getpid())));
        std::filesystem::create_directories(*dir_);
        conv_ = new std::string(build(kConvModel,
                                      {{"w", random_array({8, 3, 3, 3}, 1)},
                                       {"b", random_array({8}, 2)},
                                       {"v", random_array({10, 512}, 3)}},
                                      "conv.so", driver::Executor::graph));
        two_ = new std::string(build(kTwoInputModel, {{"w", random_array({8, 16}, 4)}}, "two.so",
                                     driver::Executor::graph));
        vm_ = new std::string(
            build(kVMModel, {{"w", random_array({16, 24}, 5)}, {"b", random_array({16}, 6)}},
                  "vm.so", driver::Executor::vm));
    }
    static void TearDownTestSuite() {
        std::filesystem::remove_all(*dir_);
        delete dir_;
        delete conv_;
        delete two_;
        delete vm_;
    }

    static std::string build(const char* text, const std::map<std::string, NDArray>& weights,
                             const char* file, driver::Executor executor) {
        graph::IRModule m = graph::parse_module(text, ops::op_table());
        m = graph::bind_params(m, "main", weights);
        std::string path = (*dir_ / file).string();
        driver::export_model(driver::compile_model(m, "llvm"), path, executor);
        return path;
    }

    static std::filesystem::path* dir_;
    static std::string* conv_;
    static std::string* two_;
    static std::string* vm_;
};

std::filesystem::path* ConcurrencyModels::dir_ = nullptr;
std::string* ConcurrencyModels::conv_ = nullptr;
std::string* ConcurrencyModels::two_ = nullptr;
std::string* ConcurrencyModels::vm_ = nullptr;

// Input sets for a graph executor, and what one thread alone computes for each.
struct Cases {
    std::vector<std::vector<NDArray>> inputs;
    std::vector<std::vector<std::vector<float>>> outputs;
};

Cases make_cases(const GraphExecutor& ex, unsigned seed) {
    Cases c;
    for (unsigned k = 0; k < 4; ++k) {
        std::vector<NDArray> in;
        for (int i = 0; i < ex.num_inputs(); ++i) {
            in.push_back(random_array(ex.input_info(i).shape, seed + 10 * k + i));
        }
        std::vector<std::vector<float>> out;
        for (const NDArray& o : ex.run_with(in)) out.push_back(o.to_vector<float>());
        c.inputs.push_back(std::move(in));
        c.outputs.push_back(std::move(out));
    }
    return c;
}

TEST_F(ConcurrencyModels, ConcurrentRunWithEightThreadsTwoModelsMatchesOneThread) {
    GraphExecutor conv = GraphExecutor::load(*conv_);
    GraphExecutor two = GraphExecutor::load(*two_);
    const Cases conv_cases = make_cases(conv, 100), two_cases = make_cases(two, 200);
    // The C API on executors of its own over the same files.
    AnvilGraphExecutorHandle conv_c = nullptr, two_c = nullptr;
    ASSERT_EQ(anvil_graph_executor_create_from_file(conv_->c_str(), &conv_c), 0);
    ASSERT_EQ(anvil_graph_executor_create_from_file(two_->c_str(), &two_c), 0);

    constexpr int kThreads = 8, kRuns = 200;
    std::atomic<int> wrong{0}, failed{0}, runs{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int r = 0; r < kRuns; ++r) {
                const bool use_conv = (r + t) % 2 == 0;
                const GraphExecutor& ex = use_conv ? conv : two;
                const Cases& cases = use_conv ? conv_cases : two_cases;
                const size_t k = static_cast<size_t>(r * 7 + t) % cases.inputs.size();
                std::vector<std::vector<float>> got;
                if (t % 2 == 0) {
                    for (const NDArray& o : ex.run_with(cases.inputs[k])) {
                        got.push_back(o.to_vector<float>());
                    }
                } else {
                    std::vector<const DLTensor*> in;
                    for (const NDArray& a : cases.inputs[k]) in.push_back(a.tensor());
                    std::vector<NDArray> out;
                    std::vector<DLTensor*> out_tensors;
                    for (int i = 0; i < ex.num_outputs(); ++i) {
                        out.push_back(
                            NDArray::empty(ex.output_info(i).shape, ex.output_info(i).dtype));
                        out_tensors.push_back(out.back().tensor());
                    }
                    if (anvil_graph_executor_run_with(
                            use_conv ? conv_c : two_c, in.data(), static_cast<int>(in.size()),
                            out_tensors.data(), static_cast<int>(out.size())) != 0) {
                        ++failed;
                        continue;
                    }
                    for (const NDArray& o : out) got.push_back(o.to_vector<float>());
                }
                if (got != cases.outputs[k]) ++wrong;
                ++runs;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(runs.load(), kThreads * kRuns);
    // A workspace per call running at once, never more.
    EXPECT_LE(conv.num_workspaces(), kThreads / 2);
    EXPECT_LE(two.num_workspaces(), kThreads / 2);
    anvil_graph_executor_free(conv_c);
    anvil_graph_executor_free(two_c);
}

TEST_F(ConcurrencyModels, ConcurrentVMRunsMatchOneThread) {
    VirtualMachine vm = VirtualMachine::load(*vm_);
    std::vector<NDArray> inputs;
    std::vector<std::vector<float>> expected;
    for (int64_t n : {1, 3, 8, 17}) {
        inputs.push_back(random_array({n, 24}, static_cast<unsigned>(n)));
        expected.push_back(vm.run({inputs.back()})[0].to_vector<float>());
    }
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int r = 0; r < 100; ++r) {
                size_t k = static_cast<size_t>(r + t) % inputs.size();
                if (vm.run({inputs[k]})[0].to_vector<float>() != expected[k]) ++wrong;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0);
}

TEST_F(ConcurrencyModels, ConcurrentExecutorsOverOneLibraryShareItsParams) {
    GraphExecutor a = GraphExecutor::load(*conv_);
    GraphExecutor b = GraphExecutor::load(*conv_);
    // Both read the weights in place from the one mapping of the library.
    void* library = dlopen(conv_->c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(library, nullptr);
    const void* blob = dlsym(library, ANVIL_GRAPH_PARAMS_SYMBOL);
    dlclose(library);
    ASSERT_NE(blob, nullptr);
    for (const auto& [name, p] : a.plan().params) {
        EXPECT_EQ(a.get_param(name).raw_data(), b.get_param(name).raw_data()) << name;
        EXPECT_EQ(a.get_param(name).raw_data(), static_cast<const char*>(blob) + p.offset);
    }
    EXPECT_GT(a.param_bytes(), 0);
    // run_with's workspaces hold activations only: they add planned_bytes each, no weights.
    EXPECT_EQ(a.num_workspaces(), 0);
    a.run_with({random_array({1, 3, 8, 8}, 1)});
    EXPECT_EQ(a.num_workspaces(), 1);

    VirtualMachine v1 = VirtualMachine::load(*vm_);
    VirtualMachine v2 = VirtualMachine::load(*vm_);
    for (const auto& [name, p] : v1.program().params) {
        EXPECT_EQ(v1.get_param(name).raw_data(), v2.get_param(name).raw_data()) << name;
    }
    EXPECT_FALSE(v1.program().params.empty());
}

TEST_F(ConcurrencyModels, ConcurrentUseOfTheStatefulApiRaisesInsteadOfAnsweringWrongly) {
    GraphExecutor ex = GraphExecutor::load(*two_);
    const Cases cases = make_cases(ex, 300);
    std::atomic<int> right{0}, refused{0}, wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int r = 0; r < 200; ++r) {
                size_t k = static_cast<size_t>(r + t) % cases.inputs.size();
                try {
                    ex.set_input(0, cases.inputs[k][0]);
                    ex.set_input(1, cases.inputs[k][1]);
                    ex.run();
                    std::vector<std::vector<float>> got;
                    for (int i = 0; i < ex.num_outputs(); ++i) {
                        got.push_back(ex.get_output(i).to_vector<float>());
                    }
                    (got == cases.outputs[k] ? right : wrong)++;
                } catch (const UserError& e) {
                    if (std::string(e.what()).find("serve one thread at a time") ==
                        std::string::npos) {
                        ADD_FAILURE() << e.what();
                    }
                    ++refused;
                }
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_EQ(right.load() + refused.load(), 800);
}

// The VM takes inputs in place: one that is not aligned is copied (kernels need alignment), and
// wrong inputs are named with their index.
TEST_F(ConcurrencyModels, VMInputsAnyAlignmentAndErrorsNameTheInput) {
    VirtualMachine vm = VirtualMachine::load(*vm_);
    NDArray x = random_array({3, 24}, 9);
    std::vector<float> expected = vm.run({x})[0].to_vector<float>();
    NDArray buffer = NDArray::empty({3 * 24 + 1}, {kDLFloat, 32, 1});
    std::memcpy(buffer.data<float>() + 1, x.raw_data(), x.nbytes());
    NDArray misaligned =
        NDArray::wrap(buffer.data<float>() + 1, {3, 24}, {kDLFloat, 32, 1}, nullptr);
    EXPECT_EQ(vm.run({misaligned})[0].to_vector<float>(), expected);

    EXPECT_TRUE(contains(error_of([&] { vm.run({}); }),
                         "vm: the model takes 1 input(s), given 0 (its inputs: 'x')"));
    EXPECT_TRUE(contains(error_of([&] { vm.run({NDArray()}); }), "vm: input 0 'x' is null"));
    EXPECT_TRUE(contains(error_of([&] {
                             vm.run({random_array({3, 23}, 1)});
                         }),
                         "vm: input 'x' has shape [3, 23], expected [n, 24] with n = 3 "
                         "(dimension 1 is 23, expected 24) (input 0 of 1)"));
    NDArray ints = NDArray::empty({3, 24}, {kDLInt, 32, 1});
    EXPECT_TRUE(contains(error_of([&] { vm.run({ints}); }),
                         "input 'x' has dtype int32, expected float32 (input 0 of 1)"));
}

}  // namespace
}  // namespace anvil
