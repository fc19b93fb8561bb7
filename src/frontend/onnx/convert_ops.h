// The converter functions (internal to frontend/onnx), by family file. converter_table.cpp is
// the one table that maps ONNX op types and opset ranges to them.
#pragma once

#include <vector>

#include "frontend/onnx/converter.h"

namespace anvil::frontend {

using Exprs = std::vector<graph::Expr>;

// convert_elementwise.cpp
Exprs convert_binary(ConvertContext& ctx);  // Add, Sub, Mul, Div, Pow, comparisons, And, Or
Exprs convert_unary(ConvertContext& ctx);   // Relu, Sigmoid, Tanh, Erf, Sqrt, Exp, ...
Exprs convert_xor(ConvertContext& ctx);
Exprs convert_reciprocal(ConvertContext& ctx);
Exprs convert_variadic(ConvertContext& ctx);  // Max, Min, Sum, Mean
Exprs convert_where(ConvertContext& ctx);
Exprs convert_clip(ConvertContext& ctx);
Exprs convert_leaky_relu(ConvertContext& ctx);
Exprs convert_prelu(ConvertContext& ctx);
Exprs convert_elu(ConvertContext& ctx);
Exprs convert_selu(ConvertContext& ctx);
Exprs convert_hard_sigmoid(ConvertContext& ctx);
Exprs convert_gelu(ConvertContext& ctx);
Exprs convert_cast(ConvertContext& ctx);
Exprs convert_identity(ConvertContext& ctx);
Exprs convert_dropout(ConvertContext& ctx);

// convert_tensor.cpp
Exprs convert_constant(ConvertContext& ctx);
Exprs convert_shape(ConvertContext& ctx);
Exprs convert_size(ConvertContext& ctx);
Exprs convert_constant_of_shape(ConvertContext& ctx);
Exprs convert_range(ConvertContext& ctx);

// convert_transform.cpp
Exprs convert_reshape(ConvertContext& ctx);
Exprs convert_flatten(ConvertContext& ctx);
Exprs convert_transpose(ConvertContext& ctx);
Exprs convert_squeeze(ConvertContext& ctx);
Exprs convert_unsqueeze(ConvertContext& ctx);
Exprs convert_concat(ConvertContext& ctx);
Exprs convert_split(ConvertContext& ctx);
Exprs convert_expand(ConvertContext& ctx);
Exprs convert_tile(ConvertContext& ctx);
Exprs convert_slice(ConvertContext& ctx);
Exprs convert_gather(ConvertContext& ctx);
Exprs convert_gather_elements(ConvertContext& ctx);
Exprs convert_pad(ConvertContext& ctx);
Exprs convert_depth_to_space(ConvertContext& ctx);
Exprs convert_space_to_depth(ConvertContext& ctx);
Exprs convert_resize(ConvertContext& ctx);  // Resize, Upsample

// convert_conv.cpp (window ops)
Exprs convert_conv(ConvertContext& ctx);
Exprs convert_conv_transpose(ConvertContext& ctx);
Exprs convert_pool(ConvertContext& ctx);         // MaxPool, AveragePool
Exprs convert_global_pool(ConvertContext& ctx);  // GlobalMaxPool, GlobalAveragePool

// convert_nn.cpp
Exprs convert_gemm(ConvertContext& ctx);
Exprs convert_matmul(ConvertContext& ctx);
Exprs convert_batch_norm(ConvertContext& ctx);
Exprs convert_layer_norm(ConvertContext& ctx);
Exprs convert_instance_norm(ConvertContext& ctx);
Exprs convert_softmax(ConvertContext& ctx);  // Softmax, LogSoftmax

// convert_reduce.cpp
Exprs convert_reduce(ConvertContext& ctx);  // ReduceSum, ReduceMean, ReduceMax, ...
Exprs convert_arg_reduce(ConvertContext& ctx);

// Shared helpers.
// `x` converted to `dtype` (x itself when it already has it).
graph::Expr cast_to(ConvertContext& ctx, const graph::Expr& x, DataType dtype);
// `x` with a new static shape of the same element count.
graph::Expr reshape_to(ConvertContext& ctx, const graph::Expr& x,
                       const std::vector<int64_t>& shape);
// y + bias along `axis` (nn.bias_add); y itself when bias is undefined.
graph::Expr add_bias(ConvertContext& ctx, const graph::Expr& y, const graph::Expr& bias,
                     int64_t axis);

}  // namespace anvil::frontend
