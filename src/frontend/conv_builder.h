// Convolutions as every importer states them (ONNX Conv, ConvTranspose, ConvInteger, QLinearConv;
// PyTorch's conv1d/2d/3d, conv_transpose*, _convolution): data [N, C, *spatial] with 1, 2 or 3
// spatial dimensions, explicit padding, groups, dilation, an optional bias. How a format gets to
// explicit padding (ONNX's auto_pad, PyTorch's padding="same") stays in its importer.
//
// 1-D data runs as 2-D with a unit height (there is no nn.conv1d); 3-D as nn.conv3d.
#pragma once

#include <cstdint>
#include <vector>

#include "frontend/node_builder.h"

namespace anvil::frontend {

// The window geometry, one entry per spatial dimension (padding: two).
struct ConvParams {
    std::vector<int64_t> strides;
    std::vector<int64_t> padding;  // every begin, then every end ([top, left, bottom, right])
    std::vector<int64_t> dilation;
    int64_t groups = 1;
};

// The number of spatial dimensions of the data `x` [N, C, *spatial] of a window op (convolution,
// pool); UserError unless 1, 2 or 3.
int64_t window_spatial_rank(const NodeBuilder& ctx, const graph::Expr& x);
// The static shape of the weight `w` of a convolution over `x`, after checking that `x` has 1, 2
// or 3 spatial dimensions and `w` the same rank; UserError otherwise.
std::vector<int64_t> conv_weight_shape(const NodeBuilder& ctx, const graph::Expr& x,
                                       const graph::Expr& w);

// conv(x, w) + bias along the channels (bias undefined: none). x: [N, C, *S]; w: [O, C/groups,
// *K], static.
graph::Expr build_conv(const NodeBuilder& ctx, const graph::Expr& x, const graph::Expr& w,
                       const graph::Expr& bias, const ConvParams& p);

// The transposed convolution (the gradient of build_conv with respect to its data): w: [C,
// O/groups, *K], static; `output_padding` (one per spatial dimension, empty: zeros) grows the
// end of each output dimension. Output extent: (in - 1) * stride - pad_begin - pad_end +
// dilation * (k - 1) + output_padding + 1.
graph::Expr build_conv_transpose(const NodeBuilder& ctx, const graph::Expr& x, const graph::Expr& w,
                                 const graph::Expr& bias, const ConvParams& p,
                                 std::vector<int64_t> output_padding);

// Window ops on 1-D data as 2-D ones with a unit height: [N, C, L] → [N, C, 1, L], and back.
graph::Expr lift_1d_to_2d(const NodeBuilder& ctx, const graph::Expr& x);
graph::Expr lower_2d_to_1d(const NodeBuilder& ctx, const graph::Expr& y);
// A per-dimension value list of 1-D data as that of 2-D data: [v] → [unit, v] (others unchanged).
std::vector<int64_t> ints_to_2d(const std::vector<int64_t>& v, int64_t unit);

}  // namespace anvil::frontend
