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

void schedule_injective(te::Schedule& s, const te::Tensor& anchor,
                        const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);

// Fuses all loops of `t`'s stage into one, vectorizes `lanes` elements innermost and runs the
// rest in parallel when there is enough work. Used by other schedules for their elementwise
// outputs.
void schedule_injective_stage(te::Schedule& s, const te::Tensor& t, const te::ScheduleContext& ctx);

}  // namespace anvil::ops
