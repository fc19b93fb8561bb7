// The QNN products: qnn.conv2d, qnn.conv2d_transpose, qnn.dense and qnn.batch_matmul. Their
// geometry is that of the core ops, whose type rules they reuse in their integer form
// (out_dtype int32); the result is the int32 sum of products of the zero-point-corrected
// operands (ops/qnn.h).
#include "graph/op.h"
#include "ops/axes.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/op_spec.h"
#include "ops/op_table.h"
#include "ops/qnn.h"
#include "ops/qnn_params.h"
#include "support/error.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::TensorType;
using graph::Type;

namespace {

// Checks the two quantized operands and out_dtype; the operands for the integer form of the
// float op's rule (which then names their own types in its messages).
std::vector<Type> operands(const Op& op, const std::vector<Type>& args, DataType out_dtype,
                           const char* a_name, const char* b_name, const SourceLoc& loc) {
    const auto& a = graph::expect_tensor(args[0], loc, std::string(a_name) + " of " + op.name);
    const auto& b = graph::expect_tensor(args[1], loc, std::string(b_name) + " of " + op.name);
    check_quantized_dtype(op.name, a_name, a.dtype, loc);
    check_quantized_dtype(op.name, b_name, b.dtype, loc);
    if (out_dtype != DataType::int32()) {
        user_error(loc) << op.name << ": out_dtype must be int32, got " << out_dtype.str();
    }
    return {args[0], args[1]};
}

// The scale and zero point of a (scalars) and of b (scalars, or along `channel_axis` of the
// result when given), then the result in out_dtype.
Type quantized_result(const Op& op, const std::vector<Type>& args, const Type& core_result,
                      DataType out_dtype, std::optional<int64_t> channel_axis,
                      const SourceLoc& loc) {
    const auto& a = graph::expect_tensor(args[0], loc, op.name);
    const auto& r = graph::expect_tensor(core_result, loc, op.name);
    check_qparams(op.name, {args[4], args[2]}, "input ", a, std::nullopt, loc);
    check_qparams(op.name, {args[5], args[3]}, "kernel ", r, channel_axis, loc);
    return graph::make_tensor_type(r.shape, out_dtype);
}

// `channels` and `kernel_size`, when stated, must be those of the result and the weight.
void check_stated_geometry(const Op& op, int64_t channels, const std::vector<int64_t>& kernel_size,
                           const TensorType& result, const TensorType& w, const SourceLoc& loc) {
    auto o = static_dim(result.shape[1]);
    if (channels != 0 && o && *o != channels) {
        user_error(loc) << op.name << ": channels=" << channels << " but the weight gives " << *o
                        << " output channels";
    }
    if (kernel_size.empty()) return;
    for (size_t i = 0; i < kernel_size.size(); ++i) {
        auto k = i + 2 < w.ndim() ? static_dim(w.shape[i + 2]) : std::nullopt;
        if (kernel_size.size() != w.ndim() - 2 || (k && *k != kernel_size[i])) {
            user_error(loc) << op.name << ": kernel_size does not match the weight "
                            << graph::type_str(graph::make_tensor_type(w.shape, w.dtype));
        }
    }
}

Type qnn_conv2d_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                     const SourceLoc& loc) {
    const auto& q = attrs_as<QnnConv2DAttrs>(attrs);
    auto core = operands(op, args, q.out_dtype, "the data", "the weight", loc);
    Type r = get_op("nn.conv2d").infer_type(op, core, *integer_attrs(q), loc);
    check_stated_geometry(op, q.channels, q.kernel_size, graph::expect_tensor(r, loc, op.name),
                          graph::expect_tensor(args[1], loc, op.name), loc);
    return quantized_result(op, args, r, q.out_dtype, 1, loc);
}

Type qnn_conv2d_transpose_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                               const SourceLoc& loc) {
    const auto& q = attrs_as<QnnConv2DTransposeAttrs>(attrs);
    auto core = operands(op, args, q.out_dtype, "the data", "the weight", loc);
    Type r = get_op("nn.conv2d_transpose").infer_type(op, core, *integer_attrs(q), loc);
    check_stated_geometry(op, q.channels, q.kernel_size, graph::expect_tensor(r, loc, op.name),
                          graph::expect_tensor(args[1], loc, op.name), loc);
    // A per-channel kernel zero point runs along the weight's output channels of one group.
    return quantized_result(op, args, r, q.out_dtype,
                            q.groups == 1 ? std::optional<int64_t>(1) : std::nullopt, loc);
}

