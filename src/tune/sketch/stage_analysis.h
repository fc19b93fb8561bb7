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
    // A non-reduction whose inlining costs nothing extra wherever it goes: its loads index with
    // plain axis variables and constants, and it calls no expensive math (exp, erf, ...).
    bool strictly_inlineable = false;
    // A non-reduction with one reader, which loads it once: inlined, it is computed once per
    // element of that reader (once per element unless the reader, or where the reader is
    // inlined in turn, is a reduction: rule_inline follows the chain).
    bool read_once = false;
    // Loads its body makes per element (of placeholders and stages alike), as written: every
    // arm of a select counts.
    int loads = 0;
    // A reduction some of whose loads do not depend on one of its data axes: the loaded values
    // are reused across that axis, which multi-level tiling keeps in cache and registers.
    bool data_reuse = false;
    // Stages (indices) whose bodies load this one, how many loads each makes, and whether it
    // is a reduction that reuses this stage's values: a load of them does not use one of its
    // data axes (of extent > 1), so each value is read for several of its outputs.
    std::vector<int> readers;
    std::vector<int> reads_per_reader;
    std::vector<bool> reused_by_reader;
    // Readers that load this stage with exactly their own data-axis variables, in order (or 0 for
    // a dimension of extent 1), over the same data extents: elementwise consumers, which can be
    // computed in this stage's tiles.
    std::vector<int> identity_readers;
};

// One entry per stage of `s`, in the schedule's order (producers first).
std::vector<StageInfo> analyze_stages(const te::Schedule& s);

}  // namespace anvil::tune
