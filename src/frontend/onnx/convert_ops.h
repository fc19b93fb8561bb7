// The converter functions (internal to frontend/onnx), by family file. converter_table.cpp is
// the one table that maps ONNX op types and opset ranges to them.
#pragma once

#include <utility>
#include <vector>

#include "frontend/composite_ops.h"
#include "frontend/onnx/converter.h"
#include "frontend/shape_values.h"

namespace anvil::frontend {

using Exprs = std::vector<graph::Expr>;

// convert_elementwise.cpp
Exprs convert_binary(ConvertContext& ctx);  // Add, Sub, Mul, Div, Pow, comparisons, And, Or
Exprs convert_unary(ConvertContext& ctx);   // Relu, Sigmoid, Tanh, Erf, Sqrt, Exp, ...
Exprs convert_xor(ConvertContext& ctx);
Exprs convert_reciprocal(ConvertContext& ctx);
Exprs convert_mod(ConvertContext& ctx);
Exprs convert_bit_shift(ConvertContext& ctx);
Exprs convert_cast_like(ConvertContext& ctx);
Exprs convert_softsign(ConvertContext& ctx);
Exprs convert_thresholded_relu(ConvertContext& ctx);
Exprs convert_shrink(ConvertContext& ctx);
Exprs convert_celu(ConvertContext& ctx);
Exprs convert_isnan(ConvertContext& ctx);
Exprs convert_isinf(ConvertContext& ctx);
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

// convert_control.cpp
Exprs convert_if(ConvertContext& ctx);
Exprs convert_loop(ConvertContext& ctx);
Exprs convert_scan(ConvertContext& ctx);   // opset 9 and later
Exprs convert_scan8(ConvertContext& ctx);  // opset 8: batched
Exprs convert_sequence_map(ConvertContext& ctx);

// convert_sequence.cpp
Exprs convert_sequence_construct(ConvertContext& ctx);
Exprs convert_sequence_empty(ConvertContext& ctx);
Exprs convert_sequence_length(ConvertContext& ctx);
Exprs convert_sequence_at(ConvertContext& ctx);
Exprs convert_sequence_insert(ConvertContext& ctx);
Exprs convert_sequence_erase(ConvertContext& ctx);
Exprs convert_concat_from_sequence(ConvertContext& ctx);
Exprs convert_split_to_sequence(ConvertContext& ctx);
Exprs convert_optional(ConvertContext& ctx);
Exprs convert_optional_has_element(ConvertContext& ctx);
Exprs convert_optional_get_element(ConvertContext& ctx);
// The tensor type of an element of `seq` as the graph can state it: the dimensions every element
// shares, fresh variables (bound by the executor where the element is taken) for the others;
// with `extra_axis` >= 0 a fresh dimension is inserted there. UserError when the elements' rank
// is not known.
graph::Type sequence_element_type(ConvertContext& ctx, const graph::SequenceType& seq,
                                  int64_t extra_axis = -1);

// convert_tensor.cpp
Exprs convert_constant(ConvertContext& ctx);
Exprs convert_shape(ConvertContext& ctx);
Exprs convert_size(ConvertContext& ctx);
Exprs convert_constant_of_shape(ConvertContext& ctx);
Exprs convert_range(ConvertContext& ctx);
Exprs convert_eye_like(ConvertContext& ctx);
Exprs convert_one_hot(ConvertContext& ctx);

// convert_transform.cpp (operands that give sizes: frontend/shape_values.h)
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
Exprs convert_trilu(ConvertContext& ctx);
Exprs convert_grid_sample(ConvertContext& ctx);
Exprs convert_roi_align(ConvertContext& ctx);
Exprs convert_scatter(ConvertContext& ctx);  // Scatter, ScatterElements, ScatterND
Exprs convert_gather_nd(ConvertContext& ctx);
Exprs convert_reverse_sequence(ConvertContext& ctx);
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
Exprs convert_hardmax(ConvertContext& ctx);
Exprs convert_mean_variance_norm(ConvertContext& ctx);
Exprs convert_lrn(ConvertContext& ctx);
Exprs convert_max_unpool(ConvertContext& ctx);

// convert_reduce.cpp
Exprs convert_reduce(ConvertContext& ctx);  // ReduceSum, ReduceMean, ReduceMax, ...
Exprs convert_arg_reduce(ConvertContext& ctx);
// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp
Exprs convert_composite_reduce(ConvertContext& ctx);
Exprs convert_cumsum(ConvertContext& ctx);
Exprs convert_einsum(ConvertContext& ctx);

// convert_quant.cpp
Exprs convert_quantize_linear(ConvertContext& ctx);
Exprs convert_dequantize_linear(ConvertContext& ctx);
Exprs convert_dynamic_quantize_linear(ConvertContext& ctx);
Exprs convert_matmul_integer(ConvertContext& ctx);
Exprs convert_conv_integer(ConvertContext& ctx);
Exprs convert_qlinear_matmul(ConvertContext& ctx);
Exprs convert_qlinear_conv(ConvertContext& ctx);

// convert_rnn.cpp
Exprs convert_recurrent(ConvertContext& ctx);  // RNN, GRU, LSTM

// convert_training.cpp (domain ai.onnx.preview.training)
Exprs convert_adagrad(ConvertContext& ctx);
Exprs convert_momentum(ConvertContext& ctx);
Exprs convert_adam(ConvertContext& ctx);

// convert_gradient.cpp
Exprs convert_gradient(ConvertContext& ctx);

// convert_selection.cpp
Exprs convert_top_k(ConvertContext& ctx);
Exprs convert_non_zero(ConvertContext& ctx);
Exprs convert_compress(ConvertContext& ctx);
Exprs convert_unique(ConvertContext& ctx);
// The positions (int64, ascending) of the true elements of the 1-D bool `mask`; their count,
// the result's length, is bound at run time.
graph::Expr selected_positions(ConvertContext& ctx, const graph::Expr& mask);

// convert_nms.cpp
Exprs convert_non_max_suppression(ConvertContext& ctx);

// convert_det.cpp
Exprs convert_det(ConvertContext& ctx);

// convert_mel_weight_matrix.cpp
Exprs convert_mel_weight_matrix(ConvertContext& ctx);

// convert_text.cpp
Exprs convert_tfidf_vectorizer(ConvertContext& ctx);
Exprs convert_string_normalizer(ConvertContext& ctx);

// convert_signal.cpp
Exprs convert_dft(ConvertContext& ctx);
Exprs convert_stft(ConvertContext& ctx);
Exprs convert_window(ConvertContext& ctx);  // HannWindow, HammingWindow, BlackmanWindow

// convert_loss.cpp
Exprs convert_nll_loss(ConvertContext& ctx);
Exprs convert_softmax_cross_entropy_loss(ConvertContext& ctx);

}  // namespace anvil::frontend
