// Rule: multi-level tiling (Ansor's "SSRSRS" structure on CPUs). A reduction whose inputs are
// reused across its data axes (a matrix product, a convolution) has its data axes split into four
// levels and its reduce axes into two, ordered S0 S1 R0 S2 R1 S3: the innermost S3 is the
// register tile (its last axis the vector), R0 S2 R1 the data reused from cache, S0 the parallel
// loops. The tile sizes are decisions.
//
// Fusion: when the reduction's only reader is an elementwise consumer (directly or through
// inlined elementwise steps: bias, activation, residual add), the consumer is tiled with the
// reduction's outer levels and the reduction is computed inside its tiles (at level 0 or 1, a
// decision), so the result never goes through memory before the epilogue. Otherwise two sketches:
// one where a local cache stage accumulates the tile and the stage itself copies it out (and is
// fused the same way), one with the reduction tiled in place.
#include "tune/sketch/sketch.h"

namespace anvil::tune {

namespace {

// The stage computing `i`'s tiles as its elementwise consumer, or -1: `i`'s only reader, or
// the end of a chain of inlined single-reader elementwise steps, that reads the chain at the
// same indices over the same extents and is looped over simply.
int fusible_consumer(const SketchState& state, int i, const RuleContext& ctx) {
    int at = i;
    for (;;) {
        const StageInfo& info = ctx.info[at];
        if (info.readers.size() != 1 || info.identity_readers.size() != 1) return -1;
        const int reader = info.readers[0];
        if (info.identity_readers[0] != reader) return -1;
        const StagePlan& plan = state.sketch.plans[reader];
        if (plan.kind == PlanKind::Inline) {
            at = reader;
            continue;
        }
        if (plan.kind != PlanKind::Simple || ctx.info[reader].reduction) return -1;
        return reader;
    }
}

}  // namespace

std::vector<SketchState> rule_multi_level_tiling(const SketchState& state, int i,
                                                 const RuleContext& ctx) {
    const StageInfo& info = ctx.info[i];
    if (!info.reduction || !info.data_reuse || !info.static_extents || info.extents.empty()) {
        return {};
    }
    if (!info.output) {
        const int consumer = fusible_consumer(state, i, ctx);
        if (consumer >= 0) {
            SketchState fused = state;
            auto& plans = fused.sketch.plans;
            plans[i].kind = PlanKind::Tiled;
            plans[i].consumer = consumer;
            plans[consumer].kind = PlanKind::FusedConsumer;
            plans[consumer].producer = i;
            return {fused};
        }
    }
    SketchState cached = state;
    cached.sketch.plans[i].kind = PlanKind::Tiled;
    cached.sketch.plans[i].cache_write = true;
    SketchState in_place = state;
    in_place.sketch.plans[i].kind = PlanKind::Tiled;
    return {cached, in_place};
}

}  // namespace anvil::tune
