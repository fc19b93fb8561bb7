// Rewrites every QNN op (ops/qnn.h) into arithmetic on the core ops, as TVM's QNN
// canonicalization does, so that later passes and lowering see only ops with kernels:
//   quantize    -> clip(round(x / scale) + zp), cast       (float32, half to even)
//   dequantize  -> (cast(q, int32) - zp) as float32 * scale
//   requantize  -> fixed_point_multiply(cast(q, int32) - in_zp, M, S) + out_zp, clip, cast,
//                  M and S the fixed-point form of in_scale / out_scale (constants); with
//                  compute_dtype float32/float64 round((q - in_zp) * ratio) + out_zp instead
//   add / subtract -> TFLite's integer ADD / SUB (both operands at a common scale with 20 extra
//                  bits, added, scaled to the output)
//   mul         -> (lhs - lhs_zp) * (rhs - rhs_zp) in int32, requantized from lhs_scale * rhs_scale
//                  (8-bit operands: exact); wider operands in float64, which int32 would
//                  overflow (16-bit ones: exact), scaled and rounded half up
//   concatenate -> each input requantized to the output's scale, then concatenate
//   products (conv2d, conv2d_transpose, dense, batch_matmul) -> the integer op (out_dtype int32)
//                  on the operands less their zero points; a convolution's or dense's data keeps
//                  its 8-bit values: padded with its zero point, with a per-channel correction
//   avg_pool2d, sigmoid, tanh, hardswish -> dequantize, the float op, quantize
// The zero-point terms of constants fold afterwards (fold_constants); fold_qnn_quantize has
// quantized constant weights before. The arithmetic shared by these rewrites (requantize in
// fixed point or float, zero points along an axis) is QnnArithmetic (qnn_arithmetic.h).
#include <algorithm>
#include <cmath>

#include "graph/constant_values.h"
#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "graph/passes/qnn_arithmetic.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/qnn.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::graph {

namespace {

class QnnCanonicalizer : public ExprMutator, private QnnArithmetic {
protected:
    Expr mutate_(const Call* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        auto* call = e.as<Call>();
        if (!call || !call->op.defined() || call->op->name.rfind("qnn.", 0) != 0) return e;
        rewriting(*call);
        const std::string& name = call->op->name;
        const auto& a = call->args;
        if (name == "qnn.quantize") return quantize(*call);
        if (name == "qnn.dequantize") {
            return dequantize(a[0], a[1], a[2], attrs_of<ops::DequantizeAttrs>(*call).axis);
        }
        if (name == "qnn.requantize") {
            const auto& r = attrs_of<ops::RequantizeAttrs>(*call);
            return requantize(a[0], a[1], a[2], a[3], a[4], r.axis, r.rounding, r.out_dtype,
                              r.compute_dtype);
        }
        if (name == "qnn.add" || name == "qnn.subtract") return add_or_subtract(*call);
        if (name == "qnn.mul") return mul(*call);
        if (name == "qnn.concatenate") return concatenate(*call);
        if (name == "qnn.conv2d" || name == "qnn.conv2d_transpose" || name == "qnn.dense" ||
            name == "qnn.batch_matmul") {
            return product(*call);
        }
        if (name == "qnn.avg_pool2d") return through_float(*call, "nn.avg_pool2d");
        if (name == "qnn.sigmoid") return through_float(*call, "sigmoid");
        if (name == "qnn.tanh") return through_float(*call, "tanh");
        if (name == "qnn.hardswish") return through_float(*call, "nn.hardswish");
        internal_error() << "canonicalize_qnn has no rewrite of " << name;
        ANVIL_UNREACHABLE();
    }

private:
    Expr quantize(const Call& c) {
        const auto& a = attrs_of<ops::QuantizeAttrs>(c);
        return quantize_float(c.args[0], c.args[1], c.args[2], a.axis, a.out_dtype);
    }

