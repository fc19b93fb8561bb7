// Attributes of the transform family: layout and indexing ops (ops/transform_shape.cpp,
// ops/transform_index.cpp, ops/transform_slice.cpp, ops/transform_resize.cpp). Axes may be
// negative (counted from the end) wherever an axis is taken.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/attrs.h"
#include "support/source_loc.h"

namespace anvil::ops {

// reshape: ONNX Reshape. In `newshape`, -1 (at most once) is inferred from the element count and
// 0 copies the input's dimension at that position, unless `allowzero` (then 0 is a zero-size
// dimension).
struct ReshapeAttrs : graph::AttrsBase<ReshapeAttrs> {
    static constexpr const char* kTypeName = "ReshapeAttrs";
    std::vector<int64_t> newshape;
    bool allowzero = false;
    // The target when an entry is symbolic (a reshape to Shape-derived sizes); replaces newshape.
    // Constant entries keep newshape's 0 (copy) and -1 (infer) meanings.
    std::vector<PrimExpr> dims;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("newshape", &newshape);
        v.visit("allowzero", &allowzero);
        v.visit("dims", &dims);
    }
};

// flatten: ONNX Flatten, to 2-D (prod(shape[:axis]), prod(shape[axis:])); axis in [-r, r].
struct FlattenAttrs : graph::AttrsBase<FlattenAttrs> {
    static constexpr const char* kTypeName = "FlattenAttrs";
    int64_t axis = 1;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axis", &axis); }
};

// transpose: output axis i is input axis axes[i]; empty reverses the axes.
struct TransposeAttrs : graph::AttrsBase<TransposeAttrs> {
    static constexpr const char* kTypeName = "TransposeAttrs";
    std::vector<int64_t> axes;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axes", &axes); }
};

// layout_transform: the same values in another layout of the same axes, TVM's layout strings:
// an upper-case letter is a primal axis, a number and its lower-case letter a block of it, held
// innermost-wise at that position ("NCHW16c": [N, C/16, H, W, 16], element (n, c, h, w) at
// [n, c / 16, h, w, c % 16]; "OIHW8i16o" for packed convolution weights). Both layouts name the
// same primal axes; a blocked axis must be a static multiple of its block (nothing is padded).
struct LayoutTransformAttrs : graph::AttrsBase<LayoutTransformAttrs> {
    static constexpr const char* kTypeName = "LayoutTransformAttrs";
    std::string src_layout;
    std::string dst_layout;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("src_layout", &src_layout);
        v.visit("dst_layout", &dst_layout);
    }
};

// The channel block of a data layout attribute: 0 for "NCHW", b for "NCHW<b>c"; a UserError
// naming `op` for any other layout (ops taking either, such as the 2-D pools).
int64_t nchw_channel_block(const std::string& layout, const SourceLoc& loc, const std::string& op);

// squeeze: removes the listed size-1 axes; empty removes every size-1 axis.
struct SqueezeAttrs : graph::AttrsBase<SqueezeAttrs> {
    static constexpr const char* kTypeName = "SqueezeAttrs";
    std::vector<int64_t> axes;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axes", &axes); }
};

// expand_dims: inserts num_newaxis size-1 axes at `axis` (in [-r-1, r], r the input rank).
// ONNX Unsqueeze with several axes: one expand_dims per axis, ascending, each axis normalized
// against the output rank.
struct ExpandDimsAttrs : graph::AttrsBase<ExpandDimsAttrs> {
    static constexpr const char* kTypeName = "ExpandDimsAttrs";
    int64_t axis = 0;
    int64_t num_newaxis = 1;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("num_newaxis", &num_newaxis);
    }
};

// concatenate (variadic: N tensors of one dtype and rank, equal but for `axis`) along `axis`.
struct ConcatenateAttrs : graph::AttrsBase<ConcatenateAttrs> {
    static constexpr const char* kTypeName = "ConcatenateAttrs";
    int64_t axis = 0;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axis", &axis); }
};

