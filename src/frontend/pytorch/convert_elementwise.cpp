// Converters of binary elementwise ops: arithmetic, comparisons, logical and bitwise ops, shifts,
// on tensors and numbers alike. TorchScript uses the same op kinds for both (`x.size(0) * 2`, `x *
// 2`), so each converter evaluates numbers known at import time with Python's semantics
// (number_ops.h), including the 0-d tensors traced size arithmetic passes around, and builds
// graph calls for tensors with PyTorch's type promotion (promotion.h). Lists and strings take
// part where TorchScript allows them (`shape + [1]`, `[1] * n`, `a == b`).
#include <cmath>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/number_ops.h"
#include "frontend/pytorch/promotion.h"
#include "ir/analyzer.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

enum class Binary {
    Add,
    Sub,
    Rsub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Fmod,
    Pow,
    Minimum,
    Maximum,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    BitAnd,
    BitOr,
    BitXor,
    LeftShift,
    RightShift,
};

struct BinaryKind {
    const char* kind;
    Binary op;
};

constexpr BinaryKind kBinaryKinds[] = {
    {"aten::add", Binary::Add},
    {"aten::sub", Binary::Sub},
    {"aten::subtract", Binary::Sub},
    {"aten::rsub", Binary::Rsub},
    {"aten::mul", Binary::Mul},
    {"aten::multiply", Binary::Mul},
    {"aten::div", Binary::Div},
    {"aten::divide", Binary::Div},
    {"aten::true_divide", Binary::Div},
    {"aten::floordiv", Binary::FloorDiv},
    {"aten::floor_divide", Binary::FloorDiv},
    {"aten::remainder", Binary::Mod},
    {"aten::fmod", Binary::Fmod},
    {"aten::pow", Binary::Pow},
    {"aten::minimum", Binary::Minimum},
    {"aten::min", Binary::Minimum},  // min.other, from convert_max_min
    {"prim::min", Binary::Minimum},
    {"aten::maximum", Binary::Maximum},
    {"aten::max", Binary::Maximum},  // max.other
    {"prim::max", Binary::Maximum},
    {"aten::eq", Binary::Eq},
    {"aten::ne", Binary::Ne},
    {"aten::not_equal", Binary::Ne},
    {"aten::lt", Binary::Lt},
    {"aten::less", Binary::Lt},
    {"aten::le", Binary::Le},
    {"aten::less_equal", Binary::Le},
    {"aten::gt", Binary::Gt},
    {"aten::greater", Binary::Gt},
    {"aten::ge", Binary::Ge},
    {"aten::greater_equal", Binary::Ge},
    {"aten::logical_and", Binary::LogicalAnd},
    {"aten::logical_or", Binary::LogicalOr},
    {"aten::logical_xor", Binary::LogicalXor},
    {"aten::__and__", Binary::BitAnd},
    // The traced `a &= b`: the tracer passes the result on as `a`.
    {"aten::__iand__", Binary::BitAnd},
    {"aten::__ior__", Binary::BitOr},
    {"aten::__ixor__", Binary::BitXor},
    {"aten::bitwise_and", Binary::BitAnd},
    {"aten::__or__", Binary::BitOr},
    {"aten::bitwise_or", Binary::BitOr},
    {"aten::__xor__", Binary::BitXor},
    {"aten::bitwise_xor", Binary::BitXor},
    {"aten::__lshift__", Binary::LeftShift},
    {"aten::__ilshift__", Binary::LeftShift},
    {"aten::bitwise_left_shift", Binary::LeftShift},
    {"aten::__rshift__", Binary::RightShift},
    {"aten::__irshift__", Binary::RightShift},
    {"aten::bitwise_right_shift", Binary::RightShift},
};

Binary binary_op(const PtContext& ctx) {
    for (const auto& k : kBinaryKinds) {
        if (ctx.kind() == k.kind) return k.op;
    }
    ctx.error() << "is not a binary elementwise op";
    ANVIL_UNREACHABLE();
}

bool is_comparison(Binary op) {
    return op >= Binary::Eq && op <= Binary::Ge;
}
bool is_logical(Binary op) {
    return op >= Binary::LogicalAnd && op <= Binary::LogicalXor;
}

