// The VM's memory pool: tensors whose shapes are known only at run time get their memory here,
// and a tensor's memory returns to the pool when its last reference goes, to be reused by the
// next allocation that fits (best fit among free blocks of up to twice the request), so a model
// run repeatedly at one shape stops allocating after its first run.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "runtime/ndarray.h"

namespace anvil::runtime {

struct MemoryPoolStats {
    int64_t allocations = 0;  // requests served
    int64_t reuses = 0;       // of them, served from a free block
    int64_t bytes_held = 0;   // in use plus free, as allocated from the system
};

class MemoryPool : public Object {
public:
    MemoryPool() = default;
    MemoryPool(const MemoryPool&) = delete;
    MemoryPool& operator=(const MemoryPool&) = delete;
    ~MemoryPool() override;

    // An uninitialised tensor, ANVIL_TENSOR_ALIGNMENT aligned. UserError for a negative dimension.
    // Held through Ref<const MemoryPool> like every Object, so the methods are const; the pool's
    // state is internally synchronized.
    NDArray alloc(const std::vector<int64_t>& shape, DLDataType dtype) const;
    MemoryPoolStats stats() const;

private:
    friend struct PooledBlock;
    void release(void* data, size_t bytes) const;

    mutable std::mutex mutex_;
    mutable std::multimap<size_t, void*> free_;  // by size
    mutable MemoryPoolStats stats_;
};

}  // namespace anvil::runtime
