#include "runtime/tensor_check.h"

#include <algorithm>

#include "runtime/ndarray.h"
#include "runtime/shape_text.h"
#include "support/error.h"

namespace anvil::runtime {

namespace {

const char* device_name(int type) {
    switch (type) {
        case kDLCPU:
            return "CPU";
        case kDLCUDA:
            return "CUDA";
        case kDLCUDAHost:
            return "CUDA host";
        case kDLOpenCL:
            return "OpenCL";
        case kDLVulkan:
            return "Vulkan";
        case kDLMetal:
            return "Metal";
        case kDLROCM:
            return "ROCm";
        default:
            return "unknown";
    }
}

}  // namespace

void check_boundary_tensor(const std::string& where, const DLTensor* value,
                           std::span<const int64_t> shape, DLDataType dtype) {
    const std::string expected = dl_dtype_to_string(dtype) + shape_text(shape);
    if (value == nullptr) {
        user_error() << where << " is NULL; expected a tensor " << expected;
    }
    if (value->device.device_type != kDLCPU) {
        user_error() << where << " is on device type " << value->device.device_type << " ("
                     << device_name(value->device.device_type) << "); expected a CPU tensor "
                     << expected;
    }
    // Read the caller's shape only once it is known to be there.
    if (value->ndim < 0 || (value->ndim > 0 && value->shape == nullptr)) {
        user_error() << where << " has an invalid shape (ndim " << value->ndim
                     << (value->shape == nullptr ? ", shape NULL" : "") << "); expected "
                     << expected;
    }
    std::span<const int64_t> given(value->shape, static_cast<size_t>(value->ndim));
    if (!dl_dtype_equal(value->dtype, dtype) ||
        !std::equal(given.begin(), given.end(), shape.begin(), shape.end())) {
        std::string what = dl_dtype_equal(value->dtype, dtype) ? "shape" : "dtype";
        if (!dl_dtype_equal(value->dtype, dtype) &&
            !std::equal(given.begin(), given.end(), shape.begin(), shape.end())) {
            what = "dtype and shape";
        }
        user_error() << where << ": expected " << expected << ", got "
                     << dl_dtype_to_string(value->dtype) << shape_text(given) << " (wrong " << what
                     << ")";
    }
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    if (value->data == nullptr && count * dl_dtype_bytes(dtype) > 0) {
        user_error() << where << " (" << expected << ") has NULL data";
    }
    if (value->strides != nullptr) {
        std::vector<int64_t> compact(shape.size());
        int64_t stride = 1;
        bool ok = true;
        for (size_t d = shape.size(); d-- > 0;) {
            compact[d] = stride;
            if (shape[d] != 1 && value->strides[d] != stride) ok = false;
            stride *= shape[d];
        }
        if (!ok) {
            std::span<const int64_t> strides(value->strides, shape.size());
            user_error() << where << " (" << expected << ") has strides " << shape_text(strides)
                         << ", which is not compact row-major (expected strides "
                         << shape_text(compact) << " or NULL); make it contiguous first";
        }
    }
}

}  // namespace anvil::runtime
