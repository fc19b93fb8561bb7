// Upper- and lower-casing UTF-8 text, as ONNX StringNormalizer's case_change_action asks.
//
// The mapping is Unicode's simple (one code point to one code point) case mapping for the
// letters of Basic Latin, Latin-1, Latin Extended-A, Greek and Cyrillic (ASCII and most European
// languages); other characters, and bytes that are not valid UTF-8, pass through unchanged. It
// does not depend on a locale: no Turkish dotted/dotless i rules, and "ß" stays "ß" (its full
// uppercase is two letters).
#pragma once

#include <string>
#include <string_view>

namespace anvil::runtime {

std::string utf8_to_lower(std::string_view text);
std::string utf8_to_upper(std::string_view text);

}  // namespace anvil::runtime
