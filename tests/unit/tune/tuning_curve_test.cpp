#include "tune/tuning_curve.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "require_package.h"
#include "support/error.h"
#include "tune/png_encoder.h"
#include "tune/raster_canvas.h"
#include "unit/tune/tune_test_util.h"

namespace anvil::tune {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

// A PNG read back by a reader written for these tests: the chunks, sizes and scanlines by hand
// (the CRC computed bit by bit, independently of the encoder), the zlib stream inflated by zlib.
struct DecodedPng {
    int width = 0, height = 0;
    size_t idat_bytes = 0;  // the compressed stream's size
    std::vector<std::uint8_t> rgb;

    Rgb at(int x, int y) const {
        size_t i = (static_cast<size_t>(y) * width + x) * 3;
        return {rgb[i], rgb[i + 1], rgb[i + 2]};
    }
};

std::uint32_t be32(const std::string& s, size_t pos) {
    std::uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<std::uint8_t>(s.at(pos + i));
    return v;
}

std::uint32_t slow_crc32(const std::string& bytes) {
    std::uint32_t crc = 0xFFFFFFFFu;
    for (char c : bytes) {
        crc ^= static_cast<std::uint8_t>(c);
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ ((crc & 1) ? 0xEDB88320u : 0);
    }
    return ~crc;
}

// Checks the signature, every chunk's CRC, IHDR (8-bit RGB, no interlace), the zlib stream (its
// header, and that it inflates to exactly the scanlines), and that each scanline has filter type 0
// (what the encoder writes, and the only one this reader undoes).
void decode_png(const std::string& png, DecodedPng* out) {
    *out = {};
    ASSERT_GE(png.size(), 8u);
    ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    std::vector<std::string> types;
    std::string ihdr, idat;
    size_t pos = 8;
    while (pos < png.size()) {
        ASSERT_LE(pos + 12, png.size()) << "truncated chunk at " << pos;
        std::uint32_t length = be32(png, pos);
        ASSERT_LE(pos + 12 + length, png.size()) << "chunk overruns the file";
        std::string type = png.substr(pos + 4, 4), data = png.substr(pos + 8, length);
        EXPECT_EQ(be32(png, pos + 8 + length), slow_crc32(type + data)) << "CRC of " << type;
        types.push_back(type);
        if (type == "IHDR") ihdr = data;
        if (type == "IDAT") idat += data;
        pos += 12 + length;
    }
    ASSERT_GE(types.size(), 3u);
    EXPECT_EQ(types.front(), "IHDR");
    EXPECT_EQ(types.back(), "IEND");
    ASSERT_EQ(ihdr.size(), 13u);
    out->width = static_cast<int>(be32(ihdr, 0));
    out->height = static_cast<int>(be32(ihdr, 4));
    EXPECT_EQ(ihdr.substr(8), std::string("\x08\x02\x00\x00\x00", 5))
        << "8-bit RGB, deflate, filter method 0, no interlace";

    ASSERT_GE(idat.size(), 6u);
    auto byte = [&](size_t i) { return static_cast<std::uint8_t>(idat.at(i)); };
    EXPECT_EQ(byte(0) & 0x0F, 8) << "deflate";
    EXPECT_EQ((byte(0) * 256 + byte(1)) % 31, 0) << "zlib header check bits";
    EXPECT_EQ(byte(1) & 0x20, 0) << "no preset dictionary";
    out->idat_bytes = idat.size();
    // Inflating checks the deflate blocks and the Adler-32 that ends the stream; one byte more
    // than the image needs shows that the stream holds no more than that.
    size_t row_size = static_cast<size_t>(out->width) * 3 + 1;
    std::string raw(row_size * out->height + 1, '\0');
    uLongf raw_size = static_cast<uLongf>(raw.size());
    ASSERT_EQ(
        uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_size,
                   reinterpret_cast<const Bytef*>(idat.data()), static_cast<uLong>(idat.size())),
        Z_OK)
        << "the IDAT stream does not inflate";
    raw.resize(raw_size);

