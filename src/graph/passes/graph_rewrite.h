// What the rewriting passes share: applying a rewrite to each function of a module, recognising
// op calls by name, and reading and making constant tensors.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/constant_values.h"
#include "graph/expr_functor.h"
#include "graph/passes/passes.h"
#include "support/error.h"

namespace anvil::graph {

// Applies `rewrite` to every non-primitive function of the module.
IRModule rewrite_functions(const IRModule& m,
                           const std::function<Ref<Function>(const Ref<Function>&)>& rewrite);

// The call when `e` calls the op named `name`, else null.
const Call* as_op_call(const Expr& e, const std::string& name);
// The op named `name` in the op table (ops/op_table.h); InternalError when there is none (a pass
// creates only ops that exist). Never null.
const Op* find_op(const std::string& name);

// The body of `f` with `args` in place of its parameters, each variable it binds with a let made
// anew (a function inlined twice binds its variables once each); nested functions are left as
// they are (closed). How a call of a non-primitive function is inlined.
Expr inline_call(const Function& f, const std::vector<Expr>& args);

// The attributes of `call` as its op's struct A (ops/*.h). InternalError when they are another
// struct: a pass that reads a call through the wrong struct is our bug, not the model's.
template <typename A>
const A& attrs_of(const Call& call) {
    if (!call.attrs.defined() || std::string_view(call.attrs->type_name()) != A::kTypeName) {
        internal_error() << "a graph pass reads the attributes of " << call.op->name << " as "
                         << A::kTypeName << ", but they are "
                         << (call.attrs.defined() ? call.attrs->type_name() : "absent");
    }
    return static_cast<const A&>(*call.attrs);
}
// The attributes of `e` when it calls the op named `name`, else null.
template <typename A>
const A* call_attrs_of(const Expr& e, const std::string& name) {
    const Call* call = as_op_call(e, name);
    return call ? &attrs_of<A>(*call) : nullptr;
}

// How many times each node is used as an operand (of a call, tuple, item, let) in `body`, the
// body itself counting as one use. Walks into no nested function.
std::unordered_map<const ExprNode*, int> count_uses(const Expr& body);

// A rewrite of op calls matched on the original graph (fuse_attention, fuse_layer_norm):
// rewrite(self) sees the call as it was, whose nodes uses() counts, and returns its replacement
// built from mutate()d operands, or an undefined Expr to keep the call. A replacement of another
// type than the call's is dropped.
class CallRewriter : public ExprMutator {
public:
    CallRewriter(const PassContext& ctx, const Expr& body) : ctx_(ctx), uses_(count_uses(body)) {}

protected:
    Expr mutate_(const Call* op, const Expr& self) override;
    virtual Expr rewrite(const Expr& self) = 0;
    // How many times `e` is an operand in the original body.
    int uses(const Expr& e) const;

    const PassContext& ctx_;

private:
    std::unordered_map<const ExprNode*, int> uses_;
};

// Applies a CallRewriter `R(ctx, body)` to every non-primitive function.
template <typename R>
IRModule rewrite_calls(const IRModule& m, const PassContext& ctx) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Expr body = R(ctx, f->body).mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

// Whether `e` is a constant of static shape and float32 or float64 elements (a weight the
// rewriting passes compute with, in double).
bool is_static_float_constant(const Expr& e);

// A constant of the given static shape and float or integer dtype.
Expr make_constant_of(const std::vector<int64_t>& shape, DataType dtype,
                      const std::vector<double>& values, SourceLoc loc = {});

// clip(x, a_min=lo, a_max=hi).
Expr make_clip(const Expr& x, double lo, double hi, SourceLoc loc = {});

}  // namespace anvil::graph
