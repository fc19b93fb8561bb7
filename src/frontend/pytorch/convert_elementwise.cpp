// Converters of elementwise arithmetic and comparisons. TorchScript uses the same op kinds for
// tensors and for numbers (`x.size(0) * 2`), so each converter computes on import-time numbers
// as scalar expressions and on tensors as graph calls, with PyTorch's type promotion.
#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/promotion.h"
#include "ir/analyzer.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

struct ArithOp {
    const char* kind;
    const char* graph_op;
    bool comparison;
};

constexpr ArithOp kArithOps[] = {
    {"aten::add", "add", false},        {"aten::sub", "subtract", false},
    {"aten::mul", "multiply", false},   {"aten::div", "divide", false},
    {"aten::floordiv", "divide", false}, {"aten::eq", "equal", true},
    {"aten::ne", "not_equal", true},    {"aten::lt", "less", true},
    {"aten::le", "less_equal", true},   {"aten::gt", "greater", true},
    {"aten::ge", "greater_equal", true},
};

const ArithOp& arith_op(const PtContext& ctx) {
    for (const auto& op : kArithOps) {
        if (ctx.kind() == op.kind) return op;
    }
    ctx.error() << "is not an arithmetic op";
    ANVIL_UNREACHABLE();
}

// a op b on import-time numbers (Python semantics: / is true division, // floors).
PtValue scalar_arith(const PtContext& ctx, const std::string& kind, const PtValue& a,
                     const PtValue& b) {
    PrimExpr x = a.scalar, y = b.scalar;
    bool is_float = a.kind == PtValue::Float || b.kind == PtValue::Float;
    if (is_float) {
        x = cast(DataType::float64(), x);
        y = cast(DataType::float64(), y);
    } else {
        x = cast(DataType::int64(), x);
        y = cast(DataType::int64(), y);
    }
    PrimExpr r;
    PtValue::Kind out = is_float ? PtValue::Float : PtValue::Int;
    if (kind == "aten::add") {
        r = x + y;
    } else if (kind == "aten::sub") {
        r = x - y;
    } else if (kind == "aten::mul") {
        r = x * y;
    } else if (kind == "aten::div") {
        r = cast(DataType::float64(), x) / cast(DataType::float64(), y);
        out = PtValue::Float;
    } else if (kind == "aten::floordiv") {
        if (is_const_int(simplify(y), 0)) ctx.error() << "integer division by zero";
        r = is_float ? make_call(DataType::float64(), "floor", {x / y}) : floordiv(x, y);
    } else {
        out = PtValue::Bool;
        if (kind == "aten::eq") r = eq(x, y);
        if (kind == "aten::ne") r = ne(x, y);
        if (kind == "aten::lt") r = x < y;
        if (kind == "aten::le") r = x <= y;
        if (kind == "aten::gt") r = x > y;
        if (kind == "aten::ge") r = x >= y;
    }
    PtValue v = PtValue::of_int(simplify(r));
    v.kind = out;
    return v;
}

}  // namespace

// add/sub(a, b, alpha=1), mul, div(a, b, rounding_mode=None), floordiv, and the comparisons.
PtValues convert_arith(PtContext& ctx) {
    const ArithOp& op = arith_op(ctx);
    const PtValue& a = ctx.input(0);
    const PtValue& b = ctx.input(1);
    if (a.kind == PtValue::Str && b.kind == PtValue::Str && op.comparison) {
        bool same = a.str == b.str;
        if (ctx.kind() == "aten::eq") return {PtValue::of_bool(same)};
        if (ctx.kind() == "aten::ne") return {PtValue::of_bool(!same)};
    }
    bool has_alpha = (ctx.kind() == "aten::add" || ctx.kind() == "aten::sub") &&
                     ctx.num_inputs() > 2 && !ctx.is_none(2);
    if (a.is_import_time() && b.is_import_time()) {
        PtValue rhs = b;
        if (has_alpha) rhs = scalar_arith(ctx, "aten::mul", b, ctx.input(2));
        return {scalar_arith(ctx, ctx.kind(), a, rhs)};
    }
    auto [x, y] = promote_operands(ctx, 0, 1);
    DataType dt = ctx.tensor_type(x, "operand 0").dtype;
    if (has_alpha) {
        double alpha = ctx.float_arg(2);
        if (alpha != 1.0) y = ctx.call("multiply", {y, ctx.constant_scalar(dt, alpha)});
    }
    std::string rounding;
    if (ctx.kind() == "aten::div" && ctx.num_inputs() > 2 && !ctx.is_none(2)) {
        rounding = ctx.str_arg(2);
        if (rounding != "trunc" && rounding != "floor") {
            ctx.error() << "rounding_mode '" << rounding << "' is not 'trunc' or 'floor'";
        }
    }
    if (ctx.kind() == "aten::floordiv") rounding = "floor";
    if (ctx.kind() == "aten::div" && !dt.is_floating() && rounding.empty()) {
        // True division of integers gives the default float type.
        x = cast_to(ctx, x, DataType::float32());
        y = cast_to(ctx, y, DataType::float32());
    }
    Expr r = ctx.call(op.graph_op, {x, y});
    if (rounding == "floor" && !dt.is_floating()) {
        // Integer division truncates; the floored quotient is exact as (x - floor_mod(x, y)) / y.
        r = ctx.call("divide", {ctx.call("subtract", {x, ctx.call("floor_mod", {x, y})}), y});
    } else if (rounding == "floor") {
        r = ctx.call("floor", {r});
    } else if (rounding == "trunc" && dt.is_floating()) {
        Expr negative = ctx.call("less", {r, ctx.constant_scalar(dt, 0.0)});
        r = ctx.call("where", {negative, ctx.call("ceil", {r}), ctx.call("floor", {r})});
    }
    bool number = !a.tensor.defined() && !b.tensor.defined();
    PtValue out = PtValue::of_tensor(r);
    if (number || (a.is_number() && b.is_number())) {
        out.kind = op.comparison ? PtValue::Bool : (dt.is_floating() ? PtValue::Float : PtValue::Int);
    }
    return {out};
}

// Activations and unary math that are one graph op.
PtValues convert_unary(PtContext& ctx) {
    static const std::pair<const char*, const char*> kOps[] = {
        {"aten::relu", "nn.relu"},
    };
    for (const auto& [kind, op] : kOps) {
        if (ctx.kind() == kind) return {PtValue::of_tensor(ctx.call(op, {ctx.tensor(0)}))};
    }
    ctx.error() << "has no unary graph op";
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::frontend::pytorch
