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
// quantized constant weights before.
#include <algorithm>
#include <cmath>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "ops/activation.h"
#include "ops/conv.h"
#include "ops/dense.h"
#include "ops/elementwise.h"
#include "ops/pool.h"
#include "ops/qnn.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::graph {

namespace {

const TensorType& tensor_of(const Expr& e) {
    return *e->type.as<TensorType>();
}

int64_t rank_of(const Expr& e) {
    return static_cast<int64_t>(tensor_of(e).ndim());
}

// ops::quantized_range for float32 values cast to t afterwards: INT32_MAX is no float32 (it
// rounds to 2^31, which the cast cannot hold), so the largest float32 below it.
std::pair<double, double> float_range_of(DataType t) {
    auto [lo, hi] = ops::quantized_range(t);
    return {lo, t == DataType::int32() ? 2147483520.0 : hi};
}

class QnnCanonicalizer : public ExprMutator {
protected:
    Expr mutate_(const Call* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        auto* call = e.as<Call>();
        if (!call || !call->op.defined() || call->op->name.rfind("qnn.", 0) != 0) return e;
        loc_ = call->loc;
        op_name_ = call->op->name;
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
    Expr call(const std::string& op, std::vector<Expr> args, Ref<Attrs> attrs = nullptr) {
        return make_call(*find_op(op), std::move(args), std::move(attrs), loc_);
    }

    Expr cast(const Expr& x, DataType t) {
        if (tensor_of(x).dtype == t) return x;
        auto attrs = make_ref<ops::CastAttrs>();
        const_cast<ops::CastAttrs*>(attrs.get())->dtype = t;
        return call("cast", {x}, attrs);
    }

    Expr clip(const Expr& x, double lo, double hi) {
        auto attrs = make_ref<ops::ClipAttrs>();
        auto* c = const_cast<ops::ClipAttrs*>(attrs.get());
        c->a_min = lo;
        c->a_max = hi;
        return call("clip", {x}, attrs);
    }

    Expr reshape(const Expr& x, std::vector<int64_t> shape) {
        auto attrs = make_ref<ops::ReshapeAttrs>();
        const_cast<ops::ReshapeAttrs*>(attrs.get())->newshape = std::move(shape);
        return call("reshape", {x}, attrs);
    }

    // A scale or zero point shaped to broadcast against a tensor of rank `rank` along `axis`:
    // a scalar when it has one value, else [n, 1, ..., 1] (rank - axis dimensions).
    Expr along(const Expr& p, int64_t rank, int64_t axis) {
        const TensorType& t = tensor_of(p);
        if (t.ndim() == 0) return p;
        int64_t n = t.static_shape()[0];
        if (n == 1) return reshape(p, {});
        if (axis < 0) axis += rank;
        std::vector<int64_t> shape(static_cast<size_t>(rank - axis), 1);
        shape[0] = n;
        return reshape(p, shape);
    }

    // x - zp, unless zp is all zeros.
    Expr minus_zero_point(const Expr& x, const Expr& zp, int64_t axis) {
        if (uniform_value(zp) == 0.0) return x;
        return call("subtract", {x, cast(along(zp, rank_of(x), axis), tensor_of(x).dtype)});
    }

    Expr saturate(const Expr& x, DataType t) {
        auto [lo, hi] = ops::quantized_range(t);
        if (t == DataType::int32() && tensor_of(x).dtype == DataType::int32()) return x;
        return cast(clip(x, lo, hi), t);
    }

    // The values of a scale, which must be a constant here.
    std::vector<double> scale_values(const Expr& scale, const char* what) {
        auto values = constant_values(scale);
        if (!values) {
            user_error(loc_) << op_name_ << ": the " << what
                             << " must be a constant (a compile-time value) to become a "
                                "fixed-point multiplier";
        }
        return *values;
    }

    Expr quantize(const Call& c) {
        const auto& a = attrs_of<ops::QuantizeAttrs>(c);
        return quantize_float(c.args[0], c.args[1], c.args[2], a.axis, a.out_dtype);
    }

    Expr quantize_float(const Expr& x_any, const Expr& scale, const Expr& zp, int64_t axis,
                        DataType out_dtype) {
        Expr x = cast(x_any, DataType::float32());
        int64_t rank = rank_of(x);
        Expr q = call("round", {call("divide", {x, along(scale, rank, axis)})});
        if (uniform_value(zp) != 0.0) {
            q = call("add", {q, cast(along(zp, rank, axis), DataType::float32())});
        }
        auto [lo, hi] = float_range_of(out_dtype);
        return cast(clip(q, lo, hi), out_dtype);
    }

    Expr dequantize(const Expr& q, const Expr& scale, const Expr& zp, int64_t axis) {
        Expr v = minus_zero_point(cast(q, DataType::int32()), zp, axis);
        return call("multiply", {cast(v, DataType::float32()), along(scale, rank_of(q), axis)});
    }

    // q (any quantized type) from (in_scale, in_zp) to (out_scale, out_zp): int32 before the
    // final saturation when out_dtype is int32.
    // With compute_dtype float32 / float64: (q - in_zp) times in_scale / out_scale computed in
    // that type, rounded half to even, plus out_zp, saturated.
    Expr requantize(const Expr& q, const Expr& in_scale, const Expr& in_zp, const Expr& out_scale,
                    const Expr& out_zp, int64_t axis, const std::string& rounding,
                    DataType out_dtype, const std::string& compute_dtype = "int64") {
        std::vector<double> s = scale_values(in_scale, "input scale");
        if (compute_dtype == "int64") {
            return requantize_from(q, s, in_zp, out_scale, out_zp, axis, rounding, out_dtype);
        }
        DataType ft = compute_dtype == "float32" ? DataType::float32() : DataType::float64();
        double out_s = scale_values(out_scale, "output scale")[0];
        for (double& v : s) {
            v = ft.bits() == 32 ? double(float(v) / float(out_s)) : v / out_s;
            if (!(v > 0) || !std::isfinite(v)) {
                user_error(loc_) << op_name_ << ": the scale ratio " << v << " (input scale / "
                                 << "output scale) must be positive and finite";
            }
        }
        Expr x = cast(minus_zero_point(cast(q, DataType::int32()), in_zp, axis), ft);
        return scaled_in_float(x, s, axis, /*half_up=*/false, out_zp, out_dtype);
    }

    // The float32 or float64 `x` times `ratios` (one, or one per index of `axis`), rounded half to
    // even (`half_up`: half up), plus out_zp, saturated to out_dtype.
    Expr scaled_in_float(const Expr& x, const std::vector<double>& ratios, int64_t axis,
                         bool half_up, const Expr& out_zp, DataType out_dtype) {
        const DataType ft = tensor_of(x).dtype;
        Expr ratio =
            along(make_constant_of({int64_t(ratios.size())}, ft, ratios, loc_), rank_of(x), axis);
        Expr y = call("multiply", {x, ratio});
        y = half_up ? call("floor", {call("add", {y, make_constant_of({}, ft, {0.5}, loc_)})})
                    : call("round", {y});
        if (uniform_value(out_zp) != 0.0) y = call("add", {y, cast(out_zp, ft)});
        // float64 holds int32's bounds, float32 not its largest (float_range_of).
        auto [lo, hi] =
            ft == DataType::float64() ? ops::quantized_range(out_dtype) : float_range_of(out_dtype);
        return cast(clip(y, lo, hi), out_dtype);
    }

    // requantize with the input scale's values given (float32 values or their products, in
    // double, as TVM and TFLite compute the ratio).
    Expr requantize_from(const Expr& q, const std::vector<double>& in_s, const Expr& in_zp,
                         const Expr& out_scale, const Expr& out_zp, int64_t axis,
                         const std::string& rounding, DataType out_dtype) {
        double out_s = scale_values(out_scale, "output scale")[0];
        std::vector<double> ratios;
        for (double v : in_s) ratios.push_back(v / out_s);
        Expr x = minus_zero_point(cast(q, DataType::int32()), in_zp, axis);
        Expr y = scale_by(x, ratios, axis, rounding);
        if (uniform_value(out_zp) != 0.0) y = call("add", {y, along(out_zp, rank_of(y), -1)});
        return saturate(y, out_dtype);
    }

    // The int32 `x` times `ratios` (one, or one per index of `axis`) in fixed point.
    Expr scale_by(const Expr& x, const std::vector<double>& ratios, int64_t axis,
                  const std::string& rounding) {
        std::vector<double> m, s;
        for (double r : ratios) {
            ops::FixedPoint f = ops::fixed_point_of(r, op_name_ + ": a scale ratio", loc_);
            m.push_back(f.multiplier);
            s.push_back(f.shift);
        }
        bool uniform = std::all_of(m.begin(), m.end(), [&](double v) { return v == m[0]; }) &&
                       std::all_of(s.begin(), s.end(), [&](double v) { return v == s[0]; });
        auto params = [&](const std::vector<double>& v) {
            if (uniform) return make_constant_of({}, DataType::int32(), {v[0]}, loc_);
            return along(make_constant_of({int64_t(v.size())}, DataType::int32(), v, loc_),
                         rank_of(x), axis);
        };
        auto attrs = make_ref<ops::FixedPointMultiplyAttrs>();
        const_cast<ops::FixedPointMultiplyAttrs*>(attrs.get())->rounding = rounding;
        return call("fixed_point_multiply", {x, params(m), params(s)}, attrs);
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

    // The integer products: nn.conv2d / nn.conv2d_transpose / nn.dense / nn.batch_matmul with
    // out_dtype int32 on the operands less their zero points. Where the data's zero point is a
    // scalar and the product is a convolution or dense with a weight (the usual case), the data
    // is not centered: it is padded with its zero point (the real 0) and the product less
    // zx * (the sum of each output channel's weights, a constant once folded) follows, so the
    // kernel reads the data's own 8-bit values.
    Expr product(const Call& c) {
        const std::string& name = c.op->name;
        const auto& args = c.args;
        const Expr& x = args[0];
        const Expr& zx = args[2];
        bool weighted = name == "qnn.conv2d" || name == "qnn.dense";
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

    SourceLoc loc_;        // of the QNN call being rewritten
    std::string op_name_;  // its op, for messages
};

}  // namespace

IRModule canonicalize_qnn(const IRModule& m, const PassContext&) {
    return rewrite_functions(m, [](const Ref<Function>& f) {
        Expr body = QnnCanonicalizer().mutate(f->body);
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
