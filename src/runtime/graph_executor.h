// The graph executor: runs a compiled model described by an execution plan (graph_plan.h).
//
//   GraphExecutor ex = GraphExecutor::load("model.so");    // kernels + plan + params, one file
//   ex.set_input("input", image);                           // copied in, shape/dtype checked
//   ex.run();                                               // kernels in plan order
//   NDArray logits = ex.get_output(0);                      // a view; the next run overwrites it
//
// Construction allocates every storage buffer once (64-byte aligned), makes the per-node tensor
// views and the argument arrays of every kernel call, and binds the params; run() then only calls
// kernels, it never allocates. An executor is not safe to use from several threads at once (its
// buffers are shared between runs); kernels themselves parallelize over the thread pool.
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

    GraphExecutor(GraphExecutor&&) noexcept;
    GraphExecutor& operator=(GraphExecutor&&) noexcept;
    ~GraphExecutor();

    int num_inputs() const;
    int num_outputs() const;
    // The index of the input named `name`; UserError listing the inputs when there is none.
    int input_index(const std::string& name) const;
    const GraphTensorInfo& input_info(int index) const;
    const GraphTensorInfo& output_info(int index) const;

    // Copies `value` into input `index`; UserError when its shape or dtype differ, it is not on
    // the CPU or not compact row-major.
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

    // A view of output `index`: valid as long as the caller holds it, overwritten by every run.
    NDArray get_output(int index) const;
    // Copies output `index` into `dst` (same shape and dtype, compact, CPU).
    void copy_output(int index, DLTensor* dst) const;

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

    std::unique_ptr<State> state_;
};

}  // namespace anvil::runtime
