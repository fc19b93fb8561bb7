// Constant folding of scalar operations, shared by the simplifier and the bound analysis.
//
// Integers wrap at their width (uint values are kept zero-extended, int values sign-extended, as
// IntImm stores them); floats are computed in double and rounded to the type's precision
// (float16 and bfloat16 included). Division and modulo by zero are never folded.
#pragma once

#include <cstdint>

#include "ir/expr.h"

namespace anvil {

// `value` reduced to the type's width, as IntImm stores it (bool: 0 or 1).
int64_t wrap_int(DataType t, int64_t value);
// `value` rounded to the nearest value of float type t (ties to even; overflow gives inf).
double round_float(DataType t, double value);

// The folded result of a binary op on two scalar constants, or an undefined PrimExpr when the
// operands are not both constants or the op must not be folded (e.g. division by zero).
PrimExpr fold_binary(ExprKind kind, const PrimExpr& a, const PrimExpr& b);
PrimExpr fold_not(const PrimExpr& a);
// Cast of a scalar constant; undefined when the value does not fit (float to int overflow).
PrimExpr fold_cast(DataType t, const PrimExpr& value);

// Constant as a double (IntImm of unsigned type read as unsigned); false when not a constant.
bool const_value(const PrimExpr& e, double* out);

}  // namespace anvil
