// The per-thread workspace cache behind anvil_workspace_alloc / anvil_workspace_free.
#include "runtime/workspace_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "anvil/runtime.h"

namespace anvil::runtime {
namespace {

TEST(WorkspacePool, ReusesAFreedBlockOfTheSameSize) {
    void* a = workspace_alloc(3 << 20);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % ANVIL_TENSOR_ALIGNMENT, 0u);
    std::memset(a, 1, 3 << 20);  // the whole block is usable
    workspace_free(a);
    void* b = workspace_alloc(3 << 20);
    EXPECT_EQ(a, b);                  // the cached block, no new mapping
    void* c = workspace_alloc(1000);  // another size: another block
    EXPECT_NE(c, b);
    // Small blocks are not kept (malloc serves them well).
    workspace_free(c);
    c = workspace_alloc(1000);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(c) % ANVIL_TENSOR_ALIGNMENT, 0u);
    workspace_free(b);
    workspace_free(c);
    workspace_free(nullptr);
}

TEST(WorkspacePool, BoundsWhatAThreadKeeps) {
    // More blocks than the cache holds: all are usable and freeing them all is fine (the ones
    // over the bound go back to the allocator; ASan checks there is no leak or double free).
    std::vector<void*> blocks;
    for (size_t i = 0; i < 2 * kMaxCachedBlocks; ++i) {
        blocks.push_back(workspace_alloc(kMinCachedBytes + 64 * i));
    }
    for (void* p : blocks) workspace_free(p);
    // The most recently freed sizes are the ones kept.
    void* last = blocks.back();
    EXPECT_EQ(workspace_alloc(kMinCachedBytes + 64 * (2 * kMaxCachedBlocks - 1)), last);
    workspace_free(last);
    // A block over the byte bound is never kept.
    void* big = workspace_alloc(kMaxCachedBytes + 64);
    ASSERT_NE(big, nullptr);
    workspace_free(big);
}

TEST(WorkspacePool, BlocksMayBeFreedOnAnotherThread) {
    void* p = workspace_alloc(1 << 20);
    std::thread([&] { workspace_free(p); }).join();  // cached by that thread, freed at its exit
    void* q = anvil_workspace_alloc(1 << 20);
    ASSERT_NE(q, nullptr);
    anvil_workspace_free(q);
}

}  // namespace
}  // namespace anvil::runtime
