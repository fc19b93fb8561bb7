// Quantized tensors in the PyTorch importer (internal to frontend/pytorch).
//
// A PyTorch quantized tensor (torch.quint8, torch.qint8, torch.qint32) is held as its integers
// with a Quantization beside them (pt_value.h). The quantized converters (convert_quantized.cpp)
// read and make such values with the QNN ops. Every other op that meets a quantized operand
// computes on the real numbers it stands for, as PyTorch's quantized CPU kernels for ops without
// scales of their own do (mean, pooling, relu, hardtanh, interpolation): the importer
// dequantizes its operands and quantizes its floating-point results back with the first
// quantized operand's scale and zero point (sigmoid, hardsigmoid and tanh with the fixed ones
// PyTorch gives them). Ops that only move elements (view, permute, flatten, slicing) of a tensor
// quantized per tensor work on the integers directly and pass the quantization on.
#pragma once

#include <memory>
#include <string>

#include "frontend/node_builder.h"
#include "frontend/pytorch/pt_value.h"
#include "frontend/pytorch/torchscript_graph.h"

namespace anvil::frontend::pytorch {

using PtValues = std::vector<PtValue>;

// A quantized constant (a layer's weight): its integers with the description's quantization,
// checked against the tensor (an axis it has, one scale per index along it, zero points in the
// integer type's range).
PtValue quantized_constant(graph::Expr integers, const TsConst& c, const SourceLoc& loc);

// Whether the converter of `kind` reads quantized operands itself (quantized::*, quantizing and
// dequantizing, int_repr, q_scale, q_zero_point), and nodes of `kind` that only pass values on
// (prim::ListConstruct, __getitem__, ...): both see the operands as they are.
bool sees_quantized_operands(const std::string& kind);
// Whether `kind` only moves elements (reshape, permute, slicing, ...).
bool moves_elements_only(const std::string& kind);
// Whether a node of `kind` converts on the integers of its quantized operands, its results
// keeping their quantization: it only moves elements, of operand 0, which is quantized per
// tensor (a per-channel axis would not follow a permute or a reshape).
bool moves_quantized_integers(const std::string& kind, const PtValues& operands);

// The first quantized tensor among `values` and the items of their lists and tuples; null if
// none.
const PtValue* first_quantized(const PtValues& values);
// `values` with each quantized tensor (also inside lists and tuples) as the float32 tensor of
// the real numbers it stands for.
PtValues dequantized(const NodeBuilder& b, const PtValues& values);
// The results of a node of `kind` whose first quantized operand is `like`: float tensors are
// quantized into its integer type with its scale and zero point (with the fixed ones of
// PyTorch's quantized sigmoid, hardsigmoid and tanh); tensors of that integer type (moved
// elements) take its quantization.
void quantize_results(const NodeBuilder& b, PtValues& results, const PtValue& like,
                      const std::string& kind);

// QNN operands of a quantization: the scale (float32; a scalar when there is one, else 1-D along
// its axis) and the zero point (int32, likewise).
graph::Expr scale_operand(const NodeBuilder& b, const Quantization& q);
graph::Expr zero_point_operand(const NodeBuilder& b, const Quantization& q);
// The float32 real numbers a quantized tensor stands for (qnn.dequantize).
graph::Expr dequantize(const NodeBuilder& b, const PtValue& q);
// `x` (float) quantized per tensor into `dtype`.
PtValue quantize(const NodeBuilder& b, const graph::Expr& x, double scale, int64_t zero_point,
                 DataType dtype);

}  // namespace anvil::frontend::pytorch
