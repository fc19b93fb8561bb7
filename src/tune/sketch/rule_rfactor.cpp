// Rule: rfactor. A reduction without reuse over a long innermost axis (a row sum, softmax's max
// and sum, a norm's mean) gets nothing from tiling, and its innermost loop is a reduction, which
// cannot be vectorized. rfactor splits that axis and makes the inner part a data axis of a new
// stage: partial results per lane, reduced over the outer part with contiguous vector loads, then
// summed across the lanes by the original stage. The split factor is a decision; the sketch
// without rfactor is kept too (rule_simple), since a short or strided reduction loses by it.
#include "tune/sketch/sketch.h"

namespace anvil::tune {

std::vector<SketchState> rule_rfactor(const SketchState& state, int i, const RuleContext& ctx) {
    const StageInfo& info = ctx.info[i];
    if (!info.reduction || info.data_reuse || !info.static_extents) return {};
    if (info.reduce_extents.empty() || info.reduce_extents.back() < 2 * ctx.target.vector_lanes) {
        return {};
    }
    SketchState rf = state;
    rf.sketch.plans[i].kind = PlanKind::Rfactor;
    SketchState simple = state;
    simple.sketch.plans[i].kind = PlanKind::Simple;
    return {rf, simple};
}

}  // namespace anvil::tune
