// What the rewriting passes share: applying a rewrite to each function of a module, recognising
// op calls by name, and reading and making constant tensors.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/expr_functor.h"
#include "graph/passes/passes.h"

namespace anvil::graph {

// Applies `rewrite` to every non-primitive function of the module.
IRModule rewrite_functions(const IRModule& m,
                           const std::function<Ref<Function>(const Ref<Function>&)>& rewrite);

// The call when `e` calls the op named `name`, else null.
const Call* as_op_call(const Expr& e, const std::string& name);
// The op named `name` in ctx.ops; null when there is no table or no such op.
const Op* find_op(const PassContext& ctx, const std::string& name);

// How many times each node is used as an operand (of a call, tuple, item, let) in `body`, the
// body itself counting as one use. Walks into no nested function.
std::unordered_map<const ExprNode*, int> count_uses(const Expr& body);

// The elements of a float or integer constant as doubles; nullopt for other expressions and
// dtypes.
std::optional<std::vector<double>> constant_values(const Expr& e);
// The value all elements of a constant share; nullopt when they differ or `e` is no constant.
std::optional<double> uniform_value(const Expr& e);
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

// Applies a CallRewriter `R(ctx, body)` to every non-primitive function; no change without
// ctx.ops (the rewrites create ops).
template <typename R>
IRModule rewrite_calls(const IRModule& m, const PassContext& ctx) {
    if (!ctx.ops) return m;
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Expr body = R(ctx, f->body).mutate(f->body);
        return body.same_as(f->body) ? f : make_function(f->params, body, f->primitive, f->loc);
    });
}

// A constant of the given static shape and float or integer dtype.
Expr make_constant_of(const std::vector<int64_t>& shape, DataType dtype,
                      const std::vector<double>& values, SourceLoc loc = {});

}  // namespace anvil::graph
