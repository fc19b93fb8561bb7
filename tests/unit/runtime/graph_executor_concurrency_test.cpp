// The graph executor from several threads, on kernels written in C++ (the runtime alone):
// run_with is safe to share, the stateful API (set_input / run / get_output) raises when threads
// share it instead of handing one thread's outputs to another, and the tensors handed in through
// C++ and the C API are checked at the boundary with messages naming the input or output.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "add_plan.h"
#include "runtime/graph_executor.h"

namespace anvil::runtime {
namespace {

// Lets a test hold a kernel call open: while `hold` is set, the kernel waits for it to clear.
std::atomic<bool> g_hold{false};
std::atomic<bool> g_in_kernel{false};

// Defines kAddPlan's kernel "k".
class AddModule : public ModuleNode {
public:
    PackedFunc get_function(const std::string& name) override {
        if (name != "k") return PackedFunc();
        return PackedFunc([](const Args& args, RetValue*) {
            g_in_kernel.store(true);
            while (g_hold.load()) std::this_thread::yield();
            const auto* a = static_cast<const float*>(args[0].as_tensor()->data);
            const auto* b = static_cast<const float*>(args[1].as_tensor()->data);
            auto* out = static_cast<float*>(args[2].as_tensor()->data);
            for (int i = 0; i < 6; ++i) out[i] = a[i] + b[i];
            g_in_kernel.store(false);
        });
    }
    std::vector<std::string> function_names() const override { return {"k"}; }
};

const std::vector<float> kW = {10, 20, 30, 40, 50, 60};

GraphExecutor make_executor() {
    return GraphExecutor(std::string(kAddPlan), float_bytes(kW), Module(make_ref<AddModule>()));
}

NDArray input(float base) {
    NDArray x = NDArray::empty({2, 3}, {kDLFloat, 32, 1});
    x.copy_from(std::vector<float>{base, base + 1, base + 2, base + 3, base + 4, base + 5});
    return x;
}

std::vector<float> expected(float base) {
    std::vector<float> y;
    for (int i = 0; i < 6; ++i) y.push_back(base + static_cast<float>(i) + kW[i]);
    return y;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// Runs `f` on a thread of its own and waits for it.
void on_other_thread(const std::function<void()>& f) {
    std::thread t(f);
    t.join();
}

TEST(GraphExecutorConcurrency, RunWithFromManyThreadsGivesEachCallItsOwnResult) {
    GraphExecutor ex = make_executor();
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 300; ++i) {
                float base = static_cast<float>(t * 1000 + i);
                std::vector<NDArray> out = ex.run_with({input(base)});
                if (out.size() != 1 || out[0].to_vector<float>() != expected(base)) ++wrong;
            }
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(wrong.load(), 0);
    EXPECT_GE(ex.num_workspaces(), 1);
    EXPECT_LE(ex.num_workspaces(), 8);
}

TEST(GraphExecutorConcurrency, RunWithDoesNotTouchTheStatefulInputsAndOutputs) {
    GraphExecutor ex = make_executor();
    ex.set_input(0, input(1));
    ex.run();
    std::vector<NDArray> out = ex.run_with({input(100)});
    EXPECT_EQ(out[0].to_vector<float>(), expected(100));
    EXPECT_EQ(ex.get_output(0).to_vector<float>(), expected(1));
    EXPECT_EQ(ex.get_input(0).to_vector<float>(), input(1).to_vector<float>());
}

TEST(GraphExecutorConcurrency, RunRaisesWhenAnotherThreadSetTheInput) {
    GraphExecutor ex = make_executor();
    ex.set_input(0, input(1));
    on_other_thread([&] { ex.set_input(0, input(2)); });
    EXPECT_TRUE(contains(error_of([&] { ex.run(); }),
                         "graph executor: run: input 0 'x' was last set by another thread; "
                         "set_input / run / get_output serve one thread at a time: call run_with"));
    // Setting it again makes it this thread's.
    ex.set_input(0, input(3));
    ex.run();
    EXPECT_EQ(ex.get_output(0).to_vector<float>(), expected(3));
}

TEST(GraphExecutorConcurrency, GetOutputRaisesAfterAnotherThreadsRun) {
    GraphExecutor ex = make_executor();
    ex.set_input(0, input(1));
    ex.run();
    on_other_thread([&] {
        ex.set_input(0, input(2));
        ex.run();
    });
    EXPECT_TRUE(contains(error_of([&] { ex.get_output(0); }),
                         "graph executor: get_output(0): the last run was made by another thread"));
    NDArray copy = NDArray::empty({2, 3}, {kDLFloat, 32, 1});
    EXPECT_TRUE(contains(error_of([&] { ex.copy_output(0, copy.tensor()); }),
                         "copy_output(0): the last run was made by another thread"));
}

TEST(GraphExecutorConcurrency, RunRaisesWhileAnotherThreadHoldsOutputViews) {
    GraphExecutor ex = make_executor();
    ex.set_input(0, input(1));
    ex.run();
    NDArray held = ex.get_output(0);
    std::string e;
    on_other_thread([&] {
        ex.set_input(0, input(2));
        e = error_of([&] { ex.run(); });
    });
    EXPECT_TRUE(contains(e, "run: the outputs of another thread's run are still held"));
    EXPECT_EQ(held.to_vector<float>(), expected(1));  // not overwritten
    // Once the views are dropped, the executor can move to the other thread.
    held = NDArray();
    on_other_thread([&] {
        ex.set_input(0, input(2));
        ex.run();
        EXPECT_EQ(ex.get_output(0).to_vector<float>(), expected(2));
    });
}

TEST(GraphExecutorConcurrency, ACallWhileAnotherThreadIsInsideOneRaises) {
    GraphExecutor ex = make_executor();
    ex.set_input(0, input(1));
    g_hold.store(true);
    std::thread runner([&] {
        // This thread's run waits inside the kernel until released.
        ex.set_input(0, input(5));
        ex.run();
    });
    while (!g_in_kernel.load()) std::this_thread::yield();
    std::string e = error_of([&] { ex.set_input(0, input(9)); });
    g_hold.store(false);
    runner.join();
    EXPECT_TRUE(contains(e,
                         "graph executor: set_input was called while another thread is inside "
                         "set_input, run or get_output of the same executor"));
    // run_with is unaffected by the stateful API's state.
    EXPECT_EQ(ex.run_with({input(7)})[0].to_vector<float>(), expected(7));
}

// Every tensor a caller hands in is checked before its memory is touched.
TEST(GraphExecutorInputValidation, RunWithNamesTheInputAndWhatWasExpected) {
    GraphExecutor ex = make_executor();
    auto run_with = [&](std::vector<NDArray> in) { return error_of([&] { ex.run_with(in); }); };
    EXPECT_TRUE(contains(run_with({}),
                         "graph executor: run_with: the model takes 1 input(s) ('x'), given 0"));
    EXPECT_TRUE(contains(run_with({input(0), input(0)}), "takes 1 input(s) ('x'), given 2"));
    EXPECT_TRUE(contains(run_with({NDArray()}),
                         "graph executor: run_with: input 0 'x' is NULL; expected a tensor "
                         "float32[2, 3]"));
    EXPECT_TRUE(contains(run_with({NDArray::empty({3, 2}, {kDLFloat, 32, 1})}),
                         "graph executor: run_with: input 0 'x': expected float32[2, 3], got "
                         "float32[3, 2] (wrong shape)"));
    EXPECT_TRUE(contains(run_with({NDArray::empty({2, 3}, {kDLFloat, 64, 1})}),
                         "input 0 'x': expected float32[2, 3], got float64[2, 3] (wrong dtype)"));
    EXPECT_TRUE(contains(run_with({NDArray::empty({6}, {kDLInt, 32, 1})}),
                         "expected float32[2, 3], got int32[6] (wrong dtype and shape)"));
}

TEST(GraphExecutorInputValidation, StridesDeviceNullDataAndAlignment) {
    GraphExecutor ex = make_executor();
    alignas(64) float storage[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    int64_t shape[2] = {2, 3};
    DLTensor t{.data = storage,
               .device = {kDLCPU, 0},
               .ndim = 2,
               .dtype = {kDLFloat, 32, 1},
               .shape = shape,
               .strides = nullptr,
               .byte_offset = 0};
    auto set = [&](const DLTensor& v) { return error_of([&] { ex.set_input(0, &v); }); };

    DLTensor transposed = t;
    int64_t column_major[2] = {1, 2};
    transposed.strides = column_major;
    EXPECT_TRUE(contains(set(transposed),
                         "graph executor: set_input: input 0 'x' (float32[2, 3]) has strides "
                         "[1, 2], which is not compact row-major (expected strides [3, 1] or "
                         "NULL); make it contiguous first"));
    DLTensor row_major = t;
    int64_t compact[2] = {3, 1};
    row_major.strides = compact;
    EXPECT_EQ(set(row_major), "(no error)");

    DLTensor on_gpu = t;
    on_gpu.device = {kDLCUDA, 0};
    EXPECT_TRUE(contains(set(on_gpu),
                         "input 0 'x' is on device type 2 (CUDA); expected a CPU "
                         "tensor float32[2, 3]"));
    DLTensor no_data = t;
    no_data.data = nullptr;
    EXPECT_TRUE(contains(set(no_data), "input 0 'x' (float32[2, 3]) has NULL data"));
    DLTensor no_shape = t;
    no_shape.shape = nullptr;
    EXPECT_TRUE(contains(set(no_shape), "input 0 'x' has an invalid shape (ndim 2, shape NULL)"));
    EXPECT_TRUE(contains(error_of([&] { ex.set_input(0, static_cast<const DLTensor*>(nullptr)); }),
                         "input 0 'x' is NULL"));

    // Any alignment is accepted: the data is copied into the executor's aligned storage.
    DLTensor misaligned = t;
    misaligned.data = storage + 1;  // 4 bytes past a 64-byte boundary
    ASSERT_EQ(set(misaligned), "(no error)");
    ex.run();
    EXPECT_EQ(ex.get_output(0).to_vector<float>(), expected(1));
    DLTensor offset = t;
    offset.byte_offset = 2 * sizeof(float);
    std::vector<const DLTensor*> in = {&offset};
    alignas(64) float out_storage[7] = {};
    DLTensor out = t;
    out.data = out_storage + 1;
    std::vector<DLTensor*> outs = {&out};
    ex.run_with(in, outs);
    EXPECT_EQ(std::vector<float>(out_storage + 1, out_storage + 7), expected(2));

    // Outputs are checked like inputs.
    DLTensor small = t;
    int64_t small_shape[1] = {6};
    small.shape = small_shape;
    small.ndim = 1;
    outs = {&small};
    EXPECT_TRUE(contains(error_of([&] { ex.run_with(in, outs); }),
                         "graph executor: run_with: output 0 'y': expected float32[2, 3], got "
                         "float32[6] (wrong shape)"));
    outs = {};
    EXPECT_TRUE(contains(error_of([&] { ex.run_with(in, outs); }),
                         "the model has 1 output(s) ('y'), given 0 to write"));
}

TEST(GraphExecutorInputValidation, TheCApiReturnsAStatusAndNamesTheInput) {
    std::vector<std::byte> w = float_bytes(kW);
    AnvilModuleHandle module = module_new_handle(Module(make_ref<AddModule>()));
    AnvilGraphExecutorHandle h = nullptr;
    ASSERT_EQ(anvil_graph_executor_create(kAddPlan, w.data(), w.size(), module, &h), 0)
        << anvil_get_last_error();
    anvil_module_free(module);

    NDArray x = input(4);
    NDArray y = NDArray::empty({2, 3}, {kDLFloat, 32, 1});
    const DLTensor* in[1] = {x.tensor()};
    DLTensor* out[1] = {y.tensor()};
    ASSERT_EQ(anvil_graph_executor_run_with(h, in, 1, out, 1), 0) << anvil_get_last_error();
    EXPECT_EQ(y.to_vector<float>(), expected(4));

    auto fails = [&](int status, const std::string& message) {
        EXPECT_EQ(status, -1);
        EXPECT_TRUE(contains(anvil_get_last_error(), message));
    };
    fails(anvil_graph_executor_run_with(nullptr, in, 1, out, 1),
          "anvil_graph_executor_run_with: the executor handle is NULL");
    fails(anvil_graph_executor_run_with(h, nullptr, 1, out, 1),
          "anvil_graph_executor_run_with: inputs is NULL but num_inputs is 1");
    fails(anvil_graph_executor_run_with(h, in, 1, nullptr, 1), "outputs is NULL but num_outputs");
    fails(anvil_graph_executor_run_with(h, in, -1, out, 1), "must not be negative");
    fails(anvil_graph_executor_run_with(h, in, 0, out, 1), "takes 1 input(s) ('x'), given 0");
    const DLTensor* null_in[1] = {nullptr};
    fails(anvil_graph_executor_run_with(h, null_in, 1, out, 1),
          "graph executor: run_with: input 0 'x' is NULL");
    NDArray wrong = NDArray::empty({2, 3}, {kDLInt, 64, 1});
    const DLTensor* wrong_in[1] = {wrong.tensor()};
    fails(anvil_graph_executor_run_with(h, wrong_in, 1, out, 1),
          "input 0 'x': expected float32[2, 3], got int64[2, 3] (wrong dtype)");
    fails(anvil_graph_executor_set_input(h, "x", wrong.tensor()),
          "graph executor: set_input: input 0 'x': expected float32[2, 3], got int64[2, 3]");
    fails(anvil_graph_executor_set_input_index(h, 2, x.tensor()),
          "input index 2 is out of range; the model has 1 input(s): 'x'");
    fails(anvil_graph_executor_set_input(h, nullptr, x.tensor()), "name is NULL");
    fails(anvil_graph_executor_set_input(h, "x", nullptr), "input 0 'x' is NULL");
    fails(anvil_graph_executor_copy_output(h, 0, wrong.tensor()),
          "copy_output(0): output 0 'y': expected float32[2, 3], got int64[2, 3]");
    fails(anvil_graph_executor_get_output(h, 0, nullptr), "out is NULL");
    anvil_graph_executor_free(h);
}

}  // namespace
}  // namespace anvil::runtime
