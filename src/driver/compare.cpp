#include "driver/compare.h"

#include <cmath>
#include <cstring>

#include "runtime/string_tensor.h"
#include "support/error.h"

namespace anvil::driver {

std::vector<double> to_doubles(const runtime::NDArray& a) {
    std::vector<double> out(static_cast<size_t>(a.num_elements()));
    DLDataType t = a.dtype();
    const void* p = a.raw_data();
    auto each = [&](auto element) {
        using T = decltype(element);
        for (size_t i = 0; i < out.size(); ++i) {
            out[i] = static_cast<double>(static_cast<const T*>(p)[i]);
        }
    };
    if (t.code == kDLFloat && t.bits == 32) {
        each(float());
    } else if (t.code == kDLFloat && t.bits == 64) {
        each(double());
    } else if (t.code == kDLFloat && t.bits == 16) {
        each(_Float16());
    } else if (t.code == kDLBfloat && t.bits == 16) {
        // bfloat16 is the upper half of a float32.
        for (size_t i = 0; i < out.size(); ++i) {
            uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(p)[i]) << 16;
            float f;
            std::memcpy(&f, &bits, sizeof f);
            out[i] = f;
        }
    } else if (t.code == kDLInt && t.bits == 64) {
        each(int64_t());
    } else if (t.code == kDLInt && t.bits == 32) {
        each(int32_t());
    } else if (t.code == kDLInt && t.bits == 16) {
        each(int16_t());
    } else if (t.code == kDLInt && t.bits == 8) {
        each(int8_t());
    } else if (t.code == kDLUInt && t.bits == 64) {
        each(uint64_t());
    } else if (t.code == kDLUInt && t.bits == 32) {
        each(uint32_t());
    } else if (t.code == kDLUInt && t.bits == 16) {
        each(uint16_t());
    } else if (t.code == kDLUInt && t.bits <= 8) {  // bool is {kDLUInt, 1}, one byte each
        each(uint8_t());
    } else {
        user_error() << "cannot compare or print a " << a.str();
    }
    return out;
}

runtime::NDArray as_declared(const runtime::NDArray& a, DLDataType declared) {
    bool bits_of_bfloat = a.dtype().code == kDLUInt && a.dtype().bits == 16 &&
                          declared.code == kDLBfloat && declared.bits == 16;
    if (!bits_of_bfloat) return a;
    return a.view(std::vector<int64_t>(a.shape().begin(), a.shape().end()), declared);
}

Comparison compare_tensors(const runtime::NDArray& actual, const runtime::NDArray& expected,
                           double rtol, double atol) {
    Comparison c;
    runtime::NDArray ref = as_declared(expected, actual.dtype());
    if (ref.str() != actual.str()) {
        c.same_type = false;
        return c;
    }
    if (runtime::is_string_dtype(actual.dtype())) {  // strings agree when equal
        auto a = runtime::string_values(actual, "the result"),
             b = runtime::string_values(ref, "the reference");
        c.elements = a.size();
        for (size_t i = 0; i < a.size(); ++i) c.mismatches += a[i] != b[i];
        return c;
    }
    std::vector<double> a = to_doubles(actual), b = to_doubles(ref);
    c.elements = a.size();
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) continue;
        double err = std::abs(a[i] - b[i]);
        if (std::isnan(err) || std::isinf(err)) err = INFINITY;
        c.max_abs_error = std::max(c.max_abs_error, err);
        if (b[i] != 0) c.max_rel_error = std::max(c.max_rel_error, err / std::abs(b[i]));
        if (!(err <= atol + rtol * std::abs(b[i]))) ++c.mismatches;
    }
    return c;
}

}  // namespace anvil::driver
