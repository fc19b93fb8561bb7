// Elementwise ops: unary math, relu, cast, numpy-broadcast binary arithmetic, comparisons,
// logical and bitwise ops, shifts and where. All are ElemWise/Broadcast (fuse into anything) and
// use the injective schedule when they stand alone.
#include "ops/elementwise.h"

#include <functional>

#include "graph/op.h"
#include "ir/intrinsics.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/tensor_shape.h"
#include "support/error.h"
#include "te/math.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::Type;

namespace {

// The element types an op accepts: any, floating-point, bool, integers, integers and bool.
enum class Domain { Any, Float, Bool, Int, IntOrBool };

// The type rule's check of the operands' element type against the op's domain.
void check_domain(const std::string& op, Domain d, DataType t, bool unary, const SourceLoc& loc) {
    bool integer = t.is_int() || t.is_uint();
    bool ok = d == Domain::Any || (d == Domain::Float && t.is_floating()) ||
              (d == Domain::Bool && t.is_bool()) || (d == Domain::Int && integer) ||
              (d == Domain::IntOrBool && (integer || t.is_bool()));
    if (ok) return;
    const char* what = d == Domain::Float  ? "floating-point"
                       : d == Domain::Bool ? "bool"
                       : d == Domain::Int  ? "integer"
                                           : "integer or bool";
    const char* article = !unary ? "" : d == Domain::Float || d == Domain::Bool ? "a " : "an ";
    user_error(loc) << op << " needs " << article << what << (unary ? " input" : " inputs")
                    << ", got " << t.str();
}

// ---- unary --------------------------------------------------------------------------------

using UnaryFn = PrimExpr (*)(PrimExpr);

struct UnaryInfo {
    UnaryFn fn;
    Domain domain;
};

// Unary ops share their rules; the function and domain come from a table keyed by op name.
const UnaryInfo& unary_info(const std::string& name);

Type unary_type(const Op& op, const std::vector<Type>& args, const Attrs&, const SourceLoc& loc) {
    const auto& t = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    Domain d = unary_info(op.name).domain;
    check_domain(op.name, d, t.dtype, true, loc);
    return args[0];
}

Ref<Op> make_unary(const std::string& name, graph::ComputeRule compute) {
    return make_op({.name = name,
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<graph::NoAttrs>,
                    .infer_type = unary_type,
                    .compute = compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "elementwise " + name});
}

PrimExpr relu_fn(PrimExpr x) {
    return max(x, make_const(x.dtype(), 0));
}
PrimExpr negative_fn(PrimExpr x) {
    return -x;
}
PrimExpr logical_not_fn(PrimExpr x) {
    return !x;
}
// ~x: every bit flipped (two's complement: -1 - x); logical not of a bool.
PrimExpr bitwise_not_fn(PrimExpr x) {
    if (x.dtype().is_bool()) return !x;
    return make_call(x.dtype(), intrin::kBitwiseNot, {x});
}
// -1, 0 or 1 by the sign of x.
PrimExpr sign_fn(PrimExpr x) {
    PrimExpr zero = make_const(x.dtype(), 0);
    PrimExpr one = make_const(x.dtype(), 1);
    if (x.dtype().is_uint()) return select(x > zero, one, zero);
    return select(x > zero, one, select(x < zero, make_const(x.dtype(), -1), zero));
}

const UnaryInfo& unary_info(const std::string& name) {
    static const std::vector<std::pair<std::string, UnaryInfo>> table = {
        {"negative", {negative_fn, Domain::Any}},
        {"abs", {te::abs, Domain::Any}},
        {"exp", {te::exp, Domain::Float}},
        {"log", {te::log, Domain::Float}},
        {"sqrt", {te::sqrt, Domain::Float}},
        {"rsqrt", {te::rsqrt, Domain::Float}},
        {"tanh", {te::tanh, Domain::Float}},
        {"sigmoid", {te::sigmoid, Domain::Float}},
        {"erf", {te::erf, Domain::Float}},
        {"floor", {te::floor, Domain::Float}},
        {"ceil", {te::ceil, Domain::Float}},
        {"round", {te::round, Domain::Float}},
        {"logical_not", {logical_not_fn, Domain::Bool}},
        {"sign", {sign_fn, Domain::Any}},
        {"sin", {te::sin, Domain::Float}},
        {"cos", {te::cos, Domain::Float}},
        {"tan", {te::tan, Domain::Float}},
        {"asin", {te::asin, Domain::Float}},
        {"acos", {te::acos, Domain::Float}},
        {"atan", {te::atan, Domain::Float}},
        {"sinh", {te::sinh, Domain::Float}},
        {"cosh", {te::cosh, Domain::Float}},
        {"asinh", {te::asinh, Domain::Float}},
        {"acosh", {te::acosh, Domain::Float}},
        {"atanh", {te::atanh, Domain::Float}},
        {"nn.relu", {relu_fn, Domain::Any}},
        {"bitwise_not", {bitwise_not_fn, Domain::IntOrBool}},
    };
    for (const auto& [n, info] : table) {
        if (n == name) return info;
    }
    internal_error() << "no unary function for " << name;
    ANVIL_UNREACHABLE();
}

// One compute per unary op, generated from the table by name.
template <const char* Name>
std::vector<te::Tensor> unary_compute_of(const std::vector<te::Tensor>& in, const Attrs&,
                                         const Type& out) {
    UnaryFn fn = unary_info(Name).fn;
    te::Tensor x = in[0];
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            return fn(x(std::vector<PrimExpr>(i.begin(), i.end())));
        },
        Name)};
}

