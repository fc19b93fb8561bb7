// Converters of TFLite's products: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED
// and BATCH_MATMUL.
//
// Convolutions read their data channels first and give a channels-first result (see
// tflite_context.h); their weights (OHWI, depthwise 1HW(C*M)) become OIHW constants. A float
// operator whose weights are quantized (TFLite's dynamic-range models) computes on the weights'
// real values. A quantized operator computes as TFLite's integer kernels do: the int32 sum of
// (x - input zero point) * (w - weight zero point), plus the int32 bias, times
// input_scale * weight_scale / output_scale in fixed point (per output channel when the weights
// are quantized per channel), plus the output zero point, clamped to the fused activation's
// range. With int16 data (TFLite's 16x8 kernels) the bias is int64 and the sum, plus the bias,
// is rescaled in TFLite's 64-bit fixed point (a FULLY_CONNECTED with rounding="XNNPACK": as the
// runtime's optimized kernel, see requantized_result); the importer checks from the weights that
// the int32 sums the products compute cannot overflow.
#include <climits>

#include "frontend/composite_ops.h"
#include "frontend/conv_builder.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/dense.h"
#include "ops/op_spec.h"
#include "ops/qnn.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

bool float_operator(const TfContext& ctx, size_t data = 0) {
    int8_t t = ctx.input_tensor(data).type;
    return t == tensor_type::kFloat32 || t == tensor_type::kFloat16;
}

// The optional float bias (operand 2), or undefined.
Expr float_bias(const TfContext& ctx) {
    if (!ctx.has_input(2)) return {};
    return float_weights(ctx, 2);
}

// Where a product's operands are: data, weights, optional bias (TRANSPOSE_CONV's differ).
struct Operands {
    size_t data = 0, weights = 1, bias = 2;
};

bool is_16x8(const TfContext& ctx, const Operands& o) {
    return ctx.input_tensor(o.data).type == tensor_type::kInt16;
}

