// Building blocks of the graph-pass tests: the shared graph expressions (graph_test_exprs.h)
// and stand-in ops with chosen fusion patterns (so fusion is tested independently
// of which op families exist).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/expr_functor.h"
#include "graph/passes/passes.h"
#include "graph_test_exprs.h"
#include "ops/op_table.h"

namespace anvil::graph::testing {

inline PassContext test_context() {
    PassContext ctx;
    return ctx;
}

inline IRModule module_of(const Ref<Function>& main) {
    IRModule m;
    m.functions["main"] = main;
    return m;
}

// The op calls in `e` (not entering functions), operands first.
inline std::vector<const Call*> op_calls(const Expr& e) {
    std::vector<const Call*> out;
    post_order_visit(e, [&](const Expr& x) {
        if (auto* c = x.as<Call>(); c && c->op.defined()) out.push_back(c);
    });
    return out;
}

inline std::vector<std::string> op_names(const Expr& e) {
    std::vector<std::string> names;
    for (const Call* c : op_calls(e)) names.push_back(c->op->name);
    return names;
}

// A stand-in op of the given pattern whose result has its first input's type.
inline Ref<Op> stand_in_op(const std::string& name, OpPattern pattern, int num_inputs = 1) {
    auto op = make_ref<Op>();
    auto* o = const_cast<Op*>(op.get());
    o->name = name;
    o->num_inputs = num_inputs;
    o->make_default_attrs = [] { return Ref<Attrs>(new NoAttrs()); };
    o->infer_type = [](const Op&, const std::vector<Type>& args, const Attrs&, const SourceLoc&) {
        return args[0];
    };
    o->pattern = pattern;
    return op;
}

}  // namespace anvil::graph::testing
