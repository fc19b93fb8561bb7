// Attributes and schedules of the softmax family (ops/softmax.cpp): nn.softmax and
// nn.log_softmax.
#pragma once

#include <vector>

#include "graph/attrs.h"
#include "te/config_space.h"
#include "te/schedule.h"

namespace anvil::ops {

// softmax(x)[i] = exp(x[i] - max) / sum(exp(x - max)) along `axis` (negative counts from the
// end); log_softmax(x)[i] = x[i] - max - log(sum(exp(x - max))). Subtracting the maximum keeps
// exp from overflowing.
struct SoftmaxAttrs : graph::AttrsBase<SoftmaxAttrs> {
    static constexpr const char* kTypeName = "SoftmaxAttrs";
    int64_t axis = -1;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axis", &axis); }
};

// Schedules of both ops.
//   x86: max and sum as row reductions (parallel over the rows; vectorized across the
//        contiguous axes after `axis` when there are any), exp and the output vectorized.
//   generic: every stage at root.
void schedule_softmax_x86(te::Schedule& s, const te::Tensor& anchor,
                          const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);
void schedule_softmax_generic(te::Schedule& s, const te::Tensor& anchor,
                              const std::vector<te::Tensor>& outputs,
                              const te::ScheduleContext& ctx);

}  // namespace anvil::ops
