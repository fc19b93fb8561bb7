#include "runtime/param_blob.h"

#include <cstring>

#include "runtime/huge_page_memory.h"
#include "runtime/param_json.h"
#include "runtime/shape_text.h"
#include "support/error.h"

namespace anvil::runtime {

namespace {

int64_t tensor_bytes(const std::vector<int64_t>& shape, DLDataType dtype) {
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0) return -1;
        n *= d;
    }
    return n * dl_dtype_bytes(dtype);
}

}  // namespace

std::string pack_params(const std::vector<std::pair<std::string, NDArray>>& params,
                        ParamTable* table) {
    if (table == nullptr) user_error() << "pack_params: table is NULL";
    std::string blob;
    for (const auto& [name, array] : params) {
        if (!array.defined()) user_error() << "pack_params: param '" << name << "' is null";
        size_t offset = (blob.size() + ANVIL_TENSOR_ALIGNMENT - 1) / ANVIL_TENSOR_ALIGNMENT *
                        ANVIL_TENSOR_ALIGNMENT;
        blob.resize(offset, '\0');
        const char* data = static_cast<const char*>(array.raw_data()) + array.tensor()->byte_offset;
        blob.append(data, array.nbytes());
        (*table)[name] = PlanParam{.offset = static_cast<int64_t>(offset),
                                   .nbytes = static_cast<int64_t>(array.nbytes()),
                                   .shape = {array.shape().begin(), array.shape().end()},
                                   .dtype = array.dtype()};
    }
    return blob;
}

void validate_params(const ParamTable& table, int64_t blob_size, const std::string& document) {
    for (const auto& [name, p] : table) {
        auto fail = [&](const std::string& what) {
            user_error() << document << ": params['" << name << "']: " << what;
        };
        int64_t bytes = tensor_bytes(p.shape, p.dtype);
        if (bytes < 0) fail("invalid shape " + shape_text(p.shape));
        if (p.nbytes != bytes) {
            fail("'nbytes' is " + std::to_string(p.nbytes) + " but " + dl_dtype_to_string(p.dtype) +
                 shape_text(p.shape) + " takes " + std::to_string(bytes));
        }
        if (p.offset < 0 || p.offset % ANVIL_TENSOR_ALIGNMENT != 0) {
            fail("offset " + std::to_string(p.offset) + " is not a non-negative multiple of " +
                 std::to_string(ANVIL_TENSOR_ALIGNMENT));
        }
        if (blob_size >= 0 && (p.offset > blob_size || p.nbytes > blob_size - p.offset)) {
            fail("bytes [" + std::to_string(p.offset) + ", " + std::to_string(p.offset + p.nbytes) +
                 ") lie outside the parameter blob of " + std::to_string(blob_size) + " bytes");
        }
    }
}

ParamTable read_params(const json& doc, const std::string& document) {
    if (!doc.is_object()) Reader("document", document).fail("'params' must be an object");
    ParamTable table;
    for (const auto& [name, p] : doc.items()) {
        Reader r("params['" + name + "']", document);
        if (!p.is_object()) r.fail("a param must be an object");
        PlanParam param;
        param.offset = r.integer(p, "offset");
        param.nbytes = r.integer(p, "nbytes");
        param.shape = r.shape(p);
        param.dtype = r.dtype(p);
        table[name] = std::move(param);
    }
    return table;
}

json params_json(const ParamTable& table) {
    json out = json::object();
    for (const auto& [name, p] : table) {
        out[name] = {{"offset", p.offset},
                     {"nbytes", p.nbytes},
                     {"shape", json(p.shape)},
                     {"dtype", dl_dtype_to_string(p.dtype)}};
    }
    return out;
}

ParamBlob::ParamBlob(std::span<const std::byte> bytes, Ref<Object> owner)
    : base_(bytes.data()), size_(bytes.size()) {
    bool aligned = reinterpret_cast<uintptr_t>(base_) % ANVIL_TENSOR_ALIGNMENT == 0;
    // A large blob is copied into huge pages (huge_page_memory.h says why), one copy for all
    // loads of a library; read in place where that memory cannot be had or the environment says
    // so. The variable is checked for every blob, so that a misspelt value is an error for small
    // models too.
    const bool huge_pages = huge_page_weights_enabled();
    Ref<Object> copy;
    if (huge_pages && bytes.size() >= kHugePageBytes) {
        copy = shared_huge_page_copy(bytes, owner, &base_);
    }
    if (copy.defined()) {
        owner_ = std::move(copy);
    } else if (owner.defined() && aligned) {
        owner_ = std::move(owner);
    } else if (!bytes.empty()) {
        copy_ = NDArray::empty({static_cast<int64_t>(bytes.size())}, {kDLUInt, 8, 1});
        std::memcpy(copy_.raw_data(), bytes.data(), bytes.size());
        base_ = static_cast<const std::byte*>(copy_.raw_data());
    }
}

NDArray ParamBlob::view(const PlanParam& p) const {
    if (copy_.defined()) return copy_.view(p.shape, p.dtype, p.offset);
    void* data = const_cast<std::byte*>(base_) + p.offset;
    return NDArray::wrap(data, p.shape, p.dtype, owner_);
}

}  // namespace anvil::runtime