NumOp number_op(Binary op) {
    switch (op) {
        case Binary::Add:
            return NumOp::Add;
        case Binary::Sub:
        case Binary::Rsub:
            return NumOp::Sub;
        case Binary::Mul:
            return NumOp::Mul;
        case Binary::Div:
            return NumOp::Div;
        case Binary::FloorDiv:
            return NumOp::FloorDiv;
        case Binary::Mod:
            return NumOp::Mod;
        case Binary::Fmod:
            return NumOp::Fmod;
        case Binary::Pow:
            return NumOp::Pow;
        case Binary::Minimum:
            return NumOp::Min;
        case Binary::Maximum:
            return NumOp::Max;
        case Binary::Eq:
            return NumOp::Eq;
        case Binary::Ne:
            return NumOp::Ne;
        case Binary::Lt:
            return NumOp::Lt;
        case Binary::Le:
            return NumOp::Le;
        case Binary::Gt:
            return NumOp::Gt;
        case Binary::Ge:
            return NumOp::Ge;
        case Binary::LogicalAnd:
        case Binary::BitAnd:
            return NumOp::And;
        case Binary::LogicalOr:
        case Binary::BitOr:
            return NumOp::Or;
        case Binary::LogicalXor:
        case Binary::BitXor:
            return NumOp::Xor;
        case Binary::LeftShift:
            return NumOp::LeftShift;
        case Binary::RightShift:
            return NumOp::RightShift;
    }
    ANVIL_UNREACHABLE();
}

// The operand holding alpha (add/sub/rsub) or rounding_mode (div), when the node has one.
bool has_operand(const PtContext& ctx, size_t i) {
    return ctx.num_inputs() > i && !ctx.is_none(i);
}

std::string rounding_mode(const PtContext& ctx, Binary op) {
    if (op == Binary::FloorDiv) return "floor";
    if (op != Binary::Div || ctx.kind() == "aten::true_divide" || !has_operand(ctx, 2)) return "";
    std::string mode = ctx.str_arg(2);
    if (mode != "trunc" && mode != "floor") {
        ctx.error() << "rounding_mode '" << mode << "' is not 'trunc' or 'floor'";
    }
    return mode;
}

// ---- lists and strings --------------------------------------------------------------------

bool is_sequence(const PtValue& v) {
    return v.kind == PtValue::List || v.kind == PtValue::Tuple;
}

// Whether two import-time values are equal: a bool expression (sizes may be symbolic).
PrimExpr values_equal(const PtContext& ctx, const PtValue& a, const PtValue& b) {
    if (is_sequence(a) && is_sequence(b)) {
        if (a.items.size() != b.items.size()) return make_bool(false);
        PrimExpr all = make_bool(true);
        for (size_t i = 0; i < a.items.size(); ++i) {
            all = all && values_equal(ctx, a.items[i], b.items[i]);
        }
        return simplify(all);
    }
    bool named = a.kind == PtValue::Str || a.kind == PtValue::Device;
    if (named || b.kind == PtValue::Str || b.kind == PtValue::Device) {
        return make_bool(a.kind == b.kind && a.str == b.str);
    }
    if (a.kind == PtValue::None || b.kind == PtValue::None) return make_bool(a.kind == b.kind);
    if (a.is_import_time() && b.is_import_time()) {
        return number_binary(ctx, NumOp::Eq, a, b)->scalar;
    }
    ctx.error() << "compares a " << kind_name(a.kind) << " with a " << kind_name(b.kind)
                << " whose values are not known at import time";
    ANVIL_UNREACHABLE();
}

// list + list, list * n, n * list, == and != of lists and strings, str + str; nullopt when the
// operands are not lists or strings.
std::optional<PtValue> sequence_op(const PtContext& ctx, Binary op) {
    const PtValue& a = ctx.input(0);
    const PtValue& b = ctx.input(1);
    bool seq = is_sequence(a) || is_sequence(b);
    bool str = a.kind == PtValue::Str || b.kind == PtValue::Str || a.kind == PtValue::Device ||
               b.kind == PtValue::Device;
    if (!seq && !str) return std::nullopt;
    if (op == Binary::Eq || op == Binary::Ne) {
        PrimExpr same = values_equal(ctx, a, b);
        return make_number(PtValue::Bool, op == Binary::Eq ? same : !same);
    }
    if (op == Binary::Add && a.kind == b.kind && (a.kind == PtValue::Str || seq)) {
        if (a.kind == PtValue::Str) return PtValue::of_str(a.str + b.str);
        std::vector<PtValue> items = a.items;
        items.insert(items.end(), b.items.begin(), b.items.end());
        return PtValue::of_list(std::move(items), a.kind);
    }
    if (op == Binary::Mul && seq) {
        const PtValue& list = is_sequence(a) ? a : b;
        int64_t n = ctx.int_arg(is_sequence(a) ? 1 : 0);
        // A list the size of a model's shapes and arguments, not a data structure.
        constexpr int64_t kMaxItems = int64_t{1} << 20;
        if (n > 0 && static_cast<int64_t>(list.items.size()) > kMaxItems / n) {
            ctx.error() << "repeats a list of " << list.items.size() << " items " << n
                        << " times; at most " << kMaxItems << " items are supported";
        }
        std::vector<PtValue> items;
        for (int64_t k = 0; k < n; ++k)
            items.insert(items.end(), list.items.begin(), list.items.end());
        return PtValue::of_list(std::move(items), list.kind);
    }
    ctx.error() << "is not defined for a " << kind_name(a.kind) << " and a " << kind_name(b.kind);
    ANVIL_UNREACHABLE();
}

