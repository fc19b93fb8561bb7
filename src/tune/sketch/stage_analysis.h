// What the sketch rules need to know of each stage of a fresh schedule: whether it reduces,
// whether its inputs are reused across its data axes (so tiling pays), whether it can be inlined
// without recomputing anything expensive, and who reads it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "te/schedule.h"

namespace anvil::tune {

struct StageInfo {
    std::string name;
    bool placeholder = false;
    bool output = false;
    bool reduction = false;
    // Every data-axis and reduce-axis extent is a constant (the rules need sizes).
    bool static_extents = true;
    std::vector<int64_t> extents;         // data axes
    std::vector<int64_t> reduce_extents;  // reduce axes
    // A non-reduction whose inlining costs nothing extra: its loads index with plain axis
    // variables and constants, and it calls no expensive math (exp, erf, ...) — or it has one
    // reader, which reads it once and is not a reduction.
    bool strictly_inlineable = false;
    // A reduction some of whose loads do not depend on one of its data axes: the loaded values
    // are reused across that axis, which multi-level tiling keeps in cache and registers.
    bool data_reuse = false;
    // Stages (indices) whose bodies load this one, and how many loads each makes.
    std::vector<int> readers;
    std::vector<int> reads_per_reader;
    // This stage loads `producer` with exactly its own data-axis variables, in order (or 0 for a
    // dimension of extent 1), and has
    // the producer's data extents: an elementwise consumer, which can be computed in the
    // producer's tiles (set for each reader of a stage in `identity_readers` of the producer).
    std::vector<int> identity_readers;
};

// One entry per stage of `s`, in the schedule's order (producers first).
std::vector<StageInfo> analyze_stages(const te::Schedule& s);

}  // namespace anvil::tune