// split along `axis` into a tuple. With `indices` (ascending split points, Relay's
// indices_or_sections as a list) the parts are [0, i0), [i0, i1), ..., [ik, n). Otherwise into
// `sections` parts of ceil(n / sections) elements, the last one smaller when n does not divide
// (ONNX Split-18 num_outputs). ONNX `split` sizes [s0, s1, ...] are indices [s0, s0+s1, ...].
struct SplitAttrs : graph::AttrsBase<SplitAttrs> {
    static constexpr const char* kTypeName = "SplitAttrs";
    std::vector<int64_t> indices;
    int64_t sections = 0;
    int64_t axis = 0;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("indices", &indices);
        v.visit("sections", &sections);
        v.visit("axis", &axis);
    }
};

// strided_slice: ONNX Slice. For each listed axis (`axes`; empty means 0, 1, ...), elements
// begin, begin + stride, ... up to but excluding end. Negative begin/end count from the end;
// out-of-range values are clamped (INT64_MAX / INT64_MIN mean "to the end"); strides may be
// negative, never 0; empty strides are all 1.
// Values known only at run time (int64 expressions over dimension variables the executor binds)
// go in the dynamic_ fields instead, with the same meaning; dynamic_begin non-empty selects
// them. Their validity (strides not 0, axes in range and distinct) is the importer's run-time
// check; the result's dimensions are expressions of them.
struct StridedSliceAttrs : graph::AttrsBase<StridedSliceAttrs> {
    static constexpr const char* kTypeName = "StridedSliceAttrs";
    std::vector<int64_t> begin;
    std::vector<int64_t> end;
    std::vector<int64_t> strides;
    std::vector<int64_t> axes;
    std::vector<PrimExpr> dynamic_begin;
    std::vector<PrimExpr> dynamic_end;
    std::vector<PrimExpr> dynamic_strides;
    std::vector<PrimExpr> dynamic_axes;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("begin", &begin);
        v.visit("end", &end);
        v.visit("strides", &strides);
        v.visit("axes", &axes);
        v.visit("dynamic_begin", &dynamic_begin);
        v.visit("dynamic_end", &dynamic_end);
        v.visit("dynamic_strides", &dynamic_strides);
        v.visit("dynamic_axes", &dynamic_axes);
    }
};

// take(data, indices): ONNX Gather. Output shape data.shape[:axis] + indices.shape +
// data.shape[axis+1:]. Indices are int32 or int64; a negative index counts from the end; indices
// still out of range after that are clamped (ONNX leaves them undefined).
struct TakeAttrs : graph::AttrsBase<TakeAttrs> {
    static constexpr const char* kTypeName = "TakeAttrs";
    int64_t axis = 0;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axis", &axis); }
};

// gather_elements(data, indices): ONNX GatherElements; output has the indices' shape;
// out[i..] = data[i.. with indices[i..] at `axis`]. Index handling as take.
struct GatherElementsAttrs : graph::AttrsBase<GatherElementsAttrs> {
    static constexpr const char* kTypeName = "GatherElementsAttrs";
    int64_t axis = 0;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axis", &axis); }
};

// trilu(x, k): ONNX Trilu. Keeps the elements of the last two axes on and above (upper) or on
// and below (lower) the k-th diagonal, zeroes the rest. k is an integer tensor of one element
// read at run time (it never changes the shape).
struct TriluAttrs : graph::AttrsBase<TriluAttrs> {
    static constexpr const char* kTypeName = "TriluAttrs";
    bool upper = true;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("upper", &upper); }
};

// gather_nd(data, indices): ONNX GatherND. The last axis of indices (m long, static) indexes
// data's axes batch_dims .. batch_dims+m-1; the first batch_dims axes of both are shared. Output
// shape indices.shape[:-1] + data.shape[batch_dims+m:]. Index handling as take.
struct GatherNDAttrs : graph::AttrsBase<GatherNDAttrs> {
    static constexpr const char* kTypeName = "GatherNDAttrs";
    int64_t batch_dims = 0;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("batch_dims", &batch_dims); }
};

// reverse_sequence(x, seq_lens): ONNX ReverseSequence. For each b along batch_axis, the first
// seq_lens[b] elements along time_axis are reversed, the rest copied.
struct ReverseSequenceAttrs : graph::AttrsBase<ReverseSequenceAttrs> {
    static constexpr const char* kTypeName = "ReverseSequenceAttrs";
    int64_t batch_axis = 1;
    int64_t time_axis = 0;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("batch_axis", &batch_axis);
        v.visit("time_axis", &time_axis);
    }
};

