// The QNN dialect (ops/qnn.cpp, ops/qnn_conv.cpp): quantized tensors as integers with a scale
// and a zero point, real = scale * (q - zero_point), as TVM's QNN ops state them. Scales
// (float32) and zero points (int32) are operands, each a scalar or a 1-D tensor along the op's
// `axis` of the tensor it describes (per-channel). QNN ops have no kernels of their own: graph
// pass canonicalize_qnn rewrites them into integer arithmetic on the core ops, in the pipeline
// once external code generators have taken the QNN layers they compute (dnnl.qnn.conv2d).
//
//   qnn.quantize(x: float, scale, zp)            -> saturate(round(x / scale) + zp), out_dtype
//   qnn.dequantize(q, scale, zp)                 -> (q - zp) * scale, float32
//   qnn.requantize(q, in_scale, in_zp, out_scale, out_zp)
//                                                -> saturate(fixed-point (q - in_zp) *
//                                                   in_scale / out_scale + out_zp), out_dtype
//   qnn.conv2d / qnn.conv2d_transpose / qnn.dense / qnn.batch_matmul(a, b, a_zp, b_zp, a_scale,
//       b_scale)                                 -> sum (a - a_zp) * (b - b_zp) in out_dtype
//       (int32); b's zero point and scale may be per output channel. The scales are carried for
//       the requantize that follows; the result itself has scale a_scale * b_scale.
//   qnn.add / qnn.subtract / qnn.mul(a, b, a_scale, a_zp, b_scale, b_zp, out_scale, out_zp)
//                                                -> the quantized sum, difference, product
//   qnn.concatenate((q...), (scale...), (zp...), out_scale, out_zp)
//   qnn.avg_pool2d(q, in_scale, in_zp, out_scale, out_zp)
//   qnn.sigmoid / qnn.tanh / qnn.hardswish(q, in_scale, in_zp, out_scale, out_zp)
//
// Rounding is half to even in quantize (ONNX's and PyTorch's), and as `rounding` says in
// requantize: "UPWARD" (half up, TVM's default), "TONEAREST" (half away from zero) or "TFLITE"
// (TFLite's two-step fixed-point definition, bit-exact with its reference kernels).
#pragma once

#include <string>
#include <vector>

#include "graph/attrs.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "support/source_loc.h"

namespace anvil::ops {

// qnn.quantize. `axis` is the axis of x that a 1-D scale and zero point run along.
struct QuantizeAttrs : graph::AttrsBase<QuantizeAttrs> {
    static constexpr const char* kTypeName = "QuantizeAttrs";
    int64_t axis = -1;
    DataType out_dtype = DataType::int_(8);
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("out_dtype", &out_dtype);
    }
};

// qnn.dequantize.
struct DequantizeAttrs : graph::AttrsBase<DequantizeAttrs> {
    static constexpr const char* kTypeName = "DequantizeAttrs";
    int64_t axis = -1;
    void visit_fields(graph::AttrVisitor& v) override { v.visit("axis", &axis); }
};

// qnn.requantize. The input scale and zero point may run along `axis`; the output's are scalars.
// compute_dtype (TVM's attribute) is how the scale ratio applies: "int64", a fixed-point
// multiplier with `rounding`; "float32" or "float64", (q - in_zp) times the ratio computed in
// that type (float32: (in_scale / out_scale) in float32, as ONNX Runtime's and PyTorch's integer
// kernels requantize), rounded half to even.
struct RequantizeAttrs : graph::AttrsBase<RequantizeAttrs> {
    static constexpr const char* kTypeName = "RequantizeAttrs";
    int64_t axis = -1;
    std::string rounding = "UPWARD";
    std::string compute_dtype = "int64";
    DataType out_dtype = DataType::int_(8);
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("axis", &axis);
        v.visit("rounding", &rounding);
        v.visit("compute_dtype", &compute_dtype);
        v.visit("out_dtype", &out_dtype);
    }
};

// qnn.conv2d: nn.conv2d's geometry (NCHW data, OIHW weight) on quantized operands.
// `channels` and `kernel_size` are the weight's (0 / empty: not stated; stated, they must match).
struct QnnConv2DAttrs : graph::AttrsBase<QnnConv2DAttrs> {
    static constexpr const char* kTypeName = "QnnConv2DAttrs";
    std::vector<int64_t> strides{1, 1};
    std::vector<int64_t> padding{0, 0, 0, 0};  // [top, left, bottom, right]
    std::vector<int64_t> dilation{1, 1};
    int64_t groups = 1;
    int64_t channels = 0;
    std::vector<int64_t> kernel_size;
    DataType out_dtype = DataType::int32();
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("dilation", &dilation);
        v.visit("groups", &groups);
        v.visit("channels", &channels);
        v.visit("kernel_size", &kernel_size);
        v.visit("out_dtype", &out_dtype);
    }
};

