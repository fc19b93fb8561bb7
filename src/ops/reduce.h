// Attributes and schedule of the reduction family (ops/reduce.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/attrs.h"
#include "te/config_space.h"
#include "te/schedule.h"

namespace anvil::ops {

// sum, mean, max, min, prod. The reduced axes are `axes` (every axis when empty); with
// `exclude`, every axis except `axes`. `keepdims` keeps reduced axes as size 1.
// Axes known only at run time (int64 expressions over variables the executor binds, possibly
// negative) go in dynamic_axes instead, with keepdims: every axis is then reduced over an
// extent of its size or 1, whichever the values select.
struct ReduceAttrs : graph::AttrsBase<ReduceAttrs> {
    static constexpr const char* kTypeName = "ReduceAttrs";
    std::vector<int64_t> axes;
    bool keepdims = false;
    bool exclude = false;
    std::vector<PrimExpr> dynamic_axes;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axes", &axes);
        v.visit("keepdims", &keepdims);
        v.visit("exclude", &exclude);
        v.visit("dynamic_axes", &dynamic_axes);
    }
};

// argmax, argmin along one axis; int64 indices. Ties give the first index, or the last with
// select_last_index.
struct ArgReduceAttrs : graph::AttrsBase<ArgReduceAttrs> {
    static constexpr const char* kTypeName = "ArgReduceAttrs";
    int64_t axis = 0;
    bool keepdims = true;
    bool select_last_index = false;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("keepdims", &keepdims);
        v.visit("select_last_index", &select_last_index);
    }
};

// cumsum: ONNX CumSum along `axis`: out[..j..] = sum of x[..k..] over k <= j (k < j when
// exclusive; k >= j, k > j when reverse). The output has the input's shape and type.
struct CumsumAttrs : graph::AttrsBase<CumsumAttrs> {
    static constexpr const char* kTypeName = "CumsumAttrs";
    int64_t axis = 0;
    bool exclusive = false;
    bool reverse = false;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("exclusive", &exclusive);
        v.visit("reverse", &reverse);
    }
};

// einsum(x0, x1, ...): ONNX Einsum. `equation` names each input's axes with letters ("..."
// for leading broadcast axes), "->" the output's (implicit: the letters used once, sorted);
// letters missing from the output are summed over.
struct EinsumAttrs : graph::AttrsBase<EinsumAttrs> {
    static constexpr const char* kTypeName = "EinsumAttrs";
    std::string equation;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("equation", &equation); }
};

// The reduction schedule: every reduction stage the outputs depend on gets its data-parallel
// axes parallelized (and, when the input's innermost dimension is not reduced, its innermost
// data-parallel axis vectorized with the reduction loops moved outside it); other intermediate
// stages (mean's division when a fused tail follows) are inlined, and elementwise outputs get the
// injective schedule.
void schedule_reduce(te::Schedule& s, const te::Tensor& anchor,
                     const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);

}  // namespace anvil::ops
