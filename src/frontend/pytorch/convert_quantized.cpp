// Converters of PyTorch's quantized ops (torch.ao.quantization's converted models) onto the QNN
// dialect (ops/qnn.h): quantize_per_tensor / quantize_per_channel, dequantize, int_repr,
// q_scale, q_zero_point, quantized::conv2d(_relu), quantized::linear(_relu),
// quantized::linear_dynamic, quantized::add(_relu), quantized::mul(_relu), quantized::cat,
// quantized::hardswish and quantized::sigmoid.
//
// A quantized layer's output scale and zero point are the node's operands; its weights, bias and
// geometry come from the packed parameters, which the description carries as a tuple constant
// (torchscript_graph.h). The layers compute as PyTorch's engines do: the int32 accumulator plus
// the bias quantized with scale input_scale * weight_scale, requantized to the output's scale,
// clamped to the integer range (to the zero point and up for the _relu forms).
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/quantized_values.h"
#include "ops/activation.h"
#include "ops/dense.h"
#include "ops/qnn.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// c10::ScalarType codes of the quantized types.
constexpr int64_t kQInt8 = 12, kQUInt8 = 13, kQInt32 = 14;

DataType quantized_dtype(const PtContext& ctx, size_t i) {
    int64_t code = ctx.int_arg(i);
    if (code == kQUInt8) return DataType::uint(8);
    if (code == kQInt8) return DataType::int_(8);
    if (code == kQInt32) return DataType::int32();
    ctx.error() << "operand " << i << ": quantization to the ScalarType " << code
                << " is not supported (torch.quint8, torch.qint8, torch.qint32)";
    ANVIL_UNREACHABLE();
}

const PtValue& quantized_operand(const PtContext& ctx, size_t i) {
    const PtValue& v = ctx.input(i);
    if (v.kind != PtValue::Tensor || !v.quant) {
        ctx.error() << "operand " << i << " must be a quantized tensor, got "
                    << (v.kind == PtValue::Tensor ? "a float tensor" : kind_name(v.kind));
    }
    return v;
}

// An activation's quantization: one scale and zero point.
const Quantization& per_tensor(const PtContext& ctx, const PtValue& v, size_t i) {
    if (v.quant->axis >= 0) {
        ctx.error() << "operand " << i << " is quantized per channel; quantized layers take "
                    << "activations quantized per tensor";
    }
    return *v.quant;
}

Expr clip(const PtContext& ctx, const Expr& x, double lo, double hi) {
    auto [attrs, a] = new_attrs<ops::ClipAttrs>();
    a->a_min = lo;
    a->a_max = hi;
    return ctx.call("clip", {x}, attrs);
}

// The range of the integer type `t`, from the zero point up for a layer with a fused relu.
std::pair<double, double> output_range(DataType t, int64_t zero_point, bool relu) {
    auto [lo, hi] = ops::quantized_range(t);
    return {relu ? std::max(lo, double(zero_point)) : lo, hi};
}

// The node's output scale and zero point (operands i and i + 1).
Quantization output_quantization(const PtContext& ctx, size_t i, DataType t) {
    double scale = ctx.float_arg(i);
    int64_t zero_point = ctx.int_arg(i + 1);
    auto [lo, hi] = output_range(t, 0, false);
    if (!(scale > 0) || !std::isfinite(scale) || zero_point < lo || zero_point > hi) {
        ctx.error() << "the output scale " << scale << " and zero point " << zero_point
                    << " do not quantize to " << t.str();
    }
    return {{scale}, {zero_point}, -1};
}

// The packed parameters of a quantized layer (operand i): a tuple of `size` or more items,
// the first a quantized weight.
const PtValues& packed_params(const PtContext& ctx, size_t i, size_t size) {
    const PtValue& p = ctx.input(i);
    if (p.kind != PtValue::Tuple || p.items.size() < size || p.items[0].kind != PtValue::Tensor ||
        !p.items[0].quant) {
        ctx.error() << "operand " << i << " must be the layer's packed parameters (a quantized "
                    << "weight, the bias, ...), got " << kind_name(p.kind);
    }
    if (p.items[0].quant->axis > 0) {
        ctx.error() << "the layer's weight is quantized along axis " << p.items[0].quant->axis
                    << "; per-channel weights run along the output channels (axis 0)";
    }
    return p.items;
}