// A quantized product's accumulator `acc` (int32, output channels along `axis`) plus the bias,
// rescaled to the result's quantization and clamped to `activation`'s range. `through_ruy`: the
// runtime's optimized 16x8 kernel (FULLY_CONNECTED) rescales with the whole 31-bit multiplier and
// one rounding, as ruy does (found by testing against the runtime), which rounding="XNNPACK"
// follows; the reference kernels round the multiplier to 16 bits. `dense_product`: a
// FULLY_CONNECTED or BATCH_MATMUL. The fixed-point ratio's input_scale * weight_scale is
// multiplied in float where TFLite's kernels take one multiplier for the whole product from
// GetQuantizedConvolutionMultipler (uint8 operators; per-tensor FULLY_CONNECTED; BATCH_MATMUL), in
// double where they compute one per output channel (int8 and int16 convolutions, per-channel
// FULLY_CONNECTED).
Expr requantized_result(const TfContext& ctx, Expr acc, int64_t axis, int8_t activation,
                        const Operands& o = {}, bool through_ruy = false,
                        bool dense_product = false) {
    const TfliteTensor& out_t = ctx.output_tensor(0);
    DataType out_dtype = ctx.dtype_of(out_t.type, "the result");
    Quantized in = per_tensor(ctx, ctx.input_tensor(o.data), "the input");
    Quantized w = quantization_of(ctx, ctx.input_tensor(o.weights), "the weights");
    Quantized out = per_tensor(ctx, out_t, "the result");
    bool wide = is_16x8(ctx, o);
    if (wide) acc = cast_to(ctx, acc, DataType::int64());
    if (ctx.has_input(o.bias)) {
        const TfliteTensor& bias_t = ctx.input_tensor(o.bias);
        bool ok =
            bias_t.type == tensor_type::kInt32 || (wide && bias_t.type == tensor_type::kInt64);
        if (!ok) {
            ctx.error() << "the bias ('" << bias_t.name << "') is " << tensor_type_name(bias_t.type)
                        << "; quantized products with "
                        << tensor_type_name(ctx.input_tensor(o.data).type) << " data take an "
                        << (wide ? "int64 or int32" : "int32") << " bias";
        }
        if (wide && through_ruy && ctx.xnnpack_rounding() && bias_t.type == tensor_type::kInt64) {
            // The whole-multiplier rescale multiplies the sum in int64: it holds sums in int32
            // (check_integer_operator) plus biases in int32.
            runtime::NDArray b = ctx.constant_input(o.bias, "the bias");
            for (int64_t i = 0; i < b.num_elements(); ++i) {
                int64_t v = b.data<int64_t>()[i];
                if (v < INT32_MIN || v > INT32_MAX) {
                    ctx.error() << "the bias ('" << bias_t.name << "') holds " << v
                                << ", past int32's range, which the 16x8 rescale of "
                                   "rounding=\"XNNPACK\" does not take";
                }
            }
        }
        Expr bias = ctx.input_tflite(o.bias);
        acc = add_bias(ctx, acc, wide ? cast_to(ctx, bias, DataType::int64()) : bias, axis);
    }
    auto [lo, hi] = quantized_activation_range(ctx, activation, out_t, out_dtype, true);
    if (ctx.xnnpack_rounding() && !wide) {
        // XNNPACK: acc * (input_scale * weight_scale / output_scale in float32), rounded half to
        // even, plus the zero point.
        std::vector<double> scales;
        for (double ws : w.scales) {
            scales.push_back(double(float(float(in.scales[0]) * float(ws)) / float(out.scales[0])));
        }
        int64_t rank = ctx.rank(acc);
        Expr y = ctx.call("multiply", {cast_to(ctx, acc, DataType::float32()),
                                       float32_along(ctx, scales, rank, axis)});
        y = ctx.call("round", {y});
        if (out.zero_points[0] != 0) {
            y = ctx.call("add", {y, float32_scalar(ctx, double(out.zero_points[0]))});
        }
        return clamp_to(ctx, y, lo, hi, out_dtype);
    }
    const bool float_product =
        w.scales.size() == 1 &&
        (dense_product || ctx.input_tensor(o.data).type == tensor_type::kUInt8);
    std::vector<double> ratios;
    for (double ws : w.scales) {
        const double product =
            float_product ? double(float(in.scales[0]) * float(ws)) : in.scales[0] * ws;
        ratios.push_back(product / out.scales[0]);
    }
    Expr y =
        wide ? multiply_by_ratio_wide(ctx, acc, ratios, axis, through_ruy && ctx.xnnpack_rounding())
             : multiply_by_ratio(ctx, acc, ratios, axis);
    if (out.zero_points[0] != 0) y = ctx.call("add", {y, int32_scalar(ctx, out.zero_points[0])});
    return clamp_to(ctx, y, lo, hi, out_dtype);
}

// The operands of a QNN product (qnn.conv2d, qnn.dense, ...) of `data` and `weights`: the two,
// the input's zero point and scale (scalars), the weights' (1-D along the output channels when
// per channel). int8 data goes in as uint8, shifted by 128 with its zero point (the same
// differences x - zero point, so the same sums): the x86 schedules multiply unsigned by signed
// bytes (vpdpbusd) and block only such convolutions.
std::vector<Expr> qnn_arguments(const TfContext& ctx, Expr data, Expr weights,
                                const Operands& o = {}) {
    Quantized in = per_tensor(ctx, ctx.input_tensor(o.data), "the input");
    Quantized w = quantization_of(ctx, ctx.input_tensor(o.weights), "the weights");
    int64_t zero_point = in.zero_points[0];
    if (ctx.input_tensor(o.data).type == tensor_type::kInt8) {
        data = int8_as_uint8(ctx, data);
        zero_point += 128;
    }
    return {data,
            weights,
            int32_scalar(ctx, zero_point),
            int32_along(ctx, w.zero_points, 1, 0),
            float32_scalar(ctx, in.scales[0]),
            float32_along(ctx, w.scales, 1, 0)};
}

