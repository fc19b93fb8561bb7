// Converters of ONNX's dense products (Gemm, MatMul), normalizations, pools, MaxUnpool and
// softmax.
#include <algorithm>
#include <cstring>

#include "frontend/onnx/convert_ops.h"
#include "ir/analyzer.h"
#include "ops/dense.h"
#include "ops/norm.h"
#include "ops/reduce.h"
#include "ops/softmax.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// The transpose of a 2-D constant, [K, N] → [N, K], so that a constant right operand fits
// nn.dense's [N, K] weight layout.
Expr transpose_constant(ConvertContext& ctx, const runtime::NDArray& data) {
    int64_t rows = data.shape()[0], cols = data.shape()[1];
    runtime::NDArray out = runtime::NDArray::empty({cols, rows}, data.dtype());
    auto bytes = static_cast<size_t>(runtime::dl_dtype_bytes(data.dtype()));
    const auto* src = static_cast<const uint8_t*>(data.raw_data());
    auto* dst = static_cast<uint8_t*>(out.raw_data());
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
            std::memcpy(dst + (c * rows + r) * bytes, src + (r * cols + c) * bytes, bytes);
        }
    }
    return ctx.constant(out);
}

Expr scale(ConvertContext& ctx, const Expr& x, double factor) {
    if (factor == 1.0) return x;
    DataType dt = ctx.tensor_type(x, "the operand").dtype;
    return ctx.call("multiply", {x, ctx.constant_scalar(dt, factor)});
}

// x @ w for a 2-D w: nn.dense when w is a constant (transposed once, here) or already
// transposed; nn.matmul otherwise.
Expr product(ConvertContext& ctx, const Expr& x, const Expr& w, bool trans_a, bool trans_b) {
    if (!trans_a && ctx.rank(w) == 2) {
        if (trans_b) return ctx.call("nn.dense", {x, w});
        if (runtime::NDArray data = constant_data(w); data.defined()) {
            return ctx.call("nn.dense", {x, transpose_constant(ctx, data)});
        }
    }
    auto [attrs, a] = new_attrs<ops::MatmulAttrs>();
    a->transpose_a = trans_a;
    a->transpose_b = trans_b;
    return ctx.call("nn.matmul", {x, w}, attrs);
}

}  // namespace

// Y = alpha * A' B' + beta * C, A and B 2-D (before opset 7, C is required and `broadcast`
// says whether it broadcasts; numpy broadcasting covers both).
Exprs convert_gemm(ConvertContext& ctx) {
    Expr a = ctx.input(0), b = ctx.input(1), c = ctx.optional_input(2);
    if (ctx.rank(a) != 2 || ctx.rank(b) != 2) ctx.error() << "A and B must be 2-D";
    float alpha = ctx.attr_float("alpha", 1.0f), beta = ctx.attr_float("beta", 1.0f);
    Expr y = product(ctx, a, b, ctx.attr_int("transA", 0) != 0, ctx.attr_int("transB", 0) != 0);
    y = scale(ctx, y, alpha);
    if (!c.defined() || beta == 0.0f) return {y};
    c = scale(ctx, c, beta);
    // The column count; the row count may be symbolic (a dynamic batch).
    const PrimExpr& columns = ctx.tensor_type(y, "the product").shape[1];
    const auto& ct = ctx.tensor_type(c, "C");
    // A per-column bias [N] (or [1, N]) is a bias_add; anything else broadcasts.
    auto is_columns = [&](int64_t d) {
        const int64_t* n = as_const_int(columns);
        return n && *n == d;
    };
    if (ct.is_static()) {
        std::vector<int64_t> cs = ct.static_shape();
        if (cs.size() == 2 && cs[0] == 1 && is_columns(cs[1])) c = reshape_to(ctx, c, {cs[1]});
        if (ctx.static_shape(c, "C").size() == 1 && is_columns(ctx.static_shape(c, "C")[0])) {
            return {add_bias(ctx, y, c, 1)};
        }
    }
    return {ctx.call("add", {y, c})};
}

Exprs convert_matmul(ConvertContext& ctx) {
    Expr a = ctx.input(0), b = ctx.input(1);
    if (ctx.rank(a) >= 2 && ctx.rank(b) == 2 && constant_data(b).defined()) {
        return {product(ctx, a, b, false, false)};
    }
    return {ctx.call("nn.matmul", {a, b}, make_ref<ops::MatmulAttrs>())};
}