    ASSERT_EQ(raw.size(), row_size * out->height);
    for (int y = 0; y < out->height; ++y) {
        ASSERT_EQ(raw[y * row_size], '\0') << "filter type of row " << y;
        out->rgb.insert(out->rgb.end(), raw.begin() + y * row_size + 1,
                        raw.begin() + (y + 1) * row_size);
    }
}

DecodedPng read_png(const std::string& path) {
    DecodedPng png;
    decode_png(read_file(path), &png);
    return png;
}

bool is_curve(Rgb c) {
    return c.b > 150 && c.r < 80 && c.g < 150;
}
bool is_ink(Rgb c) {
    return c.r < 100 && c.g < 100 && c.b < 100;
}

// The topmost curve pixel of column x, or -1.
int curve_top(const DecodedPng& png, int x) {
    for (int y = 0; y < png.height; ++y)
        if (is_curve(png.at(x, y))) return y;
    return -1;
}

bool any_pixel(const DecodedPng& png, int x0, int y0, int x1, int y1, bool (*pred)(Rgb)) {
    for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x)
            if (pred(png.at(x, y))) return true;
    return false;
}

// A run that improves 12.3 ms to 9.8 ms over 10 minutes.
std::vector<CurvePoint> sample_curve() {
    return {{0.0, 12.3, 0},    {30.0, 11.9, 16},   {95.5, 11.2, 48},
            {240.0, 10.4, 96}, {410.25, 9.8, 160}, {600.0, 9.8, 200}};
}

TEST(TuningCurve, CsvHasAHeaderAndOneLinePerPoint) {
    TempDir dir;
    write_curve_csv(dir / "curve.csv",
                    {{0.0, 12.3, 0}, {1.5, 10.25, 16}, {62.125, 9.8, 64}, {70.0004, 0.0123, 65}});
    EXPECT_EQ(read_file(dir / "curve.csv"),
              "elapsed_s,trials,latency_ms\n"
              "0.000,0,12.3\n"
              "1.500,16,10.25\n"
              "62.125,64,9.8\n"
              "70.000,65,0.0123\n");
    write_curve_csv(dir / "curve.csv", {});  // replaces the file
    EXPECT_EQ(read_file(dir / "curve.csv"), "elapsed_s,trials,latency_ms\n");
}

TEST(TuningCurve, UnwritablePathIsAUserErrorNamingIt) {
    TempDir dir;
    write_file(dir / "file", "a file, not a directory");
    for (const std::string& path : {dir / "missing/curve", dir / "file/curve"}) {
        try {
            write_curve_csv(path + ".csv", sample_curve());
            ADD_FAILURE() << "no error for " << path << ".csv";
        } catch (const UserError& e) {
            EXPECT_NE(std::string(e.what()).find(path + ".csv"), std::string::npos) << e.what();
        }
        try {
            write_curve_png(path + ".png", sample_curve(), "resnet18");
            ADD_FAILURE() << "no error for " << path << ".png";
        } catch (const UserError& e) {
            EXPECT_NE(std::string(e.what()).find(path + ".png"), std::string::npos) << e.what();
        }
    }
}

TEST(TuningCurve, PngIsACompressed640x400RgbImage) {
    TempDir dir;
    write_curve_png(dir / "curve.png", sample_curve(), "resnet18");
    DecodedPng png;
    ASSERT_NO_FATAL_FAILURE(decode_png(read_file(dir / "curve.png"), &png));
    EXPECT_EQ(png.width, 640);
    EXPECT_EQ(png.height, 400);
    // Lines on white: far smaller than the 400 rows of 1 + 640 * 3 bytes it holds.
    EXPECT_LT(png.idat_bytes, 400u * (1 + 640 * 3) / 10);
    const Rgb white{255, 255, 255};
    EXPECT_EQ(png.at(0, 0), white);
    EXPECT_EQ(png.at(639, 0), white);
    EXPECT_EQ(png.at(0, 399), white);
    EXPECT_EQ(png.at(639, 399), white);
}