// int8 x int8, uint8 x uint8 and int16 x int8 (TFLite's 16x8 kernels). For 16x8 the products
// sum in int32: refused when the weights (along `channel_axis` of their TFLite layout) allow a
// sum past int32's range, which TFLite's int64 sums would hold.
void check_integer_operator(const TfContext& ctx, const Operands& o = {},
                            int64_t channel_axis = 0) {
    int8_t in = ctx.input_tensor(o.data).type, w = ctx.input_tensor(o.weights).type;
    bool ok = (in == tensor_type::kInt8 && w == tensor_type::kInt8) ||
              (in == tensor_type::kUInt8 && w == tensor_type::kUInt8) ||
              (in == tensor_type::kInt16 && w == tensor_type::kInt8);
    if (!ok) {
        ctx.error() << "a product of " << tensor_type_name(in) << " data and "
                    << tensor_type_name(w)
                    << " weights is not supported (int8 x int8, uint8 x uint8, int16 x int8, or "
                       "float data)";
    }
    if (in != tensor_type::kInt16) return;
    if (per_tensor(ctx, ctx.input_tensor(o.data), "the input").zero_points[0] != 0) {
        ctx.error() << "int16 data must have the zero point 0 (TFLite's 16x8 quantization)";
    }
    runtime::NDArray weights = ctx.constant_input(o.weights, "the weights");
    std::vector<int64_t> shape(weights.shape().begin(), weights.shape().end());
    const int8_t* v = weights.data<int8_t>();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < channel_axis; ++d) outer *= shape[size_t(d)];
    for (size_t d = size_t(channel_axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    int64_t channels = shape[size_t(channel_axis)];
    std::vector<int64_t> sums(size_t(channels), 0);
    for (int64_t i = 0; i < outer * channels * inner; ++i) {
        sums[size_t(i / inner % channels)] += std::abs(int64_t(v[i]));
    }
    if (sums.empty()) return;
    int64_t largest = *std::max_element(sums.begin(), sums.end());
    if (largest * 32768 > INT32_MAX) {
        ctx.error() << "16x8 sums can reach " << largest * 32768 << ", past int32's range; "
                    << "products whose weights sum (in magnitude) past 65535 per output channel "
                       "are not supported";
    }
}

struct Window {
    int8_t padding;
    int64_t stride_h, stride_w, dilation_h, dilation_w;
    int8_t activation;
};

// The convolution of channels-first x by the weights (operand 1) transposed by `perm` into OIHW,
// in `groups` groups, with the operator's bias and fused activation; channels-first result.
// When `x` (channels first) is a PAD of only its spatial axes with the value the convolution's
// own padding has (0, or the input's zero point), the PAD's operand and its amounts [top, left,
// bottom, right]: the convolution pads instead (TFLite's converter writes PAD + VALID
// convolution for explicit padding; one padded convolution keeps the layout pass's blocked
// chain unbroken).
std::optional<std::pair<Expr, std::vector<int64_t>>> foldable_pad(const TfContext& ctx,
                                                                  const Expr& x, bool is_float) {
    // The PAD ran on the data as TFLite holds it: x is its transpose to channels first.
    bool transposed = false;
    Expr padded = x;
    if (const auto* t = ops::call_attrs<ops::TransposeAttrs>(x, "transpose")) {
        if (t->axes != kToChannelsFirst) return std::nullopt;
        padded = x.as<graph::Call>()->args[0];
        transposed = true;
    }
    const auto* attrs = ops::call_attrs<ops::PadAttrs>(padded, "nn.pad");
    if (!attrs || padded.as<graph::Call>()->args.size() != 1 || attrs->pad_mode != "constant" ||
        attrs->pad_width.size() != 8) {
        return std::nullopt;
    }
    // [before, after] per axis: N, C, H, W channels first, else N, H, W, C.
    const std::vector<int64_t>& w = attrs->pad_width;
    size_t c = transposed ? 6 : 2, h = transposed ? 2 : 4, wd = transposed ? 4 : 6;
    if (w[0] || w[1] || w[c] || w[c + 1]) return std::nullopt;
    double value =
        is_float ? 0.0 : double(per_tensor(ctx, ctx.input_tensor(0), "the input").zero_points[0]);
    if (attrs->pad_value != value) return std::nullopt;
    Expr source = padded.as<graph::Call>()->args[0];
    if (transposed) source = ctx.transpose(source, kToChannelsFirst);
    return std::make_pair(source, std::vector<int64_t>{w[h], w[wd], w[h + 1], w[wd + 1]});
}

void convolve(TfContext& ctx, Expr x, const std::vector<int64_t>& perm, int64_t groups,
              const Window& win) {
    const int64_t weights_channel_axis = perm[0];  // the output channels' axis in TFLite's layout
    bool is_float = float_operator(ctx);
    std::vector<int64_t> folded = {0, 0, 0, 0};
    if (win.padding == padding::kValid) {
        if (auto pad = foldable_pad(ctx, x, is_float)) std::tie(x, folded) = *pad;
    }
    Expr w = ctx.transpose(is_float ? float_weights(ctx, 1) : ctx.input_tflite(1), perm);
    std::vector<int64_t> xs = ctx.static_shape(x, "the input");
    std::vector<int64_t> ws = ctx.static_shape(w, "the weights");
    if (win.stride_h < 1 || win.stride_w < 1 || win.dilation_h < 1 || win.dilation_w < 1) {
        ctx.error() << "strides [" << win.stride_h << ", " << win.stride_w << "] and dilations ["
                    << win.dilation_h << ", " << win.dilation_w << "] must be positive";
    }
    auto [top, bottom] =
        window_padding(ctx, win.padding, xs[2], ws[2], win.stride_h, win.dilation_h);
    auto [left, right] =
        window_padding(ctx, win.padding, xs[3], ws[3], win.stride_w, win.dilation_w);
    ConvParams p{
        .strides = {win.stride_h, win.stride_w},
        .padding = {top + folded[0], left + folded[1], bottom + folded[2], right + folded[3]},
        .dilation = {win.dilation_h, win.dilation_w},
        .groups = groups};
    if (is_float) {
        Expr y = build_conv(ctx, x, w, float_bias(ctx), p);
        ctx.set_output(0, float_activation(ctx, y, win.activation), true);
        return;
    }
    check_integer_operator(ctx, {}, weights_channel_axis);
    auto [attrs, a] = new_attrs<ops::QnnConv2DAttrs>();
    a->strides = p.strides;
    a->padding = p.padding;
    a->dilation = p.dilation;
    a->groups = groups;
    a->channels = ws[0];
    a->kernel_size = {ws[2], ws[3]};
    Expr acc = ctx.call("qnn.conv2d", qnn_arguments(ctx, x, w), attrs);
    ctx.set_output(0, requantized_result(ctx, acc, 1, win.activation), true);
}

}  // namespace

