#include "ops/injective_schedule.h"

namespace anvil::ops {

bool LoopChoices::run_parallel(int64_t work) const {
    if (parallel == kSerial) return false;
    return parallel == kParallelAlways || work >= kMinParallelWork;
}

int64_t LoopChoices::vector_width(int64_t extent, int lanes) const {
    const int64_t wide = lanes * vector_multiple;
    return extent >= wide ? wide : lanes;
}

LoopChoices declare_parallel_choice(const te::ScheduleContext& ctx) {
    LoopChoices c;
    c.parallel = ctx.knob(
        "parallel",
        {LoopChoices::kSerial, LoopChoices::kParallelIfWorthIt, LoopChoices::kParallelAlways},
        LoopChoices::kParallelIfWorthIt);
    return c;
}

LoopChoices declare_loop_choices(const te::ScheduleContext& ctx) {
    LoopChoices c = declare_parallel_choice(ctx);
    c.vector_multiple = ctx.knob("vector_multiple", {1, 2, 4}, 1);
    return c;
}

void schedule_injective_stage(te::Schedule& s, const te::Tensor& t, const te::ScheduleContext& ctx,
                              const LoopChoices& choices) {
    te::StageRef st = s[t];
    std::vector<Ref<IterVar>> axes = st.leaf_axes();
    if (axes.empty()) return;
    Ref<IterVar> fused = axes.size() == 1 ? axes[0] : st.fuse(axes);
    int64_t total = 1;
    bool known = true;
    for (const auto& d : t.shape()) {
        if (auto* v = as_const_int(d)) {
            total *= *v;
        } else {
            known = false;
        }
    }
    int lanes = std::max(1, ctx.target.vector_bits / std::max(8, t.dtype().bits()));
    if (ctx.target.is_gpu) return;
    if (known && total >= lanes && lanes > 1) {
        auto [outer, inner] = st.split(fused, choices.vector_width(total, lanes));
        st.vectorize(inner);
        fused = outer;
    }
    if (choices.run_parallel(known ? total : kMinParallelWork)) st.parallel(fused);
}

void schedule_injective(te::Schedule& s, const te::Tensor& anchor,
                        const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    const LoopChoices choices = ctx.target.is_gpu ? LoopChoices{} : declare_loop_choices(ctx);
    for (const auto& out : outputs) schedule_injective_stage(s, out, ctx, choices);
}

}  // namespace anvil::ops