// ---- binary -------------------------------------------------------------------------------

using BinaryFn = PrimExpr (*)(PrimExpr, PrimExpr);

struct BinaryInfo {
    BinaryFn fn;
    Domain domain;
    bool returns_bool;
};

PrimExpr add_fn(PrimExpr a, PrimExpr b) {
    return a + b;
}
PrimExpr sub_fn(PrimExpr a, PrimExpr b) {
    return a - b;
}
PrimExpr mul_fn(PrimExpr a, PrimExpr b) {
    return a * b;
}
// Integer division and remainders never trap. LLVM's sdiv/srem (x86's idiv) fault on a zero
// divisor and on INT_MIN / -1, killing the user's process, and the loop IR leaves division by
// zero undefined. So the divisor is replaced by 1 where it is 0 (or -1, for signed types) and
// those cases are given values: x / 0 = 0 and x % 0 = 0 (numpy's choice, which warns; PyTorch
// raises, ONNX leaves it undefined), x / -1 = -x wrapping (INT_MIN / -1 = INT_MIN) and x % -1
// = 0. A constant divisor folds the guard away; floating-point division is IEEE and unguarded.
struct SafeDivisor {
    PrimExpr divisor;  // b, or 1 where b is special
    PrimExpr special;  // b == 0, or b == -1 for signed types
};
SafeDivisor safe_divisor(const PrimExpr& b) {
    DataType t = b.dtype();
    PrimExpr special = eq(b, make_const(t, 0));
    if (t.is_int()) special = special || eq(b, make_const(t, -1));
    return {select(special, make_const(t, 1), b), special};
}

PrimExpr div_fn(PrimExpr a, PrimExpr b) {
    if (a.dtype().is_floating()) return a / b;
    auto [d, special] = safe_divisor(b);
    // Where b is special, a * b is the quotient wanted: 0 for b = 0, -a (wrapping) for b = -1.
    return select(special, a * b, a / d);
}
PrimExpr pow_fn(PrimExpr a, PrimExpr b) {
    return te::pow(a, b);
}
PrimExpr max_fn(PrimExpr a, PrimExpr b) {
    return max(a, b);
}
PrimExpr min_fn(PrimExpr a, PrimExpr b) {
    return min(a, b);
}
PrimExpr eq_fn(PrimExpr a, PrimExpr b) {
    return eq(a, b);
}
PrimExpr ne_fn(PrimExpr a, PrimExpr b) {
    return ne(a, b);
}
PrimExpr lt_fn(PrimExpr a, PrimExpr b) {
    return a < b;
}
PrimExpr le_fn(PrimExpr a, PrimExpr b) {
    return a <= b;
}
PrimExpr gt_fn(PrimExpr a, PrimExpr b) {
    return a > b;
}
PrimExpr ge_fn(PrimExpr a, PrimExpr b) {
    return a >= b;
}
PrimExpr and_fn(PrimExpr a, PrimExpr b) {
    return a && b;
}
PrimExpr or_fn(PrimExpr a, PrimExpr b) {
    return a || b;
}
// Truncating remainder: the sign of the dividend (C fmod; ONNX Mod with fmod=1). An integer
// remainder by 0 is 0 (safe_divisor: the remainder by the substituted 1, as by -1).
PrimExpr mod_fn(PrimExpr a, PrimExpr b) {
    if (a.dtype().is_floating()) return a % b;
    return a % safe_divisor(b).divisor;
}
// Floored remainder: the sign of the divisor (Python %; ONNX Mod with fmod=0). An integer
// remainder by 0 is 0, as for mod.
PrimExpr floor_mod_fn(PrimExpr a, PrimExpr b) {
    if (!a.dtype().is_floating()) return floormod(a, safe_divisor(b).divisor);
    PrimExpr r = a % b;
    PrimExpr zero = make_const(a.dtype(), 0);
    return select(ne(r, zero) && ne(r < zero, b < zero), r + b, r);
}

