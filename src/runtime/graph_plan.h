// The execution plan: what the graph executor runs, as data.
//
// The compiler's lowering emits one plan per model (a JSON document stored in the artifact next to
// the kernels and the parameter blob); the runtime reads it back with plan_from_json, which checks
// everything it relies on, so a bad plan is a UserError at load time, never a crash at run time.
//
// JSON schema, version 1 (every key not marked optional is required):
//
//   {
//     "version": 1,
//     "inputs":  [{"name": "input", "node": 0}],           // graph inputs, in order
//     "outputs": [{"node": 7, "index": 0,                   // index: optional, default 0
//                  "name": "logits"}],                      // name: optional, default "output<i>"
//     "nodes": [                                            // in execution order
//       {"kind": "input",  "name": "input", "shape": [1, 3, 224, 224], "dtype": "float32",
//        "storage": 0},
//       {"kind": "param",  "name": "conv1.weight", "shape": [64, 3, 7, 7], "dtype": "float32"},
//       {"kind": "kernel", "name": "conv1", "kernel": "fused_conv2d_add_relu",
//        "args": [0, 1, [5, 1]],                            // node id (output 0) or [node, index]
//        "shape": [1, 64, 112, 112], "dtype": "float32", "storage": 3,
//        "flops": 236027904},                               // flops: optional, per call
//       {"kind": "kernel", "name": "split", "kernel": "fused_split", "args": [3],
//        "outputs": [{"shape": [...], "dtype": "float32", "storage": 4},   // several outputs:
//                    {"shape": [...], "dtype": "float32", "storage": 5}]}  // a list instead
//     ],
//     "storage": [{"id": 3, "bytes": 3211264, "device": "cpu"}],   // device: optional, "cpu"
//     "params": {"conv1.weight": {"offset": 0, "nbytes": 37632,
//                                 "shape": [64, 3, 7, 7], "dtype": "float32"}}
//   }
//
// Meaning:
// - A kernel node calls the module function "kernel" with the packed convention: one DLTensor*
//   per arg, then one per output; arguments refer only to earlier nodes.
// - Input and kernel outputs live in storage buffers (allocated once, 64-byte aligned); several
//   tensors may share a storage id when their lifetimes do not overlap (driver/plan_memory.h).
//   A storage holds at least the bytes of every tensor placed in it.
// - Params live in the parameter blob: param node "name" is the bytes [offset, offset + nbytes)
//   of the blob; offsets are multiples of 64 so kernels can read them in place. The shape and
//   dtype on a param node must equal its "params" entry.
// - Graph inputs are input nodes; graph outputs may be any node's output.
// - Kernels never write their arguments, so params may be read-only memory.
// - "flops" is the number of floating-point operations one call of the kernel performs, counted
//   by the compiler on its loop IR (driver/count_flops.h); absent when unknown. Only profiling
//   reads it (achieved GFLOP/s); the runtime cannot count it, as it never sees the loop IR.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime.h"
#include "runtime/ndarray.h"
#include "runtime/param_blob.h"

namespace anvil::runtime {

enum class PlanNodeKind { input, param, kernel };

// One output of a node, or an argument: output `index` of node `node`.
struct PlanEntry {
    int node = 0;
    int index = 0;
    bool operator==(const PlanEntry&) const = default;
};

struct PlanTensor {
    std::vector<int64_t> shape;
    DLDataType dtype{kDLFloat, 32, 1};
    int storage = -1;  // a storage id; -1 for params
    int64_t nbytes() const;
};

struct PlanNode {
    PlanNodeKind kind = PlanNodeKind::kernel;
    std::string name;
    std::string kernel;               // kernel nodes: the module function
    std::vector<PlanEntry> args;      // kernel nodes
    std::vector<PlanTensor> outputs;  // exactly one for input and param nodes
    int64_t flops = -1;               // kernel nodes: per call; -1 when unknown
};

struct PlanStorage {
    int id = 0;
    int64_t bytes = 0;
    std::string device = "cpu";
};

struct PlanInput {
    std::string name;
    int node = 0;
};

struct PlanOutput {
    std::string name;
    PlanEntry entry;
};

struct GraphPlan {
    static constexpr int kVersion = 1;

    std::vector<PlanInput> inputs;
    std::vector<PlanOutput> outputs;
    std::vector<PlanNode> nodes;
    std::vector<PlanStorage> storage;
    ParamTable params;  // keyed by param node name
};

// Parses and validates (validate_plan). UserError "graph plan: ..." naming the offending node,
// key or value.
GraphPlan plan_from_json(std::string_view json);
// The schema above; single-output nodes put shape/dtype/storage on the node itself.
std::string plan_to_json(const GraphPlan& plan, int indent = -1);

// Checks what the executor relies on: argument references point to earlier nodes, shapes are
// non-negative, every input/kernel tensor has a declared storage large enough for it, params
// exist, are 64-byte aligned and agree with their nodes, names are unique, inputs are input
// nodes. `params_size`, when >= 0, is the size of the blob the params must lie in.
void validate_plan(const GraphPlan& plan, int64_t params_size = -1);

// Sum of the storage sizes (what the executor allocates) and of one buffer per input/kernel
// tensor (what it would allocate without sharing), each rounded up to a multiple of
// ANVIL_TENSOR_ALIGNMENT bytes as allocations are.
int64_t plan_storage_bytes(const GraphPlan& plan);
int64_t plan_unshared_bytes(const GraphPlan& plan);

// pack_params (param_blob.h) into plan->params.
std::string pack_params(const std::vector<std::pair<std::string, NDArray>>& params,
                        GraphPlan* plan);

}  // namespace anvil::runtime
