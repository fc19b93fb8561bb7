// Control flow in the graph IR: calls of other graph functions of the module that run
// conditionally or repeatedly (ONNX If, Loop and Scan; the importer turns their subgraphs into
// module functions, outer values they use becoming extra arguments). Both ops are executor ops:
// the VM carries them out (runtime/vm_program.h); nothing fuses, folds or lowers them, and the
// functions they call are compiled like any other.
//
//   control.if(%cond, %a..., then_branch="f", else_branch="g", num_then_args=k, <result type>)
//       %cond is a one-element tensor; when it is non-zero, f(first k of %a...) runs, else
//       g(the rest); the result is the branch's.
//   control.loop(%max_trip, %cond, %v..., %c..., body="b", num_carried=n, <result type>)
//       ONNX Loop: i = 0; while i < max_trip and cond: (cond, v..., s...) = b(i, cond, v..., c...);
//       i += 1. The result is (v..., S...): the carried values' last values and each scan
//       output s stacked along a new leading axis. %max_trip is a one-element int64 tensor,
//       %cond a one-element bool tensor; the %c... are passed unchanged to every iteration.
//
// The result type is kept in the attributes (graph::TensorResults). Dimensions the caller cannot
// know before the call (an If's branches giving different shapes, a loop's iteration count, a
// shape computed inside the body) are fresh variables there; the executor binds them from the
// values the call returns.
#pragma once

#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/dps_outputs.h"
#include "graph/module.h"

namespace anvil::ops {

struct IfAttrs : graph::AttrsBase<IfAttrs>, graph::TensorResults {
    static constexpr const char* kTypeName = "IfAttrs";
    std::string then_branch, else_branch;  // graph functions of the module
    int64_t num_then_args = 0;             // of the arguments after the condition
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("then_branch", &then_branch);
        v.visit("else_branch", &else_branch);
        v.visit("num_then_args", &num_then_args);
        visit_outputs(v);
    }
};

struct LoopAttrs : graph::AttrsBase<LoopAttrs>, graph::TensorResults {
    static constexpr const char* kTypeName = "LoopAttrs";
    std::string body;  // a graph function of the module
    int64_t num_carried = 0;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("body", &body);
        v.visit("num_carried", &num_carried);
        visit_outputs(v);
    }
};

graph::Expr make_if(graph::Expr cond, const std::string& then_branch,
                    std::vector<graph::Expr> then_args, const std::string& else_branch,
                    std::vector<graph::Expr> else_args, const graph::Type& result,
                    SourceLoc loc = {});
graph::Expr make_loop(graph::Expr max_trip, graph::Expr cond, std::vector<graph::Expr> carried,
                      std::vector<graph::Expr> constants, const std::string& body,
                      const graph::Type& result, SourceLoc loc = {});

// The attributes of `e` when it is such a call; null otherwise.
const IfAttrs* if_attrs(const graph::Expr& e);
const LoopAttrs* loop_attrs(const graph::Expr& e);

// The result type a call of functions returning `results` can state before the call: each
// dimension all of them share and that uses only variables in `known` stays; any other becomes
// a fresh variable named `prefix`_<k>. UserError at `loc` when the results differ in structure,
// rank or dtype (`what` names them: "the branches of If").
graph::Type join_result_types(const std::vector<graph::Type>& results,
                              const std::vector<const Var*>& known, const std::string& prefix,
                              const SourceLoc& loc, const std::string& what);
// The dimension variables in `types`, or in one dimension.
std::vector<const Var*> dimension_vars(const std::vector<graph::Type>& types);
std::vector<const Var*> dimension_vars(const PrimExpr& dim);
// The values a control-flow call (or a function) returns: a tuple's fields, or the one value.
std::vector<graph::Type> result_fields(const graph::Type& t);

// Checks every control.if / control.loop of the module's graph functions against the functions
// it calls: they exist, take as many values as passed with the same dtypes and ranks, and return
// what the call's result type says. UserError at the call's node otherwise.
void check_control_flow(const graph::IRModule& m);

}  // namespace anvil::ops