TEST(TuningCurve, PngShowsTheImprovementAndItsTitle) {
    TempDir dir;
    write_curve_png(dir / "curve.png", sample_curve(), "resnet18");
    DecodedPng png = read_png(dir / "curve.png");
    ASSERT_EQ(png.width, 640);
    int first = -1, last = -1;
    for (int x = 0; x < png.width; ++x) {
        if (curve_top(png, x) < 0) continue;
        if (first < 0) first = x;
        last = x;
    }
    ASSERT_GE(first, 0) << "no curve drawn";
    // The curve spans most of the width (elapsed time from 0 to the last point)...
    EXPECT_GT(last - first, 450);
    // ...and drops by much more than the 20% of the height it would with the axis from 0 (12.3 ms
    // to 9.8 ms): the axis starts just below 9.8 ms.
    int drop = curve_top(png, last - 4) - curve_top(png, first + 1);
    EXPECT_GT(drop, 150) << "from y " << curve_top(png, first + 1) << " to "
                         << curve_top(png, last - 4);
    // It is stepped: its height holds between points, so near the start it is flat.
    EXPECT_EQ(curve_top(png, first + 1), curve_top(png, first + 10));
    EXPECT_TRUE(any_pixel(png, 0, 0, 639, 30, is_ink)) << "the title line";
    EXPECT_FALSE(any_pixel(png, 0, 0, 639, 30, is_curve));
    EXPECT_TRUE(any_pixel(png, 0, 360, 639, 399, is_ink)) << "the time axis' labels";
}

TEST(TuningCurve, PngOfNoPointsSaysNoData) {
    TempDir dir;
    write_curve_png(dir / "curve.png", {}, "resnet18");
    DecodedPng png;
    ASSERT_NO_FATAL_FAILURE(decode_png(read_file(dir / "curve.png"), &png));
    ASSERT_EQ(png.width, 640);
    ASSERT_EQ(png.height, 400);
    EXPECT_FALSE(any_pixel(png, 0, 0, 639, 399, is_curve));
    EXPECT_TRUE(any_pixel(png, 280, 180, 380, 220, is_ink)) << "'no data' in the middle";
}

TEST(TuningCurve, PngOfOnePointIsADot) {
    TempDir dir;
    write_curve_png(dir / "curve.png", {{5.0, 3.5, 8}}, "mobilenet_v2");
    DecodedPng png;
    ASSERT_NO_FATAL_FAILURE(decode_png(read_file(dir / "curve.png"), &png));
    int x0 = 640, x1 = -1, y0 = 400, y1 = -1;
    for (int y = 0; y < png.height; ++y)
        for (int x = 0; x < png.width; ++x)
            if (is_curve(png.at(x, y))) {
                x0 = std::min(x0, x), x1 = std::max(x1, x);
                y0 = std::min(y0, y), y1 = std::max(y1, y);
            }
    ASSERT_GE(x1, 0) << "no dot";
    EXPECT_LE(x1 - x0, 8);
    EXPECT_LE(y1 - y0, 8);
}

TEST(TuningCurve, PngLeavesOutPointsItCannotPlot) {
    TempDir dir;
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<CurvePoint> points = {{0, inf, 0}, {1, 8.0, 4}, {nan, 7.0, 5}, {-3, 6.0, 6},
                                      {2, nan, 7}, {4, 7.5, 8}, {3, 1e300, 9}, {5, 1e-300, 10}};
    write_curve_png(dir / "curve.png", points, std::string(300, 'x') + "\t\xff");
    DecodedPng png;
    ASSERT_NO_FATAL_FAILURE(decode_png(read_file(dir / "curve.png"), &png));
    EXPECT_TRUE(any_pixel(png, 0, 0, 639, 399, is_curve));
    // Only non-finite and negative values are dropped; everything else still makes a plot.
    write_curve_png(dir / "all_bad.png", {{nan, nan, 0}, {-1, 2, 1}, {1, -2, 2}}, "");
    ASSERT_NO_FATAL_FAILURE(decode_png(read_file(dir / "all_bad.png"), &png));
    EXPECT_TRUE(any_pixel(png, 280, 180, 380, 220, is_ink)) << "'no data'";
}