// scatter_elements(data, indices, updates): ONNX ScatterElements; a copy of data with
// updates[i..] written to the position i.. with indices[i..] at `axis`. reduction "none"
// (duplicate positions: the last update wins), "add" or "mul" combines them with the data.
// scatter_nd(data, indices, updates): ONNX ScatterND; index tuples (the last axis of indices,
// m long) address data's first m axes, updates are indices.shape[:-1] + data.shape[m:].
struct ScatterAttrs : graph::AttrsBase<ScatterAttrs> {
    static constexpr const char* kTypeName = "ScatterAttrs";
    int64_t axis = 0;  // scatter_elements only
    std::string reduction = "none";
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("reduction", &reduction);
    }
};

// pad: pad_width = [before_0, after_0, before_1, after_1, ...], one pair per input axis
// (ONNX's pads [b0, b1, ..., a0, a1, ...] reordered; the text form also reads TVM's nested
// [[b0, a0], [b1, a1], ...]); negative values crop. pad_mode "constant"
// (pad_value), "reflect" (mirror without repeating the edge), "edge" (repeat the edge) or
// "wrap" (periodic).
// Pads known only at run time (int64 expressions over variables the executor binds) go in
// dynamic_pad_width instead. An optional second input, a one-element tensor (as in TVM's
// nn.pad(data, pad_value)), is the constant read at run time (replacing pad_value), converted
// to the data's type.
struct PadAttrs : graph::AttrsBase<PadAttrs> {
    static constexpr const char* kTypeName = "PadAttrs";
    std::vector<int64_t> pad_width;
    std::string pad_mode = "constant";
    double pad_value = 0.0;
    std::vector<PrimExpr> dynamic_pad_width;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("pad_width", &pad_width);
        v.visit("pad_mode", &pad_mode);
        v.visit("pad_value", &pad_value);
        v.visit("dynamic_pad_width", &dynamic_pad_width);
    }
};

// broadcast_to: ONNX Expand: the result has the numpy-broadcast shape of the input and `shape`
// (so a 1 in `shape` keeps the input's dimension).
struct BroadcastToAttrs : graph::AttrsBase<BroadcastToAttrs> {
    static constexpr const char* kTypeName = "BroadcastToAttrs";
    std::vector<int64_t> shape;
    // The result's shape when it is known only at run time (ONNX Expand of a computed shape);
    // replaces shape. Each input dimension must be 1 or equal to its result dimension; the
    // importer has the executor check what it cannot show (bind_values).
    std::vector<PrimExpr> dims;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("shape", &shape);
        v.visit("dims", &dims);
    }
};

// arange(start, delta): start + i * delta for i in [0, length) — ONNX Range whose bounds are
// known only at run time (the importer binds them and computes the length as a dimension);
// start and delta are one-element tensors of the result's dtype.
struct ArangeAttrs : graph::AttrsBase<ArangeAttrs> {
    static constexpr const char* kTypeName = "ArangeAttrs";
    std::vector<PrimExpr> length;  // one int64 dimension
    void visit_fields(graph::AttrVisitor& v) override { v.visit("length", &length); }
};

// tile: numpy.tile; the shorter of reps and the input shape is padded with leading ones.
struct TileAttrs : graph::AttrsBase<TileAttrs> {
    static constexpr const char* kTypeName = "TileAttrs";
    std::vector<int64_t> reps;
    // Repeats known only at run time (dimension variables); replaces reps.
    std::vector<PrimExpr> symbolic_reps;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("reps", &reps);
        v.visit("symbolic_reps", &symbolic_reps);
    }
};