// Inference batch normalization: only Y; the running statistics outputs of training are not
// produced.
Exprs convert_batch_norm(ConvertContext& ctx) {
    if (ctx.opset() < 9 && ctx.attr_int("spatial", 1) == 0) {
        ctx.error() << "spatial 0 (per-activation statistics) is not supported";
    }
    auto [attrs, a] = new_attrs<ops::BatchNormAttrs>();
    a->axis = 1;
    a->epsilon = ctx.attr_float("epsilon", 1e-5f);
    if (ctx.attr_int("training_mode", 0) == 0) {
        return {ctx.call("nn.batch_norm",
                         {ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4)},
                         attrs)};
    }
    // Training mode (opset 14+): normalize with the batch statistics (population variance) and
    // also output the updated running statistics, running * momentum + batch * (1 - momentum).
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    int64_t rank = ctx.rank(x);
    auto [keep_attrs, keep] = new_attrs<ops::ReduceAttrs>();
    auto [flat_attrs, flat] = new_attrs<ops::ReduceAttrs>();
    for (int64_t d = 0; d < rank; ++d) {
        if (d != 1) {
            keep->axes.push_back(d);
            flat->axes.push_back(d);
        }
    }
    keep->keepdims = true;
    Expr mean_keep = ctx.call("mean", {x}, keep_attrs);
    Expr centered = ctx.call("subtract", {x, mean_keep});
    Expr var = ctx.call("mean", {ctx.call("multiply", {centered, centered})}, flat_attrs);
    Expr mean = ctx.call("mean", {x}, flat_attrs);
    Expr y = ctx.call("nn.batch_norm", {x, ctx.input(1), ctx.input(2), mean, var}, attrs);
    double momentum = ctx.attr_float("momentum", 0.9f);
    auto update = [&](const Expr& running, const Expr& batch) {
        return ctx.call("add",
                        {ctx.call("multiply", {running, ctx.constant_scalar(dt, momentum)}),
                         ctx.call("multiply", {batch, ctx.constant_scalar(dt, 1.0 - momentum)})});
    };
    Exprs out = {y, update(ctx.input(3), mean), update(ctx.input(4), var)};
    out.resize(std::min(out.size(), static_cast<size_t>(ctx.node().output_size())));
    return out;
}

Exprs convert_layer_norm(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::LayerNormAttrs>();
    a->axis = ctx.attr_int("axis", -1);
    a->epsilon = ctx.attr_float("epsilon", 1e-5f);
    Expr x = ctx.input(0);
    std::vector<Expr> args = {x, ctx.input(1)};
    if (Expr b = ctx.optional_input(2); b.defined()) args.push_back(b);
    Exprs outs = {ctx.call("nn.layer_norm", args, attrs)};
    // Mean and InvStdDev (training outputs; inference exports leave them unnamed) only when asked.
    if (ctx.node().output_size() > 1) {
        int64_t rank = ctx.rank(x);
        auto [rattrs, r] = new_attrs<ops::ReduceAttrs>();
        for (int64_t i = ctx.normalize_axis(a->axis, rank, "axis"); i < rank; ++i) {
            r->axes.push_back(i);
        }
        r->keepdims = true;
        Expr mean = ctx.call("mean", {x}, rattrs);
        Expr centered = ctx.call("subtract", {x, mean});
        Expr var = ctx.call("mean", {ctx.call("multiply", {centered, centered})}, rattrs);
        DataType dt = ctx.tensor_type(x, "the input").dtype;
        Expr eps = ctx.constant_scalar(dt, a->epsilon);
        outs.push_back(mean);
        outs.push_back(ctx.call("rsqrt", {ctx.call("add", {var, eps})}));
    }
    return outs;
}

Exprs convert_instance_norm(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::InstanceNormAttrs>();
    a->epsilon = ctx.attr_float("epsilon", 1e-5f);
    return {ctx.call("nn.instance_norm", {ctx.input(0), ctx.input(1), ctx.input(2)}, attrs)};
}

// Softmax and LogSoftmax. Before opset 13 the input is coerced to 2-D at `axis` (default 1)
// and normalized over the flattened trailing axes; from 13 on it is normalized along `axis`
// (default -1).
Exprs convert_softmax(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    const char* op = ctx.node().op_type() == "Softmax" ? "nn.softmax" : "nn.log_softmax";
    int64_t rank = ctx.rank(x);
    bool legacy = ctx.opset() < 13;
    int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", legacy ? 1 : -1), rank, "axis");
    auto [attrs, a] = new_attrs<ops::SoftmaxAttrs>();
    if (!legacy || axis == rank - 1) {
        a->axis = axis;
        return {ctx.call(op, {x}, attrs)};
    }
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    int64_t rows = 1, cols = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : cols) *= shape[i];
    a->axis = 1;
    Expr y = ctx.call(op, {reshape_to(ctx, x, {rows, cols})}, attrs);
    return {reshape_to(ctx, y, shape)};
}

Exprs convert_lrn(ConvertContext& ctx) {
    auto [attrs, a] = new_attrs<ops::LRNAttrs>();
    if (!ctx.has_attr("size")) ctx.error() << "the attribute size is required";
    a->size = ctx.attr_int("size", 1);
    a->alpha = ctx.attr_float("alpha", 1e-4f);
    a->beta = ctx.attr_float("beta", 0.75f);
    a->bias = ctx.attr_float("bias", 1.0f);
    return {ctx.call("nn.lrn", {ctx.input(0)}, attrs)};
}

