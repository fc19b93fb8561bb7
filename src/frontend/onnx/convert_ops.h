// The functions of the ONNX importer's family files (internal to frontend/onnx): the converters,
// declared from the one list converters.def (which converter_table.cpp also makes the table
// of), and the helpers that several family files share.
#pragma once

#include <utility>
#include <vector>

#include "frontend/composite_ops.h"
#include "frontend/conv_builder.h"
#include "frontend/onnx/converter.h"
#include "frontend/selection.h"
#include "frontend/shape_values.h"

namespace anvil::frontend {

using Exprs = std::vector<graph::Expr>;

// Every converter, once per op type it converts (redeclaring a function is harmless).
#define ANVIL_ONNX_CONVERTER(op_type, min_opset, max_opset, function) \
    Exprs function(ConvertContext& ctx);
#include "frontend/onnx/converters.def"
#undef ANVIL_ONNX_CONVERTER

// convert_conv.cpp: the geometry of a node with Conv's attributes (Conv, ConvInteger,
// QLinearConv) over the data `x` and a weight of shape `w_shape` (conv_weight_shape), auto_pad
// resolved to explicit padding.
ConvParams conv_node_params(ConvertContext& ctx, const graph::Expr& x,
                            const std::vector<int64_t>& w_shape);

// convert_sequence.cpp: the tensor type of an element of `seq` as the graph can state it: the
// dimensions every element shares, fresh variables (bound by the executor where the element is
// taken) for the others; with `extra_axis` >= 0 a fresh dimension is inserted there. UserError
// when the elements' rank is not known.
graph::Type sequence_element_type(ConvertContext& ctx, const graph::SequenceType& seq,
                                  int64_t extra_axis = -1);

// (selected_positions, used by convert_nms.cpp, is in frontend/selection.h.)

}  // namespace anvil::frontend
