#include "tune/tuning_curve.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "support/error.h"
#include "tune/png_encoder.h"
#include "tune/raster_canvas.h"

namespace anvil::tune {
namespace {

constexpr int kWidth = 640;
constexpr int kHeight = 400;
constexpr Rgb kBackground{255, 255, 255};
constexpr Rgb kInk{33, 33, 33};      // text, axes, ticks
constexpr Rgb kGrid{225, 225, 225};  // grid lines at the ticks
constexpr Rgb kCurve{31, 119, 180};  // the curve and its dots

void write_bytes(const std::string& path, std::string_view bytes, std::string_view what) {
    std::FILE* file = std::fopen(path.c_str(), "wb");
    if (!file)
        user_error() << "cannot write the " << what << " to '" << path
                     << "': " << std::strerror(errno);
    bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
    int write_errno = errno;
    if (std::fclose(file) != 0 && written) {
        written = false;
        write_errno = errno;
    }
    if (!written)
        user_error() << "cannot write the " << what << " to '" << path
                     << "': " << std::strerror(write_errno);
}

std::string format(const char* spec, double value, int decimals = -1) {
    char buf[64];
    if (decimals < 0) {
        std::snprintf(buf, sizeof buf, spec, value);
    } else {
        std::snprintf(buf, sizeof buf, spec, decimals, value);
    }
    return buf;
}

// A latency with at least 3 significant digits and no exponent in the usual range
// ("12.3", "9.80", "0.0123").
std::string format_ms(double ms) {
    if (!(ms > 0) || ms >= 1e9) return format("%.3g", ms);
    int decimals = std::clamp(2 - static_cast<int>(std::floor(std::log10(ms))), 0, 6);
    return format("%.*f", ms, decimals);
}

// One axis: its range, the step between ticks (1, 2 or 5 times a power of ten, so labels read
// well) and how many decimals those labels need.
struct Axis {
    double lo = 0, hi = 1, step = 1;
    int decimals = 0;

    // A range covering [lo, hi] (lo < hi) in about `ticks` steps, widened to whole steps.
    static Axis covering(double lo, double hi, int ticks) {
        double raw = (hi - lo) / ticks;
        if (!(raw > 0) || !std::isfinite(raw)) return Axis{};  // ranges no double can step
        double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
        double f = raw / magnitude;
        Axis a;
        a.step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
        a.lo = std::floor(lo / a.step) * a.step;
        a.hi = std::ceil(hi / a.step) * a.step;
        a.decimals = std::clamp(-static_cast<int>(std::floor(std::log10(a.step) + 1e-9)), 0, 9);
        if (!std::isfinite(a.lo) || !std::isfinite(a.hi) || !(a.lo < a.hi)) return Axis{};
        return a;
    }

    std::vector<double> ticks() const {
        std::vector<double> values;
        // Counted by index, not by adding steps, so rounding cannot add or lose a tick; bounded
        // for ranges where the step is lost to rounding.
        for (int i = 0; i <= 50; ++i) {
            double v = lo + i * step;
            if (v > hi + step * 1e-6) break;
            values.push_back(std::abs(v) < step * 1e-6 ? 0.0 : v);
        }
        return values;
    }

