// Building blocks of the graph-pass tests: typed variables, constants, calls of ops from the op
// table by name, and stand-in ops with chosen fusion patterns (so fusion is tested independently
// of which op families exist).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/expr_functor.h"
#include "graph/passes/passes.h"
#include "ops/op_table.h"

namespace anvil::graph::testing {

inline Ref<Var> tensor_var(const std::string& name, std::vector<int64_t> shape,
                           DataType dtype = DataType::float32()) {
    return make_var(name, make_tensor_type(shape, dtype));
}

inline Expr constant(std::vector<int64_t> shape, std::vector<float> values) {
    auto a = runtime::NDArray::empty(shape, DLDataType{kDLFloat, 32, 1});
    if (values.size() == 1 && a.num_elements() != 1) values.assign(a.num_elements(), values[0]);
    a.copy_from(values);
    return make_constant(a);
}

inline std::vector<float> values_of(const Expr& c) {
    EXPECT_TRUE(c.is<Constant>());
    return c.is<Constant>() ? c.as<Constant>()->data.to_vector<float>() : std::vector<float>{};
}

inline Expr call(const std::string& op, std::vector<Expr> args, Ref<Attrs> attrs = nullptr) {
    return make_call(ops::get_op(op), std::move(args), std::move(attrs));
}

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
