#include "runtime/vm_string.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_set>

#include "runtime/string_tensor.h"
#include "runtime/unicode_case.h"
#include "support/error.h"

namespace anvil::runtime {

namespace {

// IEEE half precision as the compiler has it: _Float16, or on AArch64 with GCC before 13 (no
// _Float16 in C++) Arm's __fp16, which converts to and from float the same way.
#if defined(__aarch64__) && !defined(__clang__) && defined(__GNUC__) && __GNUC__ < 13
using Half = __fp16;
#else
using Half = _Float16;
#endif

}  // namespace

namespace {

std::string where(const std::string& node) {
    return "vm: node '" + node + "': ";
}

std::vector<int64_t> shape_of(const NDArray& x) {
    return {x.shape().begin(), x.shape().end()};
}

// bfloat16 bits of `f`, rounded to nearest even (NaN stays a quiet NaN).
uint16_t bfloat16_bits(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40);
    bits += 0x7FFF + ((bits >> 16) & 1);
    return static_cast<uint16_t>(bits >> 16);
}

float bfloat16_value(uint16_t b) {
    uint32_t bits = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// Calls fn(T{}) with the C++ type of the numeric dtype `t` (uint16_t stands for bfloat16's
// bits); UserError naming `what` for other dtypes.
template <typename Fn>
void with_element_type(DLDataType t, const std::string& what, Fn fn) {
    bool is_bool = t.code == kDLUInt && t.bits == 1;
    if (t.lanes != 1) user_error() << what << ": vector dtypes are not supported";
    if (is_bool) return fn(bool{});
    switch (t.code) {
        case kDLInt:
            if (t.bits == 8) return fn(int8_t{});
            if (t.bits == 16) return fn(int16_t{});
            if (t.bits == 32) return fn(int32_t{});
            if (t.bits == 64) return fn(int64_t{});
            break;
        case kDLUInt:
            if (t.bits == 8) return fn(uint8_t{});
            if (t.bits == 16) return fn(uint16_t{});
            if (t.bits == 32) return fn(uint32_t{});
            if (t.bits == 64) return fn(uint64_t{});
            break;
        case kDLFloat:
            if (t.bits == 16) return fn(Half{});
            if (t.bits == 32) return fn(float{});
            if (t.bits == 64) return fn(double{});
            break;
        case kDLBfloat:
            if (t.bits == 16) return fn(std::byte{});  // marks bfloat16 (stored as uint16 bits)
            break;
        default:
            break;
    }
    user_error() << what << ": element type " << dl_dtype_to_string(t)
                 << " does not convert to or from strings";
}

// NumPy's spelling of a float or double (see vm_string.h).
template <typename F>
std::string format_floating(F v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "INF" : "-INF";
    char buf[64];
    F a = std::fabs(v);
    bool positional = a == 0 || (a >= F(1e-4) && a < F(1e16));
    auto r = std::to_chars(buf, buf + sizeof buf, v,
                           positional ? std::chars_format::fixed : std::chars_format::scientific);
    std::string s(buf, r.ptr);
    if (positional && s.find('.') == std::string::npos) s += ".0";
    return s;
}

// A 16-bit float's spelling: the float nearest the shortest decimal that reads back to the same
// 16-bit value, spelled as a float (whose shortest spelling is then those same digits).
template <typename ToBits>
std::string format_16bit(float v, ToBits to_bits) {
    if (std::isnan(v) || std::isinf(v)) return format_floating(v);
    char buf[64];
    for (int digits = 1; digits <= 9; ++digits) {
        auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific, digits - 1);
        float back = 0;
        std::from_chars(buf, r.ptr, back);
        if (to_bits(back) == to_bits(v)) return format_floating(back);
    }
    return format_floating(v);
}

uint16_t half_bits(float f) {
    auto h = static_cast<Half>(f);
    uint16_t bits;
    std::memcpy(&bits, &h, sizeof bits);
    return bits;
}

std::string_view trim(std::string_view s) {
    auto space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
    while (!s.empty() && space(s.front())) s.remove_prefix(1);
    while (!s.empty() && space(s.back())) s.remove_suffix(1);
    return s;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

// "INF", "+INF", "-INF", "NaN" (any case; also "infinity").
std::optional<double> special_value(std::string_view s) {
    double sign = 1;
    if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
        sign = s.front() == '-' ? -1 : 1;
        s.remove_prefix(1);
    }
    if (equals_ignoring_case(s, "inf") || equals_ignoring_case(s, "infinity")) {
        return sign * std::numeric_limits<double>::infinity();
    }
    if (equals_ignoring_case(s, "nan")) return std::numeric_limits<double>::quiet_NaN();
    return std::nullopt;
}

// Reads a whole number with from_chars (which takes no '+'); nullopt unless all of `s` is one.
template <typename T>
std::optional<T> read_number(std::string_view s, bool* out_of_range = nullptr) {
    if (s.size() > 1 && s.front() == '+' && s[1] != '-') s.remove_prefix(1);
    T value{};
    auto r = std::from_chars(s.data(), s.data() + s.size(), value);
    if (r.ptr != s.data() + s.size() || s.empty()) return std::nullopt;
    if (r.ec == std::errc::result_out_of_range) {
        if (out_of_range) *out_of_range = true;
        return std::nullopt;
    }
    if (r.ec != std::errc()) return std::nullopt;
    return value;
}

// A floating-point value of the text; strtod's answer (±inf, ±0) when it is out of range.
template <typename F>
std::optional<F> read_floating(std::string_view s) {
    if (auto special = special_value(s)) return static_cast<F>(*special);
    bool out_of_range = false;
    if (auto v = read_number<F>(s, &out_of_range)) return v;
    if (!out_of_range) return std::nullopt;
    std::string copy(s);
    return static_cast<F>(std::strtod(copy.c_str(), nullptr));
}

class StringParser {
public:
    StringParser(const std::string& node, DLDataType dtype) : node_(node), dtype_(dtype) {}

