// Attributes and schedules of nn.attention (ops/attention.cpp): scaled dot-product attention as
// one kernel, the score matrix never written to memory.
#pragma once

#include <vector>

#include "graph/attrs.h"
#include "te/config_space.h"
#include "te/schedule.h"

namespace anvil::ops {

// nn.attention(q, k, v[, bias]) over batch dimensions shared by all operands (batch..., heads):
//   q [batch..., S, D], k [batch..., S_kv, D], v [batch..., S_kv, Dv],
//   bias broadcastable (numpy, right-aligned) to the scores [batch..., S, S_kv], added after the
//   scaling (an additive mask: -inf or a large negative value where a key is masked);
//   out [batch..., S, Dv] = softmax(q · kᵀ · scale + bias, over S_kv) · v;
//   with merge_heads, out [batch... but the last, S, H * Dv] (H the last batch dimension, the
//   heads): out[..., s, h * Dv + d] = the above at [..., h, s, d], the head merge (transpose of
//   the heads after the rows, reshape of heads and features into one axis) written by the kernel
//   itself instead of a copy after it.
// As TVM Relax's R.nn.attention but with the heads among the batch dimensions, so that every
// layout the graph's own transposes made reaches the kernel (graph/passes/fuse_attention.cpp
// forms this op from matmul, softmax, matmul; the head split and merge copies fuse into it).
struct AttentionAttrs : graph::AttrsBase<AttentionAttrs> {
    static constexpr const char* kTypeName = "AttentionAttrs";
    double scale = 0.0;  // 0: 1 / sqrt(D), TVM's default
    bool merge_heads = false;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("scale", &scale);
        v.visit("merge_heads", &merge_heads);
    }
};

// Schedules of nn.attention.
//   x86: per batch entry (parallel) the keys transposed into column panels, then per tile of
//        query rows the scores as a register-tiled product into a row strip (rows x S_kv, in
//        cache), the row maxima and sums as vector partials, exp in place of the strip, and
//        the product with v register-tiled, divided by the sums in its output loop. Knob
//        tile_rows: query rows per strip.
//   generic: every stage at root.
void schedule_attention_x86(te::Schedule& s, const te::Tensor& anchor,
                            const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);
void schedule_attention_generic(te::Schedule& s, const te::Tensor& anchor,
                                const std::vector<te::Tensor>& outputs,
                                const te::ScheduleContext& ctx);

}  // namespace anvil::ops
