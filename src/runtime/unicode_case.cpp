#include "runtime/unicode_case.h"

#include <cstdint>

#include "runtime/utf8.h"

namespace anvil::runtime {

namespace {

// Upper-case letters [first, last] whose lower case is `delta` code points on; with `pairs`,
// only every other code point from `first` (the upper half of an upper/lower pair).
struct CaseRange {
    char32_t first, last;
    int32_t delta;
    bool pairs;
};

// Invertible mappings: lower = upper + delta, and back.
constexpr CaseRange kUpperToLower[] = {
    {0x41, 0x5A, 32, false},      // A-Z
    {0xC0, 0xD6, 32, false},      // À-Ö
    {0xD8, 0xDE, 32, false},      // Ø-Þ
    {0x100, 0x12F, 1, true},      // Ā-į
    {0x132, 0x137, 1, true},      // Ĳ-ķ
    {0x139, 0x148, 1, true},      // Ĺ-ň
    {0x14A, 0x177, 1, true},      // Ŋ-ŷ
    {0x178, 0x178, -121, false},  // Ÿ → ÿ
    {0x179, 0x17E, 1, true},      // Ź-ž
    {0x386, 0x386, 38, false},    // Ά
    {0x388, 0x38A, 37, false},    // Έ-Ί
    {0x38C, 0x38C, 64, false},    // Ό
    {0x38E, 0x38F, 63, false},    // Ύ-Ώ
    {0x391, 0x3A1, 32, false},    // Α-Ρ
    {0x3A3, 0x3AB, 32, false},    // Σ-Ϋ
    {0x400, 0x40F, 80, false},    // Ѐ-Џ
    {0x410, 0x42F, 32, false},    // А-Я
    {0x460, 0x481, 1, true},      // Ѡ-ҁ
    {0x48A, 0x4BF, 1, true},      // Ҋ-ҿ
};

// One-way mappings the table cannot invert.
constexpr std::pair<char32_t, char32_t> kExtraLower[] = {{0x130, 0x69}};  // İ → i
constexpr std::pair<char32_t, char32_t> kExtraUpper[] = {
    {0xB5, 0x39C},   // µ → Μ
    {0x131, 0x49},   // ı → I
    {0x17F, 0x53},   // ſ → S
    {0x3C2, 0x3A3},  // final ς → Σ
};

char32_t to_lower(char32_t c) {
    for (const auto& [from, to] : kExtraLower) {
        if (c == from) return to;
    }
    for (const CaseRange& r : kUpperToLower) {
        if (c >= r.first && c <= r.last && (!r.pairs || (c - r.first) % 2 == 0)) {
            return static_cast<char32_t>(static_cast<int32_t>(c) + r.delta);
        }
    }
    return c;
}

char32_t to_upper(char32_t c) {
    for (const auto& [from, to] : kExtraUpper) {
        if (c == from) return to;
    }
    for (const CaseRange& r : kUpperToLower) {
        auto first = static_cast<char32_t>(static_cast<int32_t>(r.first) + r.delta);
        auto last = static_cast<char32_t>(static_cast<int32_t>(r.last) + r.delta);
        if (c >= first && c <= last && (!r.pairs || (c - first) % 2 == 0)) {
            return static_cast<char32_t>(static_cast<int32_t>(c) - r.delta);
        }
    }
    return c;
}

std::string map_case(std::string_view text, char32_t (*map)(char32_t)) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size();) {
        if (auto decoded = decode_utf8(text, i)) {
            append_utf8(map(decoded->first), out);
            i += decoded->second;
        } else {
            out += text[i++];
        }
    }
    return out;
}

}  // namespace

std::string utf8_to_lower(std::string_view text) {
    return map_case(text, to_lower);
}

std::string utf8_to_upper(std::string_view text) {
    return map_case(text, to_upper);
}

}  // namespace anvil::runtime