// ---- numbers known at import time ---------------------------------------------------------

// The element type the tensor path gives for operands of promoted type `t`.
DataType result_dtype(Binary op, DataType t, const std::string& rounding) {
    if (is_comparison(op) || is_logical(op)) return DataType::bool_();
    if (op == Binary::Div && rounding.empty() && !t.is_floating()) return DataType::float32();
    return t;
}

bool is_zero_number(const PrimExpr& e) {
    PrimExpr s = simplify(e);
    const auto* f = s.as<FloatImm>();
    return is_zero(s) || (f && f->value == 0);
}

// The node evaluated at import time when every operand is known then; nullopt otherwise.
std::optional<PtValue> fold_numbers(const PtContext& ctx, Binary op, const std::string& rounding) {
    auto a = known_number(ctx, ctx.input(0));
    auto b = known_number(ctx, ctx.input(1));
    if (!a || !b) return std::nullopt;
    bool any_tensor = ctx.input(0).kind == PtValue::Tensor || ctx.input(1).kind == PtValue::Tensor;
    bool dividing =
        op == Binary::Div || op == Binary::FloorDiv || op == Binary::Mod || op == Binary::Fmod;
    if (any_tensor && dividing && is_zero_number(b->scalar)) {
        return std::nullopt;  // a tensor divided by zero is inf or nan, not an import error
    }
    if (any_tensor && (op == Binary::LeftShift || op == Binary::RightShift)) {
        // Numbers shift as int64 and refuse negative amounts; a tensor's shift is the graph
        // op's (any amount, its own width). They agree on int64 by amounts in [0, 64).
        const std::optional<int64_t> n = known_int(b->scalar);
        bool agree = promoted_dtype(ctx, {0, 1}) == DataType::int64() && n && *n >= 0 && *n < 64;
        if (!agree) return std::nullopt;
    }
    if (is_logical(op)) {  // logical ops read any number as a bool
        a = number_as(*a, PtValue::Bool);
        b = number_as(*b, PtValue::Bool);
    }
    if (op == Binary::Rsub) std::swap(a, b);
    bool has_alpha =
        (op == Binary::Add || op == Binary::Sub || op == Binary::Rsub) && has_operand(ctx, 2);
    if (has_alpha) {
        auto alpha = known_number(ctx, ctx.input(2));
        if (!alpha) return std::nullopt;
        auto scaled = number_binary(ctx, NumOp::Mul, *(op == Binary::Rsub ? a : b), *alpha);
        if (!scaled) return std::nullopt;
        (op == Binary::Rsub ? a : b) = scaled;
    }
    std::optional<PtValue> r;
    if (rounding == "floor") {
        r = number_binary(ctx, NumOp::FloorDiv, *a, *b);
    } else if (rounding == "trunc") {
        r = number_binary(ctx, NumOp::Div, *a, *b);
        if (r) r = number_unary(ctx, NumFn::Trunc, *r);
    } else {
        r = number_binary(ctx, number_op(op), *a, *b);
    }
    if (!r) return std::nullopt;
    if (!any_tensor) return number_as(*r, output_number_kind(ctx, r->kind));
    // 0-d tensors: the result is a 0-d tensor of the type the graph would have given.
    DataType t = result_dtype(op, promoted_dtype(ctx, {0, 1}), rounding);
    Expr e = number_tensor_of(ctx, *r, t);
    if (!e.defined()) return std::nullopt;
    return PtValue::of_tensor(e);
}

