#include "runtime/workspace_pool.h"

#include <cstdlib>
#include <vector>

#include "anvil/runtime.h"

namespace anvil::runtime {

namespace {

// Each block starts with a header of one alignment unit holding its size, so a block can be
// cached by size when it is freed.
constexpr size_t kHeader = ANVIL_TENSOR_ALIGNMENT;

struct Block {
    size_t size;
    void* base;  // what aligned_alloc returned
};

class ThreadCache {
public:
    ~ThreadCache() {
        for (const Block& b : blocks_) std::free(b.base);
    }

    void* take(size_t size) {
        for (size_t i = 0; i < blocks_.size(); ++i) {
            if (blocks_[i].size == size) {
                void* base = blocks_[i].base;
                bytes_ -= size;
                blocks_.erase(blocks_.begin() + static_cast<ptrdiff_t>(i));
                return base;
            }
        }
        return nullptr;
    }

    bool keep(size_t size, void* base) {
        if (size < kMinCachedBytes || size > kMaxCachedBytes) return false;
        // Room for it: the least recently freed blocks go back to the allocator.
        while (!blocks_.empty() &&
               (blocks_.size() >= kMaxCachedBlocks || bytes_ + size > kMaxCachedBytes)) {
            std::free(blocks_.front().base);
            bytes_ -= blocks_.front().size;
            blocks_.erase(blocks_.begin());
        }
        blocks_.push_back({size, base});
        bytes_ += size;
        return true;
    }

private:
    std::vector<Block> blocks_;
    size_t bytes_ = 0;
};

ThreadCache& thread_cache() {
    thread_local ThreadCache cache;
    return cache;
}

}  // namespace

void* workspace_alloc(size_t nbytes) {
    void* base = thread_cache().take(nbytes);
    if (!base) {
        // The size rounded up to the alignment, as aligned_alloc requires.
        size_t total = (nbytes + kHeader + kHeader - 1) / kHeader * kHeader;
        base = std::aligned_alloc(kHeader, total);
        if (!base) return nullptr;
        *static_cast<size_t*>(base) = nbytes;
    }
    return static_cast<char*>(base) + kHeader;
}

void workspace_free(void* ptr) {
    if (!ptr) return;
    void* base = static_cast<char*>(ptr) - kHeader;
    size_t size = *static_cast<size_t*>(base);
    if (!thread_cache().keep(size, base)) std::free(base);
}

}  // namespace anvil::runtime