Expr float_weights(const TfContext& ctx, size_t i) {
    const TfliteTensor& t = ctx.input_tensor(i);
    Expr w = ctx.input_tflite(i);
    if (t.type == tensor_type::kFloat32) return w;
    Quantized q = quantization_of(ctx, t, "the weights");
    auto [attrs, a] = new_attrs<ops::DequantizeAttrs>();
    a->axis = q.axis;
    return ctx.call("qnn.dequantize",
                    {w, float32_along(ctx, q.scales, 1, 0), int32_along(ctx, q.zero_points, 1, 0)},
                    attrs);
}

std::pair<int64_t, int64_t> window_padding(const TfContext& ctx, int8_t padding, int64_t in,
                                           int64_t window, int64_t stride, int64_t dilation) {
    int64_t extent = (window - 1) * dilation + 1;
    if (padding == padding::kValid) return {0, 0};
    if (padding != padding::kSame) {
        ctx.error() << "padding " << int(padding) << " is neither SAME (0) nor VALID (1)";
    }
    // SAME: out = ceil(in / stride), the padding split with the smaller half first.
    int64_t out = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>((out - 1) * stride + extent - in, 0);
    return {total / 2, total - total / 2};
}

void convert_conv2d(TfContext& ctx) {
    ctx.expect_arity(2, 3, 1);
    const TfliteOptions& o = ctx.options(options_type::kConv2D);
    Window win{o.int8(conv2d_options::kPadding),       o.int32(conv2d_options::kStrideH),
               o.int32(conv2d_options::kStrideW),      o.int32(conv2d_options::kDilationH, 1),
               o.int32(conv2d_options::kDilationW, 1), o.int8(conv2d_options::kActivation)};
    Expr x = ctx.input_channels_first(0);
    std::vector<int64_t> ws = ctx.static_shape(ctx.input_tflite(1), "the weights");
    int64_t channels = ctx.static_shape(x, "the input")[1];
    if (ws.size() != 4 || ws[3] < 1 || channels % ws[3] != 0) {
        ctx.error() << "the weights " << ints_str(ws) << " are not [O, KH, KW, I] for " << channels
                    << " input channels";
    }
    convolve(ctx, x, kToChannelsFirst, channels / ws[3], win);  // OHWI → OIHW
}

