#include "runtime/ndarray.h"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sstream>

#include "runtime/last_error.h"
#include "runtime/shape_text.h"
#include "runtime/workspace_pool.h"

namespace anvil::runtime {
namespace {

// A tensor allocation is one block [header][DLTensor][shape...] plus the aligned data. The magic
// number lets anvil_tensor_free reject tensors it did not allocate instead of corrupting the heap.
constexpr uint64_t kTensorMagic = 0x414e56494c544e53ULL;  // "ANVILTNS"

struct TensorBlock {
    uint64_t magic;
    uint64_t padding;  // keeps `tensor` 16-byte aligned like any heap object
    DLTensor tensor;
};

int64_t round_up(int64_t value, int64_t multiple) {
    return (value + multiple - 1) / multiple * multiple;
}

// Aligned storage of at least one alignment unit, so that even empty tensors have non-null data.
void* allocate_aligned(int64_t nbytes) {
    int64_t size = round_up(nbytes > 0 ? nbytes : 1, ANVIL_TENSOR_ALIGNMENT);
    return std::aligned_alloc(ANVIL_TENSOR_ALIGNMENT, static_cast<size_t>(size));
}

// Element count times element size, or -1 on overflow.
int64_t checked_nbytes(const int64_t* shape, int ndim, DLDataType dtype) {
    int64_t count = 1;
    for (int i = 0; i < ndim; ++i) {
        if (__builtin_mul_overflow(count, shape[i], &count)) return -1;
    }
    int64_t bytes = 0;
    if (__builtin_mul_overflow(count, dl_dtype_bytes(dtype), &bytes)) return -1;
    return bytes;
}

DLTensor* allocate_tensor(const int64_t* shape, int ndim, DLDataType dtype, DLDevice device) {
    if (ndim < 0) user_error() << "anvil_tensor_alloc: ndim is " << ndim << ", must be >= 0";
    if (ndim > 0 && shape == nullptr) user_error() << "anvil_tensor_alloc: shape is NULL";
    if (device.device_type != kDLCPU) {
        user_error() << "anvil_tensor_alloc: device type " << device.device_type
                     << " is not supported; the runtime allocates CPU (kDLCPU) tensors only";
    }
    if (dtype.bits == 0 || dtype.lanes == 0) {
        user_error() << "anvil_tensor_alloc: invalid dtype " << dl_dtype_to_string(dtype);
    }
    for (int i = 0; i < ndim; ++i) {
        if (shape[i] < 0) {
            user_error() << "anvil_tensor_alloc: dimension " << i << " of shape "
                         << shape_text({shape, static_cast<size_t>(ndim)}) << " is negative";
        }
    }
    int64_t nbytes = checked_nbytes(shape, ndim, dtype);
    if (nbytes < 0 || nbytes > INT64_MAX - ANVIL_TENSOR_ALIGNMENT) {
        user_error() << "anvil_tensor_alloc: shape "
                     << shape_text({shape, static_cast<size_t>(ndim)}) << " of "
                     << dl_dtype_to_string(dtype) << " overflows 64-bit sizes";
    }
    void* block_memory = ::operator new(sizeof(TensorBlock) + sizeof(int64_t) * ndim);
    auto* block = new (block_memory) TensorBlock{};
    auto* shape_copy = reinterpret_cast<int64_t*>(block + 1);
    for (int i = 0; i < ndim; ++i) shape_copy[i] = shape[i];
    void* data = allocate_aligned(nbytes);
    if (data == nullptr) {
        ::operator delete(block_memory);
        user_error() << "anvil_tensor_alloc: out of memory allocating " << nbytes << " bytes for "
                     << dl_dtype_to_string(dtype) << shape_text({shape, static_cast<size_t>(ndim)});
    }
    // A string tensor's elements start as empty strings (null data, size 0), never garbage.
    if (dtype.code == ANVIL_DTYPE_STRING_CODE) std::memset(data, 0, static_cast<size_t>(nbytes));
    block->magic = kTensorMagic;
    block->tensor = DLTensor{.data = data,
                             .device = device,
                             .ndim = ndim,
                             .dtype = dtype,
                             .shape = shape_copy,
                             .strides = nullptr,
                             .byte_offset = 0};
    return &block->tensor;
}

void free_tensor(DLTensor* tensor) {
    if (tensor == nullptr) return;
    auto* block = reinterpret_cast<TensorBlock*>(reinterpret_cast<char*>(tensor) -
                                                 offsetof(TensorBlock, tensor));
    if (block->magic != kTensorMagic) {
        user_error() << "anvil_tensor_free: the tensor was not allocated by anvil_tensor_alloc";
    }
    block->magic = 0;  // a second free is then reported instead of freeing twice
    std::free(tensor->data);
    block->~TensorBlock();
    ::operator delete(block);
}

struct DtypeName {
    const char* prefix;
    uint8_t code;
};

}  // namespace

int64_t dl_dtype_bytes(DLDataType dtype) {
    return (static_cast<int64_t>(dtype.bits) * dtype.lanes + 7) / 8;
}

DLDataType dl_dtype_from_string(const std::string& text) {
    std::string base = text;
    int lanes = 1;
    if (size_t x = text.find('x'); x != std::string::npos) {
        base = text.substr(0, x);
        std::string digits = text.substr(x + 1);
        char* end = nullptr;
        long value = std::strtol(digits.c_str(), &end, 10);
        if (digits.empty() || *end != '\0' || value < 1 || value > 65535) {
            user_error() << "unknown data type '" << text << "': bad lane count";
        }
        lanes = static_cast<int>(value);
    }
    auto make = [&](uint8_t code, int bits) {
        return DLDataType{code, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes)};
    };
    if (base == "bool") return make(kDLUInt, 1);
    if (text == "string") return DLDataType{ANVIL_DTYPE_STRING_CODE, 128, 1};
    if (base == "handle") return make(kDLOpaqueHandle, 64);
    // "uint" before "int" so that the longer prefix wins.
    static constexpr DtypeName kNames[] = {
        {"uint", kDLUInt}, {"int", kDLInt}, {"bfloat", kDLBfloat}, {"float", kDLFloat}};
    for (const DtypeName& name : kNames) {
        std::string_view prefix = name.prefix;
        if (base.rfind(prefix, 0) != 0) continue;
        std::string digits = base.substr(prefix.size());
        char* end = nullptr;
        long bits = std::strtol(digits.c_str(), &end, 10);
        bool valid = !digits.empty() && *end == '\0';
        if (name.code == kDLBfloat)
            valid = valid && bits == 16;
        else if (name.code == kDLFloat)
            valid = valid && (bits == 16 || bits == 32 || bits == 64);
        else
            valid = valid && (bits == 8 || bits == 16 || bits == 32 || bits == 64);
        if (valid) return make(name.code, static_cast<int>(bits));
        break;
    }
    user_error() << "unknown data type '" << text
                 << "'; expected e.g. float32, float16, bfloat16, int8, uint8, int64, bool";
    ANVIL_UNREACHABLE();
}

