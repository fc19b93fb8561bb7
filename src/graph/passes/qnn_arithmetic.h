// The integer and float arithmetic canonicalize_qnn writes QNN ops as, on the core ops: casts,
// clips, zero points broadcast along an axis, quantize / dequantize / requantize (fixed-point or
// in float), each call made at the source location of the QNN call being rewritten.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/expr.h"

namespace anvil::graph {

class QnnArithmetic {
protected:
    static const TensorType& tensor_of(const Expr& e);
    static int64_t rank_of(const Expr& e);
    // ops::quantized_range for float32 values cast to t afterwards: INT32_MAX is no float32 (it
    // rounds to 2^31, which the cast cannot hold), so the largest float32 below it.
    static std::pair<double, double> float_range_of(DataType t);

    // The QNN call being rewritten: the location of what is made, the op named in messages.
    void rewriting(const Call& c) {
        loc_ = c.loc;
        op_name_ = c.op->name;
    }

    Expr call(const std::string& op, std::vector<Expr> args, Ref<Attrs> attrs = nullptr);
    Expr cast(const Expr& x, DataType t);
    Expr clip(const Expr& x, double lo, double hi);
    Expr reshape(const Expr& x, std::vector<int64_t> shape);

    // A scale or zero point shaped to broadcast against a tensor of rank `rank` along `axis`:
    // a scalar when it has one value, else [n, 1, ..., 1] (rank - axis dimensions).
    Expr along(const Expr& p, int64_t rank, int64_t axis);
    // x - zp, unless zp is all zeros.
    Expr minus_zero_point(const Expr& x, const Expr& zp, int64_t axis);
    // x clipped to t's range and cast to t (int32 x as it is).
    Expr saturate(const Expr& x, DataType t);
    // The values of a scale, which must be a constant here.
    std::vector<double> scale_values(const Expr& scale, const char* what);

    Expr quantize_float(const Expr& x_any, const Expr& scale, const Expr& zp, int64_t axis,
                        DataType out_dtype);
    Expr dequantize(const Expr& q, const Expr& scale, const Expr& zp, int64_t axis);

    // q (any quantized type) from (in_scale, in_zp) to (out_scale, out_zp): int32 before the
    // final saturation when out_dtype is int32.
    // With compute_dtype float32 / float64: (q - in_zp) times in_scale / out_scale computed in
    // that type, rounded half to even, plus out_zp, saturated.
    Expr requantize(const Expr& q, const Expr& in_scale, const Expr& in_zp, const Expr& out_scale,
                    const Expr& out_zp, int64_t axis, const std::string& rounding,
                    DataType out_dtype, const std::string& compute_dtype = "int64");
    // The float32 or float64 `x` times `ratios` (one, or one per index of `axis`), rounded half to
    // even (`half_up`: half up), plus out_zp, saturated to out_dtype.
    Expr scaled_in_float(const Expr& x, const std::vector<double>& ratios, int64_t axis,
                         bool half_up, const Expr& out_zp, DataType out_dtype);
    // requantize with the input scale's values given (float32 values or their products, in
    // double, as TVM and TFLite compute the ratio).
    Expr requantize_from(const Expr& q, const std::vector<double>& in_s, const Expr& in_zp,
                         const Expr& out_scale, const Expr& out_zp, int64_t axis,
                         const std::string& rounding, DataType out_dtype);
    // The int32 `x` times `ratios` (one, or one per index of `axis`) in fixed point.
    Expr scale_by(const Expr& x, const std::vector<double>& ratios, int64_t axis,
                  const std::string& rounding);

    SourceLoc loc_;        // of the QNN call being rewritten
    std::string op_name_;  // its op, for messages
};

}  // namespace anvil::graph
