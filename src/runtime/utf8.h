// UTF-8 code points one at a time: what case mapping (unicode_case.h) and NumPy's UTF-32 string
// arrays (npz.h) need.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace anvil::runtime {

// The code point of the well-formed UTF-8 sequence at text[at] and its length in bytes; nullopt
// for a malformed one (a stray continuation byte, a truncated or overlong sequence, a surrogate,
// a value past U+10FFFF).
std::optional<std::pair<char32_t, size_t>> decode_utf8(std::string_view text, size_t at);

// Appends the UTF-8 bytes of `c` (a code point up to U+10FFFF) to `out`.
void append_utf8(char32_t c, std::string& out);

}  // namespace anvil::runtime
