#include "te/tensor.h"

#include <unordered_set>

#include "ir/analyzer.h"
#include "ir/expr_functor.h"
#include "support/error.h"

namespace anvil::te {

namespace {

// An extent written as arithmetic of constants (a Winograd tile count, (56 + 3) / 4 * ...) as
// the constant it is: schedules, bound inference and the auto-scheduler's rules read extents
// with as_const_int, and took such an axis for a symbolic one. Symbolic extents stay as written.
PrimExpr folded_extent(const PrimExpr& e) {
    if (as_const_int(e)) return e;
    PrimExpr s = simplify(e);
    return as_const_int(s) ? s : e;
}

}  // namespace

PlaceholderOp::PlaceholderOp(std::string n, std::vector<PrimExpr> shape, DataType dtype,
                             SourceLoc l)
    : Operation(kKind, std::move(n), std::move(l)) {
    buffer = Ref<Buffer>(new Buffer(name, dtype, std::move(shape), "global", this));
}

namespace {

// Rejects a Reduce anywhere but at the top of a body: the reduction's init/update structure
// is per output element.
void check_no_nested_reduce(const PrimExpr& e, const std::string& op, const SourceLoc& loc) {
    pre_order_visit(e, [&](const PrimExpr& sub) {
        if (sub.is<Reduce>()) {
            user_error(loc) << "compute '" << op
                            << "': a reduction (sum/max/min) must be the whole body, not part of "
                               "an expression; compute it as its own tensor first";
        }
    });
}

}  // namespace

ComputeOp::ComputeOp(std::string n, std::vector<Ref<IterVar>> ax, PrimExpr b, SourceLoc l,
                     Ref<Buffer> reuse_buffer)
    : Operation(kKind, std::move(n), std::move(l)), axis(std::move(ax)), body(std::move(b)) {
    if (auto* r = body.as<Reduce>()) {
        reduce_axis = r->axis;
        check_no_nested_reduce(r->source, name, loc);
        if (r->condition.defined()) check_no_nested_reduce(r->condition, name, loc);
    } else {
        check_no_nested_reduce(body, name, loc);
    }
    std::vector<PrimExpr> shape;
    for (const auto& iv : axis) shape.push_back(iv->dom.extent);
    if (reuse_buffer.defined()) {
        buffer = reuse_buffer;
    } else {
        buffer = Ref<Buffer>(new Buffer(name, body.dtype().element_of(), shape, "global", this));
    }
    std::unordered_set<const Operation*> seen;
    pre_order_visit(body, [&](const PrimExpr& sub) {
        if (auto* load = sub.as<Load>()) {
            Ref<Operation> producer = producer_of(load->buffer);
            if (producer.defined() && seen.insert(producer.get()).second)
                inputs.push_back(producer);
        }
    });
}

Ref<Operation> producer_of(const Ref<Buffer>& buffer) {
    return Ref<Operation>(static_cast<const Operation*>(buffer->producer));
}

const std::vector<Ref<IterVar>>& Tensor::axis() const {
    static const std::vector<Ref<IterVar>> none;
    if (auto* c = op.as<ComputeOp>()) return c->axis;
    return none;
}

const std::vector<Ref<IterVar>>& Tensor::reduce_axis() const {
    static const std::vector<Ref<IterVar>> none;
    if (auto* c = op.as<ComputeOp>()) return c->reduce_axis;
    return none;
}

PrimExpr Tensor::operator()(std::vector<PrimExpr> indices) const {
    if (indices.size() != ndim()) {
        user_error(op->loc) << "tensor '" << name() << "' has " << ndim()
                            << " dimensions but is indexed with " << indices.size();
    }
    for (auto& i : indices) {
        if (!i.dtype().is_integer() || i.dtype().is_vector()) {
            user_error(op->loc) << "tensor '" << name() << "' indexed with " << i << " of type "
                                << i.dtype().str() << "; indices must be scalar integers";
        }
        if (i.dtype() != DataType::int32()) i = cast(DataType::int32(), i);
    }
    return make_load(op->buffer, std::move(indices));
}

Tensor placeholder(std::vector<PrimExpr> shape, DataType dtype, const std::string& name,
                   SourceLoc loc) {
    for (const auto& d : shape) {
        if (!d.dtype().is_integer()) {
            user_error(loc) << "placeholder '" << name << "': dimension " << d
                            << " is not an integer";
        }
        if (auto* v = as_const_int(d); v && *v < 0) {
            user_error(loc) << "placeholder '" << name << "': dimension " << *v << " is negative";
        }
    }
    if (dtype.is_vector() || dtype.is_void() || dtype.is_handle()) {
        user_error(loc) << "placeholder '" << name << "': element type " << dtype.str()
                        << " is not a scalar number type";
    }
    return Tensor(Ref<Operation>(new PlaceholderOp(name, std::move(shape), dtype, std::move(loc))));
}

Tensor compute(std::vector<PrimExpr> shape, const ComputeFn& fn, const std::string& name,
               SourceLoc loc, std::vector<std::string> axis_names) {
    static const char* kDefaultNames[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
    std::vector<Ref<IterVar>> axis;
    std::vector<PrimExpr> vars;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (!shape[d].dtype().is_integer()) {
            user_error(loc) << "compute '" << name << "': dimension " << shape[d]
                            << " is not an integer";
        }
        shape[d] = folded_extent(shape[d]);
        if (auto* v = as_const_int(shape[d]); v && *v < 0) {
            user_error(loc) << "compute '" << name << "': dimension " << d << " has extent " << *v
                            << "; extents must not be negative";
        }
        std::string axis_name = d < axis_names.size() ? axis_names[d]
                                : d < 8               ? kDefaultNames[d]
                                                      : "ax" + std::to_string(d);
        axis.push_back(make_iter_var({make_int(shape[d].dtype(), 0), shape[d]}, axis_name));
        vars.push_back(axis.back()->var);
    }
    PrimExpr body = fn(vars);
    if (!body.defined()) user_error(loc) << "compute '" << name << "': the body is empty";
    if (body.dtype().is_vector()) {
        user_error(loc) << "compute '" << name << "': the body has vector type "
                        << body.dtype().str()
                        << "; write scalar bodies and vectorize in the schedule";
    }
    return Tensor(Ref<Operation>(new ComputeOp(name, std::move(axis), body, std::move(loc))));
}

Tensor compute(std::vector<PrimExpr> shape, const std::function<PrimExpr(PrimExpr)>& fn,
               const std::string& name, SourceLoc loc) {
    if (shape.size() != 1)
        user_error(loc) << "compute '" << name << "': a 1-argument body needs a 1-d shape";
    return compute(
        std::move(shape), [&](std::span<const PrimExpr> v) { return fn(v[0]); }, name, loc);
}

Tensor compute(std::vector<PrimExpr> shape, const std::function<PrimExpr(PrimExpr, PrimExpr)>& fn,
               const std::string& name, SourceLoc loc) {
    if (shape.size() != 2)
        user_error(loc) << "compute '" << name << "': a 2-argument body needs a 2-d shape";
    return compute(
        std::move(shape), [&](std::span<const PrimExpr> v) { return fn(v[0], v[1]); }, name, loc);
}

Tensor compute(std::vector<PrimExpr> shape,
               const std::function<PrimExpr(PrimExpr, PrimExpr, PrimExpr)>& fn,
               const std::string& name, SourceLoc loc) {
    if (shape.size() != 3)
        user_error(loc) << "compute '" << name << "': a 3-argument body needs a 3-d shape";
    return compute(
        std::move(shape), [&](std::span<const PrimExpr> v) { return fn(v[0], v[1], v[2]); }, name,
        loc);
}

Tensor compute(std::vector<PrimExpr> shape,
               const std::function<PrimExpr(PrimExpr, PrimExpr, PrimExpr, PrimExpr)>& fn,
               const std::string& name, SourceLoc loc) {
    if (shape.size() != 4)
        user_error(loc) << "compute '" << name << "': a 4-argument body needs a 4-d shape";
    return compute(
        std::move(shape), [&](std::span<const PrimExpr> v) { return fn(v[0], v[1], v[2], v[3]); },
        name, loc);
}

Ref<IterVar> reduce_axis(PrimExpr extent, const std::string& name) {
    return reduce_axis(Range{make_int(extent.dtype(), 0), extent}, name);
}

Ref<IterVar> reduce_axis(Range range, const std::string& name) {
    range.extent = folded_extent(range.extent);
    if (auto* v = as_const_int(range.extent); v && *v <= 0) {
        user_error() << "reduce_axis '" << name << "' has extent " << *v << "; it must be positive";
    }
    return make_iter_var(std::move(range), name, IterKind::Reduce);
}

Tensor set_tag(Tensor t, std::string tag) {
    const_cast<Operation*>(t.op.get())->tag = std::move(tag);
    return t;
}

}  // namespace anvil::te
