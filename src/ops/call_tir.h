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
    // Variants of `kernel` for chosen sizes of some of its dimensions (driver/shape_buckets.h):
    // variant k is the kernel bucket_kernels[k], the same computation compiled with each
    // bucket_dims[j] replaced by the size bucket_values[k * bucket_dims.size() + j]. A variant
    // takes exactly the arguments `kernel` takes. An executor may call the first variant whose
    // sizes all equal the dimensions' values, and calls `kernel` where none does. Text:
    // call_tir(@k, (%x,), Type, bucket_dims=(n,), bucket_kernels=["k_n8"], bucket_values=[8]).
    std::vector<PrimExpr> bucket_dims;
    std::vector<std::string> bucket_kernels;
    std::vector<int64_t> bucket_values;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("kernel", &kernel);
        visit_outputs(v);
        v.visit("shape_args", &shape_args);
        v.visit("bucket_dims", &bucket_dims);
        v.visit("bucket_kernels", &bucket_kernels);
        v.visit("bucket_values", &bucket_values);
    }
    // Variant k's size for bucket_dims[j].
    int64_t bucket_value(size_t k, size_t j) const {
        return bucket_values.at(k * bucket_dims.size() + j);
    }
};

// The variants of a call_tir's kernel (CallTirAttrs' bucket fields), as make_call_tir takes them.
struct KernelVariants {
    std::vector<PrimExpr> dims;
    std::vector<std::string> kernels;
    std::vector<int64_t> values;  // dims.size() per kernel
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
                          std::vector<PrimExpr> shape_args = {}, KernelVariants variants = {});
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
// A variant (bucket_kernels) must fit its call the same way: compile_model checks each with this
// function too.
void check_call_tir(const graph::Expr& call, const tir::PrimFunc& kernel);

// The attributes of `e` when it is a call_tir / call_packed; null otherwise.
const CallTirAttrs* call_tir_attrs(const graph::Expr& e);
const CallPackedAttrs* call_packed_attrs(const graph::Expr& e);

}  // namespace anvil::ops
