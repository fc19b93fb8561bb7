#include "runtime/huge_page_memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "support/error.h"

namespace anvil::runtime {

Ref<HugePageMemory> HugePageMemory::allocate(size_t bytes) {
    if (bytes == 0 || bytes > SIZE_MAX - 2 * kHugePageBytes) return {};
    const size_t size = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    // One huge page more than needed, so that a 2 MiB aligned range lies inside.
    const size_t mapped = size + kHugePageBytes;
    void* mapping =
        mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapping == MAP_FAILED) return {};
    auto start = reinterpret_cast<uintptr_t>(mapping);
    auto aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    void* data = reinterpret_cast<void*>(aligned);
    // Advice only: without transparent huge pages the memory still works in small pages.
    madvise(data, size, MADV_HUGEPAGE);
    return Ref<HugePageMemory>(new HugePageMemory(mapping, mapped, data, size));
}

HugePageMemory::~HugePageMemory() {
    munmap(mapping_, mapped_);
}

namespace {

// The shared copies by the address and size of the bytes they copy. An entry holds its copy
// strongly and counts its leases under the mutex; the last lease to go removes it. (Counting in
// the copy's own reference count instead would let a lookup revive a copy already being
// destroyed.)
struct SharedCopy : Object {
    Ref<HugePageMemory> memory;
    Ref<Object> library;
    int leases = 0;  // guarded by the registry's mutex
};

using CopyKey = std::pair<const std::byte*, size_t>;

struct CopyRegistry {
    std::mutex mutex;
    std::map<CopyKey, Ref<SharedCopy>> copies;
};

CopyRegistry& registry() {
    static auto* r = new CopyRegistry;  // never destroyed: leases may outlive static destruction
    return *r;
}

// What a caller holds: one lease of a shared copy. Made and destroyed under the registry's
// mutex, which guards the count.
struct CopyLease : Object {
    CopyLease(CopyKey k, Ref<SharedCopy> c) : key(k), copy(std::move(c)) {
        ++const_cast<SharedCopy*>(copy.get())->leases;
    }
    ~CopyLease() override {
        CopyRegistry& r = registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        if (--const_cast<SharedCopy*>(copy.get())->leases == 0) r.copies.erase(key);
    }
    CopyKey key;
    Ref<SharedCopy> copy;
};

}  // namespace

bool huge_pages_available() {
    static const bool available = [] {
        std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
        std::string modes;
        std::getline(f, modes);
        return modes.find("[always]") != std::string::npos ||
               modes.find("[madvise]") != std::string::npos;
    }();
    return available;
}

bool huge_page_weights_enabled() {
    const char* env = std::getenv("ANVIL_HUGE_PAGE_WEIGHTS");
    if (env == nullptr || *env == '\0') return true;
    std::string value(env);
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (value == "1" || value == "on" || value == "true" || value == "yes") return true;
    if (value == "0" || value == "off" || value == "false" || value == "no") return false;
    user_error() << "ANVIL_HUGE_PAGE_WEIGHTS is '" << env
                 << "'; expected 1, on, true or yes (copy large weights into huge pages, the "
                    "default) or 0, off, false or no (read them in place)";
    ANVIL_UNREACHABLE();
}

namespace {

// `bytes` in huge pages, then read-only: the weights are shared by every executor of a
// library, and a stray write now faults instead of changing them for all (as the library's
// constant data did).
Ref<HugePageMemory> read_only_copy(std::span<const std::byte> bytes) {
    Ref<HugePageMemory> memory = HugePageMemory::allocate(bytes.size());
    if (!memory.defined()) return {};
    std::memcpy(memory->data(), bytes.data(), bytes.size());
    mprotect(memory->data(), memory->size(), PROT_READ);
    return memory;
}

}  // namespace

Ref<Object> shared_huge_page_copy(std::span<const std::byte> bytes, const Ref<Object>& library,
                                  const std::byte** data) {
    if (!huge_pages_available()) return {};
    if (!library.defined()) {  // bytes that may be freed and reused: a copy of their own
        Ref<HugePageMemory> memory = read_only_copy(bytes);
        if (memory.defined()) *data = static_cast<const std::byte*>(memory->data());
        return memory;
    }
    const CopyKey key{bytes.data(), bytes.size()};
    CopyRegistry& r = registry();
    auto lease = [&](const Ref<SharedCopy>& copy) {
        *data = static_cast<const std::byte*>(copy->memory->data());
        return make_ref<CopyLease>(key, copy);
    };
    {
        std::lock_guard<std::mutex> lock(r.mutex);
        auto it = r.copies.find(key);
        if (it != r.copies.end()) return lease(it->second);
    }
    // The copy is made outside the lock (other loads and executors' teardown do not wait for
    // it); a copy another thread registered meanwhile wins, and this one is dropped.
    Ref<HugePageMemory> memory = read_only_copy(bytes);
    if (!memory.defined()) return {};
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.copies.find(key);
    if (it == r.copies.end()) {
        auto copy = make_ref<SharedCopy>();
        auto* c = const_cast<SharedCopy*>(copy.get());
        c->memory = std::move(memory);
        c->library = library;
        it = r.copies.emplace(key, std::move(copy)).first;
    }
    return lease(it->second);
}

}  // namespace anvil::runtime