void convert_depthwise_conv2d(TfContext& ctx) {
    ctx.expect_arity(2, 3, 1);
    const TfliteOptions& o = ctx.options(options_type::kDepthwiseConv2D);
    Window win{o.int8(depthwise_options::kPadding),       o.int32(depthwise_options::kStrideH),
               o.int32(depthwise_options::kStrideW),      o.int32(depthwise_options::kDilationH, 1),
               o.int32(depthwise_options::kDilationW, 1), o.int8(depthwise_options::kActivation)};
    Expr x = ctx.input_channels_first(0);
    std::vector<int64_t> ws = ctx.static_shape(ctx.input_tflite(1), "the weights");
    int64_t channels = ctx.static_shape(x, "the input")[1];
    if (ws.size() != 4 || ws[0] != 1 || channels < 1 || ws[3] % channels != 0) {
        ctx.error() << "the weights " << ints_str(ws) << " are not [1, KH, KW, C * M] for "
                    << channels << " input channels";
    }
    // [1, KH, KW, C*M] → [C*M, 1, KH, KW]: C groups of M output channels each.
    convolve(ctx, x, {3, 0, 1, 2}, channels, win);
}

// TRANSPOSE_CONV(output_shape, weights [O, KH, KW, I], input, bias): the gradient of a SAME or
// VALID convolution, cropped as TFLite crops it: the convolution's padding of the output's size
// gives the rows and columns dropped at the top and left; the output's size, the extent kept.
void convert_transpose_conv(TfContext& ctx) {
    ctx.expect_arity(3, 4, 1);
    const Operands o{.data = 2, .weights = 1, .bias = 3};
    const TfliteOptions& opt = ctx.options(options_type::kTransposeConv);
    int8_t pad = opt.int8(transpose_conv_options::kPadding);
    int64_t sh = opt.int32(transpose_conv_options::kStrideH);
    int64_t sw = opt.int32(transpose_conv_options::kStrideW);
    int8_t activation = opt.int8(transpose_conv_options::kActivation);
    if (sh < 1 || sw < 1) ctx.error() << "strides [" << sh << ", " << sw << "] must be positive";
    Expr x = ctx.input_channels_first(o.data);
    std::vector<int64_t> xs = ctx.static_shape(x, "the input");
    std::vector<int64_t> ws = ctx.static_shape(ctx.input_tflite(o.weights), "the weights");
    if (ws.size() != 4 || ws[3] != xs[1]) {
        ctx.error() << "the weights " << ints_str(ws) << " are not [O, KH, KW, I] for " << xs[1]
                    << " input channels";
    }
    // The output's shape: the operand when it is a constant; else the model's result shape,
    // which the operand's value must equal when the model runs.
    std::vector<int64_t> out_shape;
    std::vector<PrimExpr> shape_vars, shape_checks;
    if (runtime::NDArray data = constant_data(ctx.input(0).expr); data.defined()) {
        out_shape = ctx.constant_ints(0, "the output shape");
    } else {
        const auto& declared = ctx.output_tensor(0).shape;
        out_shape.assign(declared.begin(), declared.end());
        if (ctx.static_count(ctx.input_tflite(0), "the output shape") != 4) {
            ctx.error() << "the output shape must hold 4 values";
        }
        shape_vars = ctx.new_dims(4);
        for (size_t d = 0; d < 4; ++d) {
            shape_checks.push_back(eq(shape_vars[d], make_int(DataType::int64(), out_shape[d])));
        }
    }
    if (out_shape.size() != 4 || out_shape[0] != xs[0] || out_shape[3] != ws[0]) {
        ctx.error() << "the output shape " << ints_str(out_shape) << " does not fit the input "
                    << "[N, H, W, C] = [" << xs[0] << ", " << xs[2] << ", " << xs[3] << ", "
                    << xs[1] << "] and " << ws[0] << " output channels";
    }
    std::vector<int64_t> padding(4), output_padding(2);
    for (int d = 0; d < 2; ++d) {
        int64_t in = xs[size_t(2 + d)], out = out_shape[size_t(1 + d)], k = ws[size_t(1 + d)];
        int64_t stride = d == 0 ? sh : sw;
        int64_t begin = window_padding(ctx, pad, out, k, stride, 1).first;
        int64_t end = (in - 1) * stride + k - out - begin;
        if (out < 1 || begin > (in - 1) * stride + k - 1) {
            ctx.error() << "the output size " << out << " does not fit an input of " << in
                        << " with a window of " << k << " and stride " << stride;
        }
        padding[size_t(d)] = begin;
        padding[size_t(2 + d)] = std::max<int64_t>(end, 0);
        output_padding[size_t(d)] = std::max<int64_t>(-end, 0);
    }
    ConvParams p{.strides = {sh, sw}, .padding = padding, .dilation = {1, 1}, .groups = 1};
    if (float_operator(ctx, o.data)) {
        Expr w = ctx.transpose(float_weights(ctx, o.weights), {3, 0, 1, 2});  // → [I, O, KH, KW]
        Expr bias = ctx.has_input(o.bias) ? float_weights(ctx, o.bias) : Expr();
        Expr y = build_conv_transpose(ctx, x, w, bias, p, output_padding);
        y = float_activation(ctx, y, activation);
        if (!shape_vars.empty())
            y = ctx.bind_values(y, {ctx.input_tflite(0)}, shape_vars, shape_checks);
        ctx.set_output(0, y, true);
        return;
    }
    check_integer_operator(ctx, o, 0);
    auto [attrs, a] = new_attrs<ops::QnnConv2DTransposeAttrs>();
    a->strides = p.strides;
    a->padding = p.padding;
    a->output_padding = output_padding;
    a->channels = ws[0];
    a->kernel_size = {ws[1], ws[2]};
    Expr w = ctx.transpose(ctx.input_tflite(o.weights), {3, 0, 1, 2});  // → [I, O, KH, KW]
    Expr acc = ctx.call("qnn.conv2d_transpose", qnn_arguments(ctx, x, w, o), attrs);
    Expr y = requantized_result(ctx, acc, 1, activation, o);
    if (!shape_vars.empty())
        y = ctx.bind_values(y, {ctx.input_tflite(0)}, shape_vars, shape_checks);
    ctx.set_output(0, y, true);
}

