// Runtime tensors: NDArray, a reference-counted owner of a dense row-major DLTensor on the CPU.
//
// The tensor's data is ANVIL_TENSOR_ALIGNMENT (64) byte aligned so that generated kernels may use
// aligned vector loads. Copying an NDArray copies the handle, never the data; data is mutable
// through every handle. Element storage: each element takes (bits * lanes + 7) / 8 bytes, so a
// bool (uint1) tensor stores one byte per element.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "anvil/runtime.h"
#include "support/error.h"
#include "support/ref.h"

namespace anvil::runtime {

// "float32", "int8", "uint16", "bfloat16", "bool", "handle", with an optional "xN" lane suffix
// ("float32x4"). `bool` is DLPack's traditional {kDLUInt, 1, 1}. Throws UserError on an unknown
// spelling.
DLDataType dl_dtype_from_string(const std::string& text);
// Inverse of dl_dtype_from_string; codes it does not know print as "dtype(code=C, bits=B)".
std::string dl_dtype_to_string(DLDataType dtype);
// Bytes one element of `dtype` (all lanes) occupies in a tensor.
int64_t dl_dtype_bytes(DLDataType dtype);
inline bool dl_dtype_equal(DLDataType a, DLDataType b) {
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
// "float32[2, 3]": what error messages show for a tensor.
std::string describe_tensor(const DLTensor& tensor);

class NDArrayNode : public Object {
public:
    // Owns `tensor`, which anvil_tensor_alloc made.
    explicit NDArrayNode(DLTensor* tensor) : tensor_(tensor) {}
    // A view: describes memory that `owner` keeps alive (another tensor, a loaded library).
    NDArrayNode(void* data, std::vector<int64_t> shape, DLDataType dtype, Ref<Object> owner);
    NDArrayNode(const NDArrayNode&) = delete;
    NDArrayNode& operator=(const NDArrayNode&) = delete;
    ~NDArrayNode() override;

    DLTensor* tensor() const { return tensor_; }

private:
    DLTensor* tensor_;        // from anvil_tensor_alloc, or &view_tensor_ for a view
    DLTensor view_tensor_{};  // views only
    std::vector<int64_t> view_shape_;
    Ref<Object> owner_;  // views only: what keeps the data alive
};

class NDArray {
public:
    NDArray() = default;

    // A new uninitialised tensor; throws UserError for a negative dimension or a non-CPU device.
    static NDArray empty(const std::vector<int64_t>& shape, DLDataType dtype,
                         DLDevice device = {kDLCPU, 0});
    // Takes ownership of a tensor made by anvil_tensor_alloc.
    static NDArray adopt(DLTensor* tensor);
    // A tensor over CPU memory it does not own; `owner` keeps the memory alive as long as the
    // result (and every copy of its handle) lives. `data` should be ANVIL_TENSOR_ALIGNMENT
    // aligned when kernels are to read it (they check).
    static NDArray wrap(void* data, std::vector<int64_t> shape, DLDataType dtype,
                        Ref<Object> owner);

    // A view of this tensor's data from byte `byte_offset` on, with another shape and dtype; it
    // keeps this tensor's memory alive. Throws UserError when the view does not fit.
    NDArray view(std::vector<int64_t> shape, DLDataType dtype, int64_t byte_offset = 0) const;

    bool defined() const { return node_.defined(); }
    explicit operator bool() const { return defined(); }

    DLTensor* tensor() const { return node_->tensor(); }
    std::span<const int64_t> shape() const {
        return {tensor()->shape, static_cast<size_t>(tensor()->ndim)};
    }
    int ndim() const { return tensor()->ndim; }
    DLDataType dtype() const { return tensor()->dtype; }
    DLDevice device() const { return tensor()->device; }
    void* raw_data() const { return tensor()->data; }
    // Typed view of the data; checks that T has the element size of the dtype.
    template <typename T>
    T* data() const {
        check_element_size(sizeof(T));
        return static_cast<T*>(raw_data());
    }
    int64_t num_elements() const;
    size_t nbytes() const;

    // Copies exactly nbytes() bytes; throws UserError when `nbytes` differs.
    void copy_from(const void* src, size_t nbytes) const;
    void copy_to(void* dst, size_t nbytes) const;
    template <typename T>
    void copy_from(const std::vector<T>& values) const {
        check_element_size(sizeof(T));
        copy_from(values.data(), values.size() * sizeof(T));
    }
    template <typename T>
    std::vector<T> to_vector() const {
        check_element_size(sizeof(T));
        std::vector<T> out(static_cast<size_t>(num_elements()));
        copy_to(out.data(), out.size() * sizeof(T));
        return out;
    }

    std::string str() const { return describe_tensor(*tensor()); }
    bool same_as(const NDArray& other) const { return node_.same_as(other.node_); }

private:
    explicit NDArray(Ref<NDArrayNode> node) : node_(std::move(node)) {}
    void check_element_size(size_t bytes) const;

    Ref<NDArrayNode> node_;
};

// Element `i` of an integer, bool or float tensor as int64 (floats truncate); UserError for
// other dtypes.
int64_t element_as_int64(const NDArray& t, size_t i = 0);

}  // namespace anvil::runtime
