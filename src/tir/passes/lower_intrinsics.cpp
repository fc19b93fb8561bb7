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

using Bindings = std::vector<std::pair<Ref<Var>, PrimExpr>>;

// Builds expressions of one float32 vector shape and its int32 counterpart.
//
// An expansion uses its intermediate values several times. Sharing the nodes would make a DAG
// that every later walk (simplify, the verifier, codegen, printing) treats as a tree, which is
// exponential in how deeply transcendentals nest (mish = x * tanh(log(1 + exp(x)))). So bind()
// names each reused value with a let around the statement; when `lets` is null (inside a
// guarded if_then_else branch, whose reads are valid only under its condition, so nothing may
// be hoisted out of it) values are shared as before.
class Builder {
public:
    Builder(DataType t, Bindings* lets) : ft_(t), it_(DataType::int_(32, t.lanes())), lets_(lets) {}

    PrimExpr bind(const PrimExpr& e, const char* name) const {
        if (!lets_ || e.is<Var>() || e.is<IntImm>() || e.is<FloatImm>() || e.is<Broadcast>()) {
            return e;
        }
        Ref<Var> v = make_var(name, e.dtype());
        lets_->emplace_back(v, e);
        return v;
    }

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
    Bindings* lets_;
};

// exp: x = n*ln2 + r with |r| <= ln2/2 (Cody-Waite: ln2 split so that n*ln2_hi is exact), then
// exp(r) = 1 + r + r^2 * P(r) and the result scaled by 2^n built in the exponent bits. 2^n is
// applied as two factors 2^(n/2) * 2^(n - n/2) so that overflow to inf and gradual underflow to
// denormals round correctly instead of wrapping the exponent field.
PrimExpr lower_exp(const Builder& b, const PrimExpr& arg) {
    PrimExpr x = b.bind(arg, "exp_x");
    // Outside [-104, 89] the float32 result is 0 or inf; clamping keeps n within two factors.
    PrimExpr xc = b.bind(min(max(x, b.f(-104.0)), b.f(89.0)), "exp_xc");
    PrimExpr n = b.bind(b.floor(xc * b.f(1.4426950408889634) + b.f(0.5)), "exp_n");
    PrimExpr r = b.bind((xc - n * b.f(0.693359375)) - n * b.f(-2.12194440054690583e-4), "exp_r");
    PrimExpr p = b.f(1.0) + r +
                 r * r *
                     b.poly(r, {5.000000095e-01, 1.666651885e-01, 4.166620598e-02, 8.368887841e-03,
                                1.395048100e-03});
    PrimExpr ni = b.bind(b.to_int(n), "exp_ni");
    PrimExpr n1 = b.bind(ni / b.i(2), "exp_n1");
    PrimExpr n2 = ni - n1;
    auto pow2 = [&](const PrimExpr& k) { return b.from_bits((k + b.i(127)) * b.i(1 << 23)); };
    return b.keep_nan(x, p * pow2(n1) * pow2(n2));
}

