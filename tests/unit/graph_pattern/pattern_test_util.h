// Building blocks of the pattern tests: typed variables, constants, and calls of ops from the op
// table by name, with attributes set by field.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/attr_fields.h"
#include "graph/expr.h"
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

inline Expr call(const std::string& op, std::vector<Expr> args, Ref<Attrs> attrs = nullptr) {
    return make_call(ops::get_op(op), std::move(args), std::move(attrs));
}

// The op's default attributes with integer-list fields set: {{"padding", {1, 1, 1, 1}}}.
inline Ref<Attrs> attrs_of_op(const std::string& op,
                              std::vector<std::pair<std::string, std::vector<int64_t>>> fields) {
    Ref<Attrs> a = ops::get_op(op).make_default_attrs();
    for (auto& [name, value] : fields) a = attr_with(*a, name, std::move(value));
    return a;
}

}  // namespace anvil::graph::testing
