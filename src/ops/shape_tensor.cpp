#include "ops/shape_tensor.h"

#include "ops/op_spec.h"
#include "ops/op_table.h"

namespace anvil::ops {

using graph::Type;

namespace {

Type shape_tensor_type(const graph::Op&, const std::vector<Type>&, const graph::Attrs& attrs,
                       const SourceLoc& loc) {
    const auto& a = attrs_as<ShapeTensorAttrs>(attrs);
    const std::vector<int64_t>& shape = a.shape;
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    if (count != static_cast<int64_t>(a.values.size())) {
        user_error(loc) << "shape_tensor: " << a.values.size() << " values do not fill a tensor of "
                        << count << " elements";
    }
    if (!a.dtype.is_integer()) {
        user_error(loc) << "shape_tensor: dtype " << a.dtype.str() << " is not an integer type";
    }
    for (const auto& v : a.values) {
        if (!v.defined() || !v.dtype().is_integer()) {
            user_error(loc) << "shape_tensor: a value is not an integer expression";
        }
    }
    return graph::make_tensor_type(shape, a.dtype);
}

}  // namespace

graph::Expr make_shape_tensor(std::vector<PrimExpr> values, std::vector<int64_t> shape,
                              DataType dtype, SourceLoc loc, std::vector<graph::Expr> after) {
    auto attrs = make_ref<ShapeTensorAttrs>();
    auto* a = const_cast<ShapeTensorAttrs*>(attrs.get());
    a->values = std::move(values);
    a->shape = std::move(shape);
    a->dtype = dtype;
    return graph::make_call(get_op("shape_tensor"), std::move(after), attrs, std::move(loc));
}

const ShapeTensorAttrs* shape_tensor_attrs(const graph::Expr& e) {
    return call_attrs<ShapeTensorAttrs>(e, "shape_tensor");
}

Ref<graph::Op> make_shape_tensor_op() {
    // No compute: the executor makes the tensor, so it is never fused, folded or lowered.
    return make_op({.name = "shape_tensor",
                    .num_inputs = -1,
                    .make_default_attrs = default_attrs<ShapeTensorAttrs>,
                    .infer_type = shape_tensor_type,
                    .pattern = graph::OpPattern::Opaque,
                    .executor_op = true,
                    .description = "an integer tensor of symbolic shape expressions"});
}

}  // namespace anvil::ops