Type qnn_dense_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                    const SourceLoc& loc) {
    const auto& q = attrs_as<QnnDenseAttrs>(attrs);
    auto core = operands(op, args, q.out_dtype, "the data", "the weight", loc);
    Type r = get_op("nn.dense").infer_type(op, core, *integer_attrs(q), loc);
    const auto& rt = graph::expect_tensor(r, loc, op.name);
    auto n = static_dim(rt.shape.back());
    if (q.units != 0 && n && *n != q.units) {
        user_error(loc) << op.name << ": units=" << q.units << " but the weight has " << *n
                        << " rows";
    }
    return quantized_result(op, args, r, q.out_dtype, -1, loc);
}

Type qnn_batch_matmul_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                           const SourceLoc& loc) {
    const auto& q = attrs_as<QnnBatchMatmulAttrs>(attrs);
    auto core = operands(op, args, q.out_dtype, "the lhs", "the rhs", loc);
    Type r = get_op("nn.batch_matmul").infer_type(op, core, *integer_attrs(q), loc);
    return quantized_result(op, args, r, q.out_dtype, std::nullopt, loc);
}

Ref<Op> make_qnn_product(const std::string& name, Ref<Attrs> (*attrs)(), graph::TypeRule rule,
                         const std::string& description) {
    return make_op({.name = name,
                    .num_inputs = 6,
                    .make_default_attrs = attrs,
                    .infer_type = rule,
                    .description = description + " (rewritten by canonicalize_qnn)"});
}

}  // namespace

Ref<Conv2DAttrs> integer_attrs(const QnnConv2DAttrs& q) {
    auto a = make_ref<Conv2DAttrs>();
    auto* c = const_cast<Conv2DAttrs*>(a.get());
    c->strides = q.strides;
    c->padding = q.padding;
    c->dilation = q.dilation;
    c->groups = q.groups;
    c->out_dtype = DataType::int32();
    return a;
}

Ref<Conv2DTransposeAttrs> integer_attrs(const QnnConv2DTransposeAttrs& q) {
    auto a = make_ref<Conv2DTransposeAttrs>();
    auto* c = const_cast<Conv2DTransposeAttrs*>(a.get());
    c->strides = q.strides;
    c->padding = q.padding;
    c->output_padding = q.output_padding;
    c->dilation = q.dilation;
    c->groups = q.groups;
    c->out_dtype = DataType::int32();
    return a;
}

Ref<DenseAttrs> integer_attrs(const QnnDenseAttrs&) {
    auto a = make_ref<DenseAttrs>();
    const_cast<DenseAttrs*>(a.get())->out_dtype = DataType::int32();
    return a;
}

Ref<MatmulAttrs> integer_attrs(const QnnBatchMatmulAttrs& q) {
    auto a = make_ref<MatmulAttrs>();
    auto* m = const_cast<MatmulAttrs*>(a.get());
    m->transpose_a = q.transpose_a;
    m->transpose_b = q.transpose_b;
    m->out_dtype = DataType::int32();
    return a;
}

Ref<Op> make_qnn_conv2d_op() {
    return make_qnn_product("qnn.conv2d", default_attrs<QnnConv2DAttrs>, qnn_conv2d_type,
                            "quantized 2-D convolution, int32 result");
}

Ref<Op> make_qnn_conv2d_transpose_op() {
    return make_qnn_product("qnn.conv2d_transpose", default_attrs<QnnConv2DTransposeAttrs>,
                            qnn_conv2d_transpose_type,
                            "quantized 2-D transposed convolution, int32 result");
}

Ref<Op> make_qnn_dense_op() {
    return make_qnn_product("qnn.dense", default_attrs<QnnDenseAttrs>, qnn_dense_type,
                            "quantized dense product, int32 result");
}

Ref<Op> make_qnn_batch_matmul_op() {
    return make_qnn_product("qnn.batch_matmul", default_attrs<QnnBatchMatmulAttrs>,
                            qnn_batch_matmul_type, "quantized batched product, int32 result");
}

}  // namespace anvil::ops