// The accumulator's scale: input_scale * weight_scale, per output channel when the weight's
// scales are.
Quantization accumulator_quantization(const Quantization& in, const Quantization& w) {
    Quantization q;
    for (double s : w.scales) {
        q.scales.push_back(double(float(in.scales[0]) * float(s)));
        q.zero_points.push_back(0);
    }
    q.axis = w.axis < 0 ? -1 : 0;
    return q;
}

// acc (int32, output channels along `channel_axis`) plus the bias quantized to the accumulator's
// scale, requantized to `out` and clamped: the result in the input's integer type.
PtValue requantize_output(const PtContext& ctx, Expr acc, const PtValue& bias,
                          const Quantization& acc_q, int64_t channel_axis, const Quantization& out,
                          DataType t, bool relu) {
    Quantization per_channel = acc_q;
    if (per_channel.axis == 0) per_channel.axis = channel_axis;
    if (bias.kind != PtValue::None) {
        if (bias.kind != PtValue::Tensor || bias.quant) {
            ctx.error() << "the layer's bias must be a float tensor, got "
                        << (bias.quant ? "a quantized tensor" : kind_name(bias.kind));
        }
        auto [qa, q] = new_attrs<ops::QuantizeAttrs>();
        q->axis = acc_q.axis;  // along the bias's only axis when per channel
        q->out_dtype = DataType::int32();
        Expr b = cast_to(ctx, bias.tensor, DataType::float32());
        Expr qb = ctx.call("qnn.quantize",
                           {b, scale_operand(ctx, acc_q), zero_point_operand(ctx, acc_q)}, qa);
        auto [ba, a] = new_attrs<ops::BiasAddAttrs>();
        a->axis = channel_axis;
        acc = ctx.call("nn.bias_add", {acc, qb}, ba);
    }
    auto [ra, r] = new_attrs<ops::RequantizeAttrs>();
    r->axis = channel_axis;
    r->compute_dtype = "float32";  // as PyTorch's engines requantize
    r->out_dtype = DataType::int32();
    Expr y = ctx.call("qnn.requantize",
                      {acc, scale_operand(ctx, per_channel), zero_point_operand(ctx, per_channel),
                       scale_operand(ctx, out), zero_point_operand(ctx, out)},
                      ra);
    auto [lo, hi] = output_range(t, out.zero_points[0], relu);
    y = cast_to(ctx, clip(ctx, y, lo, hi), t);
    return PtValue::of_quantized(y, out);
}

// A quantized layer's product `op` (qnn.conv2d, qnn.dense with `attrs`) of the input `x` and
// the packed parameters' weight, plus their bias, requantized to the node's output scale and
// zero point (operands 2, 3), output channels along `channel_axis`; clamped at the zero point
// for the _relu kinds.
PtValue quantized_layer(const PtContext& ctx, const char* op, Ref<graph::Attrs> attrs,
                        const PtValue& x, const PtValues& p, int64_t channel_axis) {
    const Quantization& in = *x.quant;
    const Quantization& wq = *p[0].quant;
    Expr acc =
        ctx.call(op,
                 {x.tensor, p[0].tensor, zero_point_operand(ctx, in), zero_point_operand(ctx, wq),
                  scale_operand(ctx, in), scale_operand(ctx, wq)},
                 std::move(attrs));
    DataType t = ctx.tensor_type(x.tensor, "the input").dtype;
    return requantize_output(ctx, acc, p[1], accumulator_quantization(in, wq), channel_axis,
                             output_quantization(ctx, 2, t), t, ctx.kind().ends_with("_relu"));
}

}  // namespace

namespace {

// The values of operand i, a constant tensor of float32, float64, int32 or int64 elements (the
// scales and zero points of quantize_per_channel, and of quantize_per_tensor's tensor_qparams
// form, which FX graph mode quantization writes).
std::vector<double> constant_numbers(PtContext& ctx, size_t i, const char* what) {
    runtime::NDArray data = constant_data(ctx.tensor(i));
    if (!data.defined()) ctx.error() << "the " << what << " must be a constant";
    std::vector<double> out;
    DLDataType t = data.dtype();
    for (int64_t k = 0; k < data.num_elements(); ++k) {
        if (t.code == kDLFloat && t.bits == 32) {
            out.push_back(data.data<float>()[k]);
        } else if (t.code == kDLFloat && t.bits == 64) {
            out.push_back(data.data<double>()[k]);
        } else if (t.code == kDLInt && t.bits == 64) {
            out.push_back(static_cast<double>(data.data<int64_t>()[k]));
        } else if (t.code == kDLInt && t.bits == 32) {
            out.push_back(data.data<int32_t>()[k]);
        } else {
            ctx.error() << "the " << what << " must be float32, float64, int32 or int64, got "
                        << runtime::dl_dtype_to_string(t);
        }
    }
    return out;
}

// A per-tensor quantization parameter: operand i as a number, or a one-element constant tensor.
double quantization_number(PtContext& ctx, size_t i, const char* what) {
    if (ctx.input(i).is_number()) return ctx.float_arg(i);
    std::vector<double> v = constant_numbers(ctx, i, what);
    if (v.size() != 1) {
        ctx.error() << "the " << what << " of a per-tensor quantization must be one value, got "
                    << v.size();
    }
    return v[0];
}

}  // namespace

