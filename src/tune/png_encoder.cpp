#include "tune/png_encoder.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "support/error.h"

namespace anvil::tune {
namespace {

// CRC-32 of ISO 3309 (reflected polynomial 0xEDB88320), which every PNG chunk carries over its
// type and data.
constexpr std::array<std::uint32_t, 256> make_crc_table() {
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t n = 0; n < 256; ++n) {
        std::uint32_t c = n;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[n] = c;
    }
    return table;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

std::uint32_t crc32(std::string_view bytes) {
    std::uint32_t c = 0xFFFFFFFFu;
    for (char ch : bytes) c = kCrcTable[(c ^ static_cast<std::uint8_t>(ch)) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

// Adler-32, the checksum that ends a zlib stream. 5552 bytes is the most that can be summed before
// `b` may overflow 32 bits, so the modulo runs once per such run instead of once per byte.
std::uint32_t adler32(std::string_view bytes) {
    constexpr std::uint32_t kMod = 65521;
    std::uint32_t a = 1, b = 0;
    while (!bytes.empty()) {
        std::string_view run = bytes.substr(0, 5552);
        bytes.remove_prefix(run.size());
        for (char ch : run) {
            a += static_cast<std::uint8_t>(ch);
            b += a;
        }
        a %= kMod;
        b %= kMod;
    }
    return (b << 16) | a;
}

void put_u32_be(std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFF);
}

void put_u16_le(std::string& out, std::uint32_t v) {
    out += static_cast<char>(v & 0xFF);
    out += static_cast<char>((v >> 8) & 0xFF);
}

// A zlib stream (RFC 1950) of stored deflate blocks (RFC 1951, BTYPE 00): each block is a header
// byte (BFINAL in bit 0), LEN and its one's complement NLEN (little-endian), then LEN raw bytes.
std::string zlib_stored(std::string_view raw) {
    constexpr size_t kMaxBlock = 65535;
    std::string out;
    out.reserve(raw.size() + raw.size() / kMaxBlock * 5 + 16);
    out += '\x78';  // CMF: deflate, 32 KiB window
    out += '\x01';  // FLG: no dictionary, check bits making 0x7801 a multiple of 31
    size_t pos = 0;
    do {
        size_t len = std::min(kMaxBlock, raw.size() - pos);
        bool final = pos + len == raw.size();
        out += static_cast<char>(final ? 1 : 0);
        put_u16_le(out, static_cast<std::uint32_t>(len));
        put_u16_le(out, static_cast<std::uint32_t>(~len & 0xFFFF));
        out.append(raw.substr(pos, len));
        pos += len;
    } while (pos < raw.size());
    put_u32_be(out, adler32(raw));
    return out;
}

void append_chunk(std::string& png, std::string_view type, std::string_view data) {
    put_u32_be(png, static_cast<std::uint32_t>(data.size()));
    size_t checked_from = png.size();
    png.append(type);
    png.append(data);
    put_u32_be(png, crc32(std::string_view(png).substr(checked_from)));
}

}  // namespace

std::string encode_png_rgb(int width, int height, std::span<const std::uint8_t> rgb) {
    ANVIL_CHECK(width > 0 && height > 0)
        << "a PNG needs a positive size, not " << width << "x" << height;
    size_t row_bytes = static_cast<size_t>(width) * 3;
    ANVIL_CHECK(rgb.size() == row_bytes * static_cast<size_t>(height))
        << rgb.size() << " bytes are not the pixels of a " << width << "x" << height
        << " RGB image";

    std::string ihdr;
    put_u32_be(ihdr, static_cast<std::uint32_t>(width));
    put_u32_be(ihdr, static_cast<std::uint32_t>(height));
    ihdr += '\x08';  // bit depth
    ihdr += '\x02';  // colour type: truecolour (RGB)
    ihdr += '\x00';  // compression: deflate
    ihdr += '\x00';  // filter method 0
    ihdr += '\x00';  // no interlace

    // Each scanline is its filter type byte followed by the row's pixels.
    std::string scanlines;
    scanlines.reserve((row_bytes + 1) * static_cast<size_t>(height));
    for (int y = 0; y < height; ++y) {
        scanlines += '\x00';
        const std::uint8_t* row = rgb.data() + row_bytes * static_cast<size_t>(y);
        scanlines.append(reinterpret_cast<const char*>(row), row_bytes);
    }

    std::string png("\x89PNG\r\n\x1a\n", 8);
    append_chunk(png, "IHDR", ihdr);
    append_chunk(png, "IDAT", zlib_stored(scanlines));
    append_chunk(png, "IEND", "");
    return png;
}

}  // namespace anvil::tune
