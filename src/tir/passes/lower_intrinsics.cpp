// lower_intrinsics: float32 exp, log, tanh, erf and sigmoid become arithmetic that vectorizes.
//
// libm calls are scalar: one call per lane would undo vectorization. The expansions below use
// only + - * / min max select cast floor and reinterpret, lane-wise, so a vector argument gives
// vector code. Polynomial coefficients were fitted by us (iteratively reweighted least squares
// on Chebyshev nodes, i.e. near-minimax) on the reduced ranges stated at each function.
// Accuracy is measured in tests/unit/tir/passes_lower_intrinsics_test.cpp.
//
// Every constant is rounded to float32 before it enters the IR, so a printed program parses
// back to the same constants.
#include <cmath>
#include <initializer_list>

#include "ir/intrinsics.h"
#include "tir/passes/passes.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

// Builds expressions of one float32 vector shape and its int32 counterpart.
class Builder {
public:
    explicit Builder(DataType t) : ft_(t), it_(DataType::int_(32, t.lanes())) {}

    PrimExpr f(double v) const { return make_const(ft_, static_cast<float>(v)); }
    PrimExpr i(int64_t v) const { return make_const(it_, static_cast<double>(v)); }
    PrimExpr floor(const PrimExpr& x) const { return make_call(ft_, intrin::kFloor, {x}); }
    PrimExpr bits_of(const PrimExpr& x) const { return make_call(it_, intrin::kReinterpret, {x}); }
    PrimExpr from_bits(const PrimExpr& x) const {
        return make_call(ft_, intrin::kReinterpret, {x});
    }
    PrimExpr to_int(const PrimExpr& x) const { return make_cast(it_, x); }
    PrimExpr to_float(const PrimExpr& x) const { return make_cast(ft_, x); }
    PrimExpr inf() const { return from_bits(i(0x7F800000)); }
    PrimExpr nan() const { return from_bits(i(0x7FC00000)); }
    PrimExpr abs(const PrimExpr& x) const { return max(x, f(0) - x); }
    // Selecting x itself keeps a NaN input's payload.
    PrimExpr keep_nan(const PrimExpr& x, const PrimExpr& r) const { return select(ne(x, x), x, r); }
    // c[0] + z * (c[1] + z * (c[2] + ...)), Horner's scheme.
    PrimExpr poly(const PrimExpr& z, std::initializer_list<double> c) const {
        PrimExpr acc;
        for (auto it = std::rbegin(c); it != std::rend(c); ++it) {
            acc = acc.defined() ? f(*it) + z * acc : f(*it);
        }
        return acc;
    }

private:
    DataType ft_, it_;
};

// exp: x = n*ln2 + r with |r| <= ln2/2 (Cody-Waite: ln2 split so that n*ln2_hi is exact), then
// exp(r) = 1 + r + r^2 * P(r) and the result scaled by 2^n built in the exponent bits. 2^n is
// applied as two factors 2^(n/2) * 2^(n - n/2) so that overflow to inf and gradual underflow to
// denormals round correctly instead of wrapping the exponent field.
PrimExpr lower_exp(const Builder& b, const PrimExpr& x) {
    // Outside [-104, 89] the float32 result is 0 or inf; clamping keeps n within two factors.
    PrimExpr xc = min(max(x, b.f(-104.0)), b.f(89.0));
    PrimExpr n = b.floor(xc * b.f(1.4426950408889634) + b.f(0.5));
    PrimExpr r = (xc - n * b.f(0.693359375)) - n * b.f(-2.12194440054690583e-4);
    PrimExpr p = b.f(1.0) + r +
                 r * r *
                     b.poly(r, {5.000000095e-01, 1.666651885e-01, 4.166620598e-02, 8.368887841e-03,
                                1.395048100e-03});
    PrimExpr ni = b.to_int(n);
    PrimExpr n1 = ni / b.i(2);
    PrimExpr n2 = ni - n1;
    auto pow2 = [&](const PrimExpr& k) { return b.from_bits((k + b.i(127)) * b.i(1 << 23)); };
    return b.keep_nan(x, p * pow2(n1) * pow2(n2));
}

