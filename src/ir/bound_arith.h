// Saturating arithmetic on ConstIntBound: ideal (non-wrapping) integer interval arithmetic where
// kNegInf / kPosInf stand for the infinities. Shared by the bound analysis and the simplifier.
#pragma once

#include "ir/analyzer.h"

namespace anvil {

inline constexpr ConstIntBound kEverything{ConstIntBound::kNegInf, ConstIntBound::kPosInf};

// x + y and x * y on extended integers (one side infinite gives that infinity; inf * 0 = 0).
int64_t sat_add(int64_t x, int64_t y);
int64_t sat_mul(int64_t x, int64_t y);

ConstIntBound bound_add(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_sub(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_mul(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_scale(const ConstIntBound& a, int64_t c);
ConstIntBound bound_union(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound bound_intersect(const ConstIntBound& a, const ConstIntBound& b);
// The representable range of an integer or bool type; everything for other types.
ConstIntBound type_bound(DataType t);

}  // namespace anvil
