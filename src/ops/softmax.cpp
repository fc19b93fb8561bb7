// nn.softmax and nn.log_softmax along one axis, numerically stable (the row maximum is
// subtracted before exp). OutEWiseFusable: an elementwise tail fuses into the last stage.
//
// Stages: <name>_max (keep-dims max over the axis), <name>_exp = exp(x - max), <name>_sum
// (keep-dims sum of it), then the result e / sum, or x - max - log(sum).
#include "ops/softmax.h"

#include "graph/op.h"
#include "ops/axes.h"
#include "ops/op_spec.h"
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

Type softmax_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                  const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    if (!x.dtype.is_floating()) {
        user_error(loc) << op.name << " needs a floating-point input, got " << x.dtype.str();
    }
    if (x.ndim() == 0) user_error(loc) << op.name << ": the input is a scalar; it needs an axis";
    normalize_input_axis(static_cast<const SoftmaxAttrs&>(attrs).axis, x.ndim(), loc, op.name);
    return args[0];
}

std::vector<te::Tensor> softmax_compute_of(const std::string& name, bool log,
                                           const std::vector<te::Tensor>& in, const Attrs& attrs,
                                           const Type& out) {
    te::Tensor x = in[0];
    size_t ax = static_cast<size_t>(normalize_input_axis(
        static_cast<const SoftmaxAttrs&>(attrs).axis, x.ndim(), SourceLoc{}, name));
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
    te::Tensor mx = te::set_tag(
        te::compute(
            row_shape,
            [&](std::span<const PrimExpr> i) { return te::max(x(along(i, k->var)), {k}); },
            name + "_max"),
        kOpStageTag);
    te::Tensor e =
        te::set_tag(te::compute(
                        shape,
                        [&](std::span<const PrimExpr> i) {
                            return te::exp(x(along(i, i[ax])) - mx(along(i, PrimExpr(0))));
                        },
                        name + "_exp"),
                    kOpStageTag);
    te::Tensor sum = te::set_tag(
        te::compute(
            row_shape,
            [&](std::span<const PrimExpr> i) { return te::sum(e(along(i, k->var)), {k}); },
            name + "_sum"),
        kOpStageTag);
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

}  // namespace

void schedule_softmax_x86(te::Schedule& s, const te::Tensor& anchor,
                          const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    schedule_row_reduction_op(s, anchor, outputs, ctx);
}

void schedule_softmax_generic(te::Schedule& s, const te::Tensor& anchor,
                              const std::vector<te::Tensor>& outputs,
                              const te::ScheduleContext& ctx) {
    schedule_row_reduction_op_generic(s, anchor, outputs, ctx);
}

Ref<Op> make_softmax_op() {
    return make_op({.name = "nn.softmax",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<SoftmaxAttrs>,
                    .infer_type = softmax_type,
                    .compute = softmax_compute,
                    .schedule = schedule_by_target<schedule_softmax_x86, schedule_softmax_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "softmax along attrs.axis"});
}

Ref<Op> make_log_softmax_op() {
    return make_op({.name = "nn.log_softmax",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<SoftmaxAttrs>,
                    .infer_type = softmax_type,
                    .compute = log_softmax_compute,
                    .schedule = schedule_by_target<schedule_softmax_x86, schedule_softmax_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "log of softmax along attrs.axis"});
}

}  // namespace anvil::ops