// log: x = 2^e * m with m in [sqrt(1/2), sqrt(2)) from the exponent and mantissa bits
// (denormals pre-scaled by 2^23). With f = m - 1 and s = f / (2 + f),
// log(1 + f) = f - f^2/2 + s * (f^2/2 + R(s^2)), R the atanh series 2z/3 + 2z^2/5 + ...,
// which is accurate to a fraction of an ulp because f is exact and s is only a correction.
PrimExpr lower_log(const Builder& b, const PrimExpr& arg) {
    PrimExpr x = b.bind(arg, "log_x");
    PrimExpr tiny = b.bind(x < b.f(1.17549435e-38), "log_tiny");
    PrimExpr xs = select(tiny, x * b.f(8388608.0), x);
    PrimExpr bits = b.bind(b.bits_of(xs), "log_bits");
    PrimExpr biased = b.bind(bits / b.i(1 << 23), "log_biased");
    PrimExpr e = biased - b.i(127) - select(tiny, b.i(23), b.i(0));
    PrimExpr m = b.bind(b.from_bits(bits - biased * b.i(1 << 23) + b.i(127 << 23)), "log_m");
    PrimExpr big = b.bind(m > b.f(1.41421356), "log_big");
    m = select(big, m * b.f(0.5), m);
    PrimExpr ef = b.bind(b.to_float(e + select(big, b.i(1), b.i(0))), "log_e");
    PrimExpr fr = b.bind(m - b.f(1.0), "log_f");
    PrimExpr s = b.bind(fr / (b.f(2.0) + fr), "log_s");
    PrimExpr z = b.bind(s * s, "log_z");
    PrimExpr r = z * b.poly(z, {2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9});
    PrimExpr hfsq = b.bind(b.f(0.5) * fr * fr, "log_hfsq");
    PrimExpr result = ef * b.f(0.693359375) -
                      ((hfsq - (s * (hfsq + r) + ef * b.f(-2.12194440054690583e-4))) - fr);
    result = b.bind(result, "log_r");
    result = select(x > b.f(3.40282347e38), x, result);  // log(inf) = inf
    result = select(eq(x, b.f(0.0)), b.f(0.0) - b.inf(), result);
    result = select(x < b.f(0.0), b.nan(), result);
    return b.keep_nan(x, result);
}

// tanh: an odd polynomial x + x^3 P(x^2) on |x| < 0.625 (fitted there, for relative accuracy
// near 0); beyond, 1 - 2 / (exp(2|x|) + 1), which saturates to 1 as exp overflows to inf.
PrimExpr lower_tanh(const Builder& b, const PrimExpr& arg) {
    PrimExpr x = b.bind(arg, "tanh_x");
    PrimExpr ax = b.bind(b.abs(x), "tanh_ax");
    PrimExpr x2 = b.bind(x * x, "tanh_x2");
    PrimExpr small = x + x * x2 *
                             b.poly(x2, {-3.333328398e-01, 1.333149246e-01, -5.374356253e-02,
                                         2.065071702e-02, -5.717127473e-03});
    PrimExpr t = b.bind(b.f(1.0) - b.f(2.0) / (lower_exp(b, ax + ax) + b.f(1.0)), "tanh_t");
    PrimExpr large = select(x < b.f(0.0), b.f(0.0) - t, t);
    return select(ax < b.f(0.625), small, large);
}

// erf: x P(x^2) / Q(x^2) on [-4, 4] (odd by construction; P and Q of degree 5, fitted to
// erf(x) / x in x^2 for absolute error, 4.2e-7 at most in float32), one division and no exp.
// erf(4) rounds to 1 in float32, so x is clamped to [-4, 4] and the ends give exactly +-1; the
// rational's few 1e-7 beyond 1 near the ends are clamped off.
PrimExpr lower_erf(const Builder& b, const PrimExpr& arg) {
    PrimExpr x = b.bind(arg, "erf_x");
    PrimExpr xc = b.bind(min(max(x, b.f(-4.0)), b.f(4.0)), "erf_xc");
    PrimExpr z = b.bind(xc * xc, "erf_z");
    PrimExpr p = b.poly(z, {1.128378987312317, 0.19624271988868713, 0.05346635729074478,
                            0.004003269597887993, 0.00028801473672501743, 1.9746598809433635e-06});
    PrimExpr q = b.poly(z, {1.0, 0.507246732711792, 0.11647356301546097, 0.015443720854818821,
                            0.0012162323109805584, 3.747765003936365e-05});
    PrimExpr r = min(max(xc * p / q, b.f(-1.0)), b.f(1.0));
    return b.keep_nan(x, select(z >= b.f(16.0), xc * b.f(0.25), r));
}

