// Attributes and schedules of the dense family (ops/dense.cpp): nn.dense, nn.matmul,
// nn.batch_matmul and nn.bias_add.
#pragma once

#include <vector>

#include "graph/attrs.h"
#include "te/config_space.h"
#include "te/schedule.h"

namespace anvil::ops {

// nn.matmul(a, b) and nn.batch_matmul(a, b): numpy/ONNX MatMul semantics.
//   a [..., M, K] (transpose_a: [..., K, M]), b [..., K, N] (transpose_b: [..., N, K]);
//   the batch dimensions broadcast; the result is [batch..., M, N].
//   nn.matmul also takes 1-D operands: a [K] acts as [1, K] and b [K] as [K, 1], and that
//   dimension is dropped from the result (transpose flags do not apply to a 1-D operand).
//   nn.batch_matmul needs both operands at least 2-D.
// nn.dense(x [..., K], w [N, K]) -> [..., N] (DenseAttrs).
// out_dtype: void for a float product in the operands' type; int32 for integer operands (int8,
// uint8, int16, int32; a and b may differ) summed in int32 (ops/product_dtype.h).
struct MatmulAttrs : graph::AttrsBase<MatmulAttrs> {
    static constexpr const char* kTypeName = "MatmulAttrs";
    bool transpose_a = false;
    bool transpose_b = false;
    DataType out_dtype = DataType::void_();
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("transpose_a", &transpose_a);
        v.visit("transpose_b", &transpose_b);
        v.visit("out_dtype", &out_dtype);
    }
};

// nn.dense's attributes: out_dtype as MatmulAttrs'.
struct DenseAttrs : graph::AttrsBase<DenseAttrs> {
    static constexpr const char* kTypeName = "DenseAttrs";
    DataType out_dtype = DataType::void_();
    void visit_fields(graph::AttrVisitor& v) override { v.visit("out_dtype", &out_dtype); }
};

// nn.dense_pack_weight(w[units, K]) -> [ceil(units/VB), K, VB]: VB columns contiguous, zero past
// units (VB as nn.dense's compute picks it); nn.dense_packed(x[..., K], packed) -> [..., units]
// is nn.dense reading it, without a packing stage (graph pass prepack_weights).
struct DensePackedAttrs : graph::AttrsBase<DensePackedAttrs> {
    static constexpr const char* kTypeName = "DensePackedAttrs";
    int64_t units = 0;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("units", &units); }
};

// nn.bias_add(data, bias [C]) adds bias along `axis` (negative counts from the end), where
// data.shape[axis] == C.
struct BiasAddAttrs : graph::AttrsBase<BiasAddAttrs> {
    static constexpr const char* kTypeName = "BiasAddAttrs";
    int64_t axis = 1;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axis", &axis); }
};

// Schedules of nn.dense / nn.matmul / nn.batch_matmul.
//   x86: a register tile of rows x (a 32-, 16- or 8-lane block of columns) over packed
//        [N/VB, K, VB] panels of b, k outermost in the tile, parallel over (batch, column
//        panel, row block).
//   generic: every stage at root.
void schedule_matmul_x86(te::Schedule& s, const te::Tensor& anchor,
                         const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);
void schedule_matmul_generic(te::Schedule& s, const te::Tensor& anchor,
                             const std::vector<te::Tensor>& outputs,
                             const te::ScheduleContext& ctx);

}  // namespace anvil::ops
