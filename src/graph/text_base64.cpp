#include "graph/text_base64.h"

#include "support/text_scanner.h"

namespace anvil::graph::text {

using anvil::text::fail_at;

// Base64 keeps weights a third larger than their bytes (hex would double them) and is a
// standard any tool can decode.
std::string base64_encode(const uint8_t* data, size_t n) {
    static const char kAlphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((n + 2) / 3 * 4);
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = uint32_t(data[i]) << 16;
        if (i + 1 < n) v |= uint32_t(data[i + 1]) << 8;
        if (i + 2 < n) v |= uint32_t(data[i + 2]);
        out += kAlphabet[(v >> 18) & 63];
        out += kAlphabet[(v >> 12) & 63];
        out += i + 1 < n ? kAlphabet[(v >> 6) & 63] : '=';
        out += i + 2 < n ? kAlphabet[v & 63] : '=';
    }
    return out;
}

std::vector<uint8_t> base64_decode(const std::string& s, int line, int col) {
    auto digit = [&](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        fail_at(line, col, std::string("invalid base64 character '") + c + "' in constant");
    };
    if (s.size() % 4 != 0) fail_at(line, col, "base64 data length is not a multiple of 4");
    std::vector<uint8_t> out;
    out.reserve(s.size() / 4 * 3);
    for (size_t i = 0; i < s.size(); i += 4) {
        int pad = (s[i + 3] == '=') + (s[i + 2] == '=' && s[i + 3] == '=');
        if (pad && i + 4 != s.size()) fail_at(line, col, "base64 padding inside the data");
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k) v = (v << 6) | (k < 4 - pad ? digit(s[i + k]) : 0);
        out.push_back(static_cast<uint8_t>(v >> 16));
        if (pad < 2) out.push_back(static_cast<uint8_t>(v >> 8));
        if (pad < 1) out.push_back(static_cast<uint8_t>(v));
    }
    return out;
}

}  // namespace anvil::graph::text