// qnn.conv2d_transpose: nn.conv2d_transpose's geometry (IOHW weight) on quantized operands.
struct QnnConv2DTransposeAttrs : graph::AttrsBase<QnnConv2DTransposeAttrs> {
    static constexpr const char* kTypeName = "QnnConv2DTransposeAttrs";
    std::vector<int64_t> strides{1, 1};
    std::vector<int64_t> padding{0, 0, 0, 0};
    std::vector<int64_t> output_padding{0, 0};
    std::vector<int64_t> dilation{1, 1};
    int64_t groups = 1;
    int64_t channels = 0;
    std::vector<int64_t> kernel_size;
    DataType out_dtype = DataType::int32();
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("output_padding", &output_padding);
        v.visit("dilation", &dilation);
        v.visit("groups", &groups);
        v.visit("channels", &channels);
        v.visit("kernel_size", &kernel_size);
        v.visit("out_dtype", &out_dtype);
    }
};

// qnn.dense(x [..., K], w [units, K]); `units` 0: not stated.
struct QnnDenseAttrs : graph::AttrsBase<QnnDenseAttrs> {
    static constexpr const char* kTypeName = "QnnDenseAttrs";
    int64_t units = 0;
    DataType out_dtype = DataType::int32();
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("units", &units);
        v.visit("out_dtype", &out_dtype);
    }
};

// qnn.batch_matmul(a [B, M, K], b [B, N, K] (transpose_b, TVM's default) or [B, K, N]).
struct QnnBatchMatmulAttrs : graph::AttrsBase<QnnBatchMatmulAttrs> {
    static constexpr const char* kTypeName = "QnnBatchMatmulAttrs";
    bool transpose_a = false;
    bool transpose_b = true;
    DataType out_dtype = DataType::int32();
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("transpose_a", &transpose_a);
        v.visit("transpose_b", &transpose_b);
        v.visit("out_dtype", &out_dtype);
    }
};

// qnn.add / qnn.subtract / qnn.mul: numpy broadcasting; a 1-D scale or zero point of an operand
// runs along its lhs_axis / rhs_axis. The result has the lhs's dtype.
struct QnnBinaryAttrs : graph::AttrsBase<QnnBinaryAttrs> {
    static constexpr const char* kTypeName = "QnnBinaryAttrs";
    int64_t lhs_axis = -1;
    int64_t rhs_axis = -1;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("lhs_axis", &lhs_axis);
        v.visit("rhs_axis", &rhs_axis);
    }
};

// fixed_point_multiply(x: int32, multiplier: int32, shift: int32) -> int32, broadcasting:
// round(x * multiplier * 2^(shift - 31)) saturated to int32, with `rounding` as in requantize
// (multiplier in [2^30, 2^31) or 0, shift in [-31, 30]: frexp of a positive real; a shift
// outside that range is clamped to it). How canonicalize_qnn states requantize's scale ratio in
// integers. is_lshift_required (TVM's name) false says that no shift is positive (every ratio
// is below 1), as the importers set it from their constant shifts: rounding "TFLITE" then skips
// TFLite's saturating left shift, a kernel about half as long; a positive shift counts as 0.
struct FixedPointMultiplyAttrs : graph::AttrsBase<FixedPointMultiplyAttrs> {
    static constexpr const char* kTypeName = "FixedPointMultiplyAttrs";
    std::string rounding = "UPWARD";
    bool is_lshift_required = true;
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("rounding", &rounding);
        v.visit("is_lshift_required", &is_lshift_required);
    }
};

// fixed_point_multiply's attributes for `rounding` and these shifts (is_lshift_required where one
// of them is positive).
Ref<FixedPointMultiplyAttrs> fixed_point_multiply_attrs(const std::string& rounding,
                                                        const std::vector<int32_t>& shifts);

// The attributes of the core op each QNN product computes on its operands less their zero
// points: the same geometry in integer form (out_dtype int32). Its type rule checks the QNN op
// with them; canonicalize_qnn builds the core op from them.
Ref<Conv2DAttrs> integer_attrs(const QnnConv2DAttrs& q);
Ref<Conv2DTransposeAttrs> integer_attrs(const QnnConv2DTransposeAttrs& q);
Ref<DenseAttrs> integer_attrs(const QnnDenseAttrs& q);
Ref<MatmulAttrs> integer_attrs(const QnnBatchMatmulAttrs& q);

// The roundings of qnn.requantize and fixed_point_multiply; UserError at `loc` for another.
void check_rounding(const std::string& rounding, const std::string& op, const SourceLoc& loc);

// The real `ratio` (> 0) as a fixed-point multiplier and shift: ratio = m * 2^(shift - 31), m in
// [2^30, 2^31), TFLite's QuantizeMultiplier; {0, 0} below 2^-32 (the product is 0 then), and
// {2^31 - 1, 30} where the significand of a ratio just below 2^30 rounds up. UserError at `loc`
// when ratio >= 2^30 or is not a positive finite number.
struct FixedPoint {
    int32_t multiplier;
    int32_t shift;
};
FixedPoint fixed_point_of(double ratio, const std::string& what, const SourceLoc& loc);

// The range quantized values of type `t` saturate to: [0, 255] for uint8, [-128, 127] for int8,
// likewise for 16 bits, int32's own otherwise.
std::pair<double, double> quantized_range(DataType t);

}  // namespace anvil::ops
