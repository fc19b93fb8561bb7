// PyTorch's type promotion (promotion.h).
#include "frontend/pytorch/promotion.h"

#include <algorithm>

#include "frontend/pytorch/number_ops.h"

namespace anvil::frontend::pytorch {

namespace {

int category(DataType t) {
    if (t.is_bool()) return 0;
    return t.is_floating() ? 2 : 1;
}

// The smallest type of the higher category holding both, as torch.promote_types does.
DataType promote_types(DataType a, DataType b) {
    if (a == b) return a;
    if (category(a) != category(b)) return category(a) > category(b) ? a : b;
    if (category(a) == 2) {
        bool half_pair = a.bits() == 16 && b.bits() == 16;  // float16 with bfloat16
        if (half_pair) return DataType::float32();
        return a.bits() >= b.bits() ? a : b;
    }
    // Integers: uint8 with a signed type needs the next signed width up.
    bool ua = a.is_uint(), ub = b.is_uint();
    if (ua != ub) {
        DataType s = ua ? b : a, u = ua ? a : b;
        if (s.bits() > u.bits()) return s;
        return DataType::int_(std::min(64, u.bits() * 2));
    }
    return a.bits() >= b.bits() ? a : b;
}

struct Operand {
    int priority;  // 2: a tensor with dimensions, 1: a 0-d tensor, 0: a number
    DataType dtype;
};

Operand operand(const PtContext& ctx, size_t i) {
    const PtValue& v = ctx.input(i);
    if (v.kind == PtValue::Tensor) {
        const auto& t = ctx.tensor_type(v.tensor, "operand " + std::to_string(i));
        return {t.ndim() == 0 ? 1 : 2, t.dtype};
    }
    if (v.is_number()) {
        DataType d = v.kind == PtValue::Float  ? DataType::float32()
                     : v.kind == PtValue::Bool ? DataType::bool_()
                                               : DataType::int64();
        return {0, d};
    }
    ctx.error() << "operand " << i << " must be a tensor or a number, got " << kind_name(v.kind);
    ANVIL_UNREACHABLE();
}

}  // namespace

DataType promoted_dtype(const PtContext& ctx, std::initializer_list<size_t> indices) {
    std::vector<Operand> ops;
    for (size_t i : indices) ops.push_back(operand(ctx, i));
    std::optional<DataType> result;
    for (int priority = 2; priority >= 0; --priority) {
        std::optional<DataType> group;
        for (const auto& o : ops) {
            if (o.priority != priority) continue;
            group = group ? promote_types(*group, o.dtype) : o.dtype;
        }
        if (!group) continue;
        if (!result) {
            result = group;
        } else if (category(*group) > category(*result)) {
            // A number of a higher category takes its category's default type; a 0-d tensor
            // keeps its own.
            result = priority == 0 ? *group : promote_types(*group, *group);
        }
    }
    return *result;
}

std::pair<graph::Expr, graph::Expr> promote_operands(const PtContext& ctx, size_t i, size_t j) {
    DataType t = promoted_dtype(ctx, {i, j});
    return {operand_as(ctx, i, t), operand_as(ctx, j, t)};
}

graph::Expr operand_as(const PtContext& ctx, size_t i, DataType t) {
    const PtValue& v = ctx.input(i);
    // A number goes straight to `t` (a constant of it): through its own type first, 0.1 would
    // be rounded to float32 before becoming a float64.
    if (v.is_import_time()) {
        if (graph::Expr e = number_tensor_of(ctx, v, t); e.defined()) return e;
    }
    return cast_to(ctx, ctx.tensor(i), t);
}

PtValue elementwise_result(const PtContext& ctx, graph::Expr r,
                           std::initializer_list<size_t> indices) {
    for (size_t i : indices) {
        if (ctx.input(i).kind == PtValue::Tensor) return PtValue::of_tensor(std::move(r));
    }
    DataType t = ctx.tensor_type(r, "the result").dtype;
    PtValue::Kind fallback = t.is_bool()       ? PtValue::Bool
                             : t.is_floating() ? PtValue::Float
                                               : PtValue::Int;
    PtValue::Kind kind = output_number_kind(ctx, fallback);
    DataType kind_type = kind == PtValue::Bool    ? DataType::bool_()
                         : kind == PtValue::Float ? DataType::float32()
                                                  : DataType::int64();
    return PtValue::of_runtime_number(kind, cast_to(ctx, r, kind_type));
}

}  // namespace anvil::frontend::pytorch
