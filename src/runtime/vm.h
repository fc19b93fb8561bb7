// The virtual machine: runs a compiled model whose shapes are known only at run time (symbolic
// dimensions, shapes computed from data) or whose graph has control flow. The program format is
// in vm_program.h; kernels are module functions called in destination-passing style, exactly as
// the graph executor calls them, so both executors share every kernel.
//
//   VirtualMachine vm = VirtualMachine::load("model.so");   // kernels + program + params
//   std::vector<NDArray> out = vm.run({input});             // any batch the model allows
//
// Tensors are allocated per run from a memory pool that reuses freed storage (memory_pool.h);
// outputs are fresh tensors the caller owns. Inputs are borrowed, not copied (except one whose
// data is not ANVIL_TENSOR_ALIGNMENT aligned, which is copied into aligned memory first, as
// kernels require). Kernels parallelize over the thread pool.
//
// Threads: run, run_values and invoke may be called from any number of threads at once on one
// VM. Each call keeps its registers to itself; the program, the kernels and the params are
// read-only and shared; the memory pool and the profile are internally synchronized. Several VMs
// loaded from one library share its params (read in place from the loaded library).
//
// The artifact: a shared library with the blobs ANVIL_VM_PROGRAM_SYMBOL (the program's JSON) and
// ANVIL_GRAPH_PARAMS_SYMBOL (the parameter blob).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernel_profile.h"
#include "runtime/memory_pool.h"
#include "runtime/module.h"
#include "runtime/ndarray.h"
#include "runtime/vm_program.h"

namespace anvil::runtime {

// A value in a VM register: a tensor, a tuple (tuples also hold ONNX sequences), or nothing (an
// empty optional).
struct VMValue {
    enum class Kind { none, tensor, tuple };
    Kind kind = Kind::none;
    NDArray tensor;
    std::vector<VMValue> fields;

    VMValue() = default;
    VMValue(NDArray t) : kind(Kind::tensor), tensor(std::move(t)) {}  // NOLINT: implicit on purpose
    static VMValue tuple(std::vector<VMValue> fields);
};

// What an input of the entry function takes (from the program's match_shape of it).
struct VMInputInfo {
    std::string name;
    DLDataType dtype{kDLFloat, 32, 1};  // of the tensor, or of the sequence's tensors
    bool sequence = false;              // a sequence of tensors (a tuple)
    bool optional = false;              // may be none (an ONNX optional)
};

class VirtualMachine {
public:
    VirtualMachine(VMProgram program, std::span<const std::byte> params, Module kernels);
    // Loads an artifact; UserError naming the path when it holds no VM program.
    static VirtualMachine load(const std::string& so_path);

    VirtualMachine(VirtualMachine&&) noexcept;
    VirtualMachine& operator=(VirtualMachine&&) noexcept;
    ~VirtualMachine();

    const std::vector<std::string>& input_names() const;
    const std::vector<std::string>& output_names() const;
    // The index of the input named `name`; UserError listing the inputs when there is none.
    int input_index(const std::string& name) const;
    // The dtype input `index` must have (from the program's match_shape of it).
    DLDataType input_dtype(int index) const;
    // What input `index` takes; UserError when out of range.
    VMInputInfo input_info(int index) const;
    // Whether the library at `so_path` holds a VM program (rather than a graph plan).
    static bool is_vm_artifact(const std::string& so_path);

    // Runs the entry function on `inputs` (one per input, in order); returns every tensor of
    // its results in order, a result that is a sequence (or a tuple) flattened into its tensors
    // and an empty optional giving none (run_values keeps them apart). UserError when an input's
    // shape or dtype does not fit the model (naming the input, the expected shape and the bound
    // dimensions) or a kernel fails (naming the model node).
    std::vector<NDArray> run(const std::vector<NDArray>& inputs);
    // Runs the entry function on values (a tensor, a sequence as a tuple of tensors, none for an
    // empty optional; input_info says which each input takes); returns one value per output
    // (output_names()), a sequence as a tuple of its tensors.
    std::vector<VMValue> run_values(std::vector<VMValue> inputs);
    // Runs any function of the program on values.
    VMValue invoke(const std::string& function, std::vector<VMValue> args);

    // Kernel timing (runtime/kernel_profile.h; operation counts unknown): while on, every kernel
    // call of run / run_values / invoke is timed and counted under the name of the kernel it
    // calls (a variant specialized for bucket sizes under its own name), until reset_profile().
    // Off by default, and then no clock is read.
    void set_profiling(bool on);
    Profile profile() const;
    void reset_profile();

    // The param named `name` (a view of the parameter blob; kernels never write it).
    NDArray get_param(const std::string& name) const;

    MemoryPoolStats pool_stats() const;
    const VMProgram& program() const;

private:
    struct State;
    VMValue call_main(std::vector<VMValue> inputs);
    VirtualMachine(VMProgram program, std::span<const std::byte> params, Module kernels,
                   Ref<Object> params_owner);
    std::unique_ptr<State> state_;
};

}  // namespace anvil::runtime
