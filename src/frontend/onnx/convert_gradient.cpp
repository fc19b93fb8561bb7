// Gradient (domain ai.onnx.preview.training): reverse-mode differentiation of the graph built so
// far. The gradient of y (seeded with ones, so a non-scalar y gives the gradient of its sum)
// flows back through the calls y depends on, each op by its rule, summed where a value feeds
// several calls and reduced over the axes an operand was broadcast along; an x that y does not
// depend on gets zeros. The rules cover elementwise arithmetic and the common unary functions; a
// path through any other op is an error naming it.
#include <cstring>
#include <unordered_map>

#include "frontend/onnx/convert_ops.h"
#include "graph/expr_functor.h"
#include "ops/reduce.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// A constant of `t`'s static shape filled with `value`.
Expr filled(ConvertContext& ctx, const graph::TensorType& t, double value) {
    runtime::NDArray a = runtime::NDArray::empty(t.static_shape(), graph::dl_dtype_of(t.dtype));
    Expr scalar = ctx.constant_scalar(t.dtype, value);
    runtime::NDArray one = constant_data(scalar);
    size_t bytes = static_cast<size_t>(t.dtype.bytes());
    for (int64_t i = 0; i < a.num_elements(); ++i) {
        std::memcpy(static_cast<uint8_t*>(a.raw_data()) + i * bytes, one.raw_data(), bytes);
    }
    return ctx.constant(a);
}

// `g` (of the broadcast result's shape) summed down to the shape of operand `x`.
Expr unbroadcast(ConvertContext& ctx, Expr g, const Expr& x) {
    std::vector<int64_t> gs = ctx.static_shape(g, "a gradient");
    std::vector<int64_t> xs = ctx.static_shape(x, "an operand");
    size_t lead = gs.size() - xs.size();
    auto reduce = [&](std::vector<int64_t> axes, bool keepdims) {
        if (axes.empty()) return;
        auto [attrs, a] = new_attrs<ops::ReduceAttrs>();
        a->axes = std::move(axes);
        a->keepdims = keepdims;
        g = ctx.call("sum", {g}, attrs);
    };
    std::vector<int64_t> leading, ones;
    for (size_t d = 0; d < lead; ++d) leading.push_back(static_cast<int64_t>(d));
    for (size_t d = 0; d < xs.size(); ++d) {
        if (xs[d] == 1 && gs[lead + d] != 1) ones.push_back(static_cast<int64_t>(d));
    }
    reduce(leading, false);
    reduce(ones, true);
    return g;
}

// The gradients of a call's arguments given the gradient `g` of its result `out`.
std::vector<Expr> argument_gradients(ConvertContext& ctx, const Expr& out, const Expr& g) {
    const auto& call = *out.as<graph::Call>();
    const std::string op = call.op.defined() ? call.op->name : "";
    const auto& args = call.args;
    auto f = [&](const char* name, std::vector<Expr> a) { return ctx.call(name, std::move(a)); };
    DataType dt = ctx.tensor_type(out, "a value").dtype;
    Expr one = ctx.constant_scalar(dt, 1), two = ctx.constant_scalar(dt, 2);
    if (op == "add") return {unbroadcast(ctx, g, args[0]), unbroadcast(ctx, g, args[1])};
    if (op == "subtract") {
        return {unbroadcast(ctx, g, args[0]), unbroadcast(ctx, f("negative", {g}), args[1])};
    }
    if (op == "multiply") {
        return {unbroadcast(ctx, f("multiply", {g, args[1]}), args[0]),
                unbroadcast(ctx, f("multiply", {g, args[0]}), args[1])};
    }
    if (op == "divide") {  // d(a/b)/db = -(a/b)/b
        return {unbroadcast(ctx, f("divide", {g, args[1]}), args[0]),
                unbroadcast(ctx, f("negative", {f("divide", {f("multiply", {g, out}), args[1]})}),
                            args[1])};
    }
    if (op == "negative") return {f("negative", {g})};
    if (op == "exp") return {f("multiply", {g, out})};
    if (op == "log") return {f("divide", {g, args[0]})};
    if (op == "sqrt") return {f("divide", {g, f("multiply", {two, out})})};
    if (op == "tanh") {
        return {f("multiply", {g, f("subtract", {one, f("multiply", {out, out})})})};
    }
    if (op == "sigmoid") {
        return {f("multiply", {g, f("multiply", {out, f("subtract", {one, out})})})};
    }
    if (op == "nn.relu") {
        Expr zero = ctx.constant_scalar(dt, 0);
        return {f("where", {f("greater", {args[0], zero}), g, zero})};
    }
    ctx.error() << "Gradient: y depends on the result of " << (op.empty() ? "a call" : op)
                << (out->loc.node_name.empty() ? "" : " (node '" + out->loc.node_name + "')")
                << ", which has no gradient rule";
    ANVIL_UNREACHABLE();
}

}  // namespace

Exprs convert_gradient(ConvertContext& ctx) {
    if (ctx.has_attr("zs")) ctx.error() << "the attribute 'zs' is not supported";
    std::string y_name = ctx.attr_string("y", "");
    if (y_name.empty()) ctx.error() << "the attribute 'y' is required";
    Expr y = ctx.subgraphs().value_named(y_name, ctx.loc());
    const auto& yt = ctx.tensor_type(y, "y");
    if (!yt.dtype.is_floating()) ctx.error() << "y must be floating-point, not " << yt.dtype.str();
    std::vector<Expr> order;
    graph::post_order_visit(y, [&](const Expr& e) { order.push_back(e); });
    std::unordered_map<const graph::ExprNode*, Expr> grads;
    grads[y.get()] = filled(ctx, yt, 1);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Expr& e = *it;
        auto g = grads.find(e.get());
        if (g == grads.end() || !e.is<graph::Call>()) continue;
        const auto& args = e.as<graph::Call>()->args;
        std::vector<Expr> arg_grads = argument_gradients(ctx, e, g->second);
        for (size_t i = 0; i < args.size(); ++i) {
            auto [slot, fresh] = grads.try_emplace(args[i].get(), arg_grads[i]);
            if (!fresh) slot->second = ctx.call("add", {slot->second, arg_grads[i]});
        }
    }
    const auto* xs = ctx.find_attr("xs");
    if (!xs || xs->strings_size() == 0) ctx.error() << "the attribute 'xs' is required";
    Exprs out;
    for (const auto& x_name : xs->strings()) {
        Expr x = ctx.subgraphs().value_named(x_name, ctx.loc());
        auto g = grads.find(x.get());
        out.push_back(g != grads.end() ? g->second
                                       : filled(ctx, ctx.tensor_type(x, "x '" + x_name + "'"), 0));
    }
    return out;
}

}  // namespace anvil::frontend
