#include "graph/text_scalar.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "runtime/ndarray.h"

namespace anvil::graph::text {

namespace {

// The types written inline, with their suffixes; the first of each kind is the unsuffixed one.
struct ScalarKind {
    DataType dtype;
    const char* suffix;
};
constexpr ScalarKind kKinds[] = {
    {DataType::int32(), ""},      {DataType::float32(), "f"},  {DataType::float32(), "f32"},
    {DataType::float64(), "f64"}, {DataType::int_(8), "i8"},   {DataType::int_(16), "i16"},
    {DataType::int32(), "i32"},   {DataType::int64(), "i64"},  {DataType::uint(8), "u8"},
    {DataType::uint(16), "u16"},  {DataType::uint(32), "u32"}, {DataType::uint(64), "u64"},
};

template <typename T>
std::string shortest(T v) {
    char buf[64];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

Expr make_scalar(DataType t, const void* bytes) {
    auto a = runtime::NDArray::empty({}, dl_dtype_of(t));
    std::memcpy(a.raw_data(), bytes, static_cast<size_t>(t.bits() / 8));
    return make_constant(std::move(a));
}

}  // namespace

std::optional<std::string> scalar_literal(const Constant& c) {
    if (c.data.ndim() != 0) return std::nullopt;
    DataType t = dtype_of(c.data.dtype());
    const void* p = c.data.raw_data();
    auto integer = [&](auto v, const char* suffix) { return std::to_string(v) + suffix; };
    if (t == DataType::float32() || t == DataType::float64()) {
        double v =
            t.bits() == 32 ? double(*static_cast<const float*>(p)) : *static_cast<const double*>(p);
        if (!std::isfinite(v)) return std::nullopt;
        return t.bits() == 32 ? shortest(*static_cast<const float*>(p)) + "f" : shortest(v) + "f64";
    }
    if (t == DataType::int32()) return integer(*static_cast<const int32_t*>(p), "");
    if (t == DataType::int64()) return integer(*static_cast<const int64_t*>(p), "i64");
    if (t == DataType::int_(8)) return integer(int(*static_cast<const int8_t*>(p)), "i8");
    if (t == DataType::int_(16)) return integer(*static_cast<const int16_t*>(p), "i16");
    if (t == DataType::uint(8)) return integer(unsigned(*static_cast<const uint8_t*>(p)), "u8");
    if (t == DataType::uint(16)) return integer(*static_cast<const uint16_t*>(p), "u16");
    if (t == DataType::uint(32)) return integer(*static_cast<const uint32_t*>(p), "u32");
    if (t == DataType::uint(64)) return integer(*static_cast<const uint64_t*>(p), "u64");
    return std::nullopt;
}

Expr parse_scalar_literal(const Token& number, bool negative) {
    const std::string& text = number.text;
    bool fractional = text.find_first_of(".eE") != std::string::npos;
    const ScalarKind* kind = nullptr;
    for (const ScalarKind& k : kKinds) {
        if (number.suffix == k.suffix) {
            kind = &k;
            break;
        }
    }
    if (number.suffix.empty() && fractional) kind = &kKinds[1];
    if (!kind) {
        fail_at(number.line, number.col,
                "unknown suffix '" + number.suffix +
                    "' on a number (f, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64)");
    }
    DataType t = kind->dtype;
    std::string spelled = (negative ? "-" : "") + text + number.suffix;
    if (t.is_float()) {
        if (t.bits() == 32) {
            float v = std::strtof(text.c_str(), nullptr);
            if (std::isinf(v)) fail_at(number.line, number.col, spelled + " overflows float32");
            if (negative) v = -v;
            return make_scalar(t, &v);
        }
        double v = std::strtod(text.c_str(), nullptr);
        if (std::isinf(v)) fail_at(number.line, number.col, spelled + " overflows float64");
        if (negative) v = -v;
        return make_scalar(t, &v);
    }
    if (fractional) {
        fail_at(number.line, number.col, spelled + ": an integer type cannot hold a fraction");
    }
    uint64_t magnitude = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), magnitude);
    bool parsed = r.ec == std::errc() && r.ptr == text.data() + text.size();
    // The range of t: [-2^(bits-1), 2^(bits-1) - 1] or [0, 2^bits - 1].
    uint64_t max = t.is_uint() ? (t.bits() == 64 ? UINT64_MAX : (uint64_t(1) << t.bits()) - 1)
                               : (uint64_t(1) << (t.bits() - 1)) - 1 + (negative ? 1 : 0);
    if (!parsed || magnitude > max || (negative && t.is_uint() && magnitude != 0)) {
        fail_at(number.line, number.col, spelled + " is out of the range of " + t.str());
    }
    int64_t sv = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    switch (t.bits()) {
        case 8: {
            uint8_t b = static_cast<uint8_t>(sv);
            return make_scalar(t, &b);
        }
        case 16: {
            uint16_t b = static_cast<uint16_t>(sv);
            return make_scalar(t, &b);
        }
        case 32: {
            uint32_t b = static_cast<uint32_t>(sv);
            return make_scalar(t, &b);
        }
        default:
            return make_scalar(t, &sv);
    }
}

}  // namespace anvil::graph::text