    template <typename T>
    T parse(std::string_view text, int64_t index) const {
        std::string_view s = trim(text);
        if constexpr (std::is_same_v<T, bool>) {
            if (equals_ignoring_case(s, "true")) return true;
            if (equals_ignoring_case(s, "false")) return false;
            return floating<double>(s, text, index) != 0;
        } else if constexpr (std::is_same_v<T, Half>) {
            return static_cast<Half>(floating<double>(s, text, index));
        } else if constexpr (std::is_floating_point_v<T>) {
            return floating<T>(s, text, index);
        } else {
            bool out_of_range = false;
            if (auto v = read_number<T>(s, &out_of_range)) return *v;
            if (out_of_range) fail(text, index, "out of range");
            // A decimal or scientific literal truncates toward zero.
            double d = floating<double>(s, text, index);
            double t = std::trunc(d);
            if (!(t >= static_cast<double>(std::numeric_limits<T>::min()) &&
                  t <= static_cast<double>(std::numeric_limits<T>::max()))) {
                fail(text, index, "out of range");
            }
            return static_cast<T>(t);
        }
    }

    uint16_t parse_bfloat16(std::string_view text, int64_t index) const {
        return bfloat16_bits(floating<float>(trim(text), text, index));
    }

private:
    template <typename F>
    F floating(std::string_view s, std::string_view text, int64_t index) const {
        if (auto v = read_floating<F>(s)) return *v;
        fail(text, index, "not a number");
    }
    [[noreturn]] void fail(std::string_view text, int64_t index, const char* why) const {
        user_error() << where(node_) << "cannot convert the string \"" << text << "\" (element "
                     << index << ") to " << dl_dtype_to_string(dtype_) << ": " << why;
        ANVIL_UNREACHABLE();  // the builder throws as the statement ends
    }

    const std::string& node_;
    DLDataType dtype_;
};

}  // namespace

