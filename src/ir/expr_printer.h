// Prints scalar expressions in the loop IR's text syntax (the tir parser reads it back):
//
//   literals   7 (int32)  7i64  7u8  true  2.5f (float32)  2.5f64  2.5f16  2.5bf16
//   operators  a + b * c, a / b (truncating for ints), a % b, !c, a && b, a < b, a == b
//   calls      floordiv(a, b) floormod(a, b) min(a, b) max(a, b) select(c, t, f)
//              cast<float32>(x) exp(x) call<float32>("name", args...)
//   memory     A[i, j]  ramp(base, stride, lanes)  broadcast(value, lanes)
//
// Names come from hooks so that the tir printer can make them unique; by default a variable or
// buffer prints its own name.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "ir/expr.h"

namespace anvil {

class ExprPrinter {
public:
    std::function<std::string(const Var*)> var_name = [](const Var* v) { return v->name; };
    std::function<std::string(const Buffer*)> buffer_name = [](const Buffer* b) { return b->name; };

    void print(std::ostream& os, const PrimExpr& e) const { print(os, e, 0); }
    std::string str(const PrimExpr& e) const;

    // The literal spelling of a constant, e.g. "2.5f" or "7i64".
    static std::string literal(const PrimExpr& e);

private:
    void print(std::ostream& os, const PrimExpr& e, int parent_prec) const;
};

}  // namespace anvil
