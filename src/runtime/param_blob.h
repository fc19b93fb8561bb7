// The parameter blob of a compiled model: every weight at a 64-byte aligned offset of one byte
// string stored in the artifact, described by a table name → (offset, nbytes, shape, dtype).
// The graph executor's plan and the VM's program both carry such a table.
//
// JSON form (inside the plan or program): {"p0": {"offset": 0, "nbytes": 37632,
//                                                  "shape": [64, 3, 7, 7], "dtype": "float32"}}
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "runtime/ndarray.h"

namespace anvil::runtime {

struct PlanParam {
    int64_t offset = 0;
    int64_t nbytes = 0;
    std::vector<int64_t> shape;
    DLDataType dtype{kDLFloat, 32, 1};
};

using ParamTable = std::map<std::string, PlanParam>;

// Builds the blob: each tensor at the next 64-byte aligned offset, recorded in `table` under its
// name (replacing an existing entry). Returns the blob's bytes.
std::string pack_params(const std::vector<std::pair<std::string, NDArray>>& params,
                        ParamTable* table);

// Checks that each entry's nbytes fits its shape and dtype, offsets are 64-byte aligned and,
// when `blob_size` >= 0, lie inside the blob. UserError "<document>: params['p0']: ...".
void validate_params(const ParamTable& table, int64_t blob_size, const std::string& document);

// The loaded blob. A blob of kHugePageBytes or more is copied into huge pages, one copy shared by
// every blob over the same bytes of the same `owner` (huge_page_memory.h), unless
// ANVIL_HUGE_PAGE_WEIGHTS=0 or the system has no transparent huge pages; otherwise (and for a
// smaller blob) it is read in place when `owner` keeps the bytes alive and they are aligned (a
// loaded library), and copied once otherwise. A misspelt ANVIL_HUGE_PAGE_WEIGHTS is a UserError.
class ParamBlob {
public:
    ParamBlob() = default;
    ParamBlob(std::span<const std::byte> bytes, Ref<Object> owner);
    // A view of the param `table` describes (kernels never write params).
    NDArray view(const PlanParam& p) const;
    int64_t size() const { return static_cast<int64_t>(size_); }

private:
    const std::byte* base_ = nullptr;
    size_t size_ = 0;
    Ref<Object> owner_;
    NDArray copy_;
};

}  // namespace anvil::runtime
