// Anonymous memory in transparent huge pages, for the large read-mostly data that kernels stream
// (a model's weights).
//
// Why: a model library's parameter blob, read in place, lives in the 4 KiB pages of the file's
// mapping. A dense kernel streams its weights at 128 bytes per few cycles, so it crosses a page
// every few hundred cycles, and how often that misses the TLB depends on how the page cache
// happens to hold the file: the same BERT-base library ran 10 % slower from one copy of the file
// than from a fresh copy of the same bytes. Copied once into 2 MiB pages, the weights cost a
// TLB miss per 2 MiB whatever the page cache did.
#pragma once

#include <cstddef>
#include <span>

#include "support/ref.h"

namespace anvil::runtime {

// Whether the system gives anonymous memory transparent huge pages on advice (enabled "always"
// or "madvise"): without them a copy would only cost memory.
bool huge_pages_available();

// Whether weights may be copied into huge pages: yes unless the environment variable
// ANVIL_HUGE_PAGE_WEIGHTS says 0 (also off, false, no). The opt-out is for hosts that run many
// processes over one library: each copy is private memory, while the library's file pages are
// shared by all. Read at every load (ParamBlob asks even for small blobs, so that a misspelt value
// is caught whatever the model's size); set it before threads that load models start. A value
// that is none of 0/1/on/off/true/false/yes/no (any case) is a UserError naming the variable.
bool huge_page_weights_enabled();

// Blobs smaller than this stay where they are: a copy buys them little.
inline constexpr size_t kHugePageBytes = size_t{2} << 20;

class HugePageMemory : public Object {
public:
    // At least `bytes` of zeroed memory starting at a 2 MiB boundary, advised as huge pages
    // (MADV_HUGEPAGE: used where the system's transparent huge pages are "madvise" or "always";
    // plain pages otherwise). Null when the mapping fails (the caller keeps its data as it is).
    static Ref<HugePageMemory> allocate(size_t bytes);
    HugePageMemory(const HugePageMemory&) = delete;
    HugePageMemory& operator=(const HugePageMemory&) = delete;
    ~HugePageMemory() override;

    void* data() const { return data_; }
    size_t size() const { return size_; }

private:
    HugePageMemory(void* mapping, size_t mapped, void* data, size_t size)
        : mapping_(mapping), mapped_(mapped), data_(data), size_(size) {}
    void* mapping_;  // what mmap returned (unmapped whole)
    size_t mapped_;
    void* data_;
    size_t size_;
};

// A copy of `bytes` in huge pages, shared by every caller that passes the same bytes of the same
// `library` (the object keeping them mapped) while any of its copies lives: executors and VMs
// loaded from one model library share its weights. The result keeps the copy (and the library,
// so that no other library can be mapped at the same address while the copy is shared) alive;
// `*data` is set to its first byte. The copy is read-only. Without a library, a copy of their
// own. Null (and `*data` untouched) when the memory cannot be had or the system has no
// transparent huge pages (enabled "never"): the caller then reads the bytes where they are.
// Whether to ask at all (huge_page_weights_enabled) is the caller's decision: ParamBlob's.
Ref<Object> shared_huge_page_copy(std::span<const std::byte> bytes, const Ref<Object>& library,
                                  const std::byte** data);

}  // namespace anvil::runtime
