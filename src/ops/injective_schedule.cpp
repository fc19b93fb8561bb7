#include "ops/injective_schedule.h"

namespace anvil::ops {

void schedule_injective_stage(te::Schedule& s, const te::Tensor& t,
                              const te::ScheduleContext& ctx) {
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
        auto [outer, inner] = st.split(fused, lanes);
        st.vectorize(inner);
        fused = outer;
    }
    if (!known || total >= kMinParallelWork) st.parallel(fused);
}

void schedule_injective(te::Schedule& s, const te::Tensor& anchor,
                        const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    for (const auto& out : outputs) schedule_injective_stage(s, out, ctx);
}

}  // namespace anvil::ops
