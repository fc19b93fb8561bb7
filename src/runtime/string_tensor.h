// String tensors: NDArrays whose elements are AnvilStrings (anvil/runtime.h), ONNX's STRING.
//
// The bytes live in an owner object that the tensor (and every view of it) keeps alive, so a
// string tensor flows through the VM's registers, tuples, reshapes and outputs like any tensor.
// Only the VM's string instructions (vm_string.h) make or read them: no kernel takes strings,
// and the memory pool never allocates them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ndarray.h"

namespace anvil::runtime {

inline constexpr DLDataType kStringDType{ANVIL_DTYPE_STRING_CODE, 128, 1};

inline bool is_string_dtype(DLDataType t) {
    return t.code == ANVIL_DTYPE_STRING_CODE;
}

// A new string tensor holding `values` (row-major); UserError when their number does not match
// the shape.
NDArray make_string_tensor(const std::vector<int64_t>& shape, std::vector<std::string> values);

// The elements of a string tensor (views valid while the tensor lives); UserError naming
// `what` for a tensor of another dtype.
std::vector<std::string_view> string_values(const NDArray& tensor, const std::string& what);

}  // namespace anvil::runtime