std::string dl_dtype_to_string(DLDataType dtype) {
    std::string base;
    // Besides DLPack's traditional bool, name DLPack 0.8's {kDLBool = 6, 8} and Anvil IR's
    // {Bool = 5, 1}: the code generator accepts all three for bool buffers.
    const bool is_bool = (dtype.code == kDLUInt && dtype.bits == 1) ||
                         (dtype.code == 6 && dtype.bits == 8) ||
                         (dtype.code == 5 && dtype.bits == 1);
    if (is_bool) {
        base = "bool";
    } else if (dtype.code == ANVIL_DTYPE_STRING_CODE && dtype.bits == 128 && dtype.lanes == 1) {
        return "string";
    } else if (dtype.code == kDLOpaqueHandle && dtype.bits == 64) {
        base = "handle";
    } else {
        switch (dtype.code) {
            case kDLInt:
                base = "int";
                break;
            case kDLUInt:
                base = "uint";
                break;
            case kDLFloat:
                base = "float";
                break;
            case kDLBfloat:
                base = "bfloat";
                break;
            default:
                return "dtype(code=" + std::to_string(dtype.code) +
                       ", bits=" + std::to_string(dtype.bits) +
                       ", lanes=" + std::to_string(dtype.lanes) + ")";
        }
        base += std::to_string(dtype.bits);
    }
    if (dtype.lanes != 1) {
        base += 'x';
        base += std::to_string(dtype.lanes);
    }
    return base;
}

