// Rule: inlining. A stage that costs nothing to recompute (StageInfo::strictly_inlineable: an
// elementwise step, a broadcast, a transpose) is always inlined: its own loops would only move
// data through memory; so is one read once where it ends up computed once per element (its
// reader, through any stages inlined in turn, is no reduction). Any other non-reduction stage
// that is not an output (padding, packing, an exp read twice or inside a reduction) may be
// inlined or kept with loops of its own; both sketches are made and the search measures which is
// faster — except that a stage of many loads (a Winograd input transform: 36 elements, hundreds
// of loads as its select chain is written) is never inlined into a reduction that reuses its
// values: it would be recomputed for every reuse (once per output channel), which no tile size
// makes up for. Inlined into a reduction that reads each of its values once, it may be.
#include "tune/sketch/sketch.h"

namespace anvil::tune {

namespace {

// Whether stage i, read once, is computed once per element when inlined: the stage its value
// ends up in (its reader, or that one's reader where the reader is inlined too) is no reduction.
bool computed_once_inlined(const SketchState& state, int i, const RuleContext& ctx) {
    int at = i;
    while (ctx.info[at].read_once) {
        const int reader = ctx.info[at].readers[0];
        if (ctx.info[reader].reduction) return false;
        if (state.sketch.plans[reader].kind != PlanKind::Inline) return true;
        at = reader;
    }
    return false;  // the chain reaches a stage read twice: inlined, this one repeats
}

// Loads per element above which a stage is not worth recomputing for each reuse.
constexpr int kMaxRecomputedLoads = 4;

// Whether stage i's value, inlined, would end up in a reduction that reuses it (directly, or
// through readers inlined in turn whose values that reduction reuses).
bool feeds_reusing_reduction(const SketchState& state, int i, const RuleContext& ctx) {
    const StageInfo& info = ctx.info[i];
    for (size_t k = 0; k < info.readers.size(); ++k) {
        const int reader = info.readers[k];
        if (info.reused_by_reader[k]) return true;
        if (state.sketch.plans[reader].kind == PlanKind::Inline &&
            feeds_reusing_reduction(state, reader, ctx)) {
            return true;
        }
    }
    return false;
}

}  // namespace

std::vector<SketchState> rule_inline(const SketchState& state, int i, const RuleContext& ctx) {
    const StageInfo& info = ctx.info[i];
    if (info.placeholder || info.reduction || info.output) return {};
    SketchState inlined = state;
    inlined.sketch.plans[i].kind = PlanKind::Inline;
    if (info.strictly_inlineable || computed_once_inlined(state, i, ctx)) return {inlined};
    SketchState own = state;
    own.sketch.plans[i].kind = PlanKind::Simple;
    if (info.loads > kMaxRecomputedLoads && feeds_reusing_reduction(state, i, ctx)) return {own};
    return {inlined, own};
}

}  // namespace anvil::tune
