// Calls in destination-passing style (TVM Relax's design): the graph hands a callee its
// arguments followed by freshly allocated outputs, and the callee writes the outputs.
//
//   call_tir(@kernel, (args...), Type[, (shape_args...)])   a loop-IR kernel of the same module
//   call_packed("env.linear", (args...), Type)               a function of the global registry
//                                                            (registered from C++ or Python)
//
// The lowering replaces each fused group's call by a call_tir; a user writing a module by hand
// uses both forms directly (graph/parser.h). Both are executor ops: never fused, folded or
// lowered again. The result type (a tensor or a tuple of them; dimensions may be symbolic, the
// executor computes them from the arguments' shapes) is carried by the attributes.
#pragma once

#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/dps_outputs.h"
#include "graph/expr.h"
#include "tir/stmt.h"

namespace anvil::ops {

struct CallTirAttrs : graph::AttrsBase<CallTirAttrs>, graph::DpsOutputs {
    static constexpr const char* kTypeName = "CallTirAttrs";
    std::string kernel;
    // The kernel's scalar parameters: symbolic dimensions no tensor argument's shape binds,
    // passed after the tensors (te::unbound_shape_vars).
    std::vector<PrimExpr> shape_args;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("kernel", &kernel);
        visit_outputs(v);
        v.visit("shape_args", &shape_args);
    }
};

struct CallPackedAttrs : graph::AttrsBase<CallPackedAttrs>, graph::DpsOutputs {
    static constexpr const char* kTypeName = "CallPackedAttrs";
    std::string func;  // the registry name, e.g. "env.linear"
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("func", &func);
        visit_outputs(v);
    }
};

// A call of `kernel` on `args` whose result has type `result`.
graph::Expr make_call_tir(const std::string& kernel, std::vector<graph::Expr> args,
                          const graph::Type& result, SourceLoc loc = {},
                          std::vector<PrimExpr> shape_args = {});
// A call of the registry function `func` on `args` whose result has type `result`.
graph::Expr make_call_packed(const std::string& func, std::vector<graph::Expr> args,
                             const graph::Type& result, SourceLoc loc = {});

// The result tensor types of a call, in order (UserError when the fields are inconsistent).
inline std::vector<graph::Type> call_tir_outputs(const CallTirAttrs& attrs) {
    return attrs.output_types("call_tir " + attrs.kernel);
}
inline std::vector<graph::Type> call_packed_outputs(const CallPackedAttrs& attrs) {
    return attrs.output_types("call_packed \"" + attrs.func + "\"");
}

// Checks a call_tir against the kernel it calls: the arguments, then the outputs, then the scalar
// shape arguments fill the kernel's parameters, each tensor with the parameter's dtype and rank
// and equal dimensions where both are constants. UserError at the call's node naming the kernel
// parameter that does not fit (a hand-written module's mistake, found before anything runs).
void check_call_tir(const graph::Expr& call, const tir::PrimFunc& kernel);

// The attributes of `e` when it is a call_tir / call_packed; null otherwise.
const CallTirAttrs* call_tir_attrs(const graph::Expr& e);
const CallPackedAttrs* call_packed_attrs(const graph::Expr& e);

}  // namespace anvil::ops