std::string describe_tensor(const DLTensor& tensor) {
    // A caller's tensor may carry a negative ndim: it shows as "[]".
    size_t ndim = tensor.ndim > 0 ? static_cast<size_t>(tensor.ndim) : 0;
    return dl_dtype_to_string(tensor.dtype) + shape_text({tensor.shape, ndim});
}

NDArrayNode::NDArrayNode(void* data, std::vector<int64_t> shape, DLDataType dtype,
                         Ref<Object> owner)
    : view_shape_(std::move(shape)), owner_(std::move(owner)) {
    view_tensor_ = DLTensor{.data = data,
                            .device = {kDLCPU, 0},
                            .ndim = static_cast<int>(view_shape_.size()),
                            .dtype = dtype,
                            .shape = view_shape_.data(),
                            .strides = nullptr,
                            .byte_offset = 0};
    tensor_ = &view_tensor_;
}

NDArrayNode::~NDArrayNode() {
    if (tensor_ != &view_tensor_) free_tensor(tensor_);
}

NDArray NDArray::empty(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice device) {
    DLTensor* tensor = allocate_tensor(shape.data(), static_cast<int>(shape.size()), dtype, device);
    return adopt(tensor);
}

NDArray NDArray::adopt(DLTensor* tensor) {
    if (tensor == nullptr) user_error() << "NDArray::adopt: tensor is NULL";
    try {
        return NDArray(make_ref<NDArrayNode>(tensor));
    } catch (...) {
        free_tensor(tensor);
        throw;
    }
}

NDArray NDArray::wrap(void* data, std::vector<int64_t> shape, DLDataType dtype, Ref<Object> owner) {
    int64_t nbytes = checked_nbytes(shape.data(), static_cast<int>(shape.size()), dtype);
    for (int64_t dim : shape) {
        if (dim < 0) nbytes = -1;
    }
    if (nbytes < 0) {
        user_error() << "NDArray::wrap: invalid shape " << shape_text(shape);
    }
    if (data == nullptr && nbytes > 0) user_error() << "NDArray::wrap: data is NULL";
    return NDArray(make_ref<NDArrayNode>(data, std::move(shape), dtype, std::move(owner)));
}

NDArray NDArray::view(std::vector<int64_t> shape, DLDataType dtype, int64_t byte_offset) const {
    if (!defined()) user_error() << "view of a null NDArray";
    int64_t nbytes = checked_nbytes(shape.data(), static_cast<int>(shape.size()), dtype);
    for (int64_t dim : shape) {
        if (dim < 0) nbytes = -1;
    }
    auto have = static_cast<int64_t>(this->nbytes());
    if (nbytes < 0 || byte_offset < 0 || byte_offset > have || nbytes > have - byte_offset) {
        user_error() << "view " << dl_dtype_to_string(dtype) << shape_text(shape)
                     << " at byte offset " << byte_offset << " does not fit in tensor " << str()
                     << " (" << have << " bytes)";
    }
    char* base = static_cast<char*>(raw_data()) + tensor()->byte_offset + byte_offset;
    return NDArray(make_ref<NDArrayNode>(base, std::move(shape), dtype, node_));
}

int64_t NDArray::num_elements() const {
    int64_t count = 1;
    for (int64_t dim : shape()) count *= dim;
    return count;
}