// log: x = 2^e * m with m in [sqrt(1/2), sqrt(2)) from the exponent and mantissa bits
// (denormals pre-scaled by 2^23). With f = m - 1 and s = f / (2 + f),
// log(1 + f) = f - f^2/2 + s * (f^2/2 + R(s^2)), R the atanh series 2z/3 + 2z^2/5 + ...,
// which is accurate to a fraction of an ulp because f is exact and s is only a correction.
PrimExpr lower_log(const Builder& b, const PrimExpr& x) {
    PrimExpr tiny = x < b.f(1.17549435e-38);
    PrimExpr xs = select(tiny, x * b.f(8388608.0), x);
    PrimExpr bits = b.bits_of(xs);
    PrimExpr biased = bits / b.i(1 << 23);
    PrimExpr e = biased - b.i(127) - select(tiny, b.i(23), b.i(0));
    PrimExpr m = b.from_bits(bits - biased * b.i(1 << 23) + b.i(127 << 23));
    PrimExpr big = m > b.f(1.41421356);
    m = select(big, m * b.f(0.5), m);
    PrimExpr ef = b.to_float(e + select(big, b.i(1), b.i(0)));
    PrimExpr fr = m - b.f(1.0);
    PrimExpr s = fr / (b.f(2.0) + fr);
    PrimExpr z = s * s;
    PrimExpr r = z * b.poly(z, {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9});
    PrimExpr hfsq = b.f(0.5) * fr * fr;
    PrimExpr result = ef * b.f(0.693359375) -
                      ((hfsq - (s * (hfsq + r) + ef * b.f(-2.12194440054690583e-4))) - fr);
    result = select(x > b.f(3.40282347e38), x, result);  // log(inf) = inf
    result = select(eq(x, b.f(0.0)), b.f(0.0) - b.inf(), result);
    result = select(x < b.f(0.0), b.nan(), result);
    return b.keep_nan(x, result);
}

// tanh: an odd polynomial x + x^3 P(x^2) on |x| < 0.625 (fitted there, for relative accuracy
// near 0); beyond, 1 - 2 / (exp(2|x|) + 1), which saturates to 1 as exp overflows to inf.
PrimExpr lower_tanh(const Builder& b, const PrimExpr& x) {
    PrimExpr ax = b.abs(x);
    PrimExpr x2 = x * x;
    PrimExpr small = x + x * x2 *
                             b.poly(x2, {-3.333328398e-01, 1.333149246e-01, -5.374356253e-02,
                                         2.065071702e-02, -5.717127473e-03});
    PrimExpr t = b.f(1.0) - b.f(2.0) / (lower_exp(b, ax + ax) + b.f(1.0));
    PrimExpr large = select(x < b.f(0.0), b.f(0.0) - t, t);
    return select(ax < b.f(0.625), small, large);
}

// erf: x P(x^2) on |x| < 1; beyond, 1 - exp(-x^2) Q(t) with t = 1 / (1 + |x|/2), Q fitted to
// erfc(x) exp(x^2) on [1, 4]. erf(4) rounds to 1 in float32, so |x| is clamped to 4.
PrimExpr lower_erf(const Builder& b, const PrimExpr& x) {
    PrimExpr ax = b.abs(x);
    PrimExpr x2 = x * x;
    PrimExpr small = x * b.poly(x2, {1.128379129e+00, -3.761235600e-01, 1.128041341e-01,
                                     -2.671774893e-02, 4.924831243e-03, -5.660307535e-04});
    PrimExpr ac = min(ax, b.f(4.0));
    PrimExpr t = b.f(1.0) / (b.f(1.0) + b.f(0.5) * ac);
    PrimExpr q = b.poly(t, {-1.119160120e-04, 2.842852927e-01, 2.636386035e-01, 3.341079030e-01,
                            -7.539678929e-02, 5.287128242e-01, -4.479007007e-01, 1.126757338e-01});
    PrimExpr large = b.f(1.0) - lower_exp(b, b.f(0.0) - ac * ac) * q;
    large = select(x < b.f(0.0), b.f(0.0) - large, large);
    return b.keep_nan(x, select(ax < b.f(1.0), small, large));
}

// sigmoid: 1 / (1 + exp(-x)); exp overflowing to inf gives exactly 0 for very negative x.
PrimExpr lower_sigmoid(const Builder& b, const PrimExpr& x) {
    return b.f(1.0) / (b.f(1.0) + lower_exp(b, b.f(0.0) - x));
}

class IntrinsicLowerer : public StmtMutator {
protected:
    PrimExpr mutate_(const Call* op, const PrimExpr& self) override {
        PrimExpr e = StmtMutator::mutate_(op, self);
        auto* call = e.as<Call>();
        if (!call || call->dtype.element_of() != DataType::float32() || call->args.size() != 1 ||
            call->args[0].dtype() != call->dtype) {
            return e;
        }
        Builder b(call->dtype);
        const PrimExpr& x = call->args[0];
        if (call->name == intrin::kExp) return lower_exp(b, x);
        if (call->name == intrin::kLog) return lower_log(b, x);
        if (call->name == intrin::kTanh) return lower_tanh(b, x);
        if (call->name == intrin::kErf) return lower_erf(b, x);
        if (call->name == intrin::kSigmoid) return lower_sigmoid(b, x);
        return e;
    }
};

}  // namespace

Stmt lower_intrinsics(const Stmt& s, const LowerContext& ctx) {
    return IntrinsicLowerer().mutate_stmt(s);
}

}  // namespace anvil::tir