// aten::quantize_per_tensor(self, scale, zero_point, dtype); scale and zero point numbers, or
// one-element tensors (the tensor_qparams overload).
PtValues convert_quantize_per_tensor(PtContext& ctx) {
    double scale = quantization_number(ctx, 1, "scale");
    double zp = quantization_number(ctx, 2, "zero point");
    if (zp != std::floor(zp)) ctx.error() << "the zero point must be an integer, got " << zp;
    return {quantize(ctx, ctx.tensor(0), scale, static_cast<int64_t>(zp), quantized_dtype(ctx, 3))};
}

// aten::quantize_per_channel(self, scales, zero_points, axis, dtype)
PtValues convert_quantize_per_channel(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    DataType t = quantized_dtype(ctx, 4);
    Quantization q;
    q.axis = ctx.normalize_axis(ctx.int_arg(3), ctx.rank(x), "axis");
    q.scales = constant_numbers(ctx, 1, "scales");
    auto [lo, hi] = ops::quantized_range(t);
    for (double s : q.scales) {
        if (!(s > 0) || !std::isfinite(s)) ctx.error() << "the scale " << s << " is not positive";
    }
    for (double z : constant_numbers(ctx, 2, "zero points")) {
        if (!(z >= lo && z <= hi)) {
            ctx.error() << "the zero point " << z << " is outside the range of " << t.str();
        }
        q.zero_points.push_back(static_cast<int64_t>(z));
    }
    if (q.scales.size() != q.zero_points.size()) {
        ctx.error() << q.scales.size() << " scales and " << q.zero_points.size() << " zero points";
    }
    auto [attrs, a] = new_attrs<ops::QuantizeAttrs>();
    a->axis = q.axis;
    a->out_dtype = t;
    Expr y = ctx.call(
        "qnn.quantize",
        {cast_to(ctx, x, DataType::float32()), scale_operand(ctx, q), zero_point_operand(ctx, q)},
        attrs);
    return {PtValue::of_quantized(y, std::move(q))};
}

// aten::dequantize(self) and aten::dequantize(Tensor[] tensors)
PtValues convert_dequantize(PtContext& ctx) {
    const PtValue& v = ctx.input(0);
    auto one = [&](const PtValue& t) {
        if (t.kind != PtValue::Tensor) {
            ctx.error() << "operand 0 must be a tensor or a list of tensors, got "
                        << kind_name(t.kind);
        }
        // A float tensor dequantizes to itself, as in PyTorch.
        return PtValue::of_tensor(t.quant ? dequantize(ctx, t)
                                          : cast_to(ctx, t.tensor, DataType::float32()));
    };
    if (v.kind == PtValue::List) {
        PtValues items;
        for (const auto& item : v.items) items.push_back(one(item));
        return {PtValue::of_list(std::move(items))};
    }
    return {one(v)};
}

// aten::int_repr(self): the integers.
PtValues convert_int_repr(PtContext& ctx) {
    return {PtValue::of_tensor(quantized_operand(ctx, 0).tensor)};
}

// aten::q_scale(self), aten::q_zero_point(self)
PtValues convert_q_params(PtContext& ctx) {
    const PtValue& v = quantized_operand(ctx, 0);
    const Quantization& q = per_tensor(ctx, v, 0);
    if (ctx.kind() == "aten::q_scale") return {PtValue::of_float(q.scales[0])};
    return {PtValue::of_int(q.zero_points[0])};
}

