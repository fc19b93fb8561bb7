#include "runtime/memory_pool.h"

#include <cstdlib>
#include <new>

#include "support/error.h"

namespace anvil::runtime {

// The owner of one pooled allocation: gives the memory back when the last tensor using it goes.
struct PooledBlock : Object {
    PooledBlock(Ref<MemoryPool> p, void* d, size_t b) : pool(std::move(p)), data(d), bytes(b) {}
    ~PooledBlock() override { pool->release(data, bytes); }
    Ref<MemoryPool> pool;
    void* data;
    size_t bytes;
};

MemoryPool::~MemoryPool() {
    for (auto& [bytes, data] : free_) std::free(data);
}

NDArray MemoryPool::alloc(const std::vector<int64_t>& shape, DLDataType dtype) const {
    int64_t count = 1;
    for (int64_t d : shape) {
        if (d < 0) user_error() << "vm: cannot allocate a tensor with a negative dimension " << d;
        count *= d;
    }
    // At least one alignment unit, so every tensor has its own address.
    size_t bytes = static_cast<size_t>(std::max<int64_t>(count * dl_dtype_bytes(dtype), 1));
    bytes = (bytes + ANVIL_TENSOR_ALIGNMENT - 1) / ANVIL_TENSOR_ALIGNMENT * ANVIL_TENSOR_ALIGNMENT;
    void* data = nullptr;
    size_t block = bytes;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.allocations;
        auto it = free_.lower_bound(bytes);
        if (it != free_.end() && it->first <= 2 * bytes) {
            block = it->first;
            data = it->second;
            free_.erase(it);
            ++stats_.reuses;
        } else {
            stats_.bytes_held += static_cast<int64_t>(bytes);
        }
    }
    if (data == nullptr) {
        data = std::aligned_alloc(ANVIL_TENSOR_ALIGNMENT, bytes);
        if (data == nullptr) throw std::bad_alloc();
    }
    auto owner = make_ref<PooledBlock>(Ref<MemoryPool>(this), data, block);
    return NDArray::wrap(data, shape, dtype, owner);
}

void MemoryPool::release(void* data, size_t bytes) const {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.emplace(bytes, data);
}

MemoryPoolStats MemoryPool::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

}  // namespace anvil::runtime
