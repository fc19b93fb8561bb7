// call_tir(kernel, args...): the graph calling a loop-IR kernel of the same module in
// destination-passing style (TVM Relax's design). The lowering replaces each fused group's call
// by one; the kernel writes the call's result(s), whose type the attributes carry.
#pragma once

#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/expr.h"

namespace anvil::ops {

struct CallTirAttrs : graph::AttrsBase<CallTirAttrs> {
    static constexpr const char* kTypeName = "CallTirAttrs";
    std::string kernel;
    // The result types: for output k, out_ndims[k] dimensions taken in order from out_shapes, and
    // out_dtypes[k] (comma-separated). Several outputs make a tuple result.
    std::vector<PrimExpr> out_shapes;
    std::vector<int64_t> out_ndims;
    std::string out_dtypes;
    // The kernel's scalar parameters: symbolic dimensions no tensor argument's shape binds,
    // passed after the tensors (te::unbound_shape_vars).
    std::vector<PrimExpr> shape_args;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("kernel", &kernel);
        v.visit("out_shapes", &out_shapes);
        v.visit("out_ndims", &out_ndims);
        v.visit("out_dtypes", &out_dtypes);
        v.visit("shape_args", &shape_args);
    }
};

// A call of `kernel` on `args` whose result has type `result` (a tensor or a tuple of them;
// dimensions may be symbolic: the executor computes them from the arguments' shapes).
graph::Expr make_call_tir(const std::string& kernel, std::vector<graph::Expr> args,
                          const graph::Type& result, SourceLoc loc = {},
                          std::vector<PrimExpr> shape_args = {});
// The result tensor types of a call_tir, in order.
std::vector<graph::Type> call_tir_outputs(const CallTirAttrs& attrs);

}  // namespace anvil::ops