// quantized::conv2d(x, packed, scale, zero_point), quantized::conv2d_relu
PtValues convert_quantized_conv2d(PtContext& ctx) {
    const PtValue& x = quantized_operand(ctx, 0);
    per_tensor(ctx, x, 0);  // (checks)
    const PtValues& p = packed_params(ctx, 1, 8);
    const PtValue& w = p[0];
    if (p[6].kind != PtValue::Bool || !p[6].is_import_time()) {
        ctx.error() << "the packed parameters do not say whether the convolution is transposed";
    }
    if (known_int(p[6].scalar).value_or(0)) {
        ctx.error() << "quantized transposed convolutions are not supported";
    }
    std::vector<int64_t> wshape = ctx.static_shape(w.tensor, "the weight");
    if (wshape.size() != 4) {
        ctx.error() << "the weight must be 4-D (out, in / groups, kh, kw), got "
                    << ints_str(wshape);
    }
    auto geometry = [&](size_t k, const char* what) {
        std::vector<int64_t> v;
        for (const auto& item : p[k].items) {
            if (!item.is_import_time()) ctx.error() << "the " << what << " must be constants";
            v.push_back(known_int(item.scalar).value_or(0));
        }
        if (v.size() != 2) ctx.error() << "the " << what << " must have two values";
        return v;
    };
    auto [attrs, a] = new_attrs<ops::QnnConv2DAttrs>();
    a->strides = geometry(2, "strides");
    std::vector<int64_t> pad = geometry(3, "padding");
    a->padding = {pad[0], pad[1], pad[0], pad[1]};
    a->dilation = geometry(4, "dilation");
    if (!p[5].is_import_time()) ctx.error() << "the groups must be a constant";
    a->groups = known_int(p[5].scalar).value_or(1);
    a->channels = wshape[0];
    a->kernel_size = {wshape[2], wshape[3]};
    return {quantized_layer(ctx, "qnn.conv2d", attrs, x, p, 1)};
}

// quantized::linear(x, packed, scale, zero_point), quantized::linear_relu
PtValues convert_quantized_linear(PtContext& ctx) {
    const PtValue& x = quantized_operand(ctx, 0);
    per_tensor(ctx, x, 0);  // (checks)
    const PtValues& p = packed_params(ctx, 1, 2);
    const PtValue& w = p[0];
    std::vector<int64_t> wshape = ctx.static_shape(w.tensor, "the weight");
    if (wshape.size() != 2) ctx.error() << "the weight must be 2-D, got " << ints_str(wshape);
    auto [attrs, a] = new_attrs<ops::QnnDenseAttrs>();
    a->units = wshape[0];
    return {quantized_layer(ctx, "qnn.dense", attrs, x, p, ctx.rank(x.tensor) - 1)};
}

// quantized::linear_dynamic(x, packed, reduce_range): x (float) quantized at run time to uint8
// over its own range (widened to include 0; [0, 127] with reduce_range), as PyTorch's
// choose_qparams does; the product's int32 accumulator scaled back to float, plus the bias.
PtValues convert_quantized_linear_dynamic(PtContext& ctx) {
    Expr x = cast_to(ctx, ctx.tensor(0), DataType::float32());
    const PtValues& p = packed_params(ctx, 1, 2);
    const PtValue& w = p[0];
    std::vector<int64_t> wshape = ctx.static_shape(w.tensor, "the weight");
    if (wshape.size() != 2) ctx.error() << "the weight must be 2-D, got " << ints_str(wshape);
    bool reduce_range = ctx.num_inputs() > 2 && !ctx.is_none(2) && ctx.bool_arg(2);
    double qmax = reduce_range ? 127 : 255;
    auto all = [&](const char* op) { return ctx.call(op, {x}, make_ref<ops::ReduceAttrs>()); };
    Expr zero = ctx.constant_scalar(DataType::float32(), 0);
    Expr lo = ctx.call("minimum", {all("min"), zero});
    Expr hi = ctx.call("maximum", {all("max"), zero});
    Expr scale = ctx.call(
        "divide", {ctx.call("subtract", {hi, lo}), ctx.constant_scalar(DataType::float32(), qmax)});
    // An all-zero input has no range: PyTorch takes the scale 0.1.
    scale = ctx.call("where", {ctx.call("equal", {scale, zero}),
                               ctx.constant_scalar(DataType::float32(), 0.1), scale});
    Expr zp = clip(
        ctx, ctx.call("round", {ctx.call("negative", {ctx.call("divide", {lo, scale})})}), 0, qmax);
    zp = cast_to(ctx, zp, DataType::int32());
    auto [qa, q] = new_attrs<ops::QuantizeAttrs>();
    q->out_dtype = DataType::uint(8);
    Expr xq = ctx.call("qnn.quantize", {x, scale, zp}, qa);
    auto [attrs, a] = new_attrs<ops::QnnDenseAttrs>();
    a->units = wshape[0];
    Expr acc = ctx.call(
        "qnn.dense",
        {xq, w.tensor, zp, zero_point_operand(ctx, *w.quant), scale, scale_operand(ctx, *w.quant)},
        attrs);
    Expr wscale = scale_operand(ctx, *w.quant);
    Expr y = ctx.call("multiply", {cast_to(ctx, acc, DataType::float32()),
                                   ctx.call("multiply", {scale, wscale})});
    if (p[1].kind == PtValue::Tensor) {
        y = ctx.call("add", {y, cast_to(ctx, p[1].tensor, DataType::float32())});
    }
    return {PtValue::of_tensor(y)};
}

