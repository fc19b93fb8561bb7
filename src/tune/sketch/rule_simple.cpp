// Rule: simple loops, for every computed stage no other rule took (an elementwise output, a
// reduction without reuse, a stage kept out of line). Its data axes loop outermost, the innermost
// one split into vectors (its width a decision), reductions between the two, so a column
// reduction accumulates whole vectors. The parallel loops, the unrolling and where the stage is
// computed (at root or inside its reader's loops) are decisions.
#include "tune/sketch/sketch.h"

namespace anvil::tune {

std::vector<SketchState> rule_skip_placeholder(const SketchState& state, int i,
                                               const RuleContext& ctx) {
    if (!ctx.info[i].placeholder) return {};
    SketchState s = state;
    s.sketch.plans[i].kind = PlanKind::Skip;
    return {s};
}

std::vector<SketchState> rule_simple(const SketchState& state, int i, const RuleContext& ctx) {
    SketchState s = state;
    s.sketch.plans[i].kind = PlanKind::Simple;
    return {s};
}

}  // namespace anvil::tune