void convert_fully_connected(TfContext& ctx) {
    ctx.expect_arity(2, 3, 1);
    const TfliteOptions& o = ctx.options(options_type::kFullyConnected);
    int8_t activation = o.int8(fully_connected_options::kActivation);
    if (o.int8(fully_connected_options::kWeightsFormat) != 0) {
        ctx.error() << "weights in the SHUFFLED4x16INT8 format are not supported";
    }
    bool keep_num_dims = o.boolean(fully_connected_options::kKeepNumDims);
    Expr x = ctx.input_tflite(0);
    Expr w = ctx.input_tflite(1);
    std::vector<int64_t> xs = ctx.static_shape(x, "the input");
    std::vector<int64_t> ws = ctx.static_shape(w, "the weights");
    if (ws.size() != 2 || xs.empty() || ws[1] < 1) {
        ctx.error() << "the weights " << ints_str(ws) << " must be [units, K] for the input "
                    << ints_str(xs);
    }
    int64_t count = 1;
    for (int64_t d : xs) count *= d;
    if (count % ws[1] != 0) {
        ctx.error() << "the input " << ints_str(xs) << " does not divide into rows of " << ws[1]
                    << " (the weights " << ints_str(ws) << ")";
    }
    if (keep_num_dims && xs.back() != ws[1]) {
        ctx.error() << "keep_num_dims needs the input's last dimension (" << xs.back()
                    << ") to be the weights' " << ws[1];
    }
    Expr rows = xs.size() == 2 && xs[1] == ws[1] ? x : reshape_to(ctx, x, {count / ws[1], ws[1]});
    Expr y;
    if (float_operator(ctx)) {
        y = ctx.call("nn.dense", {rows, float_weights(ctx, 1)}, make_ref<ops::DenseAttrs>());
        y = float_activation(ctx, add_bias(ctx, y, float_bias(ctx), 1), activation);
    } else {
        check_integer_operator(ctx);
        auto [attrs, a] = new_attrs<ops::QnnDenseAttrs>();
        a->units = ws[0];
        y = requantized_result(ctx, ctx.call("qnn.dense", qnn_arguments(ctx, rows, w), attrs), 1,
                               activation, {}, true, true);
    }
    if (keep_num_dims) {
        std::vector<int64_t> shape = xs;
        shape.back() = ws[0];
        y = reshape_to(ctx, y, shape);
    }
    ctx.set_output(0, y);
}