// ---- tensors ------------------------------------------------------------------------------

// x ** n for an integer tensor and a constant n >= 0: repeated squaring, exact (and wrapping
// around on overflow) as PyTorch's integer pow is.
Expr integer_power(const PtContext& ctx, Expr x, int64_t n) {
    DataType t = ctx.tensor_type(x, "the base").dtype;
    Expr result;
    for (; n > 0; n >>= 1) {
        if (n & 1) result = result.defined() ? ctx.call("multiply", {result, x}) : x;
        if (n > 1) x = ctx.call("multiply", {x, x});
    }
    if (!result.defined()) {
        return ctx.call("add", {ctx.call("multiply", {x, scalar_constant(ctx, t, 0)}),
                                scalar_constant(ctx, t, 1)});
    }
    return result;
}

Expr tensor_power(const PtContext& ctx, const Expr& x, const Expr& y, DataType t) {
    const PtValue& exponent = ctx.input(1);
    if (t.is_bool()) ctx.error() << "pow of bool tensors is not supported";
    if (exponent.is_import_time()) {
        double e = ctx.float_arg(1);
        if (!t.is_floating()) {
            if (e != std::trunc(e)) ctx.error() << "an integer tensor to the power " << e;
            if (e < 0) ctx.error() << "integers to negative integer powers are not allowed";
            if (e >= 9.2e18) ctx.error() << "the exponent " << e << " is too large";
            return integer_power(ctx, x, static_cast<int64_t>(e));
        }
        // The common exponents as the exact operations they are.
        if (e == 1) return x;
        if (e == 2) return ctx.call("multiply", {x, x});
        if (e == 0.5) return ctx.call("sqrt", {x});
        if (e == -1) return ctx.call("divide", {scalar_constant(ctx, t, 1), x});
        return ctx.call("power", {x, y});
    }
    if (t.is_floating()) return ctx.call("power", {x, y});
    // Integer tensors to tensor powers: in float64, exact up to 2^53.
    Expr p = ctx.call("power",
                      {cast_to(ctx, x, DataType::float64()), cast_to(ctx, y, DataType::float64())});
    return cast_to(ctx, ctx.call("round", {p}), t);
}

Expr floor_divide(const PtContext& ctx, const Expr& x, const Expr& y, DataType t) {
    if (t.is_floating()) return ctx.call("floor", {ctx.call("divide", {x, y})});
    // Integer division truncates; the floored quotient is one less where the truncated
    // remainder is non-zero and its sign differs from the divisor's. ((x - floor_mod(x, y)) / y
    // overflows near INT_MIN.) By 0 it is 0, as the divide op defines it.
    Expr zero = scalar_constant(ctx, t, 0);
    Expr r = ctx.call("mod", {x, y});
    Expr signs_differ =
        ctx.call("not_equal", {ctx.call("less", {r, zero}), ctx.call("less", {y, zero})});
    Expr inexact = ctx.call("logical_and", {ctx.call("not_equal", {r, zero}), signs_differ});
    return ctx.call("subtract", {ctx.call("divide", {x, y}), cast_to(ctx, inexact, t)});
}

Expr as_bool(const PtContext& ctx, size_t i) {
    Expr x = ctx.tensor(i);
    DataType t = ctx.tensor_type(x, "operand " + std::to_string(i)).dtype;
    if (t.is_bool()) return x;
    return ctx.call("not_equal", {x, scalar_constant(ctx, t, 0)});
}

