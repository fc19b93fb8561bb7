// Attributes of the activation family (ops/activation.cpp). Defaults are ONNX's.
#pragma once

#include <limits>
#include <string>

#include "graph/attrs.h"

namespace anvil::ops {

// clip: min(max(x, a_min), a_max); an infinite bound is no bound.
struct ClipAttrs : graph::AttrsBase<ClipAttrs> {
    static constexpr const char* kTypeName = "ClipAttrs";
    double a_min = -std::numeric_limits<double>::infinity();
    double a_max = std::numeric_limits<double>::infinity();
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("a_min", &a_min);
        v.visit("a_max", &a_max);
    }
};

// nn.leaky_relu: x > 0 ? x : alpha * x.
struct LeakyReluAttrs : graph::AttrsBase<LeakyReluAttrs> {
    static constexpr const char* kTypeName = "LeakyReluAttrs";
    double alpha = 0.01;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("alpha", &alpha); }
};

// nn.prelu(x, alpha): x > 0 ? x : alpha * x. A 1-D alpha (length x.shape[axis] or 1) runs along
// `axis`; an alpha of higher rank is numpy-broadcast onto x (ONNX PRelu) and `axis` is unused.
struct PReluAttrs : graph::AttrsBase<PReluAttrs> {
    static constexpr const char* kTypeName = "PReluAttrs";
    int64_t axis = 1;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axis", &axis); }
};

// nn.gelu: "none" is exact, 0.5 x (1 + erf(x / sqrt 2)); "tanh" is the tanh approximation.
struct GeluAttrs : graph::AttrsBase<GeluAttrs> {
    static constexpr const char* kTypeName = "GeluAttrs";
    std::string approximate = "none";
    void visit_fields(graph::AttrVisitor& v) override { v.visit("approximate", &approximate); }
};

// nn.hardsigmoid: max(0, min(1, alpha * x + beta)).
struct HardSigmoidAttrs : graph::AttrsBase<HardSigmoidAttrs> {
    static constexpr const char* kTypeName = "HardSigmoidAttrs";
    double alpha = 0.2;
    double beta = 0.5;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("alpha", &alpha);
        v.visit("beta", &beta);
    }
};

// nn.elu: x > 0 ? x : alpha * (exp(x) - 1).
struct EluAttrs : graph::AttrsBase<EluAttrs> {
    static constexpr const char* kTypeName = "EluAttrs";
    double alpha = 1.0;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("alpha", &alpha); }
};

// nn.selu: gamma * (x > 0 ? x : alpha * (exp(x) - 1)).
struct SeluAttrs : graph::AttrsBase<SeluAttrs> {
    static constexpr const char* kTypeName = "SeluAttrs";
    double alpha = 1.67326319217681884765625;
    double gamma = 1.05070102214813232421875;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("alpha", &alpha);
        v.visit("gamma", &gamma);
    }
};

}  // namespace anvil::ops