// MeanVarianceNormalization, as ONNX's reference: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)
// over `axes` (default [0, 2, 3]).
Exprs convert_mean_variance_norm(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) ctx.error() << "the input must be floating-point, got " << dt.str();
    int64_t rank = ctx.rank(x);
    auto [attrs, a] = new_attrs<ops::ReduceAttrs>();
    for (int64_t axis : ctx.attr_ints("axes", {0, 2, 3})) {
        a->axes.push_back(ctx.normalize_axis(axis, rank, "axis"));
    }
    a->keepdims = true;
    Expr mean = ctx.call("mean", {x}, attrs);
    Expr mean_sq = ctx.call("mean", {ctx.call("multiply", {x, x})}, attrs);
    Expr var = ctx.call("subtract", {mean_sq, ctx.call("multiply", {mean, mean})});
    Expr denom = ctx.call("add", {ctx.call("sqrt", {var}), ctx.constant_scalar(dt, 1e-9)});
    return {ctx.call("divide", {ctx.call("subtract", {x, mean}), denom})};
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere, as equal(iota, argmax). Before
// opset 13 the input is coerced to 2-D at the axis (as Softmax).
Exprs convert_hardmax(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    int64_t rank = ctx.rank(x);
    bool legacy = ctx.opset() < 13;
    int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", legacy ? 1 : -1), rank, "axis");
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    Expr data = x;
    if (legacy) {
        int64_t rows = 1, cols = 1;
        for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : cols) *= shape[i];
        data = reshape_to(ctx, x, {rows, cols});
        axis = 1;
    }
    std::vector<int64_t> dshape = ctx.static_shape(data, "the input");
    int64_t n = dshape[static_cast<size_t>(axis)];
    auto [attrs, a] = new_attrs<ops::ArgReduceAttrs>();
    a->axis = axis;
    a->keepdims = true;
    Expr arg = ctx.call("argmax", {data}, attrs);
    std::vector<int64_t> iota(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) iota[static_cast<size_t>(i)] = i;
    std::vector<int64_t> iota_shape(dshape.size() - static_cast<size_t>(axis), 1);
    iota_shape[0] = n;
    Expr hit = ctx.call("equal", {ctx.constant_int64(iota, iota_shape), arg});
    Expr y = cast_to(ctx, hit, dt);
    return {legacy ? reshape_to(ctx, y, shape) : y};
}

// MaxUnpool: zeros of the unpooled shape, (in - 1) * stride + kernel - pads per spatial axis,
// with each input value written at its index (MaxPool's Indices output: offsets into the whole
// flattened tensor). A larger output_shape (possibly known only at run time) pads the end of
// each spatial axis with zeros, as ONNX's reference does: the indices keep addressing the
// unpooled shape.
Exprs convert_max_unpool(ConvertContext& ctx) {
    Expr x = ctx.input(0), indices = ctx.input(1);
    std::vector<int64_t> in = ctx.static_shape(x, "the input");
    size_t nd = in.size() - 2;
    std::vector<int64_t> kernel = ctx.attr_ints("kernel_shape");
    std::vector<int64_t> strides = ctx.attr_ints("strides"), pads = ctx.attr_ints("pads");
    if (kernel.size() != nd) ctx.error() << "kernel_shape must have " << nd << " values";
    strides.resize(nd, 1);
    pads.resize(2 * nd, 0);
    std::vector<int64_t> unpooled = {in[0], in[1]};
    for (size_t d = 0; d < nd; ++d) {
        unpooled.push_back((in[d + 2] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + nd]);
        if (unpooled.back() < 1) ctx.error() << "the unpooled axis " << d + 2 << " is empty";
    }
    int64_t total = 1, count = 1;
    for (int64_t v : unpooled) total *= v;
    for (int64_t v : in) count *= v;
    DataType dt = ctx.tensor_type(x, "the input").dtype, i64 = DataType::int64();
    auto [zeros_attrs, z] = new_attrs<ops::BroadcastToAttrs>();
    z->shape = {total};
    Expr zeros = ctx.call("broadcast_to", {ctx.constant_scalar(dt, 0.0)}, zeros_attrs);
    auto [scatter_attrs, sa] = new_attrs<ops::ScatterAttrs>();
    Expr flat = ctx.call(
        "scatter_elements",
        {zeros, reshape_to(ctx, cast_to(ctx, indices, i64), {count}), reshape_to(ctx, x, {count})},
        scatter_attrs);
    Expr y = reshape_to(ctx, flat, unpooled);
    Expr output_shape = ctx.optional_input(2);
    if (!output_shape.defined()) return {y};
    ShapeValues shape = shape_values(ctx, output_shape, "the output shape");
    if (shape.values.size() != in.size()) {
        ctx.error() << "the output shape must have " << in.size() << " values";
    }
    auto [pad_attrs, p] = new_attrs<ops::PadAttrs>();
    std::vector<PrimExpr> checks;
    for (size_t d = 0; d < in.size(); ++d) {
        PrimExpr extra = shape.values[d] - make_int(i64, unpooled[d]);
        checks.push_back(d < 2 ? eq(extra, 0) : extra >= 0);
        p->dynamic_pad_width.push_back(make_int(i64, 0));
        p->dynamic_pad_width.push_back(simplify(extra));
    }
    return {ctx.call("nn.pad", {bind_shape_values(ctx, y, shape, std::move(checks))}, pad_attrs)};
}

}  // namespace anvil::frontend