Expr tensor_binary(const PtContext& ctx, Binary op, const std::string& rounding) {
    if (is_logical(op)) {
        Expr a = as_bool(ctx, 0), b = as_bool(ctx, 1);
        if (op == Binary::LogicalAnd) return ctx.call("logical_and", {a, b});
        if (op == Binary::LogicalOr) return ctx.call("logical_or", {a, b});
        return ctx.call("not_equal", {a, b});
    }
    auto [x, y] = promote_operands(ctx, 0, 1);
    DataType t = ctx.tensor_type(x, "operand 0").dtype;
    auto no_bool = [&](const char* what) {
        if (t.is_bool()) {
            ctx.error() << what << " of bool tensors is not supported (by PyTorch either)";
        }
    };
    if (op == Binary::Rsub) std::swap(x, y);
    if ((op == Binary::Add || op == Binary::Sub || op == Binary::Rsub) && has_operand(ctx, 2)) {
        double alpha = ctx.float_arg(2);
        if (alpha != 1.0) y = ctx.call("multiply", {y, scalar_constant(ctx, t, alpha)});
    }
    switch (op) {
        case Binary::Add:
            return ctx.call(t.is_bool() ? "logical_or" : "add", {x, y});
        case Binary::Sub:
        case Binary::Rsub:
            no_bool("subtraction");
            return ctx.call("subtract", {x, y});
        case Binary::Mul:
            return ctx.call(t.is_bool() ? "logical_and" : "multiply", {x, y});
        case Binary::Div:
        case Binary::FloorDiv:
            if (rounding.empty()) {
                if (!t.is_floating()) {  // true division of integers gives the default float
                    x = cast_to(ctx, x, DataType::float32());
                    y = cast_to(ctx, y, DataType::float32());
                }
                return ctx.call("divide", {x, y});
            }
            no_bool("rounded division");
            if (rounding == "floor") return floor_divide(ctx, x, y, t);
            if (t.is_floating()) {  // trunc
                Expr q = ctx.call("divide", {x, y});
                Expr negative = ctx.call("less", {q, scalar_constant(ctx, t, 0)});
                return ctx.call("where", {negative, ctx.call("ceil", {q}), ctx.call("floor", {q})});
            }
            return ctx.call("divide", {x, y});  // integer division truncates
        case Binary::Mod:
            no_bool("remainder");
            return ctx.call("floor_mod", {x, y});
        case Binary::Fmod:
            no_bool("fmod");
            return ctx.call("mod", {x, y});
        case Binary::Pow:
            return tensor_power(ctx, x, y, t);
        case Binary::Minimum:
            return ctx.call(t.is_bool() ? "logical_and" : "minimum", {x, y});
        case Binary::Maximum:
            return ctx.call(t.is_bool() ? "logical_or" : "maximum", {x, y});
        case Binary::BitAnd:
        case Binary::BitOr:
        case Binary::BitXor:
            if (t.is_floating()) {
                ctx.error() << "bitwise and/or/xor of " << t.str()
                            << " tensors is not supported (by PyTorch either)";
            }
            if (t.is_bool()) {  // the logical ops, which the graph simplifies best
                if (op == Binary::BitAnd) return ctx.call("logical_and", {x, y});
                if (op == Binary::BitOr) return ctx.call("logical_or", {x, y});
                return ctx.call("not_equal", {x, y});
            }
            if (op == Binary::BitAnd) return ctx.call("bitwise_and", {x, y});
            if (op == Binary::BitOr) return ctx.call("bitwise_or", {x, y});
            return ctx.call("bitwise_xor", {x, y});
        case Binary::LeftShift:
        case Binary::RightShift:
            // Right shifts of signed types are arithmetic. Amounts outside [0, bits) shift every
            // bit out (0, or -1 for a negative value shifted right), where PyTorch 1.13 on CPU
            // is undefined (int32 and int64 take the amount modulo the width).
            if (t.is_floating() || t.is_bool()) {
                ctx.error() << "shifts of " << t.str()
                            << " tensors are not supported (by PyTorch either)";
            }
            return ctx.call(op == Binary::LeftShift ? "left_shift" : "right_shift", {x, y});
        default:
            break;
    }
    // Comparisons. Bools order as 0 < 1.
    static const char* const kCompare[] = {"equal",      "not_equal", "less",
                                           "less_equal", "greater",   "greater_equal"};
    if (t.is_bool() && op != Binary::Eq && op != Binary::Ne) {
        x = cast_to(ctx, x, DataType::uint(8));
        y = cast_to(ctx, y, DataType::uint(8));
    }
    return ctx.call(kCompare[static_cast<int>(op) - static_cast<int>(Binary::Eq)], {x, y});
}

}  // namespace

// add/sub/rsub(a, b, alpha=1), mul, div(a, b, rounding_mode=None), true_divide, floordiv,
// floor_divide, remainder, fmod, pow, minimum/maximum, comparisons, logical and bitwise ops,
// shifts.
PtValues convert_binary(PtContext& ctx) {
    Binary op = binary_op(ctx);
    if (auto v = sequence_op(ctx, op)) return {*v};
    std::string rounding = rounding_mode(ctx, op);
    if (auto v = fold_numbers(ctx, op, rounding)) return {*v};
    return {elementwise_result(ctx, tensor_binary(ctx, op, rounding), {0, 1})};
}

