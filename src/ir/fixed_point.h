// The arithmetic of the fixed_point_multiply intrinsics (ir/intrinsics.h): x * m * 2^(s - 31),
// rounded, saturated to int32, in + - * select cast min max and shifts.
//
// The intrinsics stay calls through every loop-IR pass and are expanded only where code is
// emitted, each argument evaluated once. An expansion uses its argument and intermediate values
// several times; written as one expression, a chain of requantizations inlined into one kernel
// (qnn.add of qnn.add of a requantize, each a few of these) grows exponentially with the chain.
#pragma once
#include <functional>

#include "ir/expr.h"

namespace anvil {

// Returns a value the expansion may use many times: the code generator emits `e` once and
// answers a variable bound to it.
using BindValue = std::function<PrimExpr(const PrimExpr& e)>;

// floor((x * m + 2^30) / 2^31) of int32 lanes x and m, as int32: TFLite's rounded doubling high
// multiply where it does not saturate (m >= 0). A code generator may supply its own, bound value
// (x86: the 32 x 32 -> 64 products of the even and of the odd lanes, without widening the lanes).
using HighMul = std::function<PrimExpr(const PrimExpr& x, const PrimExpr& m)>;

// The expansion of the intrinsic `name` (one of the fixed_point_multiply names) of int32 values
// x, m and s of one lane count, which should themselves be bound (variables or constants).
// Without `high_mul`, the high multiply is the product of x and m widened to int64.
PrimExpr expand_fixed_point_multiply(const std::string& name, const PrimExpr& x, const PrimExpr& m,
                                     const PrimExpr& s, const BindValue& bind,
                                     const HighMul& high_mul = nullptr);

}  // namespace anvil
