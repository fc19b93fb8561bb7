// Small compositions of graph ops that importers share.
#include "frontend/composite_ops.h"

#include "ops/dense.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/string.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

Expr cast_to(const NodeBuilder& ctx, const Expr& x, DataType dtype) {
    DataType from = ctx.tensor_type(x, "the input").dtype;
    if (from == dtype) return x;
    // Strings never reach a kernel: the executor formats and parses them.
    if (dtype.is_string()) return ops::make_string_format(x, ctx.loc());
    if (from.is_string()) return ops::make_string_parse(x, dtype, ctx.loc());
    auto attrs = make_ref<ops::CastAttrs>();
    const_cast<ops::CastAttrs*>(attrs.get())->dtype = dtype;
    return ctx.call("cast", {x}, attrs);
}

Expr reshape_to(const NodeBuilder& ctx, const Expr& x, const std::vector<int64_t>& shape) {
    if (runtime::NDArray data = constant_data(x); data.defined()) {
        runtime::NDArray out = runtime::NDArray::empty(shape, data.dtype());
        out.copy_from(data.raw_data(), data.nbytes());
        return ctx.constant(out);
    }
    auto [attrs, a] = new_attrs<ops::ReshapeAttrs>();
    a->newshape = shape;
    a->allowzero = true;  // the shape is exact
    return ctx.call("reshape", {x}, attrs);
}

Expr expand_dims(const NodeBuilder& ctx, const Expr& x, int64_t axis) {
    auto [attrs, a] = new_attrs<ops::ExpandDimsAttrs>();
    a->axis = axis;
    return ctx.call("expand_dims", {x}, attrs);
}

Expr reduce_over(const NodeBuilder& ctx, const char* op, const Expr& x, int64_t axis) {
    auto attrs = make_ref<ops::ReduceAttrs>();
    const_cast<ops::ReduceAttrs*>(attrs.get())->axes = {axis};
    return ctx.call(op, {x}, attrs);
}

Expr take_along(const NodeBuilder& ctx, const Expr& x, const Expr& index, int64_t axis) {
    auto [attrs, a] = new_attrs<ops::TakeAttrs>();
    a->axis = axis;
    return ctx.call("take", {x, index}, attrs);
}

Expr concatenate_along(const NodeBuilder& ctx, std::vector<Expr> parts, int64_t axis) {
    auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
    a->axis = axis;
    return ctx.call("concatenate", std::move(parts), attrs);
}

Expr add_bias(const NodeBuilder& ctx, const Expr& y, const Expr& bias, int64_t axis) {
    if (!bias.defined()) return y;
    auto [attrs, a] = new_attrs<ops::BiasAddAttrs>();
    a->axis = axis;
    return ctx.call("nn.bias_add", {y, bias}, attrs);
}

Expr iota(const NodeBuilder& ctx, const PrimExpr& length, Expr start) {
    DataType dt = ctx.tensor_type(start, "the start").dtype;
    auto attrs = make_ref<ops::ArangeAttrs>();
    const_cast<ops::ArangeAttrs*>(attrs.get())->length = {length};
    return ctx.call("arange", {std::move(start), ctx.constant_scalar(dt, 1.0)}, attrs);
}

std::vector<PrimExpr> normalized_axes(const std::vector<PrimExpr>& axes, int64_t rank,
                                      std::vector<PrimExpr>* checks) {
    PrimExpr r = make_int(DataType::int64(), rank);
    std::vector<PrimExpr> out;
    for (const auto& a : axes) {
        checks->push_back(a >= -r && a < r);
        out.push_back(select(a < 0, a + r, a));
    }
    for (size_t i = 0; i < out.size(); ++i) {
        for (size_t j = i + 1; j < out.size(); ++j) checks->push_back(ne(out[i], out[j]));
    }
    return out;
}

}  // namespace anvil::frontend
