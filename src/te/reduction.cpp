#include "te/reduction.h"

#include <cmath>

#include "support/error.h"

namespace anvil::te {

namespace {

PrimExpr make_reduce(const std::string& name,
                     const std::function<PrimExpr(PrimExpr, PrimExpr)>& combine,
                     const PrimExpr& identity_value, PrimExpr source, const Axes& axis,
                     PrimExpr where) {
    for (const auto& iv : axis) {
        if (iv->kind != IterKind::Reduce) {
            user_error() << name << "(): axis '" << iv->var->name
                         << "' is not a reduction axis; create it with te::reduce_axis";
        }
    }
    if (axis.empty()) user_error() << name << "(): no reduction axis given";
    DataType t = source.dtype();
    Ref<Var> lhs = make_var("x", t), rhs = make_var("y", t);
    PrimExpr result = combine(lhs, rhs);
    if (result.dtype() != t) {
        user_error() << name << "(): the combiner returns " << result.dtype().str() << " for "
                     << t.str() << " operands";
    }
    auto reducer = make_ref<CommReducer>(lhs, rhs, result, identity_value, name);
    if (where.defined() && !where.dtype().is_bool()) {
        user_error() << name << "(): the condition " << where << " is not boolean";
    }
    if (!where.defined()) where = make_bool(true);
    return PrimExpr(new Reduce(t, reducer, std::move(source), axis, std::move(where)));
}

}  // namespace

PrimExpr sum(PrimExpr source, const Axes& axis, PrimExpr where) {
    PrimExpr id = make_const(source.dtype(), 0);
    return make_reduce(
        "sum", [](PrimExpr x, PrimExpr y) { return x + y; }, id, source, axis, where);
}

PrimExpr max(PrimExpr source, const Axes& axis, PrimExpr where) {
    PrimExpr id = min_value(source.dtype());
    if (source.dtype().is_floating()) id = make_const(source.dtype(), -INFINITY);
    return make_reduce(
        "max", [](PrimExpr x, PrimExpr y) { return anvil::max(x, y); }, id, source, axis, where);
}

PrimExpr min(PrimExpr source, const Axes& axis, PrimExpr where) {
    PrimExpr id = max_value(source.dtype());
    if (source.dtype().is_floating()) id = make_const(source.dtype(), INFINITY);
    return make_reduce(
        "min", [](PrimExpr x, PrimExpr y) { return anvil::min(x, y); }, id, source, axis, where);
}

Reducer comm_reducer(const std::function<PrimExpr(PrimExpr, PrimExpr)>& combine,
                     const std::function<PrimExpr(DataType)>& identity, const std::string& name) {
    return [=](PrimExpr source, const Axes& axis, PrimExpr where) {
        PrimExpr id = identity(source.dtype());
        if (id.dtype() != source.dtype()) {
            user_error() << name << "(): identity has type " << id.dtype().str() << ", expected "
                         << source.dtype().str();
        }
        return make_reduce(name, combine, id, std::move(source), axis, std::move(where));
    };
}

}  // namespace anvil::te