// prim::min / prim::max of numbers: of two numbers, or of a list of them.
PtValues convert_number_min_max(PtContext& ctx) {
    const PtValue& a = ctx.input(0);
    if (ctx.num_inputs() == 2) {
        if (is_sequence(a)) ctx.error() << "min/max of two lists is not supported";
        return convert_binary(ctx);
    }
    if (!is_sequence(a)) ctx.error() << "min/max of a " << kind_name(a.kind);
    if (a.items.empty()) ctx.error() << "min/max of an empty list";
    NumOp op = ctx.kind() == "prim::min" ? NumOp::Min : NumOp::Max;
    PtValue acc = a.items[0];
    for (size_t i = 1; i < a.items.size(); ++i) {
        if (!acc.is_import_time() || !a.items[i].is_import_time()) {
            ctx.error() << "min/max of a list whose values are not known at import time";
        }
        acc = *number_binary(ctx, op, acc, a.items[i]);
    }
    if (!acc.is_import_time()) ctx.error() << "min/max of a list of " << kind_name(acc.kind);
    return {acc};
}

namespace {

// Operand i as a bool tensor (a number or tensor of another type: != 0).
Expr condition(const PtContext& ctx, size_t i) {
    Expr c = ctx.tensor(i);
    DataType t = ctx.tensor_type(c, "the condition").dtype;
    if (t.is_bool()) return c;
    return ctx.call("not_equal", {c, scalar_constant(ctx, t, 0)});
}

}  // namespace

// where(condition, a, b) with tensor or number values, in the type a and b promote to.
PtValues convert_where(PtContext& ctx) {
    if (ctx.num_inputs() == 1) {
        ctx.error() << "where(condition) with one operand (nonzero: the indices of the true "
                       "elements) is not supported; its shape depends on the values";
    }
    DataType t = promoted_dtype(ctx, {1, 2});
    Expr r = ctx.call("where", {condition(ctx, 0), operand_as(ctx, 1, t), operand_as(ctx, 2, t)});
    return {elementwise_result(ctx, r, {0, 1, 2})};
}

// lerp(start, end, weight) with a number or tensor weight, as PyTorch computes it: start +
// weight * (end - start) for weight < 0.5, end - (end - start) * (1 - weight) otherwise (exact at
// both ends).
PtValues convert_lerp(PtContext& ctx) {
    DataType t = promoted_dtype(ctx, {0, 1});
    if (!t.is_floating()) ctx.error() << "lerp of " << t.str() << " tensors is not supported";
    Expr start = operand_as(ctx, 0, t), end = operand_as(ctx, 1, t), w = operand_as(ctx, 2, t);
    Expr diff = ctx.call("subtract", {end, start});
    Expr low = ctx.call("add", {start, ctx.call("multiply", {w, diff})});
    Expr one_minus = ctx.call("subtract", {scalar_constant(ctx, t, 1), w});
    Expr high = ctx.call("subtract", {end, ctx.call("multiply", {diff, one_minus})});
    if (ctx.input(2).is_import_time())
        return {PtValue::of_tensor(ctx.float_arg(2) < 0.5 ? low : high)};
    Expr small = ctx.call("less", {w, scalar_constant(ctx, t, 0.5)});
    return {PtValue::of_tensor(ctx.call("where", {small, low, high}))};
}

// addcmul(x, a, b, value=1) = x + value * a * b; addcdiv(x, a, b, value=1) = x + value * a / b.
PtValues convert_addc(PtContext& ctx) {
    bool divide = ctx.kind() == "aten::addcdiv";
    DataType t = promoted_dtype(ctx, {0, 1, 2});
    if (divide && !t.is_floating()) {
        ctx.error() << "addcdiv of integer tensors is not supported (by PyTorch either)";
    }
    Expr x = operand_as(ctx, 0, t), a = operand_as(ctx, 1, t), b = operand_as(ctx, 2, t);
    Expr r = ctx.call(divide ? "divide" : "multiply", {a, b});
    if (ctx.num_inputs() > 3 && !ctx.is_none(3)) {
        double value = ctx.float_arg(3);
        if (value != 1.0) r = ctx.call("multiply", {r, scalar_constant(ctx, t, value)});
    }
    return {PtValue::of_tensor(ctx.call("add", {x, r}))};
}

}  // namespace anvil::frontend::pytorch
