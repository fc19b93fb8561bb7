// Elementwise math for tensor-expression bodies. Each is an intrinsic Call (ir/intrinsics.h);
// the loop IR lowers the transcendental ones to vectorizable polynomials.
#pragma once

#include "ir/expr.h"

namespace anvil::te {

PrimExpr exp(PrimExpr x);
PrimExpr log(PrimExpr x);
PrimExpr sqrt(PrimExpr x);
PrimExpr rsqrt(PrimExpr x);
PrimExpr tanh(PrimExpr x);
PrimExpr sigmoid(PrimExpr x);
PrimExpr erf(PrimExpr x);
PrimExpr pow(PrimExpr x, PrimExpr y);
PrimExpr abs(PrimExpr x);  // also for integers
PrimExpr floor(PrimExpr x);
PrimExpr ceil(PrimExpr x);
PrimExpr round(PrimExpr x);  // half to even
// Trigonometric and hyperbolic functions and their inverses (libm).
PrimExpr sin(PrimExpr x);
PrimExpr cos(PrimExpr x);
PrimExpr tan(PrimExpr x);
PrimExpr asin(PrimExpr x);
PrimExpr acos(PrimExpr x);
PrimExpr atan(PrimExpr x);
PrimExpr sinh(PrimExpr x);
PrimExpr cosh(PrimExpr x);
PrimExpr asinh(PrimExpr x);
PrimExpr acosh(PrimExpr x);
PrimExpr atanh(PrimExpr x);

// Reads only the chosen branch (use it to guard out-of-bounds reads, e.g. padding).
PrimExpr if_then_else(PrimExpr cond, PrimExpr then_value, PrimExpr else_value);

}  // namespace anvil::te
