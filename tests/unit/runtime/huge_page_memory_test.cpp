// Huge-page memory for large parameter blobs, and where ParamBlob puts a blob.
#include "runtime/huge_page_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "runtime/param_blob.h"
#include "scoped_env.h"
#include "support/error.h"

namespace anvil::runtime {
namespace {

TEST(HugePageMemory, IsAlignedZeroedAndWritable) {
    const size_t bytes = (size_t{3} << 20) + 5;
    Ref<HugePageMemory> m = HugePageMemory::allocate(bytes);
    ASSERT_TRUE(m.defined());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m->data()) % kHugePageBytes, 0u);
    EXPECT_EQ(m->size() % kHugePageBytes, 0u);
    EXPECT_GE(m->size(), bytes);
    const auto* p = static_cast<const unsigned char*>(m->data());
    EXPECT_EQ(p[0], 0);
    EXPECT_EQ(p[m->size() - 1], 0);
    std::memset(m->data(), 7, m->size());  // the whole range is usable
    EXPECT_FALSE(HugePageMemory::allocate(0).defined());
    EXPECT_FALSE(HugePageMemory::allocate(SIZE_MAX).defined());
}

// The tests of the default behaviour unset it: a developer's shell may have it set.
constexpr const char* kWeightsVariable = "ANVIL_HUGE_PAGE_WEIGHTS";

// Bytes kept alive by an Object, as a loaded library keeps its mapping.
struct StringOwner : Object {
    explicit StringOwner(std::string b) : bytes(std::move(b)) {}
    std::string bytes;
};

// `size` bytes starting with `prefix`, at the first 64-byte aligned byte of an owner's string
// (only aligned bytes are read in place, as params in a loaded library are).
struct AlignedBlob {
    AlignedBlob(size_t size, std::span<const float> prefix) {
        std::string bytes(size + 64, '\0');
        skip = (64 - reinterpret_cast<uintptr_t>(bytes.data()) % 64) % 64;
        std::memcpy(bytes.data() + skip, prefix.data(), prefix.size_bytes());
        owner = make_ref<StringOwner>(std::move(bytes));  // the same buffer, moved
        this->size = size;
    }
    const char* start() const { return owner->bytes.data() + skip; }
    std::span<const std::byte> bytes() const {
        return {reinterpret_cast<const std::byte*>(start()), size};
    }
    Ref<StringOwner> owner;
    size_t skip = 0, size = 0;
};

TEST(ParamBlob, CopiesLargeBlobsIntoHugePagesAndReadsSmallOnesInPlace) {
    testing::ScopedEnv default_weights(kWeightsVariable, nullptr);
    const PlanParam first{.offset = 0, .nbytes = 16, .shape = {4}, .dtype = {kDLFloat, 32, 1}};
    const std::vector<float> values = {1.5f, -2.0f, 3.25f, 4.0f};
    for (size_t size : {size_t{4096}, kHugePageBytes + 4096}) {
        AlignedBlob aligned(size, values);
        const char* start = aligned.start();
        ParamBlob blob(aligned.bytes(), aligned.owner);
        NDArray v = blob.view(first);
        EXPECT_EQ(std::vector<float>(v.data<float>(), v.data<float>() + 4), values) << size;
        const bool copied = v.raw_data() != start;
        EXPECT_EQ(copied, size >= kHugePageBytes && huge_pages_available()) << size;
        if (copied) {
            EXPECT_EQ(reinterpret_cast<uintptr_t>(v.raw_data()) % kHugePageBytes, 0u);
        }
    }
}

// Executors loaded from one library share its weights: blobs over the same bytes of the same
// owner share one copy while any of them lives; bytes without an owner get a copy of their own.
TEST(ParamBlob, BlobsOfOneLibraryShareTheirCopy) {
    testing::ScopedEnv default_weights(kWeightsVariable, nullptr);
    const PlanParam first{.offset = 0, .nbytes = 4, .shape = {1}, .dtype = {kDLFloat, 32, 1}};
    std::string bytes(kHugePageBytes + 64, '\0');
    const float value = 6.5f;
    std::memcpy(bytes.data(), &value, 4);
    auto owner = make_ref<StringOwner>(std::move(bytes));
    std::span<const std::byte> blob_bytes(reinterpret_cast<const std::byte*>(owner->bytes.data()),
                                          kHugePageBytes);
    const void* shared = nullptr;
    {
        ParamBlob a(blob_bytes, owner);
        ParamBlob b(blob_bytes, owner);
        NDArray va = a.view(first), vb = b.view(first);
        shared = va.raw_data();
        EXPECT_EQ(va.raw_data(), vb.raw_data());
        if (huge_pages_available()) {
            EXPECT_NE(va.raw_data(), static_cast<const void*>(owner->bytes.data()));
        }
        EXPECT_EQ(*vb.data<float>(), value);
        ParamBlob own(blob_bytes, nullptr);  // no owner: its own copy
        EXPECT_NE(own.view(first).raw_data(), shared);
        EXPECT_EQ(*own.view(first).data<float>(), value);
    }
    // A view outlives its blob: the copy stays until the view goes.
    NDArray kept = ParamBlob(blob_bytes, owner).view(first);
    EXPECT_EQ(*kept.data<float>(), value);
    ParamBlob again(blob_bytes, owner);
    EXPECT_EQ(again.view(first).raw_data(), kept.raw_data());
}