    // TFLite's integer ADD / SUB: both operands, less their zero points and shifted left for
    // precision (20 bits for 8-bit data, 15 for 16-bit), scaled to the same scale (twice the larger
    // input scale), added, then scaled to the output: one rounding of each operand at 20 extra
    // bits, so the result is the real sum rounded, almost always exactly.
    Expr add_or_subtract(const Call& c) {
        const auto& a = attrs_of<ops::QnnBinaryAttrs>(c);
        const auto& args = c.args;
        DataType out = tensor_of(args[0]).dtype;
        int bits = std::max(tensor_of(args[0]).dtype.bits(), tensor_of(args[1]).dtype.bits());
        int left_shift = bits <= 8 ? 20 : bits <= 16 ? 15 : 0;
        std::vector<double> ls = scale_values(args[2], "lhs scale");
        std::vector<double> rs = scale_values(args[4], "rhs scale");
        if (ls.empty() || rs.empty()) user_error(loc_) << op_name_ << ": a scale has no values";
        double twice_max = 2 * std::max(*std::max_element(ls.begin(), ls.end()),
                                        *std::max_element(rs.begin(), rs.end()));
        Expr shift = make_constant_of({}, DataType::int32(), {std::ldexp(1.0, left_shift)}, loc_);
        auto operand = [&](const Expr& q, const Expr& zp, const std::vector<double>& scale,
                           int64_t axis) {
            Expr x = minus_zero_point(cast(q, DataType::int32()), zp, axis);
            if (left_shift > 0) x = call("multiply", {x, shift});
            std::vector<double> ratios;
            for (double v : scale) ratios.push_back(v / twice_max);
            return scale_by(x, ratios, axis, "TFLITE");
        };
        Expr l = operand(args[0], args[3], ls, a.lhs_axis);
        Expr r = operand(args[1], args[5], rs, a.rhs_axis);
        Expr y = call(c.op->name == "qnn.add" ? "add" : "subtract", {l, r});
        double out_s = scale_values(args[6], "output scale")[0];
        y = scale_by(y, {twice_max / (std::ldexp(1.0, left_shift) * out_s)}, -1, "TFLITE");
        if (uniform_value(args[7]) != 0.0) y = call("add", {y, along(args[7], rank_of(y), -1)});
        return saturate(y, out);
    }

    Expr mul(const Call& c) {
        const auto& a = attrs_of<ops::QnnBinaryAttrs>(c);
        const auto& args = c.args;
        DataType out = tensor_of(args[0]).dtype;
        // The product's scale: lhs_scale * rhs_scale, along the axis of the one per-axis scale.
        std::vector<double> ls = scale_values(args[2], "lhs scale");
        std::vector<double> rs = scale_values(args[4], "rhs scale");
        if (ls.size() > 1 && rs.size() > 1) {
            user_error(loc_) << "qnn.mul: per-axis scales on both operands are not supported "
                                "(one operand's scale must be a scalar)";
        }
        std::vector<double> scale;
        for (double l_s : ls) {
            for (double r_s : rs) scale.push_back(l_s * r_s);
        }
        // 8-bit operands less their zero points multiply exactly in int32, and requantize in
        // fixed point. Wider ones would overflow it: their differences and product are float64
        // (exact for 16-bit operands, one rounding at 53 bits for 32-bit ones), scaled and rounded
        // half up as requantize's UPWARD rounds.
        const bool wide =
            tensor_of(args[0]).dtype.bits() > 8 || tensor_of(args[1]).dtype.bits() > 8;
        const DataType t = wide ? DataType::float64() : DataType::int32();
        Expr l = minus_zero_point(cast(args[0], t), args[3], a.lhs_axis);
        Expr r = minus_zero_point(cast(args[1], t), args[5], a.rhs_axis);
        Expr product = call("multiply", {l, r});
        int64_t rank = rank_of(product);
        int64_t axis = -1;
        if (ls.size() > 1)
            axis = normalized(a.lhs_axis, rank_of(args[0])) + rank - rank_of(args[0]);
        if (rs.size() > 1)
            axis = normalized(a.rhs_axis, rank_of(args[1])) + rank - rank_of(args[1]);
        if (wide) {
            double out_s = scale_values(args[6], "output scale")[0];
            for (double& v : scale) v /= out_s;
            return scaled_in_float(product, scale, axis, /*half_up=*/true, args[7], out);
        }
        Expr zero = make_constant_of({}, DataType::int32(), {0}, loc_);
        return requantize_from(product, scale, zero, args[6], args[7], axis, "UPWARD", out);
    }

