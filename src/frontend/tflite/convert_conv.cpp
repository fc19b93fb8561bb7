// Converters of TFLite's products: CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.
//
// Convolutions read their data channels first and give a channels-first result (see
// tflite_context.h); their weights (OHWI, depthwise 1HW(C*M)) become OIHW constants. A float
// operator whose weights are quantized (TFLite's dynamic-range models) computes on the weights'
// real values. A quantized operator computes as TFLite's integer kernels do: the int32 sum of
// (x - input zero point) * (w - weight zero point), plus the int32 bias, times
// input_scale * weight_scale / output_scale in fixed point (per output channel when the weights
// are quantized per channel), plus the output zero point, clamped to the fused activation's
// range.
#include "frontend/composite_ops.h"
#include "frontend/conv_builder.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/dense.h"
#include "ops/qnn.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

bool float_operator(const TfContext& ctx) {
    int8_t t = ctx.input_tensor(0).type;
    return t == tensor_type::kFloat32 || t == tensor_type::kFloat16;
}

// Operand i (weights, a bias) in TFLite's layout as real numbers: dequantized when it is
// quantized.
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

// The optional float bias (operand 2), or undefined.
Expr float_bias(const TfContext& ctx) {
    if (!ctx.has_input(2)) return {};
    return float_weights(ctx, 2);
}

// A quantized product's accumulator `acc` (int32, output channels along `axis`) plus the bias,
// rescaled to the result's quantization and clamped to `activation`'s range.
Expr requantized_result(const TfContext& ctx, Expr acc, int64_t axis, int8_t activation) {
    const TfliteTensor& out_t = ctx.output_tensor(0);
    DataType out_dtype = ctx.dtype_of(out_t.type, "the result");
    Quantized in = per_tensor(ctx, ctx.input_tensor(0), "the input");
    Quantized w = quantization_of(ctx, ctx.input_tensor(1), "the weights");
    Quantized out = per_tensor(ctx, out_t, "the result");
    if (ctx.has_input(2)) {
        const TfliteTensor& bias_t = ctx.input_tensor(2);
        if (bias_t.type != tensor_type::kInt32) {
            ctx.error() << "the bias ('" << bias_t.name << "') is " << tensor_type_name(bias_t.type)
                        << "; quantized products with "
                        << tensor_type_name(ctx.input_tensor(0).type) << " data take an int32 bias";
        }
        acc = add_bias(ctx, acc, ctx.input_tflite(2), axis);
    }
    std::vector<double> ratios;
    for (double ws : w.scales) ratios.push_back(in.scales[0] * ws / out.scales[0]);
    Expr y = multiply_by_ratio(ctx, acc, ratios, axis);
    if (out.zero_points[0] != 0) y = ctx.call("add", {y, int32_scalar(ctx, out.zero_points[0])});
    auto [lo, hi] = quantized_activation_range(ctx, activation, out_t, out_dtype);
    return clamp_to(ctx, y, lo, hi, out_dtype);
}

// The zero points and scales of a product's operands, as the QNN products take them: the
// input's scalars, then the weights' (1-D along the output channels when per channel).
std::vector<Expr> qnn_operands(const TfContext& ctx) {
    Quantized in = per_tensor(ctx, ctx.input_tensor(0), "the input");
    Quantized w = quantization_of(ctx, ctx.input_tensor(1), "the weights");
    return {int32_scalar(ctx, in.zero_points[0]), int32_along(ctx, w.zero_points, 1, 0),
            float32_scalar(ctx, in.scales[0]), float32_along(ctx, w.scales, 1, 0)};
}

void check_integer_operator(const TfContext& ctx) {
    int8_t in = ctx.input_tensor(0).type, w = ctx.input_tensor(1).type;
    bool ok = (in == tensor_type::kInt8 && w == tensor_type::kInt8) ||
              (in == tensor_type::kUInt8 && w == tensor_type::kUInt8);
    if (!ok) {
        ctx.error() << "a product of " << tensor_type_name(in) << " data and "
                    << tensor_type_name(w)
                    << " weights is not supported (int8 x int8, uint8 x uint8, or float data)";
    }
}

struct Window {
    int8_t padding;
    int64_t stride_h, stride_w, dilation_h, dilation_w;
    int8_t activation;
};

// The convolution of channels-first x by the weights (operand 1) transposed by `perm` into OIHW,
// in `groups` groups, with the operator's bias and fused activation; channels-first result.
void convolve(TfContext& ctx, const Expr& x, const std::vector<int64_t>& perm, int64_t groups,
              const Window& win) {
    bool is_float = float_operator(ctx);
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
    ConvParams p{.strides = {win.stride_h, win.stride_w},
                 .padding = {top, left, bottom, right},
                 .dilation = {win.dilation_h, win.dilation_w},
                 .groups = groups};
    if (is_float) {
        Expr y = build_conv(ctx, x, w, float_bias(ctx), p);
        ctx.set_output(0, float_activation(ctx, y, win.activation), true);
        return;
    }
    check_integer_operator(ctx);
    auto [attrs, a] = new_attrs<ops::QnnConv2DAttrs>();
    a->strides = p.strides;
    a->padding = p.padding;
    a->dilation = p.dilation;
    a->groups = groups;
    a->channels = ws[0];
    a->kernel_size = {ws[2], ws[3]};
    std::vector<Expr> args = {x, w};
    for (Expr& e : qnn_operands(ctx)) args.push_back(std::move(e));
    Expr acc = ctx.call("qnn.conv2d", std::move(args), attrs);
    ctx.set_output(0, requantized_result(ctx, acc, 1, win.activation), true);
}

}  // namespace

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
        std::vector<Expr> args = {rows, w};
        for (Expr& e : qnn_operands(ctx)) args.push_back(std::move(e));
        y = requantized_result(ctx, ctx.call("qnn.dense", std::move(args), attrs), 1, activation);
    }
    if (keep_num_dims) {
        std::vector<int64_t> shape = xs;
        shape.back() = ws[0];
        y = reshape_to(ctx, y, shape);
    }
    ctx.set_output(0, y);
}

}  // namespace anvil::frontend::tflite
