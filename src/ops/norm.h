// Attributes and schedules of the normalization family (ops/norm.cpp): nn.batch_norm,
// nn.layer_norm, nn.instance_norm (inference forms, each returning the normalized tensor).
#pragma once

#include <vector>

#include "graph/attrs.h"
#include "te/config_space.h"
#include "te/schedule.h"

namespace anvil::ops {

// nn.batch_norm(data, gamma, beta, moving_mean, moving_var), the last four 1-D of length
// data.shape[axis]:
//   out = (data - mean) / sqrt(var + epsilon) * gamma + beta      (per channel along `axis`)
// Broadcast pattern: it fuses into a convolution's tail like any elementwise op.
struct BatchNormAttrs : graph::AttrsBase<BatchNormAttrs> {
    static constexpr const char* kTypeName = "BatchNormAttrs";
    int64_t axis = 1;
    double epsilon = 1e-5;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("epsilon", &epsilon);
    }
};

// nn.layer_norm(data, gamma[, beta]) normalizes over the axes [axis, ndim) (ONNX
// LayerNormalization; negative axis counts from the end) with the biased variance:
//   out = (data - mean) / sqrt(var + epsilon) * gamma + beta
// gamma and beta broadcast (numpy, right-aligned) to data.shape[axis:]; beta may be omitted.
struct LayerNormAttrs : graph::AttrsBase<LayerNormAttrs> {
    static constexpr const char* kTypeName = "LayerNormAttrs";
    int64_t axis = -1;
    double epsilon = 1e-5;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("epsilon", &epsilon);
    }
};

// nn.instance_norm(data[N, C, ...], gamma[C], beta[C]) normalizes each (n, c) over the
// spatial axes 2.. (ONNX InstanceNormalization).
struct InstanceNormAttrs : graph::AttrsBase<InstanceNormAttrs> {
    static constexpr const char* kTypeName = "InstanceNormAttrs";
    double epsilon = 1e-5;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("epsilon", &epsilon); }
};

// nn.lrn(data[N, C, ...]): ONNX LRN, across channels:
// out = x / (bias + alpha / size * sum of x^2 over channels c - (size-1)/2 .. c + size/2)^beta.
struct LRNAttrs : graph::AttrsBase<LRNAttrs> {
    static constexpr const char* kTypeName = "LRNAttrs";
    int64_t size = 1;
    double alpha = 1e-4;
    double beta = 0.75;
    double bias = 1.0;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("size", &size);
        v.visit("alpha", &alpha);
        v.visit("beta", &beta);
        v.visit("bias", &bias);
    }
};

// Schedules of layer_norm and instance_norm (batch_norm uses the injective schedule).
//   x86: mean and variance as parallel row reductions, the normalization vectorized over the
//        normalized axes.
//   generic: every stage at root.
void schedule_norm_x86(te::Schedule& s, const te::Tensor& anchor,
                       const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);
void schedule_norm_generic(te::Schedule& s, const te::Tensor& anchor,
                           const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);

}  // namespace anvil::ops
