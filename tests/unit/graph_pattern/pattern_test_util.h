// Building blocks of the pattern tests: the shared graph expressions (graph_test_exprs.h) and
// op attributes set by field.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/attr_fields.h"
#include "graph/expr.h"
#include "graph_test_exprs.h"
#include "ops/op_table.h"

namespace anvil::graph::testing {

// The op's default attributes with integer-list fields set: {{"padding", {1, 1, 1, 1}}}.
inline Ref<Attrs> attrs_of_op(const std::string& op,
                              std::vector<std::pair<std::string, std::vector<int64_t>>> fields) {
    Ref<Attrs> a = ops::get_op(op).make_default_attrs();
    for (auto& [name, value] : fields) a = attr_with(*a, name, std::move(value));
    return a;
}

}  // namespace anvil::graph::testing