// Bitwise and/or/xor of integers; of bools they are the logical ops.
PrimExpr bitwise_and_fn(PrimExpr a, PrimExpr b) {
    if (a.dtype().is_bool()) return a && b;
    return make_call(a.dtype(), intrin::kBitwiseAnd, {a, b});
}
PrimExpr bitwise_or_fn(PrimExpr a, PrimExpr b) {
    if (a.dtype().is_bool()) return a || b;
    return make_call(a.dtype(), intrin::kBitwiseOr, {a, b});
}
PrimExpr bitwise_xor_fn(PrimExpr a, PrimExpr b) {
    if (a.dtype().is_bool()) return ne(a, b);
    return make_call(a.dtype(), intrin::kBitwiseXor, {a, b});
}

// Shifts by data define every amount (the machine's shift and the loop IR's do not): amounts in
// [0, bits) shift; any other amount, negative or too large, shifts every bit out, as if shifting
// one bit at a time: left_shift gives 0, right_shift gives 0 or, for a negative signed value, -1
// (the sign fills in). These are numpy's values and PyTorch 2's; PyTorch 1.13 on CPU leaves them
// undefined (int32/int64 take the amount modulo the width there). right_shift of a signed type
// is arithmetic, of an unsigned type logical.
PrimExpr shift_in_range(const PrimExpr& n) {
    DataType t = n.dtype();
    PrimExpr below = n < make_const(t, t.bits());
    return t.is_int() ? (n >= make_const(t, 0) && below) : below;
}
PrimExpr left_shift_fn(PrimExpr a, PrimExpr n) {
    DataType t = a.dtype();
    PrimExpr ok = shift_in_range(n), zero = make_const(t, 0);
    return select(ok, make_call(t, intrin::kShiftLeft, {a, select(ok, n, zero)}), zero);
}
PrimExpr right_shift_fn(PrimExpr a, PrimExpr n) {
    DataType t = a.dtype();
    PrimExpr ok = shift_in_range(n), zero = make_const(t, 0);
    if (t.is_int()) {  // by bits - 1: the sign everywhere
        return make_call(t, intrin::kShiftRight, {a, select(ok, n, make_const(t, t.bits() - 1))});
    }
    return select(ok, make_call(t, intrin::kShiftRight, {a, select(ok, n, zero)}), zero);
}

const BinaryInfo& binary_info(const std::string& name) {
    static const std::vector<std::pair<std::string, BinaryInfo>> table = {
        {"add", {add_fn, Domain::Any, false}},
        {"subtract", {sub_fn, Domain::Any, false}},
        {"multiply", {mul_fn, Domain::Any, false}},
        {"divide", {div_fn, Domain::Any, false}},
        {"power", {pow_fn, Domain::Float, false}},
        {"maximum", {max_fn, Domain::Any, false}},
        {"minimum", {min_fn, Domain::Any, false}},
        {"equal", {eq_fn, Domain::Any, true}},
        {"not_equal", {ne_fn, Domain::Any, true}},
        {"less", {lt_fn, Domain::Any, true}},
        {"less_equal", {le_fn, Domain::Any, true}},
        {"greater", {gt_fn, Domain::Any, true}},
        {"greater_equal", {ge_fn, Domain::Any, true}},
        {"logical_and", {and_fn, Domain::Bool, true}},
        {"logical_or", {or_fn, Domain::Bool, true}},
        {"mod", {mod_fn, Domain::Any, false}},
        {"floor_mod", {floor_mod_fn, Domain::Any, false}},
        {"bitwise_and", {bitwise_and_fn, Domain::IntOrBool, false}},
        {"bitwise_or", {bitwise_or_fn, Domain::IntOrBool, false}},
        {"bitwise_xor", {bitwise_xor_fn, Domain::IntOrBool, false}},
        {"left_shift", {left_shift_fn, Domain::Int, false}},
        {"right_shift", {right_shift_fn, Domain::Int, false}},
    };
    for (const auto& [n, info] : table) {
        if (n == name) return info;
    }
    internal_error() << "no binary function for " << name;
    ANVIL_UNREACHABLE();
}

