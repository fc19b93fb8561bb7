#include "tune/png_encoder.h"

#include <zlib.h>

#include <string_view>

#include "support/error.h"

namespace anvil::tune {
namespace {

void put_u32_be(std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFF);
}

// The zlib stream (RFC 1950) PNG's IDAT holds: zlib's own, at its best compression.
std::string zlib_compressed(std::string_view raw) {
    uLongf size = compressBound(static_cast<uLong>(raw.size()));
    std::string out(size, '\0');
    int status = compress2(reinterpret_cast<Bytef*>(out.data()), &size,
                           reinterpret_cast<const Bytef*>(raw.data()),
                           static_cast<uLong>(raw.size()), Z_BEST_COMPRESSION);
    ANVIL_CHECK(status == Z_OK) << "zlib compress2 failed with status " << status;
    out.resize(size);
    return out;
}

// A chunk: length, type, data, and the CRC-32 (zlib's) of type and data.
void append_chunk(std::string& png, std::string_view type, std::string_view data) {
    put_u32_be(png, static_cast<std::uint32_t>(data.size()));
    size_t checked_from = png.size();
    png.append(type);
    png.append(data);
    std::string_view checked = std::string_view(png).substr(checked_from);
    put_u32_be(png, static_cast<std::uint32_t>(crc32(crc32(0L, Z_NULL, 0),
                                                     reinterpret_cast<const Bytef*>(checked.data()),
                                                     static_cast<uInt>(checked.size()))));
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
    append_chunk(png, "IDAT", zlib_compressed(scanlines));
    append_chunk(png, "IEND", "");
    return png;
}

}  // namespace anvil::tune
