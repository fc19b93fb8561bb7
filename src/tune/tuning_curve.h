// The tuning curve of `anvil tune`: the model's estimated latency (the sum over its tasks of
// weight times best cost so far) over the run's elapsed time, written as CSV for analysis and as
// a PNG plot for a quick look.
#pragma once

#include <string>
#include <vector>

namespace anvil::tune {

struct CurvePoint {
    double elapsed_s = 0;   // since the run started
    double latency_ms = 0;  // the estimated model latency at that time
    int trials = 0;         // measured so far
};

// A header line "elapsed_s,trials,latency_ms", then one line per point in the order given:
// elapsed seconds with 3 decimals, trials, latency in the shortest of %g with 6 significant
// digits ("12.3", "0.0123", "inf"). UserError naming the path when it cannot be written.
void write_curve_csv(const std::string& path, const std::vector<CurvePoint>& points);

// A 640x400 RGB PNG of the curve: a title line "<title>: <first> ms -> <last> ms (-N%)", the
// latency in ms on the y axis (from 0, or from just below the lowest latency when 0 would squash
// the improvement), the elapsed time on the x axis from 0 (in s, min or h, whichever keeps the
// numbers small), grid lines at the ticks, the trial count, and the curve as steps (a latency
// holds until the next point improves it) with a dot on its last point. Points are plotted in
// order of elapsed time; points with a negative or non-finite time or latency are left out. With
// no points left the plot is an empty frame saying "no data"; one point is a dot. UserError
// naming the path when the file cannot be written.
void write_curve_png(const std::string& path, const std::vector<CurvePoint>& points,
                     const std::string& title);

}  // namespace anvil::tune