Type binary_type(const Op& op, const std::vector<Type>& args, const Attrs&, const SourceLoc& loc) {
    const auto& a = graph::expect_tensor(args[0], loc, "input 0 of " + op.name);
    const auto& b = graph::expect_tensor(args[1], loc, "input 1 of " + op.name);
    if (a.dtype != b.dtype) {
        user_error(loc) << op.name << ": operand types " << a.dtype.str() << " and "
                        << b.dtype.str() << " differ; insert a cast";
    }
    const BinaryInfo& info = binary_info(op.name);
    check_domain(op.name, info.domain, a.dtype, false, loc);
    auto shape = broadcast_shape({a.shape, b.shape}, loc, op.name, true);
    return graph::make_tensor_type(shape, info.returns_bool ? DataType::bool_() : a.dtype);
}

template <const char* Name>
std::vector<te::Tensor> binary_compute_of(const std::vector<te::Tensor>& in, const Attrs&,
                                          const Type& out) {
    BinaryFn fn = binary_info(Name).fn;
    te::Tensor a = in[0], b = in[1];
    std::vector<PrimExpr> shape = te_shape(out);
    return {te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            return fn(a(broadcast_index(a.shape(), i, shape)),
                      b(broadcast_index(b.shape(), i, shape)));
        },
        Name)};
}

Ref<Op> make_binary(const std::string& name, graph::ComputeRule compute) {
    return make_op({.name = name,
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<graph::NoAttrs>,
                    .infer_type = binary_type,
                    .compute = compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Broadcast,
                    .description = "numpy-broadcast " + name});
}

// Names as template arguments need linkage.
#define ANVIL_NAME(id, text) constexpr char k_##id[] = text;
ANVIL_NAME(negative, "negative")
ANVIL_NAME(abs, "abs")
ANVIL_NAME(exp, "exp")
ANVIL_NAME(log, "log")
ANVIL_NAME(sqrt, "sqrt")
ANVIL_NAME(rsqrt, "rsqrt")
ANVIL_NAME(tanh, "tanh")
ANVIL_NAME(sigmoid, "sigmoid")
ANVIL_NAME(erf, "erf")
ANVIL_NAME(floor, "floor")
ANVIL_NAME(ceil, "ceil")
ANVIL_NAME(round, "round")
ANVIL_NAME(logical_not, "logical_not")
ANVIL_NAME(relu, "nn.relu")
ANVIL_NAME(sign, "sign")
ANVIL_NAME(sin, "sin")
ANVIL_NAME(cos, "cos")
ANVIL_NAME(tan, "tan")
ANVIL_NAME(asin, "asin")
ANVIL_NAME(acos, "acos")
ANVIL_NAME(atan, "atan")
ANVIL_NAME(sinh, "sinh")
ANVIL_NAME(cosh, "cosh")
ANVIL_NAME(asinh, "asinh")
ANVIL_NAME(acosh, "acosh")
ANVIL_NAME(atanh, "atanh")
ANVIL_NAME(add, "add")
ANVIL_NAME(subtract, "subtract")
ANVIL_NAME(multiply, "multiply")
ANVIL_NAME(divide, "divide")
ANVIL_NAME(power, "power")
ANVIL_NAME(maximum, "maximum")
ANVIL_NAME(minimum, "minimum")
ANVIL_NAME(equal, "equal")
ANVIL_NAME(not_equal, "not_equal")
ANVIL_NAME(less, "less")
ANVIL_NAME(less_equal, "less_equal")
ANVIL_NAME(greater, "greater")
ANVIL_NAME(greater_equal, "greater_equal")
ANVIL_NAME(logical_and, "logical_and")
ANVIL_NAME(logical_or, "logical_or")
ANVIL_NAME(mod, "mod")
ANVIL_NAME(floor_mod, "floor_mod")
ANVIL_NAME(bitwise_not, "bitwise_not")
ANVIL_NAME(bitwise_and, "bitwise_and")
ANVIL_NAME(bitwise_or, "bitwise_or")
ANVIL_NAME(bitwise_xor, "bitwise_xor")
ANVIL_NAME(left_shift, "left_shift")
ANVIL_NAME(right_shift, "right_shift")
#undef ANVIL_NAME

// ---- cast and where -----------------------------------------------------------------------

Type cast_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
               const SourceLoc& loc) {
    const auto& t = graph::expect_tensor(args[0], loc, "the input of cast");
    return graph::make_tensor_type(t.shape, static_cast<const CastAttrs&>(attrs).dtype);
}