// A real decoder agrees: Pillow opens the file (CRCs, zlib stream, sizes) and reads the pixels
// (Debian's python3-pil, which python3-torchvision of the test dependencies pulls in).
TEST(TuningCurve, PngDecodesWithPillow) {
    ANVIL_REQUIRE_PACKAGE(std::system("/usr/bin/python3 -c 'import PIL, zlib' 2>/dev/null") == 0,
                          "Pillow for /usr/bin/python3", "apt-get install python3-pil");
    TempDir dir;
    write_curve_png(dir / "curve.png", sample_curve(), "resnet18");
    write_file(dir / "check.py",
               "import sys, zlib\n"
               "from PIL import Image\n"
               "data = open(sys.argv[1], 'rb').read()\n"
               "pos, idat = 8, b''\n"
               "while pos < len(data):\n"
               "    n = int.from_bytes(data[pos:pos + 4], 'big')\n"
               "    body = data[pos + 4:pos + 8 + n]\n"
               "    assert zlib.crc32(body) == int.from_bytes(data[pos + 8 + n:pos + 12 + n], "
               "'big')\n"
               "    if body[:4] == b'IDAT': idat += body[4:]\n"
               "    pos += 12 + n\n"
               "assert len(zlib.decompress(idat)) == 400 * (1 + 640 * 3)\n"
               "im = Image.open(sys.argv[1])\n"
               "im.load()\n"
               "assert im.size == (640, 400) and im.mode == 'RGB', (im.size, im.mode)\n"
               "assert im.getpixel((0, 0)) == (255, 255, 255)\n"
               "assert (31, 119, 180) in {c for _, c in im.getcolors(1 << 20)}\n");
    std::string command = "/usr/bin/python3 " + (dir / "check.py") + " " + (dir / "curve.png");
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(PngEncoder, EncodesAnyPositiveSize) {
    std::vector<std::uint8_t> pixels = {1, 2, 3, 4, 5, 6};
    DecodedPng png;
    ASSERT_NO_FATAL_FAILURE(decode_png(encode_png_rgb(1, 2, pixels), &png));
    EXPECT_EQ(png.width, 1);
    EXPECT_EQ(png.height, 2);
    EXPECT_EQ(png.rgb, pixels);
    EXPECT_THROW(encode_png_rgb(2, 2, pixels), InternalError);
    EXPECT_THROW(encode_png_rgb(0, 0, {}), InternalError);
}

TEST(RasterCanvas, FontCoversWhatPlotsWrite) {
    for (char c = '0'; c <= '9'; ++c) EXPECT_TRUE(RasterCanvas::has_glyph(c)) << c;
    for (char c = 'a'; c <= 'z'; ++c) EXPECT_TRUE(RasterCanvas::has_glyph(c)) << c;
    for (char c = 'A'; c <= 'Z'; ++c) EXPECT_TRUE(RasterCanvas::has_glyph(c)) << c;
    for (char c : std::string(" .,:;-+=<>%()[]_/|?!'\"*"))
        EXPECT_TRUE(RasterCanvas::has_glyph(c)) << c;
    EXPECT_FALSE(RasterCanvas::has_glyph('\xff'));
    EXPECT_EQ(RasterCanvas::text_width("12.3 ms"), 7 * 6 - 1);
    EXPECT_EQ(RasterCanvas::text_width("", 2), 0);
}

TEST(RasterCanvas, TextAndLinesLandWhereAsked) {
    const Rgb white{255, 255, 255}, ink{0, 0, 0};
    RasterCanvas canvas(40, 20, white);
    canvas.draw_text(2, 3, "-", ink);  // the minus is row 3 of its glyph, all 5 columns
    for (int x = 2; x < 7; ++x) EXPECT_EQ(canvas.pixel(x, 6), ink) << x;
    EXPECT_EQ(canvas.pixel(7, 6), white);
    EXPECT_EQ(canvas.pixel(2, 5), white);
    // A line from far outside is clipped to the canvas (and drawn in time).
    canvas.draw_line(-2000000000, 15, 2000000000, 15, ink, 2);
    for (int x = 0; x < 40; ++x) {
        EXPECT_EQ(canvas.pixel(x, 15), ink) << x;
        EXPECT_EQ(canvas.pixel(x, 16), ink) << x;
        EXPECT_EQ(canvas.pixel(x, 14), white) << x;
    }
    EXPECT_THROW(canvas.pixel(40, 0), InternalError);
}

}  // namespace
}  // namespace anvil::tune
