// Graph expressions for tests: typed variables, float32 constants and their values, and calls of
// ops from the op table by name. Shared by the graph-pass and pattern suites.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/expr.h"
#include "ops/op_table.h"

namespace anvil::graph::testing {

inline Ref<Var> tensor_var(const std::string& name, std::vector<int64_t> shape,
                           DataType dtype = DataType::float32()) {
    return make_var(name, make_tensor_type(shape, dtype));
}

// A float32 constant; one value fills the whole shape.
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

}  // namespace anvil::graph::testing
