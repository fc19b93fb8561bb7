// The default schedule for injective computations (elementwise, broadcast, layout moves): each
// output's axes fused into one loop, split into SIMD-wide vectors and parallel chunks.
#pragma once

#include <cstdint>
#include <vector>

#include "te/config_space.h"
#include "te/schedule.h"

namespace anvil::ops {

// Below this many elements (or multiply-adds) of work a parallel launch costs more than it saves.
constexpr int64_t kMinParallelWork = 16384;

// The knobs of the schedules of injective and row-wise stages (elementwise groups, reductions,
// softmax and the norms, pools over unblocked channels), declared once per schedule rule and
// shared by its stages: AutoTVM's split of the vector loop and annotation of the parallel loop.
struct LoopChoices {
    static constexpr int64_t kSerial = 0, kParallelIfWorthIt = 1, kParallelAlways = 2;
    // Knob vector_multiple: native vectors per iteration of a stage's vector loop (1, 2 or 4);
    // more than one unrolls it over independent registers.
    int64_t vector_multiple = 1;
    // Knob parallel: the outer loop serial, parallel when it has kMinParallelWork of work (the
    // default), or always parallel.
    int64_t parallel = kParallelIfWorthIt;

    // Whether a loop over `work` elements (or multiply-adds) runs in parallel.
    bool run_parallel(int64_t work) const;
    // The vector width for a loop of `extent` elements (0: unknown) on `lanes`-wide vectors:
    // vector_multiple vectors when the loop has that many elements, else one.
    int64_t vector_width(int64_t extent, int lanes) const;
};

// The product of `extents` when every one is a constant, else 0 (unknown).
int64_t static_extent_product(const std::vector<PrimExpr>& extents);

// Declares knob parallel for loops over `work` elements (0: unknown) with two choices, the
// analytical one and the other loop it can make (serial where it would be parallel, parallel where
// it would not), and knob vector_multiple where the vector loop (`vector_extent` elements, 0:
// unknown) has room for more than one vector; a knob that cannot change the kernel is not
// declared, so that no two configurations of a task build the same kernel.
LoopChoices declare_loop_choices(const te::ScheduleContext& ctx, int64_t work,
                                 int64_t vector_extent);
LoopChoices declare_parallel_choice(const te::ScheduleContext& ctx, int64_t work);

void schedule_injective(te::Schedule& s, const te::Tensor& anchor,
                        const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);

// For ops whose input index jumps at the end of each output row (nn.pad: a row reads its input
// row between the padding): one flat loop's vectors would straddle rows and gather. Each row's
// last axis is vectorized instead (when it holds a vector), the other axes fused in parallel.
void schedule_injective_rows(te::Schedule& s, const te::Tensor& anchor,
                             const std::vector<te::Tensor>& outputs,
                             const te::ScheduleContext& ctx);

// Fuses all loops of `t`'s stage into one, vectorizes `lanes` elements (times the choices'
// vector_multiple) innermost and runs the rest in parallel as the choices say (by default when
// there is enough work). With symbolic extents, the trailing constant axes (when they hold a
// vector) are fused and vectorized apart from the rest; `by_rows`, the last axis alone. Used by
// other schedules, with the default choices, for their elementwise outputs.
void schedule_injective_stage(te::Schedule& s, const te::Tensor& t, const te::ScheduleContext& ctx,
                              const LoopChoices& choices = {}, bool by_rows = false);

}  // namespace anvil::ops
