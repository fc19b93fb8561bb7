// PNG encoding of 8-bit RGB images, written here so that `anvil tune`'s plots need no image
// library. The zlib stream holds stored (uncompressed) deflate blocks: simple enough to be
// obviously right, and a 640x400 plot is still only about 750 KiB.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace anvil::tune {

// The bytes of a PNG file (signature, IHDR, one IDAT, IEND) holding a `width` x `height` image
// whose pixels `rgb` lists row by row, top row first, 3 bytes (red, green, blue) per pixel. Rows
// use filter type 0 (none). InternalError unless both dimensions are positive and `rgb` holds
// exactly width * height pixels.
std::string encode_png_rgb(int width, int height, std::span<const std::uint8_t> rgb);

}  // namespace anvil::tune
