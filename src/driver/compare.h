// Comparing computed tensors with reference tensors, as numpy.allclose does: an element agrees
// when |actual - expected| <= atol + rtol * |expected|, or both are NaN, or they are equal
// (infinities); strings agree when they are equal. Used by `anvil run --compare` and the
// conformance tests.
#pragma once

#include <string>
#include <vector>

#include "runtime/ndarray.h"

namespace anvil::driver {

struct Comparison {
    bool same_type = true;  // dtype and shape match
    size_t mismatches = 0;  // elements outside the tolerance
    size_t elements = 0;
    double max_abs_error = 0;
    double max_rel_error = 0;
    bool ok() const { return same_type && mismatches == 0; }
};

Comparison compare_tensors(const runtime::NDArray& actual, const runtime::NDArray& expected,
                           double rtol, double atol);

// Every element as a double (all integer widths, float16, bfloat16, float32, float64, bool);
// UserError for other types.
std::vector<double> to_doubles(const runtime::NDArray& a);

// ONNX files store bfloat16 data as uint16 bits: `a` relabelled as `declared` when that is the
// case, else `a` itself.
runtime::NDArray as_declared(const runtime::NDArray& a, DLDataType declared);

}  // namespace anvil::driver
