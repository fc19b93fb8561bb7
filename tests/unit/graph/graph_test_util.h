// Building blocks shared by the graph IR tests: tensor types, constants from values, and the
// print -> parse -> print check every text test ends with.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/expr.h"
#include "graph/module.h"
#include "graph/parser.h"
#include "graph/printer.h"
#include "graph/structural_equal.h"
#include "graph/verifier.h"
#include "ops/op_table.h"

namespace anvil::graph::testing {

inline Type tensor(const std::vector<int64_t>& shape, DataType t = DataType::float32()) {
    return make_tensor_type(shape, t);
}

template <typename T>
Expr constant(const std::vector<int64_t>& shape, DataType t, const std::vector<T>& values) {
    auto data = runtime::NDArray::empty(shape, dl_dtype_of(t));
    data.copy_from(values.data(), values.size() * sizeof(T));
    return make_constant(data);
}

inline Expr call(const std::string& op, std::vector<Expr> args, Ref<Attrs> attrs = nullptr) {
    return make_call(ops::get_op(op), std::move(args), std::move(attrs));
}

inline IRModule module_of(Ref<Function> main) {
    IRModule m;
    m.functions["main"] = std::move(main);
    return m;
}

// The text round trip every printed module must survive: parse(print(m)) equals m, printing
// it again gives the same text, and the verifier accepts it. Returns the text.
inline std::string expect_round_trip(const IRModule& m) {
    std::string text = print(m);
    IRModule back;
    try {
        back = parse_module(text, ops::op_table());
    } catch (const Error& e) {
        ADD_FAILURE() << e.what() << "\nin\n" << text;
        return text;
    }
    EXPECT_TRUE(structural_equal(m, back)) << text;
    EXPECT_EQ(print(back), text);
    EXPECT_NO_THROW(verify(back)) << text;
    return text;
}

// The UserError message `f` raises ("" when it raises none).
template <typename F>
std::string user_error_of(F&& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

}  // namespace anvil::graph::testing
