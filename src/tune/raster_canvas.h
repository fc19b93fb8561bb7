// A small RGB raster to draw charts on (the tuning curve): pixels, rectangles, lines, dots and
// text in a built-in bitmap font, so that a plot needs no graphics or font library.
//
// The font's glyphs are 5 pixels wide and 7 high (digits, capitals, the bodies of lowercase
// letters) with one row more for descenders (g, j, p, q, y), so a character cell is 5x8 and text
// advances 6 pixels per character. It covers ASCII letters and digits, space and
// . , : ; - + = < > % ( ) [ ] _ / | ? ! ' " *; any other character is drawn as '?'.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace anvil::tune {

struct Rgb {
    std::uint8_t r = 0, g = 0, b = 0;
    bool operator==(const Rgb&) const = default;
};

class RasterCanvas {
public:
    // InternalError unless both dimensions are positive.
    RasterCanvas(int width, int height, Rgb background);

    int width() const { return width_; }
    int height() const { return height_; }
    // The pixels row by row, 3 bytes each (what encode_png_rgb takes).
    const std::vector<std::uint8_t>& rgb() const { return rgb_; }
    // InternalError outside the canvas.
    Rgb pixel(int x, int y) const;

    // Drawing is clipped to the canvas, so a chart may pass coordinates beyond its edges.
    void set_pixel(int x, int y, Rgb color);
    // The rectangle with corners (x0, y0) and (x1, y1), both included, in any order.
    void fill_rect(int x0, int y0, int x1, int y1, Rgb color);
    // A straight line from (x0, y0) to (x1, y1), both ends included, drawn with a square pen of
    // `thickness` pixels (so horizontal and vertical lines are exactly that thick).
    void draw_line(int x0, int y0, int x1, int y1, Rgb color, int thickness = 1);
    void fill_circle(int cx, int cy, int radius, Rgb color);
    // `text` with the top-left corner of its first cell at (x, y), each font pixel drawn as a
    // `scale` x `scale` square.
    void draw_text(int x, int y, std::string_view text, Rgb color, int scale = 1);

    // Pixels from the left edge of the first glyph to the right edge of the last.
    static int text_width(std::string_view text, int scale = 1);
    // Pixels from the top of a capital to the bottom of a descender.
    static int text_height(int scale = 1);
    // Whether the font has a glyph for `c` (the others are drawn as '?').
    static bool has_glyph(char c);

private:
    int width_;
    int height_;
    std::vector<std::uint8_t> rgb_;
};

}  // namespace anvil::tune