size_t NDArray::nbytes() const {
    return static_cast<size_t>(num_elements() * dl_dtype_bytes(dtype()));
}

void NDArray::copy_from(const void* src, size_t nbytes) const {
    if (nbytes != this->nbytes()) {
        user_error() << "copy_from: source has " << nbytes << " bytes but tensor " << str()
                     << " has " << this->nbytes();
    }
    if (nbytes) std::memcpy(raw_data(), src, nbytes);
}

void NDArray::copy_to(void* dst, size_t nbytes) const {
    if (nbytes != this->nbytes()) {
        user_error() << "copy_to: destination has " << nbytes << " bytes but tensor " << str()
                     << " has " << this->nbytes();
    }
    if (nbytes) std::memcpy(dst, raw_data(), nbytes);
}

void NDArray::check_element_size(size_t bytes) const {
    if (static_cast<int64_t>(bytes) != dl_dtype_bytes(dtype())) {
        user_error() << "tensor " << str() << " has " << dl_dtype_bytes(dtype())
                     << "-byte elements; accessed as a " << bytes << "-byte type";
    }
}

// Element `i` of an integer, bool or float tensor, as int64 (floats truncate).
int64_t element_as_int64(const NDArray& t, size_t i) {
    DLDataType d = t.dtype();
    const auto* p = static_cast<const uint8_t*>(t.raw_data()) + t.tensor()->byte_offset;
    size_t bytes = static_cast<size_t>(dl_dtype_bytes(d));
    p += i * bytes;
    if (d.code == kDLFloat) {
        if (d.bits == 32) {
            float f;
            std::memcpy(&f, p, 4);
            return static_cast<int64_t>(f);
        }
        if (d.bits == 64) {
            double f;
            std::memcpy(&f, p, 8);
            return static_cast<int64_t>(f);
        }
    }
    if (d.code == kDLInt) {
        switch (d.bits) {
            case 8:
                return *reinterpret_cast<const int8_t*>(p);
            case 16: {
                int16_t v;
                std::memcpy(&v, p, 2);
                return v;
            }
            case 32: {
                int32_t v;
                std::memcpy(&v, p, 4);
                return v;
            }
            case 64: {
                int64_t v;
                std::memcpy(&v, p, 8);
                return v;
            }
            default:
                break;
        }
    }
    if (d.code == kDLUInt || d.code == 6 /* kDLBool */ || d.code == 5) {
        uint64_t v = 0;
        std::memcpy(&v, p, bytes);
        return static_cast<int64_t>(v);
    }
    user_error() << "cannot read a " << dl_dtype_to_string(d) << " tensor as an integer";
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::runtime

using anvil::runtime::catch_to_status;

extern "C" {

int anvil_tensor_alloc(const int64_t* shape, int ndim, DLDataType dtype, DLDevice device,
                       DLTensor** out) {
    return catch_to_status([&] {
        if (out == nullptr) anvil::user_error() << "anvil_tensor_alloc: out is NULL";
        *out = anvil::runtime::allocate_tensor(shape, ndim, dtype, device);
        return 0;
    });
}

int anvil_tensor_free(DLTensor* tensor) {
    return catch_to_status([&] {
        anvil::runtime::free_tensor(tensor);
        return 0;
    });
}

void* anvil_workspace_alloc(int64_t nbytes) {
    void* ptr = nullptr;
    catch_to_status([&] {
        if (nbytes < 0 || nbytes > INT64_MAX - ANVIL_TENSOR_ALIGNMENT) {
            anvil::user_error() << "anvil_workspace_alloc: invalid size " << nbytes;
        }
        ptr = anvil::runtime::workspace_alloc(static_cast<size_t>(nbytes));
        if (ptr == nullptr) {
            anvil::user_error() << "anvil_workspace_alloc: out of memory allocating " << nbytes
                                << " bytes";
        }
        return 0;
    });
    return ptr;
}

void anvil_workspace_free(void* ptr) {
    anvil::runtime::workspace_free(ptr);
}

}  // extern "C"