// quantized::add(a, b, scale, zero_point), quantized::add_relu, quantized::mul(_relu)
PtValues convert_quantized_binary(PtContext& ctx) {
    const PtValue& x = quantized_operand(ctx, 0);
    const PtValue& y = quantized_operand(ctx, 1);
    const Quantization& qx = per_tensor(ctx, x, 0);
    const Quantization& qy = per_tensor(ctx, y, 1);
    DataType t = ctx.tensor_type(x.tensor, "operand 0").dtype;
    Quantization out = output_quantization(ctx, 2, t);
    bool mul = ctx.kind().starts_with("quantized::mul");
    Expr r = ctx.call(mul ? "qnn.mul" : "qnn.add",
                      {x.tensor, y.tensor, scale_operand(ctx, qx), zero_point_operand(ctx, qx),
                       scale_operand(ctx, qy), zero_point_operand(ctx, qy), scale_operand(ctx, out),
                       zero_point_operand(ctx, out)},
                      make_ref<ops::QnnBinaryAttrs>());
    if (ctx.kind().ends_with("_relu")) {
        auto [lo, hi] = output_range(t, out.zero_points[0], true);
        r = clip(ctx, r, lo, hi);
    }
    return {PtValue::of_quantized(r, out)};
}

// quantized::hardswish(x, output_scale, output_zero_point), quantized::sigmoid: qnn.hardswish,
// qnn.sigmoid (FX graph mode quantization writes them for the float ops).
PtValues convert_quantized_unary(PtContext& ctx) {
    const PtValue& x = quantized_operand(ctx, 0);
    const Quantization& qx = per_tensor(ctx, x, 0);
    DataType t = ctx.tensor_type(x.tensor, "operand 0").dtype;
    Quantization out = output_quantization(ctx, 1, t);
    const char* op = ctx.kind() == "quantized::sigmoid" ? "qnn.sigmoid" : "qnn.hardswish";
    Expr r = ctx.call(op, {x.tensor, scale_operand(ctx, qx), zero_point_operand(ctx, qx),
                           scale_operand(ctx, out), zero_point_operand(ctx, out)});
    return {PtValue::of_quantized(r, out)};
}

// quantized::cat(tensors, dim, scale, zero_point)
PtValues convert_quantized_cat(PtContext& ctx) {
    const PtValue& list = ctx.input(0);
    if (list.kind != PtValue::List || list.items.empty()) {
        ctx.error() << "operand 0 must be a list of quantized tensors";
    }
    std::vector<Expr> data, scales, zero_points;
    for (const auto& item : list.items) {
        if (item.kind != PtValue::Tensor || !item.quant) {
            ctx.error() << "operand 0 must be a list of quantized tensors";
        }
        const Quantization& q = per_tensor(ctx, item, 0);
        data.push_back(item.tensor);
        scales.push_back(scale_operand(ctx, q));
        zero_points.push_back(zero_point_operand(ctx, q));
    }
    DataType t = ctx.tensor_type(data[0], "operand 0").dtype;
    Quantization out = output_quantization(ctx, 2, t);
    auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
    a->axis = ctx.normalize_axis(ctx.int_arg(1), ctx.rank(data[0]), "dim");
    Expr r = ctx.call(
        "qnn.concatenate",
        {graph::make_tuple(data), graph::make_tuple(scales), graph::make_tuple(zero_points),
         scale_operand(ctx, out), zero_point_operand(ctx, out)},
        attrs);
    return {PtValue::of_quantized(r, out)};
}

}  // namespace anvil::frontend::pytorch
