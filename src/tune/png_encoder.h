// PNG encoding of 8-bit RGB images, so that `anvil tune`'s plots need no image library: the
// chunks written here, the compression and checksums zlib's (a dependency of the runtime
// already, for compressed .npz files). A 640x400 plot of lines on white is a few KiB.
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