// The registry forgets a copy when its last blob and view go: later blobs copy the bytes as they
// are then. Two owner objects over the same bytes (two loads of one library) share a copy.
TEST(ParamBlob, ACopyLivesAsLongAsItsBlobsAndViews) {
    testing::ScopedEnv default_weights(kWeightsVariable, nullptr);
    const PlanParam first{.offset = 0, .nbytes = 4, .shape = {1}, .dtype = {kDLFloat, 32, 1}};
    std::string bytes(kHugePageBytes + 64, '\0');
    auto owner = make_ref<StringOwner>(std::move(bytes));
    auto* writable = const_cast<char*>(owner->bytes.data());
    std::span<const std::byte> blob_bytes(reinterpret_cast<const std::byte*>(writable),
                                          kHugePageBytes);
    auto read = [&](const ParamBlob& b) { return *b.view(first).data<float>(); };
    const float before = 1.0f, after = 2.0f;
    std::memcpy(writable, &before, 4);
    {
        ParamBlob a(blob_bytes, owner);
        auto second_load = make_ref<StringOwner>("another handle on the same mapping");
        ParamBlob b(blob_bytes, second_load);
        EXPECT_EQ(a.view(first).raw_data(), b.view(first).raw_data());
        std::memcpy(writable, &after, 4);  // a copy in use keeps what it copied
        // (Read in place where the system has no huge pages.)
        EXPECT_EQ(read(ParamBlob(blob_bytes, owner)), huge_pages_available() ? before : after);
    }
    EXPECT_EQ(read(ParamBlob(blob_bytes, owner)), after);  // no stale copy left
}

// ANVIL_HUGE_PAGE_WEIGHTS=0 (or off/false/no) reads even a large blob in place; 1 (or on/true/
// yes, empty or unset) copies it as by default; anything else is an error that names the
// variable, for small blobs too. (Where the system has no transparent huge pages every blob is
// read in place, and only the "on" expectations tell the settings apart.)
TEST(ParamBlob, TheEnvironmentCanKeepWeightsInPlace) {
    const PlanParam first{.offset = 0, .nbytes = 4, .shape = {1}, .dtype = {kDLFloat, 32, 1}};
    const float value = -3.5f;
    AlignedBlob aligned(kHugePageBytes, {&value, 1});
    const Ref<StringOwner>& owner = aligned.owner;
    const char* in_place = aligned.start();
    std::span<const std::byte> blob_bytes = aligned.bytes();
    for (const char* off : {"0", "off", "False", "NO"}) {
        testing::ScopedEnv env(kWeightsVariable, off);
        EXPECT_FALSE(huge_page_weights_enabled()) << off;
        ParamBlob blob(blob_bytes, owner);
        EXPECT_EQ(blob.view(first).raw_data(), in_place) << off;
        EXPECT_EQ(*blob.view(first).data<float>(), value) << off;
    }
    for (const char* on : {"1", "on", "TRUE", "yes", "", static_cast<const char*>(nullptr)}) {
        const char* shown = on ? on : "(unset)";
        testing::ScopedEnv env(kWeightsVariable, on);
        EXPECT_TRUE(huge_page_weights_enabled()) << shown;
        ParamBlob blob(blob_bytes, owner);
        EXPECT_EQ(blob.view(first).raw_data() != in_place, huge_pages_available()) << shown;
        EXPECT_EQ(*blob.view(first).data<float>(), value) << shown;
    }
    testing::ScopedEnv env(kWeightsVariable, "sometimes");
    for (size_t size : {kHugePageBytes, size_t{64}}) {
        try {
            ParamBlob blob(std::span<const std::byte>(blob_bytes.data(), size), owner);
            ADD_FAILURE() << "expected a UserError for a blob of " << size << " bytes";
        } catch (const UserError& e) {
            EXPECT_NE(std::string(e.what()).find("ANVIL_HUGE_PAGE_WEIGHTS is 'sometimes'"),
                      std::string::npos)
                << e.what();
        }
    }
}

}  // namespace
}  // namespace anvil::runtime