    std::string label(double v) const {
        return std::abs(v) < 1e9 ? format("%.*f", v, decimals) : format("%.3g", v);
    }
};

// The latency axis. It starts at 0 unless that would put the curve in a thin band at the top
// (a 20% improvement would then move it by a fifth of the height): then it starts a little below
// the lowest latency. A flat curve (one point, or no improvement) has nothing to show that way.
Axis latency_axis(double lowest, double highest) {
    if (!(highest > lowest)) return Axis::covering(0, highest > 0 ? highest * 1.2 : 1, 5);
    double span = highest - lowest;
    double lo = lowest - 0.1 * span, hi = highest + 0.1 * span;
    if (lo <= 0.4 * hi) lo = 0;
    return Axis::covering(lo, hi, 5);
}

// The elapsed time's unit: seconds up to 2 minutes, minutes up to 3 hours, then hours.
struct TimeUnit {
    const char* name;
    double seconds;
};
TimeUnit time_unit(double longest_s) {
    if (longest_s < 120) return {"s", 1};
    if (longest_s < 3 * 3600) return {"min", 60};
    return {"h", 3600};
}

// "<title>: <first> ms -> <last> ms (-N%)", shortened to what the data has.
std::string title_line(std::string title, const std::vector<CurvePoint>& points) {
    if (title.empty()) title = "tuning curve";
    if (points.empty()) return title;
    double first = points.front().latency_ms, last = points.back().latency_ms;
    title += ": " + format_ms(first) + " ms";
    if (points.size() == 1) return title;
    title += " -> " + format_ms(last) + " ms";
    if (first > 0) title += " (" + format("%+.0f", (last / first - 1) * 100) + "%)";
    return title;
}

// Draws `text` at scale 2 if it fits `width`, else at scale 1, cut short with "..." if need be.
void draw_title(RasterCanvas& canvas, std::string text, int y) {
    int width = canvas.width() - 20;
    int scale = RasterCanvas::text_width(text, 2) <= width ? 2 : 1;
    if (RasterCanvas::text_width(text, scale) > width) {
        while (!text.empty() && RasterCanvas::text_width(text + "...", 1) > width) text.pop_back();
        text += "...";
    }
    int x = (canvas.width() - RasterCanvas::text_width(text, scale)) / 2;
    canvas.draw_text(x, y, text, kInk, scale);
}

}  // namespace

void write_curve_csv(const std::string& path, const std::vector<CurvePoint>& points) {
    std::string csv = "elapsed_s,trials,latency_ms\n";
    for (const CurvePoint& p : points)
        csv += format("%.3f", p.elapsed_s) + "," + std::to_string(p.trials) + "," +
               format("%.6g", p.latency_ms) + "\n";
    write_bytes(path, csv, "tuning curve");
}

void write_curve_png(const std::string& path, const std::vector<CurvePoint>& points,
                     const std::string& title) {
    std::vector<CurvePoint> shown;
    for (const CurvePoint& p : points)
        if (std::isfinite(p.elapsed_s) && p.elapsed_s >= 0 && std::isfinite(p.latency_ms) &&
            p.latency_ms >= 0)
            shown.push_back(p);
    std::stable_sort(shown.begin(), shown.end(), [](const CurvePoint& a, const CurvePoint& b) {
        return a.elapsed_s < b.elapsed_s;
    });

    RasterCanvas canvas(kWidth, kHeight, kBackground);
    draw_title(canvas, title_line(title, shown), 10);

    // The axes' ranges first: the width of the latency labels sets the plot's left edge.
    double longest_s = 0, lowest = 0, highest = 1;
    if (!shown.empty()) {
        lowest = highest = shown.front().latency_ms;
        for (const CurvePoint& p : shown) {
            longest_s = std::max(longest_s, p.elapsed_s);
            lowest = std::min(lowest, p.latency_ms);
            highest = std::max(highest, p.latency_ms);
        }
    }
    TimeUnit unit = time_unit(longest_s);
    double longest = longest_s / unit.seconds;
    Axis x_axis = Axis::covering(0, longest >= 1e-6 ? longest : 1, 6);
    Axis y_axis = latency_axis(lowest, highest);
    std::vector<double> y_ticks = y_axis.ticks(), x_ticks = x_axis.ticks();
    int label_width = 0;
    for (double v : y_ticks)
        label_width = std::max(label_width, RasterCanvas::text_width(y_axis.label(v)));

    const int left = std::clamp(12 + label_width + 6, 40, kWidth / 3), right = kWidth - 24;
    const int top = 50, bottom = kHeight - 40;
    auto px = [&](double x) {
        double f = (x - x_axis.lo) / (x_axis.hi - x_axis.lo);
        if (!std::isfinite(f)) f = 0;
        return left + static_cast<int>(std::lround(std::clamp(f, 0.0, 1.0) * (right - left)));
    };
    auto py = [&](double y) {
        double f = (y - y_axis.lo) / (y_axis.hi - y_axis.lo);
        if (!std::isfinite(f)) f = 0;
        return bottom - static_cast<int>(std::lround(std::clamp(f, 0.0, 1.0) * (bottom - top)));
    };

    const int text_h = RasterCanvas::text_height();
    for (double v : y_ticks) {
        int y = py(v);
        canvas.draw_line(left + 1, y, right, y, kGrid);
        canvas.draw_line(left - 4, y, left - 1, y, kInk);
        std::string label = y_axis.label(v);
        canvas.draw_text(left - 6 - RasterCanvas::text_width(label), y - 3, label, kInk);
    }
    for (double v : x_ticks) {
        int x = px(v);
        canvas.draw_line(x, top, x, bottom - 1, kGrid);
        canvas.draw_line(x, bottom + 1, x, bottom + 4, kInk);
        std::string label = x_axis.label(v);
        canvas.draw_text(x - RasterCanvas::text_width(label) / 2, bottom + 7, label, kInk);
    }
    canvas.draw_line(left, top, left, bottom, kInk);
    canvas.draw_line(left, bottom, right, bottom, kInk);
    canvas.draw_text(12, top - 16, "latency (ms)", kInk);
    std::string x_label = std::string("elapsed time (") + unit.name + ")";
    canvas.draw_text((left + right - RasterCanvas::text_width(x_label)) / 2, kHeight - text_h - 6,
                     x_label, kInk);

    if (shown.empty()) {
        int w = RasterCanvas::text_width("no data", 2);
        canvas.draw_text((left + right - w) / 2, (top + bottom) / 2 - text_h, "no data", kInk, 2);
    } else {
        std::string trials = std::to_string(shown.back().trials) + " trials";
        canvas.draw_text(right - RasterCanvas::text_width(trials), kHeight - text_h - 6, trials,
                         kInk);
        // Steps: the estimate holds until the next point, then drops (or rises) to it.
        for (size_t i = 0; i + 1 < shown.size(); ++i) {
            int x0 = px(shown[i].elapsed_s / unit.seconds), y0 = py(shown[i].latency_ms);
            int x1 = px(shown[i + 1].elapsed_s / unit.seconds), y1 = py(shown[i + 1].latency_ms);
            canvas.draw_line(x0, y0, x1, y0, kCurve, 2);
            canvas.draw_line(x1, y0, x1, y1, kCurve, 2);
        }
        const CurvePoint& last = shown.back();
        canvas.fill_circle(px(last.elapsed_s / unit.seconds), py(last.latency_ms), 3, kCurve);
    }

    write_bytes(path, encode_png_rgb(canvas.width(), canvas.height(), canvas.rgb()),
                "tuning curve plot");
}

}  // namespace anvil::tune