// resize2d: ONNX Resize on the two spatial axes of an NCHW tensor.
//   size          output [height, width]
//   scales        [scale_h, scale_w] as ONNX's `scales` input, used by the coordinate
//                 transformation; empty means output / input size (ONNX's `sizes` input)
//   mode          "nearest", "linear" or "cubic"
//   coordinate_transformation_mode  "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
//                 "align_corners", "asymmetric", "tf_half_pixel_for_nn" or "tf_crop_and_resize"
//                 (which samples the region of interest given as the last input: 8 float32
//                 values, the starts of N, C, H, W then their ends, as fractions of the input;
//                 every axis is resampled, and outputs from outside the input are
//                 extrapolation_value)
//   nearest_mode  "round_prefer_floor", "round_prefer_ceil", "floor" or "ceil"
//   cubic_coeff_a the cubic kernel's A
//   exclude_outside  cubic: weights of taps outside the image are 0 and the rest renormalized
//   dynamic_size  the output [height, width] as int64 expressions over variables the executor
//                 binds (sizes or scales known only at run time); replaces size
// An optional second input, ONNX's 4 float32 scales (N, C, H, W) read at run time, replaces
// `scales`.
// grid_sample(x[N, C, H, W], grid[N, Ho, Wo, 2]): ONNX GridSample (opset 16); grid holds
// (x, y) in [-1, 1]. mode "bilinear", "nearest" or "bicubic"; padding_mode "zeros", "border" or
// "reflection"; align_corners maps -1 and 1 to the corner pixels' centres (else their edges).
struct GridSampleAttrs : graph::AttrsBase<GridSampleAttrs> {
    static constexpr const char* kTypeName = "GridSampleAttrs";
    std::string mode = "bilinear";
    std::string padding_mode = "zeros";
    bool align_corners = false;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("mode", &mode);
        v.visit("padding_mode", &padding_mode);
        v.visit("align_corners", &align_corners);
    }
};

// roi_align(x[N, C, H, W], rois[R, 4], batch_indices[R]): ONNX RoiAlign with mode "avg" and a
// static sampling_ratio (> 0): out[r, c, i, j] averages sampling_ratio^2 bilinear samples of
// bin (i, j) of roi r (x1, y1, x2, y2, scaled by spatial_scale). half_pixel shifts coordinates
// by -0.5; output_half_pixel (the legacy mode) makes rois at least 1 pixel wide.
struct RoiAlignAttrs : graph::AttrsBase<RoiAlignAttrs> {
    static constexpr const char* kTypeName = "RoiAlignAttrs";
    int64_t output_height = 1;
    int64_t output_width = 1;
    int64_t sampling_ratio = 1;
    double spatial_scale = 1.0;
    bool half_pixel = true;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("output_height", &output_height);
        v.visit("output_width", &output_width);
        v.visit("sampling_ratio", &sampling_ratio);
        v.visit("spatial_scale", &spatial_scale);
        v.visit("half_pixel", &half_pixel);
    }
};

struct Resize2DAttrs : graph::AttrsBase<Resize2DAttrs> {
    static constexpr const char* kTypeName = "Resize2DAttrs";
    std::vector<int64_t> size;
    std::vector<double> scales;
    std::string mode = "nearest";
    std::string coordinate_transformation_mode = "half_pixel";
    std::string nearest_mode = "round_prefer_floor";
    double cubic_coeff_a = -0.75;
    bool exclude_outside = false;
    double extrapolation_value = 0.0;
    std::vector<PrimExpr> dynamic_size;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("size", &size);
        v.visit("dynamic_size", &dynamic_size);
        v.visit("scales", &scales);
        v.visit("mode", &mode);
        v.visit("coordinate_transformation_mode", &coordinate_transformation_mode);
        v.visit("nearest_mode", &nearest_mode);
        v.visit("cubic_coeff_a", &cubic_coeff_a);
        v.visit("exclude_outside", &exclude_outside);
        v.visit("extrapolation_value", &extrapolation_value);
    }
};

// depth_to_space (NCHW): ONNX DepthToSpace; mode "DCR" (depth-column-row) or "CRD".
struct DepthToSpaceAttrs : graph::AttrsBase<DepthToSpaceAttrs> {
    static constexpr const char* kTypeName = "DepthToSpaceAttrs";
    int64_t blocksize = 1;
    std::string mode = "DCR";
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("blocksize", &blocksize);
        v.visit("mode", &mode);
    }
};

// space_to_depth (NCHW): ONNX SpaceToDepth.
struct SpaceToDepthAttrs : graph::AttrsBase<SpaceToDepthAttrs> {
    static constexpr const char* kTypeName = "SpaceToDepthAttrs";
    int64_t blocksize = 1;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("blocksize", &blocksize); }
};

}  // namespace anvil::ops
