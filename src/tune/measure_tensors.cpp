// The data of a measurement (measure.h): random inputs for a task's kernel, and the check of a
// candidate's outputs against the default schedule's.
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include "tune/measure.h"

namespace anvil::tune {

namespace {

using runtime::NDArray;

// IEEE half bits of `f` (round to nearest even); the inputs are in [-1, 1), so only normal and
// subnormal halves and zero occur, but every float converts.
uint16_t half_bits(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u)
        return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflows to inf
    if (abs < 0x38800000u) {  // a half subnormal (or zero): round |f| * 2^24 to an integer
        float scaled = std::bit_cast<float>(abs) * 16777216.0f;
        return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
    }
    uint32_t mantissa = abs + 0x00000fffu + ((abs >> 13) & 1u);  // round to nearest even
    return static_cast<uint16_t>(sign | ((mantissa - 0x38000000u) >> 13));
}

float half_value(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    if (exponent == 0) {
        float v = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -v : v;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t bfloat16_bits(float f) {
    uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
    return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

float bfloat16_value(uint16_t b) {
    return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

bool is_float(DLDataType t) {
    return (t.code == kDLFloat && (t.bits == 16 || t.bits == 32 || t.bits == 64)) ||
           (t.code == kDLBfloat && t.bits == 16);
}

// Scalar `i` of a float tensor (lanes counted as scalars), as double.
double float_at(const NDArray& a, int64_t i) {
    const void* p = a.raw_data();
    DLDataType t = a.dtype();
    if (t.code == kDLBfloat) return bfloat16_value(static_cast<const uint16_t*>(p)[i]);
    switch (t.bits) {
        case 16:
            return half_value(static_cast<const uint16_t*>(p)[i]);
        case 32:
            return static_cast<const float*>(p)[i];
        default:
            return static_cast<const double*>(p)[i];
    }
}

std::string shape_text(std::span<const int64_t> shape) {
    std::ostringstream s;
    s << "[";
    for (size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
    s << "]";
    return s.str();
}

// "element 7 (index [1, 3])" for flat scalar `i` of a tensor of `shape` with `lanes` lanes.
std::string element_text(std::span<const int64_t> shape, int lanes, int64_t i) {
    int64_t element = i / lanes;
    std::vector<int64_t> index(shape.size());
    int64_t rest = element;
    for (size_t d = shape.size(); d-- > 0;) {
        index[d] = shape[d] > 0 ? rest % shape[d] : 0;
        rest = shape[d] > 0 ? rest / shape[d] : 0;
    }
    std::ostringstream s;
    s << "element " << element << " (index " << shape_text(index);
    if (lanes > 1) s << ", lane " << i % lanes;
    s << ")";
    return s.str();
}

// The first scalar where `c` differs from the reference `r`, or -1.
int64_t first_difference(const NDArray& r, const NDArray& c, double rtol, double atol) {
    const int64_t lanes = r.dtype().lanes;
    const int64_t n = r.num_elements() * lanes;
    if (is_float(r.dtype())) {
        for (int64_t i = 0; i < n; ++i) {
            double x = float_at(r, i), y = float_at(c, i);
            if (std::isnan(x) || std::isnan(y)) {
                if (std::isnan(x) != std::isnan(y)) return i;
            } else if (std::isinf(x) || std::isinf(y)) {
                if (x != y) return i;
            } else if (!(std::abs(y - x) <= atol + rtol * std::abs(x))) {
                return i;
            }
        }
        return -1;
    }
    // Integers, bool and anything else: the bytes of each element, exactly.
    const int64_t element_bytes = runtime::dl_dtype_bytes(r.dtype());
    const auto* a = static_cast<const unsigned char*>(r.raw_data());
    const auto* b = static_cast<const unsigned char*>(c.raw_data());
    for (int64_t e = 0; e < r.num_elements(); ++e) {
        if (std::memcmp(a + e * element_bytes, b + e * element_bytes, element_bytes) != 0)
            return e * lanes;
    }
    return -1;
}

std::string value_text(const NDArray& a, int64_t i) {
    std::ostringstream s;
    if (is_float(a.dtype())) {
        s.precision(9);
        s << float_at(a, i);
    } else if (a.dtype().lanes == 1 && (a.dtype().code == kDLInt || a.dtype().code == kDLUInt) &&
               a.dtype().bits <= 64) {
        s << runtime::element_as_int64(a, static_cast<size_t>(i));
    } else {
        s << "(bytes differ)";
    }
    return s.str();
}

}  // namespace

std::vector<std::pair<std::string, runtime::NDArray>> random_inputs(
    const std::vector<KernelArg>& args, uint64_t seed) {
    // mt19937_64's sequence is fixed by the standard (its distributions are not), so the inputs
    // are the same with every standard library.
    std::mt19937_64 rng(seed);
    auto uniform = [&] {  // [-1, 1), 53 random bits
        return static_cast<double>(rng() >> 11) * 0x1p-52 - 1.0;
    };
    std::vector<std::pair<std::string, NDArray>> inputs;
    for (const KernelArg& a : args) {
        if (a.output) continue;
        NDArray t = NDArray::empty(a.shape, a.dtype);
        std::memset(t.raw_data(), 0, t.nbytes());  // integers stay 0: index inputs in range
        const int64_t n = t.num_elements() * a.dtype.lanes;
        void* p = t.raw_data();
        if (a.dtype.code == kDLBfloat && a.dtype.bits == 16) {
            for (int64_t i = 0; i < n; ++i)
                static_cast<uint16_t*>(p)[i] = bfloat16_bits(static_cast<float>(uniform()));
        } else if (a.dtype.code == kDLFloat && a.dtype.bits == 16) {
            for (int64_t i = 0; i < n; ++i)
                static_cast<uint16_t*>(p)[i] = half_bits(static_cast<float>(uniform()));
        } else if (a.dtype.code == kDLFloat && a.dtype.bits == 32) {
            for (int64_t i = 0; i < n; ++i)
                static_cast<float*>(p)[i] = static_cast<float>(uniform());
        } else if (a.dtype.code == kDLFloat && a.dtype.bits == 64) {
            for (int64_t i = 0; i < n; ++i) static_cast<double*>(p)[i] = uniform();
        }
        inputs.emplace_back(a.name, t);
    }
    return inputs;
}

bool outputs_match(const std::vector<std::pair<std::string, runtime::NDArray>>& reference,
                   const std::vector<std::pair<std::string, runtime::NDArray>>& candidate,
                   double rtol, double atol, std::string* why) {
    auto fail = [&](const std::string& text) {
        if (why) *why = text;
        return false;
    };
    auto find = [](const std::vector<std::pair<std::string, NDArray>>& list,
                   const std::string& name) -> const NDArray* {
        for (const auto& [n, a] : list)
            if (n == name) return &a;
        return nullptr;
    };
    for (const auto& [name, c] : candidate) {
        if (!find(reference, name)) return fail("output '" + name + "' is not in the reference");
    }
    for (const auto& [name, r] : reference) {
        const NDArray* c = find(candidate, name);
        if (!c) return fail("output '" + name + "' is missing");
        if (!runtime::dl_dtype_equal(r.dtype(), c->dtype()) ||
            !std::equal(r.shape().begin(), r.shape().end(), c->shape().begin(), c->shape().end())) {
            return fail("output '" + name + "' is " + c->str() + ", the reference " + r.str());
        }
        int64_t i = first_difference(r, *c, rtol, atol);
        if (i >= 0) {
            return fail("output '" + name + "' differs at " +
                        element_text(r.shape(), r.dtype().lanes, i) + ": " + value_text(*c, i) +
                        ", the reference " + value_text(r, i));
        }
    }
    if (why) why->clear();
    return true;
}

}  // namespace anvil::tune