// erf(a / d) for a divisor the same in every lane (GELU's erf(x / sqrt(2)), the constant a
// kernel parameter): erf(a * (1 / d)), so that the division leaves the loop. The argument moves
// by at most 1.5 ulp, which moves erf by under 1e-7, below the expansion's own error, as long as
// 1 / d is a normal float: where it would not be (|d| outside [2^-126, 2^126], 0, inf or NaN)
// the quotient is kept, chosen by a branch on the scalar divisor. No expression (keep the
// quotient) for a divisor per lane, or a constant whose reciprocal is not normal.
PrimExpr quotient_by_reciprocal(const Builder& b, const Div* div) {
    const PrimExpr& d = div->b;
    PrimExpr scalar = d;
    if (auto* splat = d.as<Broadcast>()) scalar = splat->value;
    if (!scalar.dtype().is_scalar()) return {};  // a divisor per lane: nothing would leave the loop
    const DataType t = scalar.dtype();
    const double lo = std::ldexp(1.0, -126), hi = std::ldexp(1.0, 126);
    if (auto* c = scalar.as<FloatImm>()) {
        if (!(std::fabs(c->value) >= lo && std::fabs(c->value) <= hi)) return {};
    }
    // The reciprocal named outside the branch: each side then costs one operation per lane, so
    // the kernel's FLOP count (driver/count_flops.cpp) does not depend on the divisor.
    PrimExpr product = div->a * b.bind(make_const(d.dtype(), 1.0) / d, "erf_reciprocal");
    if (scalar.is<FloatImm>()) return product;
    scalar = b.bind(scalar, "erf_divisor");
    PrimExpr magnitude = max(scalar, make_const(t, 0.0) - scalar);
    PrimExpr normal = magnitude >= make_const(t, lo) && magnitude <= make_const(t, hi);
    return make_call(div->dtype, intrin::kIfThenElse, {normal, product, div->a / d});
}

// sigmoid: 1 / (1 + exp(-x)); exp overflowing to inf gives exactly 0 for very negative x.
PrimExpr lower_sigmoid(const Builder& b, const PrimExpr& x) {
    return b.f(1.0) / (b.f(1.0) + lower_exp(b, b.f(0.0) - x));
}

class IntrinsicLowerer : public StmtMutator {
public:
    // The bindings made while lowering a statement's expressions become lets around it.
    Stmt mutate_stmt(const Stmt& s) override {
        Bindings outer = std::move(lets_);
        lets_.clear();
        Stmt result = StmtMutator::mutate_stmt(s);
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) {
            result = make_let(it->first, it->second, result, s->loc);
        }
        lets_ = std::move(outer);
        return result;
    }

protected:
    PrimExpr mutate_(const Call* op, const PrimExpr& self) override {
        if (op->name == intrin::kIfThenElse) {
            // Values inside a guarded branch must stay there (see Builder).
            PrimExpr cond = mutate(op->args[0]);
            ++guarded_;
            PrimExpr t = mutate(op->args[1]), f = mutate(op->args[2]);
            --guarded_;
            if (cond.same_as(op->args[0]) && t.same_as(op->args[1]) && f.same_as(op->args[2])) {
                return self;
            }
            return make_call(op->dtype, op->name, {cond, t, f});
        }
        PrimExpr e = StmtMutator::mutate_(op, self);
        auto* call = e.as<Call>();
        if (!call || call->dtype.element_of() != DataType::float32() || call->args.size() != 1 ||
            call->args[0].dtype() != call->dtype) {
            return e;
        }
        Builder b(call->dtype, guarded_ > 0 ? nullptr : &lets_);
        const PrimExpr& x = call->args[0];
        if (call->name == intrin::kExp) return lower_exp(b, x);
        if (call->name == intrin::kLog) return lower_log(b, x);
        if (call->name == intrin::kTanh) return lower_tanh(b, x);
        if (call->name == intrin::kErf) {
            auto* div = x.as<Div>();
            PrimExpr by_reciprocal = div ? quotient_by_reciprocal(b, div) : PrimExpr();
            return lower_erf(b, by_reciprocal.defined() ? by_reciprocal : x);
        }
        if (call->name == intrin::kSigmoid) return lower_sigmoid(b, x);
        return e;
    }

private:
    Bindings lets_;
    int guarded_ = 0;
};

}  // namespace

Stmt lower_intrinsics(const Stmt& s, const LowerContext& ctx) {
    return IntrinsicLowerer().mutate_stmt(s);
}

}  // namespace anvil::tir
