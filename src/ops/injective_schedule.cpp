#include "ops/injective_schedule.h"

#include <algorithm>

namespace anvil::ops {

bool LoopChoices::run_parallel(int64_t work) const {
    if (parallel == kSerial) return false;
    return parallel == kParallelAlways || work >= kMinParallelWork;
}

int64_t LoopChoices::vector_width(int64_t extent, int lanes) const {
    const int64_t wide = lanes * vector_multiple;
    return extent >= wide ? wide : lanes;
}

int64_t static_extent_product(const std::vector<PrimExpr>& extents) {
    int64_t n = 1;
    for (const auto& d : extents) {
        const int64_t* v = as_const_int(d);
        if (!v) return 0;
        n *= *v;
    }
    return n;
}

LoopChoices declare_parallel_choice(const te::ScheduleContext& ctx, int64_t work) {
    LoopChoices c;
    // The analytical choice and the one other loop it can make.
    const int64_t other =
        work > 0 && work < kMinParallelWork ? LoopChoices::kParallelAlways : LoopChoices::kSerial;
    c.parallel = ctx.knob("parallel", {std::min(other, c.parallel), std::max(other, c.parallel)},
                          LoopChoices::kParallelIfWorthIt);
    return c;
}

LoopChoices declare_loop_choices(const te::ScheduleContext& ctx, int64_t work,
                                 int64_t vector_extent) {
    LoopChoices c = declare_parallel_choice(ctx, work);
    const int lanes = std::max(1, ctx.target.vector_bits / 32);
    std::vector<int64_t> multiples;
    for (int64_t m : {1, 2, 4}) {
        if (m == 1 || lanes * m <= vector_extent) multiples.push_back(m);
    }
    if (multiples.size() > 1) c.vector_multiple = ctx.knob("vector_multiple", multiples, 1);
    return c;
}

void schedule_injective_stage(te::Schedule& s, const te::Tensor& t, const te::ScheduleContext& ctx,
                              const LoopChoices& choices, bool by_rows) {
    te::StageRef st = s[t];
    std::vector<Ref<IterVar>> axes = st.leaf_axes();
    if (axes.empty()) return;
    const std::vector<PrimExpr>& shape = t.shape();
    int lanes = std::max(1, ctx.target.vector_bits / std::max(8, t.dtype().bits()));
    // With a symbolic size (a sequence length), the trailing axes of constant extent are
    // vectorized on their own and the others, the symbolic ones among them, fused into the
    // parallel loop: one loop over everything would divide by the symbolic extents in every
    // index, and its vectors would gather. By rows: the last axis alone, when it is constant.
    size_t first_constant = shape.size();
    int64_t inner = 1;
    while (first_constant > 0 && as_const_int(shape[first_constant - 1])) {
        inner *= *as_const_int(shape[--first_constant]);
        if (by_rows) break;
    }
    if (!ctx.target.is_gpu && first_constant > 0 && first_constant < shape.size() &&
        axes.size() == shape.size() && inner >= lanes && lanes > 1) {
        std::vector<Ref<IterVar>> rows(axes.begin(), axes.begin() + first_constant);
        std::vector<Ref<IterVar>> row(axes.begin() + first_constant, axes.end());
        Ref<IterVar> r = row.size() == 1 ? row[0] : st.fuse(row);
        st.vectorize(st.split(r, choices.vector_width(inner, lanes)).second);
        Ref<IterVar> outer = rows.size() == 1 ? rows[0] : st.fuse(rows);
        // The work: all of it where every extent is known (rows of a static shape), else as if
        // enough.
        const int64_t known = static_extent_product(shape);
        if (choices.run_parallel(known > 0 ? known : kMinParallelWork)) st.parallel(outer);
        return;
    }
    Ref<IterVar> fused = axes.size() == 1 ? axes[0] : st.fuse(axes);
    int64_t total = 1;
    bool known = true;
    for (const auto& d : shape) {
        if (auto* v = as_const_int(d)) {
            total *= *v;
        } else {
            known = false;
        }
    }
    if (ctx.target.is_gpu) return;
    // Any other symbolic size is vectorized too: the split's tail keeps a guard, which
    // partition_loops moves to a last iteration of its own.
    if (lanes > 1 && (!known || total >= lanes)) {
        auto [outer, in] = st.split(fused, choices.vector_width(known ? total : 0, lanes));
        st.vectorize(in);
        fused = outer;
    }
    if (choices.run_parallel(known ? total : kMinParallelWork)) st.parallel(fused);
}

void schedule_injective(te::Schedule& s, const te::Tensor& anchor,
                        const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    // The knobs as the largest output needs them (0: a symbolic size).
    int64_t largest = 0;
    for (const auto& out : outputs) largest = std::max(largest, static_extent_product(out.shape()));
    const LoopChoices choices =
        ctx.target.is_gpu ? LoopChoices{} : declare_loop_choices(ctx, largest, largest);
    for (const auto& out : outputs) schedule_injective_stage(s, out, ctx, choices);
}

void schedule_injective_rows(te::Schedule& s, const te::Tensor& anchor,
                             const std::vector<te::Tensor>& outputs,
                             const te::ScheduleContext& ctx) {
    int64_t largest = 0, row = 0;
    for (const auto& out : outputs) {
        largest = std::max(largest, static_extent_product(out.shape()));
        if (const int64_t* w = out.ndim() ? as_const_int(out.shape().back()) : nullptr) {
            row = std::max(row, *w);
        }
    }
    const LoopChoices choices =
        ctx.target.is_gpu ? LoopChoices{} : declare_loop_choices(ctx, largest, row);
    for (const auto& out : outputs) schedule_injective_stage(s, out, ctx, choices, true);
}

}  // namespace anvil::ops
