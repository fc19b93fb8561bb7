// nn.softmax and nn.log_softmax along one axis, numerically stable (the row maximum is
// subtracted before exp). OutEWiseFusable: an elementwise tail fuses into the last stage.
//
// Stages: <name>_max (keep-dims max over the axis), <name>_exp = exp(x - max), <name>_sum
// (keep-dims sum of it), then the result e / sum, or x - max - log(sum).
#include "ops/softmax.h"

#include "graph/op.h"
#include "ops/tensor_shape.h"
#include "ops/tile_schedule.h"
#include "support/error.h"
#include "te/math.h"
#include "te/reduction.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::Type;

namespace {

int64_t softmax_axis(int64_t axis, size_t ndim, const SourceLoc& loc, const std::string& op) {
    int64_t r = static_cast<int64_t>(ndim);
    if (axis < -r || axis >= r) {
        user_error(loc) << op << ": axis " << axis << " is out of range for a " << r << "-D input";
    }
    return axis < 0 ? axis + r : axis;
}

Type softmax_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                  const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    if (!x.dtype.is_floating()) {
        user_error(loc) << op.name << " needs a floating-point input, got " << x.dtype.str();
    }
    if (x.ndim() == 0) user_error(loc) << op.name << ": the input is a scalar; it needs an axis";
    softmax_axis(static_cast<const SoftmaxAttrs&>(attrs).axis, x.ndim(), loc, op.name);
    return args[0];
}

std::vector<te::Tensor> softmax_compute_of(const std::string& name, bool log,
                                           const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    te::Tensor x = in[0];
    size_t ax = static_cast<size_t>(
        softmax_axis(static_cast<const SoftmaxAttrs&>(attrs).axis, x.ndim(), SourceLoc{}, name));
    std::vector<PrimExpr> shape = te_shape(out);
    std::vector<PrimExpr> row_shape = shape;
    row_shape[ax] = make_int(DataType::int32(), 1);
    auto k = te::reduce_axis(shape[ax], "k");
    // Index `i` with the axis replaced by `v`.
    auto along = [&](std::span<const PrimExpr> i, PrimExpr v) {
        std::vector<PrimExpr> idx(i.begin(), i.end());
        idx[ax] = v;
        return idx;
    };
    te::Tensor mx = te::compute(
        row_shape, [&](std::span<const PrimExpr> i) { return te::max(x(along(i, k->var)), {k}); },
        name + "_max");
    te::Tensor e = te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            return te::exp(x(along(i, i[ax])) - mx(along(i, PrimExpr(0))));
        },
        name + "_exp");
    te::Tensor sum = te::compute(
        row_shape, [&](std::span<const PrimExpr> i) { return te::sum(e(along(i, k->var)), {k}); },
        name + "_sum");
    return {te::compute(
        shape,
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> row = along(i, PrimExpr(0)), full = along(i, i[ax]);
            if (log) return x(full) - mx(row) - te::log(sum(row));
            return e(full) / sum(row);
        },
        name)};
}

std::vector<te::Tensor> softmax_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                        const Type& out) {
    return softmax_compute_of("softmax", false, in, attrs, out);
}

std::vector<te::Tensor> log_softmax_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                            const Type& out) {
    return softmax_compute_of("log_softmax", true, in, attrs, out);
}

void schedule_softmax(te::Schedule& s, const te::Tensor& anchor,
                      const std::vector<te::Tensor>& outputs, const tir::LowerContext& target) {
    if (target.is_gpu) {
        schedule_softmax_generic(s, anchor, outputs, target);
    } else {
        schedule_softmax_x86(s, anchor, outputs, target);
    }
}

Ref<Attrs> softmax_attrs() {
    return Ref<Attrs>(new SoftmaxAttrs());
}

Ref<Op> make_softmax_like(const std::string& name, graph::ComputeRule compute,
                          const std::string& description) {
    auto op = make_ref<Op>();
    auto* o = const_cast<Op*>(op.get());
    o->name = name;
    o->num_inputs = 1;
    o->make_default_attrs = softmax_attrs;
    o->infer_type = softmax_type;
    o->compute = compute;
    o->schedule = schedule_softmax;
    o->pattern = OpPattern::OutEWiseFusable;
    o->description = description;
    return op;
}

}  // namespace

void schedule_softmax_x86(te::Schedule& s, const te::Tensor& anchor,
                          const std::vector<te::Tensor>& outputs, const tir::LowerContext& target) {
    schedule_row_reduction_op(s, anchor, outputs, target);
}

void schedule_softmax_generic(te::Schedule& s, const te::Tensor& anchor,
                              const std::vector<te::Tensor>& outputs,
                              const tir::LowerContext& target) {
    schedule_row_reduction_op_generic(s, anchor, outputs, target);
}

Ref<Op> make_softmax_op() {
    return make_softmax_like("nn.softmax", softmax_compute, "softmax along attrs.axis");
}

Ref<Op> make_log_softmax_op() {
    return make_softmax_like("nn.log_softmax", log_softmax_compute,
                             "log of softmax along attrs.axis");
}

}  // namespace anvil::ops