namespace {

// TFLite's int16 BATCH_MATMUL: int16 x int16 operands and result, all zero points 0, the sums in
// int64 rescaled as the 16x8 kernels' (TFLite's reference kernel, which its runtime runs in every
// mode). The products are summed in float64, which holds these integer sums exactly (each
// product is at most 2^30 in magnitude, so a sum of fewer than 2^17 stays below 2^47, the bound
// TFLite's rescale takes).
void convert_int16_batch_matmul(TfContext& ctx, const Expr& x, const Expr& y, bool adj_x,
                                bool adj_y) {
    const TfliteTensor& x_t = ctx.input_tensor(0);
    const TfliteTensor& y_t = ctx.input_tensor(1);
    const TfliteTensor& out_t = ctx.output_tensor(0);
    if (y_t.type != tensor_type::kInt16 || out_t.type != tensor_type::kInt16) {
        ctx.error() << "an int16 batch matmul needs an int16 second operand and result, as "
                       "TFLite's kernel; got "
                    << tensor_type_name(y_t.type) << " and " << tensor_type_name(out_t.type);
    }
    for (auto [t, what] : {std::pair{&x_t, "operand 0"}, std::pair{&y_t, "operand 1"},
                           std::pair{&out_t, "the result"}}) {
        if (per_tensor(ctx, *t, what).zero_points[0] != 0) {
            ctx.error() << "int16 " << what << " must have the zero point 0 (TFLite's 16-bit "
                        << "quantization)";
        }
    }
    const int64_t depth = x_t.shape.at(adj_x ? x_t.shape.size() - 2 : x_t.shape.size() - 1);
    if (depth >= (int64_t{1} << 17)) {
        ctx.error() << "an int16 batch matmul summing " << depth
                    << " products can reach 2^47, which TFLite's 64-bit rescale does not take "
                       "(at most 131071)";
    }
    auto [attrs, a] = new_attrs<ops::MatmulAttrs>();
    a->transpose_a = adj_x;
    a->transpose_b = adj_y;
    Expr sum = ctx.call(
        "nn.batch_matmul",
        {cast_to(ctx, x, DataType::float64()), cast_to(ctx, y, DataType::float64())}, attrs);
    ctx.set_output(0, requantized_result(ctx, cast_to(ctx, sum, DataType::int64()), -1,
                                         activation::kNone, {}, false, true));
}

}  // namespace

// BATCH_MATMUL(x, y): numpy's matmul with x or y transposed in their last two axes (adj_x,
// adj_y), batch axes broadcasting. Quantized operands (per tensor) sum in int32 and rescale as
// the other products; int16 ones sum in int64 (convert_int16_batch_matmul).
void convert_batch_matmul(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    const TfliteOptions& o = ctx.options(options_type::kBatchMatMul);
    bool adj_x = o.boolean(batch_matmul_options::kAdjX);
    bool adj_y = o.boolean(batch_matmul_options::kAdjY);
    Expr x = ctx.input_tflite(0), y = ctx.input_tflite(1);
    if (ctx.rank(x) < 2 || ctx.rank(y) < 2) {
        ctx.error() << "both operands must be at least 2-D, got ranks " << ctx.rank(x) << " and "
                    << ctx.rank(y);
    }
    if (float_operator(ctx)) {
        auto [attrs, a] = new_attrs<ops::MatmulAttrs>();
        a->transpose_a = adj_x;
        a->transpose_b = adj_y;
        ctx.set_output(0, ctx.call("nn.batch_matmul", {x, float_weights(ctx, 1)}, attrs));
        return;
    }
    if (ctx.input_tensor(0).type == tensor_type::kInt16) {
        convert_int16_batch_matmul(ctx, x, y, adj_x, adj_y);
        return;
    }
    check_integer_operator(ctx);
    per_tensor(ctx, ctx.input_tensor(1), "operand 1");  // qnn.batch_matmul's b is per tensor
    auto [attrs, a] = new_attrs<ops::QnnBatchMatmulAttrs>();
    a->transpose_a = adj_x;
    a->transpose_b = adj_y;
    Expr acc = ctx.call("qnn.batch_matmul", qnn_arguments(ctx, x, y), attrs);
    ctx.set_output(0, requantized_result(ctx, acc, -1, activation::kNone, {}, false, true));
}

}  // namespace anvil::frontend::tflite
