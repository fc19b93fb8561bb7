// Algebraic simplification of the graph, bottom-up (operands are simplified before their users,
// so chains collapse in one walk):
//   reshape(reshape(x))           -> reshape(x) to the outer shape
//   reshape(x) of x's own shape    -> x
//   transpose(transpose(x, p), q)  -> transpose(x, p∘q), or x when that is the identity
//   cast(x) to x's own dtype       -> x
//   x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 -> x (the constant all zeros or all ones)
//   power(x, 1) -> x;  power(x, 2) -> x * x (the variance of a layer norm: pow is a call per
//                      element, several times slower than a vector multiply, and x * x is the
//                      correctly rounded square that pow(x, 2) must return anyway)
// A rewrite applies only when the result keeps the node's type (a broadcasting identity that
// grows x stays).
#include <numeric>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "ops/transform.h"

namespace anvil::graph {

namespace {

// transpose's permutation with negative axes normalized; the reversal when `axes` is empty.
std::optional<std::vector<int64_t>> permutation(const Call& call, size_t ndim) {
    const std::vector<int64_t>* axes = &attrs_of<ops::TransposeAttrs>(call).axes;
    std::vector<int64_t> perm(ndim);
    if (axes->empty()) {
        for (size_t i = 0; i < ndim; ++i) perm[i] = static_cast<int64_t>(ndim - 1 - i);
        return perm;
    }
    if (axes->size() != ndim) return std::nullopt;
    for (size_t i = 0; i < ndim; ++i) {
        perm[i] = (*axes)[i] < 0 ? (*axes)[i] + static_cast<int64_t>(ndim) : (*axes)[i];
    }
    return perm;
}

class ExprSimplifier : public ExprMutator {
public:
    explicit ExprSimplifier(const PassContext& ctx) : ctx_(ctx) {}

protected:
    Expr mutate_(const Call* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        auto* call = e.as<Call>();
        if (!call || !call->op.defined()) return e;
        const std::string& name = call->op->name;
        if (name == "reshape") return simplify_reshape(e, *call);
        if (name == "transpose") return simplify_transpose(e, *call);
        if (name == "cast") return keeps_type(call->args[0], e) ? call->args[0] : e;
        if (name == "add" || name == "subtract" || name == "multiply" || name == "divide") {
            return simplify_identity(e, *call);
        }
        if (name == "power") return simplify_power(e, *call);
        return e;
    }

private:
    static bool keeps_type(const Expr& replacement, const Expr& e) {
        return type_equal(replacement->type, e->type);
    }

    Expr simplify_reshape(const Expr& e, const Call& call) {
        const Expr& x = call.args[0];
        if (keeps_type(x, e)) return x;
        auto* inner = as_op_call(x, "reshape");
        auto* out = e->type.as<TensorType>();
        if (!inner || !out || !out->is_static()) return e;
        for (int64_t d : out->static_shape()) {
            if (d == 0) return e;  // 0 in newshape may mean "copy this dimension"
        }
        // The outer reshape's target may use -1 or 0 relative to its input; the static result
        // shape says the same thing relative to any input.
        ops::ReshapeAttrs attrs = attrs_of<ops::ReshapeAttrs>(call);
        attrs.newshape = out->static_shape();
        attrs.dims.clear();  // symbolic entries, which would replace newshape
        Expr merged =
            make_call(call.op, {inner->args[0]}, make_ref<ops::ReshapeAttrs>(attrs), call.loc);
        return keeps_type(inner->args[0], merged) ? inner->args[0] : merged;
    }

    Expr simplify_transpose(const Expr& e, const Call& call) {
        const Expr& x = call.args[0];
        auto* xt = x->type.as<TensorType>();
        if (!xt) return e;
        auto outer = permutation(call, xt->ndim());
        if (!outer) return e;
        Expr input = x;
        std::vector<int64_t> perm = *outer;
        if (auto* inner = as_op_call(x, "transpose")) {
            auto first = permutation(*inner, xt->ndim());
            if (!first) return e;
            // out[i] = y[outer[i]] and y[j] = x[first[j]], so out[i] = x[first[outer[i]]].
            for (size_t i = 0; i < perm.size(); ++i) perm[i] = (*first)[(*outer)[i]];
            input = inner->args[0];
        }
        std::vector<int64_t> identity(perm.size());
        std::iota(identity.begin(), identity.end(), 0);
        if (perm == identity) return input;
        if (input.same_as(x)) return e;
        ops::TransposeAttrs attrs = attrs_of<ops::TransposeAttrs>(call);
        attrs.axes = perm;
        return make_call(call.op, {input}, make_ref<ops::TransposeAttrs>(attrs), call.loc);
    }

    Expr simplify_identity(const Expr& e, const Call& call) {
        const std::string& name = call.op->name;
        double unit = (name == "add" || name == "subtract") ? 0.0 : 1.0;
        bool commutes = name == "add" || name == "multiply";
        const Expr &a = call.args[0], &b = call.args[1];
        auto is_unit = [&](const Expr& c) {
            auto v = uniform_value(c);
            return v && *v == unit;
        };
        if (is_unit(b) && keeps_type(a, e)) return a;
        if (commutes && is_unit(a) && keeps_type(b, e)) return b;
        return e;
    }

    Expr simplify_power(const Expr& e, const Call& call) {
        const Expr& x = call.args[0];
        auto exponent = uniform_value(call.args[1]);
        if (!exponent || !keeps_type(x, e)) return e;
        if (*exponent == 1.0) return x;
        const Op* multiply = find_op("multiply");
        if (*exponent == 2.0) {
            return make_call(*multiply, {x, x}, multiply->make_default_attrs(), call.loc);
        }
        return e;
    }

    const PassContext& ctx_;
};

}  // namespace

IRModule simplify_expr(const IRModule& m, const PassContext& ctx) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        Expr body = ExprSimplifier(ctx).mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
