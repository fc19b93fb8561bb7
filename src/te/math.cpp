#include "te/math.h"

#include "ir/intrinsics.h"
#include "support/error.h"

namespace anvil::te {

namespace {

PrimExpr float_call(const char* name, PrimExpr x) {
    if (!x.dtype().is_floating()) {
        user_error() << name << "(" << x << "): argument has type " << x.dtype().str()
                     << "; cast it to a float type first";
    }
    DataType t = x.dtype();
    return make_call(t, name, {std::move(x)});
}

}  // namespace

PrimExpr exp(PrimExpr x) {
    return float_call(intrin::kExp, std::move(x));
}
PrimExpr log(PrimExpr x) {
    return float_call(intrin::kLog, std::move(x));
}
PrimExpr sqrt(PrimExpr x) {
    return float_call(intrin::kSqrt, std::move(x));
}
PrimExpr rsqrt(PrimExpr x) {
    return float_call(intrin::kRsqrt, std::move(x));
}
PrimExpr tanh(PrimExpr x) {
    return float_call(intrin::kTanh, std::move(x));
}
PrimExpr sigmoid(PrimExpr x) {
    return float_call(intrin::kSigmoid, std::move(x));
}
PrimExpr erf(PrimExpr x) {
    return float_call(intrin::kErf, std::move(x));
}
PrimExpr floor(PrimExpr x) {
    return float_call(intrin::kFloor, std::move(x));
}
PrimExpr ceil(PrimExpr x) {
    return float_call(intrin::kCeil, std::move(x));
}
PrimExpr round(PrimExpr x) {
    return float_call(intrin::kRound, std::move(x));
}
PrimExpr sin(PrimExpr x) {
    return float_call(intrin::kSin, std::move(x));
}
PrimExpr cos(PrimExpr x) {
    return float_call(intrin::kCos, std::move(x));
}
PrimExpr tan(PrimExpr x) {
    return float_call(intrin::kTan, std::move(x));
}
PrimExpr asin(PrimExpr x) {
    return float_call(intrin::kAsin, std::move(x));
}
PrimExpr acos(PrimExpr x) {
    return float_call(intrin::kAcos, std::move(x));
}
PrimExpr atan(PrimExpr x) {
    return float_call(intrin::kAtan, std::move(x));
}
PrimExpr sinh(PrimExpr x) {
    return float_call(intrin::kSinh, std::move(x));
}
PrimExpr cosh(PrimExpr x) {
    return float_call(intrin::kCosh, std::move(x));
}
PrimExpr asinh(PrimExpr x) {
    return float_call(intrin::kAsinh, std::move(x));
}
PrimExpr acosh(PrimExpr x) {
    return float_call(intrin::kAcosh, std::move(x));
}
PrimExpr atanh(PrimExpr x) {
    return float_call(intrin::kAtanh, std::move(x));
}

PrimExpr pow(PrimExpr x, PrimExpr y) {
    if (y.is<IntImm>() || y.is<FloatImm>()) y = cast(x.dtype(), y);
    if (!x.dtype().is_floating() || x.dtype() != y.dtype()) {
        user_error() << "pow(" << x << ", " << y << "): arguments must be floats of one type, got "
                     << x.dtype().str() << " and " << y.dtype().str();
    }
    DataType t = x.dtype();
    return make_call(t, intrin::kPow, {std::move(x), std::move(y)});
}

PrimExpr abs(PrimExpr x) {
    if (x.dtype().is_uint() || x.dtype().is_bool()) return x;
    if (x.dtype().is_int()) return select(x < make_const(x.dtype(), 0), -x, x);
    return float_call(intrin::kAbs, std::move(x));
}

PrimExpr if_then_else(PrimExpr cond, PrimExpr then_value, PrimExpr else_value) {
    if (!cond.dtype().is_bool()) {
        user_error() << "if_then_else: condition " << cond << " has type " << cond.dtype().str()
                     << "; it must be a comparison or boolean";
    }
    // The same literal conversions as select().
    PrimExpr probe = select(cond, then_value, else_value);
    auto* s = probe.as<Select>();
    return make_call(s->dtype, intrin::kIfThenElse, {s->cond, s->true_value, s->false_value});
}

}  // namespace anvil::te
