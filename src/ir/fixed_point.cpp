#include "ir/fixed_point.h"

#include <cstdint>

#include "ir/intrinsics.h"
#include "support/error.h"

namespace anvil {

namespace {

// Values of one lane count: constants broadcast to it, casts keep it.
class Lanes {
public:
    explicit Lanes(int lanes) : lanes_(lanes) {}

    DataType i32() const { return DataType::int32().with_lanes(lanes_); }
    DataType i64() const { return DataType::int64().with_lanes(lanes_); }
    DataType u64() const { return DataType::uint(64).with_lanes(lanes_); }
    PrimExpr c32(int64_t v) const { return make_const(i32(), static_cast<double>(v)); }
    PrimExpr c64(int64_t v) const { return make_const(i64(), static_cast<double>(v)); }
    static PrimExpr shift_left(const PrimExpr& a, const PrimExpr& n) {
        return make_call(a.dtype(), intrin::kShiftLeft, {a, n});
    }
    static PrimExpr shift_right(const PrimExpr& a, const PrimExpr& n) {
        return make_call(a.dtype(), intrin::kShiftRight, {a, n});
    }

private:
    int lanes_;
};

// SaturatingRoundingDoublingHighMul of int32 lanes (m >= 0, so it never saturates): (a * m +
// nudge) / 2^31 truncated toward zero, the nudge 2^30 for a * m >= 0 and 1 - 2^30 below. Below 0
// that truncation is the floor of (a * m + nudge + 2^31 - 1) / 2^31, so both cases are
// floor((a * m + 2^30) / 2^31): one add and one shift. a and m are sign-extended int32 values:
// their product is one 32 x 32 -> 64 multiply (vpmuldq), not a full 64-bit one, |a * m| < 2^62,
// and the result fits int32, so the shift may be a logical one (the same low 32 bits).
PrimExpr doubling_high_mul(const Lanes& l, const PrimExpr& a, const PrimExpr& m,
                           const BindValue& bind, const HighMul& high_mul) {
    if (high_mul) return high_mul(a, m);
    PrimExpr ab = cast(l.i64(), a) * cast(l.i64(), m);
    PrimExpr nudged = cast(l.u64(), ab + l.c64(int64_t(1) << 30));
    return bind(cast(l.i32(), Lanes::shift_right(nudged, make_const(l.u64(), 31.0))));
}

// TFLite's MultiplyByQuantizedMultiplier: a left shift first (saturated to int32, where TFLite's
// int32 arithmetic would overflow), SaturatingRoundingDoublingHighMul, then RoundingDivideByPOT.
// `shift` is int32 in [-31, 30]. Everything but the product runs on int32 lanes: x86 before
// AVX-512 has no 64-bit min, max or arithmetic shift, and a vector holds twice as many 32-bit
// lanes.
PrimExpr tflite_rounding(const Lanes& l, const PrimExpr& x, const PrimExpr& m,
                         const PrimExpr& shift, const BindValue& bind, const HighMul& high_mul) {
    // x << left saturated on int32 lanes: x beyond INT32_MAX >> left (or below
    // INT32_MIN >> left) saturates. left is in [0, 30].
    PrimExpr left = bind(max(shift, l.c32(0)));
    PrimExpr a = bind(select(x > Lanes::shift_right(l.c32(INT32_MAX), left), l.c32(INT32_MAX),
                             select(x < Lanes::shift_right(l.c32(INT32_MIN), left),
                                    l.c32(INT32_MIN), Lanes::shift_left(x, left))));
    PrimExpr high = doubling_high_mul(l, a, m, bind, high_mul);
    PrimExpr right = bind(max(l.c32(0) - shift, l.c32(0)));
    PrimExpr floor_part = bind(Lanes::shift_right(high, right));
    PrimExpr remainder = high - Lanes::shift_left(floor_part, right);
    // (2^right - 1) >> 1 without forming 2^31 (the unselected arm's shift by -1 is never used).
    PrimExpr half_mask = select(right > l.c32(0),
                                Lanes::shift_left(l.c32(1), right - l.c32(1)) - l.c32(1), l.c32(0));
    PrimExpr threshold = half_mask + select(high < l.c32(0), l.c32(1), l.c32(0));
    return floor_part + select(remainder > threshold, l.c32(1), l.c32(0));
}

// tflite_rounding where no shift is positive (TFLite's left shift is 0): the high multiply h,
// then RoundingDivideByPOT by r = -s in one rounding instead of TFLite's remainder and threshold.
// For r >= 1 that division is floor((h - [h < 0] + 2^(r-1)) / 2^r), computed as
// ((h - [h < 0]) >> (r - 1) + 1) >> 1 so that no step leaves int32. [x < 0] stands for
// [h < 0] (m >= 0): they differ only where h is 0 (x = -1 with m = 2^30, or m = 0), and 0
// divides to 0 either way.
// Kernels requantize with such shifts (ratios below 1), in about half the instructions.
PrimExpr tflite_rounding_right_shifts(const Lanes& l, const PrimExpr& x, const PrimExpr& m,
                                      const PrimExpr& s, const BindValue& bind,
                                      const HighMul& high_mul) {
    PrimExpr high = doubling_high_mul(l, x, m, bind, high_mul);
    PrimExpr below = high + Lanes::shift_right(x, l.c32(31));  // h - [x < 0]
    // r - 1 = -s - 1 = ~s: below 0 where s >= 0 (no division), at most 30 where s >= -31.
    PrimExpr r1 = bind(l.c32(-1) - s);
    PrimExpr count = min(max(r1, l.c32(0)), l.c32(30));
    PrimExpr divided = Lanes::shift_right(Lanes::shift_right(below, count) + l.c32(1), l.c32(1));
    return select(r1 < l.c32(0), high, divided);
}

// x * m rounded at bit (31 - shift) - 1 in int64, half up (UPWARD) or half away from zero
// (TONEAREST), saturated to int32. Every shift amount is in [0, 62].
PrimExpr int64_rounding(const Lanes& l, const PrimExpr& x, const PrimExpr& m, const PrimExpr& shift,
                        bool to_nearest, const BindValue& bind) {
    PrimExpr total = bind(l.c64(31) - cast(l.i64(), shift));  // in [1, 62]
    PrimExpr v = bind(cast(l.i64(), x) * cast(l.i64(), m));
    PrimExpr half = Lanes::shift_left(l.c64(1), total - l.c64(1));
    if (to_nearest) half = half - select(v < l.c64(0), l.c64(1), l.c64(0));
    PrimExpr result = bind(Lanes::shift_right(v + half, total));
    return cast(l.i32(), min(max(result, l.c64(INT32_MIN)), l.c64(INT32_MAX)));
}

}  // namespace

PrimExpr expand_fixed_point_multiply(const std::string& name, const PrimExpr& x, const PrimExpr& m,
                                     const PrimExpr& s, const BindValue& bind,
                                     const HighMul& high_mul) {
    const int lanes = x.dtype().lanes();
    ANVIL_CHECK(x.dtype() == DataType::int32().with_lanes(lanes) && m.dtype() == x.dtype() &&
                s.dtype() == x.dtype())
        << name << " takes int32 values of one lane count, got " << x.dtype().str() << ", "
        << m.dtype().str() << ", " << s.dtype().str();
    Lanes l(lanes);
    if (name == intrin::kFixedPointMultiplyTfliteRightShift) {
        return tflite_rounding_right_shifts(l, x, m, s, bind, high_mul);
    }
    // Any int32 shift is accepted: one outside [-31, 30] (which qnn's fixed_point_of never
    // makes) is clamped, so that every shift of the expansion stays defined.
    PrimExpr shift = bind(min(max(s, l.c32(-31)), l.c32(30)));
    if (name == intrin::kFixedPointMultiplyTflite) {
        return tflite_rounding(l, x, m, shift, bind, high_mul);
    }
    ANVIL_CHECK(name == intrin::kFixedPointMultiplyUpward ||
                name == intrin::kFixedPointMultiplyToNearest)
        << name << " is not a fixed_point_multiply intrinsic";
    return int64_rounding(l, x, m, shift, name == intrin::kFixedPointMultiplyToNearest, bind);
}

}  // namespace anvil
