// Base64, the spelling of constants' bytes in the graph IR's text form (the metadata section;
// graph/printer.h, graph/parser.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace anvil::graph::text {

std::string base64_encode(const uint8_t* data, size_t n);
// UserError "line:col: ..." for characters outside the alphabet, a length that is not a multiple
// of 4 or padding inside the data.
std::vector<uint8_t> base64_decode(const std::string& s, int line, int col);

}  // namespace anvil::graph::text
