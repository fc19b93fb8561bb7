// The graph executor: runs a compiled model described by an execution plan (graph_plan.h).
//
//   GraphExecutor ex = GraphExecutor::load("model.so");    // kernels + plan + params, one file
//   ex.set_input("input", image);                           // copied in, shape/dtype checked
//   ex.run();                                               // kernels in plan order
//   NDArray logits = ex.get_output(0);                      // a view; the next run overwrites it
//
//   std::vector<NDArray> out = ex.run_with({image});        // the same, safe from many threads
//
// Construction allocates every storage buffer once (64-byte aligned), makes the per-node tensor
// views and the argument arrays of every kernel call, and binds the params; run() then only calls
// kernels, it never allocates. Kernels themselves parallelize over the thread pool.
//
// Threads. The plan, the kernels and the params are read-only after construction and shared by
// every run; what a run writes (the activations) lives in a workspace. There are two ways in:
// - run_with(inputs) -> outputs is safe to call from any number of threads at once on one
//   executor (ONNX Runtime's InferenceSession.run): each call takes a workspace of its own from a
//   pool (made on first need, reused afterwards, so the pool grows to the most calls that ran at
//   once) and copies its inputs in and its outputs out.
// - set_input / run / get_output use the executor's own workspace: one thread at a time. Sharing
//   them between threads raises a UserError instead of mixing up inputs and outputs: a call made
//   while another thread is inside one of them raises; run() raises when an input was last set by
//   another thread; get_output() / copy_output() raise when another thread ran last; and run()
//   from a thread other than the last runner raises while views of the last run's outputs
//   (get_output) are still held. Handing an executor to another thread is fine once that thread
//   sets the inputs it runs on (and earlier output views are dropped).
// Several executors loaded from one library share its params (read in place, see below).
//
// The artifact: a shared library exported by codegen::export_library with two blobs (see
// codegen::add_blob): ANVIL_GRAPH_PLAN_SYMBOL, the plan's JSON, and ANVIL_GRAPH_PARAMS_SYMBOL, the
// parameter blob (pack_params). Params are read in place from the loaded library, not copied.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/graph_plan.h"
#include "runtime/kernel_profile.h"
#include "runtime/module.h"
#include "runtime/ndarray.h"

namespace anvil::runtime {

struct GraphTensorInfo {
    std::string name;
    std::vector<int64_t> shape;
    DLDataType dtype;
};

class GraphExecutor {
public:
    // Runs `plan` with the kernels of `kernels`; the parameter blob is copied. UserError when the
    // plan is invalid, a kernel is missing from the module or a param lies outside the blob.
    GraphExecutor(GraphPlan plan, std::span<const std::byte> params, Module kernels);
    GraphExecutor(const std::string& plan_json, std::span<const std::byte> params, Module kernels);
    // Loads an artifact; UserError naming the path when it is not a model library.
    static GraphExecutor load(const std::string& so_path);
    // A bundled model (anvil compile --bundle; runtime.h): kernels from its function table,
    // parameters read in place. UserError when the descriptor is not one this runtime knows.
    static GraphExecutor from_bundle(const AnvilBundle& bundle);

    GraphExecutor(GraphExecutor&&) noexcept;
    GraphExecutor& operator=(GraphExecutor&&) noexcept;
    ~GraphExecutor();

    int num_inputs() const;
    int num_outputs() const;
    // The index of the input named `name`; UserError listing the inputs when there is none.
    int input_index(const std::string& name) const;
    const GraphTensorInfo& input_info(int index) const;
    const GraphTensorInfo& output_info(int index) const;

    // Copies `value` into input `index`; UserError naming the input (index and name) when it is
    // NULL, its shape or dtype differ, it is not on the CPU or not compact row-major. Any data
    // alignment is accepted (the data is copied into aligned storage).
    void set_input(int index, const DLTensor* value);
    void set_input(const std::string& name, const DLTensor* value) {
        set_input(input_index(name), value);
    }
    void set_input(int index, const NDArray& value) { set_input(index, value.tensor()); }
    void set_input(const std::string& name, const NDArray& value) {
        set_input(input_index(name), value.tensor());
    }
    // The input's own buffer (a view), to fill in place instead of copying.
    NDArray get_input(int index) const;

    // Calls every kernel in order. A failing kernel raises UserError naming the node and kernel,
    // followed by the kernel's own message.
    void run();
    // run() with a steady_clock reading around every kernel call, added to the executor's
    // profile (runtime/kernel_profile.h) until reset_profile(). run() reads no clock: profiling
    // costs nothing unless asked for, and about two clock reads per kernel call when it is.
    void run_profiled();
    // The kernels' times over the profiled runs so far, with the operation counts the compiler
    // stored in the plan; longest first.
    Profile profile() const;
    void reset_profile();

    // The param named `name` (a view of the parameter blob; kernels never write it).
    NDArray get_param(const std::string& name) const;

    // A view of output `index`: valid as long as the caller holds it, overwritten by every run
    // (while it is held, a run from another thread raises; see "Threads").
    NDArray get_output(int index) const;
    // Copies output `index` into `dst` (same shape and dtype, compact, CPU).
    void copy_output(int index, DLTensor* dst) const;

    // Runs the model on `inputs` (one per input, in order) and returns fresh output tensors the
    // caller owns. Thread-safe: see "Threads" above. UserError naming the input (index and name)
    // when the count, a shape, a dtype, the device or the layout is wrong, or when a kernel fails.
    std::vector<NDArray> run_with(const std::vector<NDArray>& inputs) const;
    // The same with caller-provided outputs (compact CPU tensors of each output's shape and
    // dtype, any alignment), which receive a copy; what the C API's run_with calls.
    void run_with(std::span<const DLTensor* const> inputs,
                  std::span<DLTensor* const> outputs) const;
    // How many workspaces run_with has made (each planned_bytes()): at most the number of calls
    // that ran at once.
    int num_workspaces() const;

    // What the executor allocated for activations and inputs, what one buffer per tensor would
    // take, and the size of the params.
    int64_t planned_bytes() const;
    int64_t unshared_bytes() const;
    int64_t param_bytes() const;

    const GraphPlan& plan() const;
    const Module& module() const;

private:
    struct State;
    GraphExecutor(GraphPlan plan, std::span<const std::byte> params, Module kernels,
                  Ref<Object> params_owner);
    // get_output for the C API: the executor's own tensor, which a C caller borrows until the
    // executor is freed (C callers hold no reference that run() could count).
    DLTensor* borrow_output(int index) const;
    friend int ::anvil_graph_executor_get_output(AnvilGraphExecutorHandle, int, DLTensor**);

    std::unique_ptr<State> state_;
};

}  // namespace anvil::runtime
