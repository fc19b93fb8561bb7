// Rule: inlining. A stage that costs nothing to recompute (StageInfo::strictly_inlineable: an
// elementwise step, a broadcast, a transpose, or anything read once by a non-reduction) is always
// inlined: its own loops would only move data through memory. Any other non-reduction stage that
// is not an output (padding, packing, an exp read twice) may be inlined or kept with loops of its
// own; both sketches are made and the search measures which is faster.
#include "tune/sketch/sketch.h"

namespace anvil::tune {

std::vector<SketchState> rule_inline(const SketchState& state, int i, const RuleContext& ctx) {
    const StageInfo& info = ctx.info[i];
    if (info.placeholder || info.reduction || info.output) return {};
    SketchState inlined = state;
    inlined.sketch.plans[i].kind = PlanKind::Inline;
    if (info.strictly_inlineable) return {inlined};
    SketchState own = state;
    own.sketch.plans[i].kind = PlanKind::Simple;
    return {inlined, own};
}

}  // namespace anvil::tune