std::vector<te::Tensor> cast_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                     const Type& out) {
    DataType to = static_cast<const CastAttrs&>(attrs).dtype;
    te::Tensor x = in[0];
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            return cast(to, x(std::vector<PrimExpr>(i.begin(), i.end())));
        },
        "cast")};
}

Type where_type(const Op& op, const std::vector<Type>& args, const Attrs&, const SourceLoc& loc) {
    const auto& c = graph::expect_tensor(args[0], loc, "the condition of where");
    const auto& x = graph::expect_tensor(args[1], loc, "input 1 of where");
    const auto& y = graph::expect_tensor(args[2], loc, "input 2 of where");
    if (!c.dtype.is_bool())
        user_error(loc) << "where: the condition has type " << c.dtype.str() << ", not bool";
    if (x.dtype != y.dtype) {
        user_error(loc) << "where: the two values have types " << x.dtype.str() << " and "
                        << y.dtype.str();
    }
    return graph::make_tensor_type(broadcast_shape({c.shape, x.shape, y.shape}, loc, "where", true),
                                   x.dtype);
}

std::vector<te::Tensor> where_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                      const Type& out) {
    te::Tensor c = in[0], x = in[1], y = in[2];
    std::vector<PrimExpr> shape = te_shape(out);
    return {te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            return select(c(broadcast_index(c.shape(), i, shape)),
                          x(broadcast_index(x.shape(), i, shape)),
                          y(broadcast_index(y.shape(), i, shape)));
        },
        "where")};
}

}  // namespace

#define ANVIL_UNARY(id)                                      \
    Ref<Op> make_##id##_op() {                               \
        return make_unary(k_##id, unary_compute_of<k_##id>); \
    }
ANVIL_UNARY(negative)
ANVIL_UNARY(abs)
ANVIL_UNARY(exp)
ANVIL_UNARY(log)
ANVIL_UNARY(sqrt)
ANVIL_UNARY(rsqrt)
ANVIL_UNARY(tanh)
ANVIL_UNARY(sigmoid)
ANVIL_UNARY(erf)
ANVIL_UNARY(floor)
ANVIL_UNARY(ceil)
ANVIL_UNARY(round)
ANVIL_UNARY(logical_not)
ANVIL_UNARY(relu)
ANVIL_UNARY(sign)
ANVIL_UNARY(sin)
ANVIL_UNARY(cos)
ANVIL_UNARY(tan)
ANVIL_UNARY(asin)
ANVIL_UNARY(acos)
ANVIL_UNARY(atan)
ANVIL_UNARY(sinh)
ANVIL_UNARY(cosh)
ANVIL_UNARY(asinh)
ANVIL_UNARY(acosh)
ANVIL_UNARY(atanh)
ANVIL_UNARY(bitwise_not)
#undef ANVIL_UNARY

#define ANVIL_BINARY(id)                                       \
    Ref<Op> make_##id##_op() {                                 \
        return make_binary(k_##id, binary_compute_of<k_##id>); \
    }
ANVIL_BINARY(add)
ANVIL_BINARY(subtract)
ANVIL_BINARY(multiply)
ANVIL_BINARY(divide)
ANVIL_BINARY(power)
ANVIL_BINARY(maximum)
ANVIL_BINARY(minimum)
ANVIL_BINARY(equal)
ANVIL_BINARY(not_equal)
ANVIL_BINARY(less)
ANVIL_BINARY(less_equal)
ANVIL_BINARY(greater)
ANVIL_BINARY(greater_equal)
ANVIL_BINARY(logical_and)
ANVIL_BINARY(logical_or)
ANVIL_BINARY(mod)
ANVIL_BINARY(floor_mod)
ANVIL_BINARY(bitwise_and)
ANVIL_BINARY(bitwise_or)
ANVIL_BINARY(bitwise_xor)
ANVIL_BINARY(left_shift)
ANVIL_BINARY(right_shift)
#undef ANVIL_BINARY

Ref<Op> make_cast_op() {
    return make_op({.name = "cast",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<CastAttrs>,
                    .infer_type = cast_type,
                    .compute = cast_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::ElemWise,
                    .description = "elementwise conversion to attrs.dtype"});
}

Ref<Op> make_where_op() {
    return make_op({.name = "where",
                    .num_inputs = 3,
                    .make_default_attrs = default_attrs<graph::NoAttrs>,
                    .infer_type = where_type,
                    .compute = where_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Broadcast,
                    .description = "select x where cond else y, numpy-broadcast"});
}

}  // namespace anvil::ops
