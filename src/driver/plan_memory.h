// Static memory planning for the graph executor: which tensors share a storage buffer.
//
// Tensors are given in execution order, each with the step that writes it and the last step
// that reads it. A tensor written at step t may reuse a buffer whose tensors were all last read
// before t (a kernel's inputs are still live while it writes its outputs, and kernels assume
// their arguments do not overlap). Graph inputs and outputs ("external" tensors) always get a
// buffer of their own: the caller writes inputs before and reads outputs after the whole run.
//
// The choice is greedy best-fit: the smallest free buffer that is large enough; failing that,
// the largest free buffer, grown to fit (growing costs less than a new buffer); failing that, a
// new buffer. Sizes are rounded up to ANVIL_TENSOR_ALIGNMENT-byte multiples.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/graph_plan.h"

namespace anvil::driver {

struct TensorLifetime {
    int64_t bytes = 0;
    int def = 0;            // the step that writes it
    int last_use = -1;      // the last step that reads it; < def means never read
    bool external = false;  // a graph input or output: never shared
};

struct MemoryPlan {
    std::vector<int> storage_of;         // per tensor: an index into storage_bytes
    std::vector<int64_t> storage_bytes;  // per buffer
    int64_t planned_bytes = 0;           // sum of storage_bytes
    int64_t unshared_bytes = 0;          // one buffer per tensor (same rounding)

    // "planned 1.2 MB for 3.4 MB of tensors (35%, 5 buffers for 12 tensors)".
    std::string summary() const;
};

// Assigns buffers; tensors must be ordered by `def`. UserError for a negative size or an
// out-of-order tensor.
MemoryPlan plan_memory(std::span<const TensorLifetime> tensors);

// Plans the storage of a graph plan whose nodes are in execution order: every input node and
// kernel output gets a storage id (its `storage` field is overwritten), `plan.storage` is
// replaced, graph inputs and outputs are kept apart. Params are not planned (they live in the
// parameter blob).
MemoryPlan plan_graph_memory(runtime::GraphPlan& plan);

// UserError when the plan's buffers plus `weight_bytes` exceed `limit` bytes (0: no limit); the
// message gives both sizes and the limit (--max-memory).
void check_memory_limit(const MemoryPlan& plan, int64_t weight_bytes, int64_t limit);

// A size in bytes as --max-memory takes it: digits with an optional binary suffix K, M, G or T
// (KiB, MiB, ... ; "KB", "MB" mean the same; any case): "512M", "2G", "1048576". UserError
// naming `what` for anything else, zero, or a size over 2^63 - 1.
int64_t parse_byte_size(const std::string& text, const std::string& what);

}  // namespace anvil::driver
