#include "ops/value_shapes.h"

#include "ops/op_spec.h"
#include "ops/op_table.h"

namespace anvil::ops {

using graph::Type;

namespace {

// Each entry of `dims` is an int64 variable (what the executor binds).
void expect_vars(const std::vector<PrimExpr>& dims, const std::string& what, const SourceLoc& loc) {
    for (const auto& d : dims) {
        const Var* v = d.as<Var>();
        if (!v || v->dtype != DataType::int64()) {
            user_error(loc) << what << " must be int64 dimension variables, not " << d;
        }
    }
}

// The static element count of an integer tensor operand.
int64_t value_count(const Type& t, const SourceLoc& loc, const std::string& what) {
    const auto& tt = graph::expect_tensor(t, loc, what);
    if (!tt.dtype.is_integer() || !tt.is_static()) {
        user_error(loc) << what << " must be an integer tensor of static shape, not "
                        << graph::type_str(t);
    }
    return tt.num_elements();
}

Type bind_values_type(const graph::Op& op, const std::vector<Type>& args, const graph::Attrs& attrs,
                      const SourceLoc& loc) {
    const auto& a = attrs_as<BindValuesAttrs>(attrs);
    if (args.empty()) user_error(loc) << op.name << " needs the value it passes on";
    int64_t count = 0;
    for (size_t i = 1; i < args.size(); ++i) {
        count += value_count(args[i], loc, "input " + std::to_string(i) + " of " + op.name);
    }
    if (count != static_cast<int64_t>(a.vars.size())) {
        user_error(loc) << op.name << ": " << a.vars.size() << " variable(s) for " << count
                        << " value(s)";
    }
    expect_vars(a.vars, op.name + "'s vars", loc);
    for (const auto& c : a.checks) {
        if (!c.defined() || !(c.dtype().is_bool() || c.dtype().is_integer())) {
            user_error(loc) << op.name << ": a check must be a condition on dimensions";
        }
    }
    return args[0];
}

Type dynamic_reshape_type(const graph::Op& op, const std::vector<Type>& args,
                          const graph::Attrs& attrs, const SourceLoc& loc) {
    const auto& a = attrs_as<DynamicReshapeAttrs>(attrs);
    const auto& x = graph::expect_tensor(args[0], loc, "the input of " + op.name);
    int64_t count = value_count(args[1], loc, "the shape of " + op.name);
    if (graph::expect_tensor(args[1], loc, "").ndim() != 1 ||
        count != static_cast<int64_t>(a.dims.size())) {
        user_error(loc) << op.name << ": the shape " << graph::type_str(args[1]) << " must be 1-D "
                        << "with one entry per result dimension (" << a.dims.size() << ")";
    }
    expect_vars(a.dims, op.name + "'s dims", loc);
    return graph::make_tensor_type(a.dims, x.dtype);
}

}  // namespace

graph::Expr make_bind_values(graph::Expr x, const std::vector<graph::Expr>& tensors,
                             std::vector<PrimExpr> vars, std::vector<PrimExpr> checks,
                             SourceLoc loc) {
    auto attrs = make_ref<BindValuesAttrs>();
    auto* a = const_cast<BindValuesAttrs*>(attrs.get());
    a->vars = std::move(vars);
    a->checks = std::move(checks);
    std::vector<graph::Expr> args{std::move(x)};
    args.insert(args.end(), tensors.begin(), tensors.end());
    return graph::make_call(get_op("bind_values"), std::move(args), attrs, std::move(loc));
}

const BindValuesAttrs* bind_values_attrs(const graph::Expr& e) {
    return call_attrs<BindValuesAttrs>(e, "bind_values");
}

const DynamicReshapeAttrs* dynamic_reshape_attrs(const graph::Expr& e) {
    return call_attrs<DynamicReshapeAttrs>(e, "dynamic_reshape");
}

Ref<graph::Op> make_bind_values_op() {
    return make_op({.name = "bind_values",
                    .num_inputs = -1,
                    .make_default_attrs = default_attrs<BindValuesAttrs>,
                    .infer_type = bind_values_type,
                    .pattern = graph::OpPattern::Opaque,
                    .executor_op = true,
                    .description = "bind dimension variables to tensor values at run time"});
}

Ref<graph::Op> make_dynamic_reshape_op() {
    return make_op({.name = "dynamic_reshape",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<DynamicReshapeAttrs>,
                    .infer_type = dynamic_reshape_type,
                    .pattern = graph::OpPattern::Opaque,
                    .executor_op = true,
                    .description = "reshape to a shape known at run time (a view, no copy)"});
}

}  // namespace anvil::ops
