// Internal to te/: what bound inference knows about one stage while it is lowered.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "ir/analyzer.h"
#include "te/schedule.h"

namespace anvil::te {

struct StageBounds {
    const Stage* stage = nullptr;
    const ComputeOp* op = nullptr;    // null for placeholders
    PrimExpr body;                    // the op's body with inlined producers substituted
    std::vector<StageBounds*> reads;  // non-inlined stages the body loads
    // For an attached stage: its readers (the attach target or stages attached inside it).
    std::vector<const StageBounds*> reads_from_me;

    // Loops run from 0; every axis (root or derived) has an extent.
    std::unordered_map<const IterVar*, PrimExpr> extent;
    // Each root axis (and split parent) as an expression of the leaf loop variables.
    std::unordered_map<const IterVar*, PrimExpr> value;
    // The part of the tensor this stage computes: for attached stages the region its consumer
    // reads inside the attach loop; the whole tensor otherwise. Indices into `realized` are
    // tensor indices minus region_min.
    std::vector<PrimExpr> region_min;
    std::vector<PrimExpr> region_extent;
    Ref<Buffer> realized;
    std::vector<PrimExpr> data_guards;    // conditions on data-parallel loops
    std::vector<PrimExpr> reduce_guards;  // conditions on reduction loops
};

// Fills extent, value, region and guards of `b`, whose consumer stages are already done.
// `all` maps every stage name to its bounds; `analyzer` knows every loop variable's range.
void infer_stage_bounds(StageBounds& b, std::unordered_map<std::string, StageBounds>& all,
                        Analyzer& analyzer);

}  // namespace anvil::te
