// Workspace memory for kernels (anvil_workspace_alloc / anvil_workspace_free), kept per thread.
//
// Kernels allocate their intermediate buffers (a padded input, Winograd's transformed tiles) on
// every call and free them when the call ends. A block larger than glibc's mmap threshold
// (128 KiB) would come from a fresh mmap each time, and its pages would fault in again on every
// call: for a 2 MB buffer that costs as much as the convolution using it. So each thread keeps
// the large blocks it frees (kMinCachedBytes and up; at most kMaxCachedBlocks, kMaxCachedBytes
// in all, the least recently freed going first) and hands a block of the same size out again;
// a thread's blocks are released when it exits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace anvil::runtime {

inline constexpr size_t kMinCachedBytes = size_t{128} << 10;  // glibc's mmap threshold
inline constexpr size_t kMaxCachedBlocks = 16;
inline constexpr size_t kMaxCachedBytes = size_t{128} << 20;

// ANVIL_TENSOR_ALIGNMENT-aligned memory of `nbytes`, or null when out of memory.
void* workspace_alloc(size_t nbytes);
// Returns a block of workspace_alloc (null is ignored) to this thread's cache, or frees it.
void workspace_free(void* ptr);

}  // namespace anvil::runtime