    static int64_t normalized(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

    Expr concatenate(const Call& c) {
        auto* data = c.args[0].as<Tuple>();
        auto* scales = c.args[1].as<Tuple>();
        auto* zps = c.args[2].as<Tuple>();
        if (!data || !scales || !zps) {
            user_error(loc_) << "qnn.concatenate: the data, scales and zero points must be "
                                "written as tuples (a, b, ...)";
        }
        DataType out = tensor_of(data->fields[0]).dtype;
        std::vector<Expr> parts;
        for (size_t i = 0; i < data->fields.size(); ++i) {
            const Expr& q = data->fields[i];
            // Unchanged only where the parameters are known to be the output's (two unknown
            // ones may differ: requantize then asks for constant scales).
            auto equal = [](const Expr& a, const Expr& b) {
                auto va = constant_values(a), vb = constant_values(b);
                return a.same_as(b) || (va && vb && *va == *vb);
            };
            bool same = equal(scales->fields[i], c.args[3]) && equal(zps->fields[i], c.args[4]) &&
                        tensor_of(q).dtype == out;
            parts.push_back(same ? q
                                 : requantize(q, scales->fields[i], zps->fields[i], c.args[3],
                                              c.args[4], -1, "UPWARD", out));
        }
        return call("concatenate", parts, c.attrs);
    }

    // `q` less its zero point (along `axis`), in a type that holds the difference: int16 for
    // 8-bit values, int32 otherwise. `q` itself when the zero point is all zeros.
    Expr centered(const Expr& q, const Expr& zp, int64_t axis) {
        if (uniform_value(zp) == 0.0) return q;
        DataType t = tensor_of(q).dtype.bits() <= 8 ? DataType::int_(16) : DataType::int32();
        return minus_zero_point(cast(q, t), zp, axis);
    }

    // int8 data `x` with a scalar zero point `zx` as uint8 data x + 128 with zero point zx + 128:
    // the same differences, in the type whose words of 4 channels the blocked convolutions read
    // (dot_u8s8: blockable_convs.cpp); int8 data would stay in a widened NCHW convolution (ONNX
    // models with int8 activations; the TFLite import shifts its data itself). The shift is
    // elementwise, so it fuses into the producer's kernel. Grouped and depthwise convolutions
    // keep their data (depthwise ones block int8 data as it is).
    void shift_to_uint8(Expr* x, Expr* zx) {
        if (tensor_of(*x).dtype != DataType::int_(8) || tensor_of(*zx).ndim() != 0) return;
        // As a byte, x + 128 is x XOR 0x80: one instruction that leaves the producer's
        // saturation to int8 a signed pack, where an add in int32 would keep its clamp.
        Expr flipped =
            call("bitwise_xor", {*x, make_constant_of({}, DataType::int_(8), {-128}, loc_)});
        *x = cast(flipped, DataType::uint(8));
        std::optional<std::vector<double>> zero_point = constant_values(*zx);
        *zx = zero_point ? make_constant_of({}, DataType::int32(), {(*zero_point)[0] + 128}, loc_)
                         : call("add", {cast(*zx, DataType::int32()),
                                        make_constant_of({}, DataType::int32(), {128}, loc_)});
    }

    // The integer products: nn.conv2d / nn.conv2d_transpose / nn.dense / nn.batch_matmul with
    // out_dtype int32 on the operands less their zero points. Where the data's zero point is a
    // scalar and the product is a convolution or dense with a weight (the usual case), the data
    // is not centered: it is padded with its zero point (the real 0) and the product less
    // zx * (the sum of each output channel's weights, a constant once folded) follows, so the
    // kernel reads the data's own 8-bit values.
    Expr product(const Call& c) {
        const std::string& name = c.op->name;
        const auto& args = c.args;
        Expr x = args[0];
        Expr zx = args[2];
        bool weighted = name == "qnn.conv2d" || name == "qnn.dense";
        if (name == "qnn.conv2d" && attrs_of<ops::QnnConv2DAttrs>(c).groups == 1) {
            shift_to_uint8(&x, &zx);
        }
        // The axis of b that a per-channel zero point runs along: output channels.
        Expr w = centered(args[1], args[3], name == "qnn.conv2d_transpose" ? 1 : 0);
        bool raw_data = weighted && uniform_value(zx) != 0.0 && tensor_of(zx).ndim() == 0;
        Expr data = raw_data ? x : centered(x, zx, -1);
        Expr r;
        if (name == "qnn.conv2d") {
            auto attrs = ops::integer_attrs(attrs_of<ops::QnnConv2DAttrs>(c));
            const std::vector<int64_t> p = attrs->padding;
            if (raw_data && std::any_of(p.begin(), p.end(), [](int64_t v) { return v != 0; })) {
                auto pad = make_ref<ops::PadAttrs>();
                const_cast<ops::PadAttrs*>(pad.get())->pad_width = {0,    0,    0,    0,
                                                                    p[0], p[2], p[1], p[3]};
                data = call("nn.pad", {data, cast(zx, tensor_of(x).dtype)}, pad);
                const_cast<ops::Conv2DAttrs*>(attrs.get())->padding = {0, 0, 0, 0};
            }
            r = call("nn.conv2d", {data, w}, attrs);
        } else if (name == "qnn.conv2d_transpose") {
            r = call("nn.conv2d_transpose", {data, w},
                     ops::integer_attrs(attrs_of<ops::QnnConv2DTransposeAttrs>(c)));
        } else if (name == "qnn.dense") {
            r = call("nn.dense", {data, w}, ops::integer_attrs(attrs_of<ops::QnnDenseAttrs>(c)));
        } else {
            r = call("nn.batch_matmul", {data, w},
                     ops::integer_attrs(attrs_of<ops::QnnBatchMatmulAttrs>(c)));
        }
        if (!raw_data) return r;
        // zx * sum of each output channel's weights: [O, 1, 1] for a convolution, [N] for dense.
        auto sum = make_ref<ops::ReduceAttrs>();
        auto* sa = const_cast<ops::ReduceAttrs*>(sum.get());
        sa->axes = name == "qnn.conv2d" ? std::vector<int64_t>{1, 2, 3} : std::vector<int64_t>{1};
        Expr per_channel = call("sum", {cast(w, DataType::int32())}, sum);
        if (name == "qnn.conv2d") per_channel = reshape(per_channel, {-1, 1, 1});
        return call("subtract", {r, call("multiply", {per_channel, zx})});
    }

    // dequantize, the float op `op` (with the call's attributes when they are the op's kind),
    // quantize to the input's type.
    Expr through_float(const Call& c, const std::string& op) {
        const auto& args = c.args;
        const Op* f = find_op(op);
        bool same_attrs = std::string(c.attrs->type_name()) == f->make_default_attrs()->type_name();
        Expr y =
            call(op, {dequantize(args[0], args[1], args[2], -1)}, same_attrs ? c.attrs : nullptr);
        return quantize_float(y, args[3], args[4], -1, tensor_of(args[0]).dtype);
    }
};

}  // namespace

IRModule canonicalize_qnn(const IRModule& m, const PassContext&) {
    return rewrite_functions(m, [](const Ref<Function>& f) {
        Expr body = QnnCanonicalizer().mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