CaseChange case_change_from_string(const std::string& text) {
    if (text == "NONE") return CaseChange::none;
    if (text == "LOWER") return CaseChange::lower;
    if (text == "UPPER") return CaseChange::upper;
    user_error() << "case_change_action must be NONE, LOWER or UPPER, not '" << text << "'";
    ANVIL_UNREACHABLE();
}

NDArray normalize_strings(const NDArray& x, CaseChange change, bool case_sensitive,
                          const std::vector<std::string>& stopwords, const std::string& node) {
    std::vector<std::string_view> in = string_values(x, where(node) + "the input");
    bool two_d = x.ndim() == 2;
    if (!(x.ndim() == 1 || (two_d && x.shape()[0] == 1))) {
        user_error() << where(node) << "StringNormalizer takes a [C] or [1, C] tensor, not "
                     << x.str();
    }
    std::unordered_set<std::string> stop;
    for (const std::string& w : stopwords) stop.insert(case_sensitive ? w : utf8_to_lower(w));
    std::vector<std::string> kept;
    for (std::string_view s : in) {
        if (stop.count(case_sensitive ? std::string(s) : utf8_to_lower(s))) continue;
        switch (change) {
            case CaseChange::none:
                kept.emplace_back(s);
                break;
            case CaseChange::lower:
                kept.push_back(utf8_to_lower(s));
                break;
            case CaseChange::upper:
                kept.push_back(utf8_to_upper(s));
                break;
        }
    }
    if (kept.empty()) kept.emplace_back();  // ONNX: one empty string rather than no string
    auto n = static_cast<int64_t>(kept.size());
    return make_string_tensor(two_d ? std::vector<int64_t>{1, n} : std::vector<int64_t>{n},
                              std::move(kept));
}

NDArray format_strings(const NDArray& x, const std::string& node) {
    std::vector<std::string> out(static_cast<size_t>(x.num_elements()));
    with_element_type(x.dtype(), where(node) + "Cast to string", [&](auto element) {
        using T = decltype(element);
        const auto* p = static_cast<const T*>(x.raw_data());
        for (size_t i = 0; i < out.size(); ++i) {
            if constexpr (std::is_same_v<T, bool>) {
                out[i] = p[i] ? "True" : "False";
            } else if constexpr (std::is_same_v<T, std::byte>) {
                uint16_t bits;
                std::memcpy(&bits, static_cast<const char*>(x.raw_data()) + 2 * i, sizeof bits);
                out[i] = format_16bit(bfloat16_value(bits), bfloat16_bits);
            } else if constexpr (std::is_same_v<T, Half>) {
                out[i] = format_16bit(static_cast<float>(p[i]), half_bits);
            } else if constexpr (std::is_floating_point_v<T>) {
                out[i] = format_floating(p[i]);
            } else {
                out[i] = std::to_string(p[i]);
            }
        }
    });
    return make_string_tensor(shape_of(x), std::move(out));
}

NDArray parse_strings(const NDArray& x, DLDataType dtype, const std::string& node) {
    std::vector<std::string_view> in = string_values(x, where(node) + "the input");
    NDArray out = NDArray::empty(shape_of(x), dtype);
    StringParser parser(node, dtype);
    with_element_type(dtype, where(node) + "Cast from string", [&](auto element) {
        using T = decltype(element);
        for (size_t i = 0; i < in.size(); ++i) {
            auto index = static_cast<int64_t>(i);
            if constexpr (std::is_same_v<T, std::byte>) {
                static_cast<uint16_t*>(out.raw_data())[i] = parser.parse_bfloat16(in[i], index);
            } else if constexpr (std::is_same_v<T, bool>) {
                static_cast<uint8_t*>(out.raw_data())[i] = parser.parse<bool>(in[i], index);
            } else {
                static_cast<T*>(out.raw_data())[i] = parser.parse<T>(in[i], index);
            }
        }
    });
    return out;
}

}  // namespace anvil::runtime
