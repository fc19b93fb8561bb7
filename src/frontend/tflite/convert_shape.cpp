// Converters of TFLite's operators that move elements: RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE,
// CONCATENATION, PAD, PADV2, SLICE and STRIDED_SLICE. They work on quantized tensors' integers as
// on floats (the result keeps the operand's quantization, as TFLite requires), except CONCATENATION
// of uint8 operands quantized differently, which rescales them as TFLite does. CONCATENATION and
// PAD keep channels-first operands so (mapping their axis); the others read TFLite's layout.
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/tflite_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

// The new shape: the shape operand where it is a vector, else the options' new_shape (TFLite's
// reshape kernel falls back to it so), where a legacy [0] means a scalar.
void convert_reshape(TfContext& ctx) {
    ctx.expect_arity(1, 2, 1);
    Expr x = ctx.input_tflite(0);
    std::vector<int64_t> shape;
    std::vector<int32_t> option =
        ctx.options(options_type::kReshape).int32_vector(reshape_options::kNewShape);
    if (ctx.has_input(1) && ctx.input_tensor(1).shape.size() == 1) {
        shape = ctx.constant_ints(1, "the new shape");
    } else if (option != std::vector<int32_t>{0}) {
        shape.assign(option.begin(), option.end());
    }
    auto [attrs, a] = new_attrs<ops::ReshapeAttrs>();
    a->newshape = shape;
    a->allowzero = true;  // TFLite's 0 is a zero-size dimension, not "copy"
    ctx.set_output(0, ctx.call("reshape", {x}, attrs));
}

void convert_squeeze(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    Expr x = ctx.input_tflite(0);
    std::vector<int64_t> shape = ctx.static_shape(x, "the operand");
    std::vector<int32_t> dims =
        ctx.options(options_type::kSqueeze).int32_vector(squeeze_options::kSqueezeDims);
    auto [attrs, a] = new_attrs<ops::SqueezeAttrs>();
    for (int32_t d : dims)
        a->axes.push_back(ctx.normalize_axis(d, int64_t(shape.size()), "an axis"));
    if (dims.empty()) {  // every size-1 axis
        for (size_t i = 0; i < shape.size(); ++i) {
            if (shape[i] == 1) a->axes.push_back(int64_t(i));
        }
    }
    ctx.set_output(0, ctx.call("squeeze", {x}, attrs));
}

void convert_expand_dims(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    Expr x = ctx.input_tflite(0);
    std::vector<int64_t> axis = ctx.constant_ints(1, "the axis");
    if (axis.size() != 1) ctx.error() << "the axis must be one value, got " << axis.size();
    ctx.set_output(0,
                   expand_dims(ctx, x, ctx.normalize_axis(axis[0], ctx.rank(x) + 1, "the axis")));
}

void convert_transpose(TfContext& ctx) {
    ctx.expect_arity(2, 2, 1);
    Expr x = ctx.input_tflite(0);
    std::vector<int64_t> perm = ctx.constant_ints(1, "the permutation");
    int64_t rank = ctx.rank(x);
    std::vector<bool> seen(size_t(rank), false);
    if (int64_t(perm.size()) != rank) {
        ctx.error() << "the permutation " << ints_str(perm) << " does not have rank " << rank;
    }
    for (int64_t& p : perm) {
        p = ctx.normalize_axis(p, rank, "a permutation entry");
        if (seen[size_t(p)])
            ctx.error() << "the permutation " << ints_str(perm) << " repeats " << p;
        seen[size_t(p)] = true;
    }
    ctx.set_output(0, ctx.transpose(x, perm));
}

void convert_concatenation(TfContext& ctx) {
    if (ctx.num_inputs() < 1) ctx.error() << "takes at least one operand";
    ctx.expect_arity(ctx.num_inputs(), ctx.num_inputs(), 1);
    const TfliteOptions& o = ctx.options(options_type::kConcatenation);
    if (o.int8(concatenation_options::kActivation) != activation::kNone) {
        ctx.error() << "a fused activation is not supported (TFLite's kernel refuses it too)";
    }
    const TfliteTensor& out_t = ctx.output_tensor(0);
    int64_t rank = int64_t(out_t.shape.size());
    int64_t axis = ctx.normalize_axis(o.int32(concatenation_options::kAxis), rank, "the axis");
    bool cf = rank == 4;
    for (size_t i = 0; i < ctx.num_inputs() && cf; ++i) cf = ctx.input(i).channels_first;
    bool quantized = ctx.is_quantized(out_t);
    std::vector<Expr> parts;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
        Expr x = cf ? ctx.input_channels_first(i) : ctx.input_tflite(i);
        if (quantized) {
            Quantized q = per_tensor(ctx, ctx.input_tensor(i), "operand " + std::to_string(i));
            Quantized qo = per_tensor(ctx, out_t, "the result");
            if (ctx.input_tensor(i).type != out_t.type) {
                ctx.error() << "operand " << i << " is "
                            << tensor_type_name(ctx.input_tensor(i).type) << ", the result "
                            << tensor_type_name(out_t.type);
            }
            if (q.scales[0] != qo.scales[0] || q.zero_points[0] != qo.zero_points[0]) {
                if (out_t.type != tensor_type::kUInt8) {
                    ctx.error() << "operand " << i << " is quantized unlike the result; TFLite "
                                << "concatenates such operands only for uint8";
                }
                // TFLite's uint8 rescaling: round(x * s + b) in float32, s = scale / output scale.
                float s = float(q.scales[0]) * (1.0f / float(qo.scales[0]));
                float b = -float(q.zero_points[0]) * s;
                Expr v =
                    ctx.call("add", {ctx.call("multiply", {cast_to(ctx, x, DataType::float32()),
                                                           float32_scalar(ctx, s)}),
                                     float32_scalar(ctx, b)});
                v = ctx.call("add", {round_half_away(ctx, v),
                                     float32_scalar(ctx, double(qo.zero_points[0]))});
                x = clamp_to(ctx, v, 0, 255, DataType::uint(8));
            }
        }
        parts.push_back(x);
    }
    auto [attrs, a] = new_attrs<ops::ConcatenateAttrs>();
    a->axis = cf ? channels_first_axis(axis) : axis;
    Expr y = ctx.call("concatenate", parts, attrs);
    ctx.set_output(0, y, cf);
}

void convert_pad(TfContext& ctx) {
    bool v2 = ctx.builtin() == op::kPadV2;
    ctx.expect_arity(2, v2 ? 3 : 2, 1);
    const TfValue& x = ctx.input(0);
    int64_t rank = ctx.rank(x.expr);
    std::vector<int64_t> pads = ctx.constant_ints(1, "the paddings");
    if (int64_t(pads.size()) != 2 * rank) {
        ctx.error() << "the paddings hold " << pads.size() << " values; a rank-" << rank
                    << " operand needs [" << rank << ", 2]";
    }
    for (int64_t p : pads) {
        if (p < 0) ctx.error() << "the paddings " << ints_str(pads) << " must not be negative";
    }
    auto [attrs, a] = new_attrs<ops::PadAttrs>();
    a->pad_width.assign(pads.size(), 0);
    for (int64_t d = 0; d < rank; ++d) {
        int64_t to = x.channels_first ? channels_first_axis(d) : d;
        a->pad_width[2 * to] = pads[2 * d];
        a->pad_width[2 * to + 1] = pads[2 * d + 1];
    }
    const TfliteTensor& in_t = ctx.input_tensor(0);
    if (v2 && ctx.has_input(2)) {
        runtime::NDArray value = ctx.constant_input(2, "the padding value");
        if (value.num_elements() != 1) ctx.error() << "the padding value must be one element";
        a->pad_value = ctx.const_scalar(ctx.input_tflite(2), "the padding value");
    } else if (ctx.is_quantized(in_t)) {
        a->pad_value = double(per_tensor(ctx, in_t, "the operand").zero_points[0]);  // real 0
    }
    ctx.set_output(0, ctx.call("nn.pad", {x.expr}, attrs), x.channels_first);
}

namespace {

Expr strided_slice(const TfContext& ctx, const Expr& x, std::vector<int64_t> begin,
                   std::vector<int64_t> end, std::vector<int64_t> strides) {
    auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
    for (size_t d = 0; d < begin.size(); ++d) a->axes.push_back(int64_t(d));
    a->begin = std::move(begin);
    a->end = std::move(end);
    a->strides = std::move(strides);
    return ctx.call("strided_slice", {x}, attrs);
}

}  // namespace

// SLICE(x, begin, size): size -1 runs to the end.
void convert_slice(TfContext& ctx) {
    ctx.expect_arity(3, 3, 1);
    Expr x = ctx.input_tflite(0);
    std::vector<int64_t> shape = ctx.static_shape(x, "the operand");
    std::vector<int64_t> begin = ctx.constant_ints(1, "the begin");
    std::vector<int64_t> size = ctx.constant_ints(2, "the size");
    if (begin.size() != shape.size() || size.size() != shape.size()) {
        ctx.error() << "the begin " << ints_str(begin) << " and size " << ints_str(size)
                    << " must have one value per axis of the operand " << ints_str(shape);
    }
    std::vector<int64_t> end(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
        end[d] = size[d] == -1 ? shape[d] : begin[d] + size[d];
        if (begin[d] < 0 || begin[d] > shape[d] || size[d] < -1 || end[d] > shape[d]) {
            ctx.error() << "the slice from " << ints_str(begin) << " of size " << ints_str(size)
                        << " does not lie inside the operand " << ints_str(shape);
        }
    }
    ctx.set_output(0, strided_slice(ctx, x, begin, end, std::vector<int64_t>(shape.size(), 1)));
}

// STRIDED_SLICE(x, begin, end, strides) with TensorFlow's masks: a begin_mask / end_mask bit
// takes the whole extent on that side, a shrink_axis_mask bit takes the one element at begin and
// drops the axis; `offset` makes end relative to begin. Indices count from the end when
// negative and clamp to the extent.
void convert_strided_slice(TfContext& ctx) {
    ctx.expect_arity(3, 4, 1);
    const TfliteOptions& o = ctx.options(options_type::kStridedSlice);
    int32_t begin_mask = o.int32(strided_slice_options::kBeginMask);
    int32_t end_mask = o.int32(strided_slice_options::kEndMask);
    int32_t shrink_mask = o.int32(strided_slice_options::kShrinkAxisMask);
    bool offset = o.boolean(strided_slice_options::kOffset);
    if (o.int32(strided_slice_options::kEllipsisMask) != 0 ||
        o.int32(strided_slice_options::kNewAxisMask) != 0) {
        ctx.error() << "ellipsis_mask and new_axis_mask are not supported (TFLite's kernel "
                       "refuses them too)";
    }
    Expr x = ctx.input_tflite(0);
    std::vector<int64_t> shape = ctx.static_shape(x, "the operand");
    size_t rank = shape.size();
    auto bit = [](int32_t mask, size_t d) { return d < 32 && ((uint32_t(mask) >> d) & 1u); };
    std::vector<int64_t> begin = ctx.constant_ints(1, "the begin");
    std::vector<int64_t> end = ctx.constant_ints(2, "the end");
    std::vector<int64_t> strides =
        ctx.has_input(3) ? ctx.constant_ints(3, "the strides") : std::vector<int64_t>(rank, 1);
    if (begin.size() > rank || end.size() != begin.size() || strides.size() != begin.size()) {
        ctx.error() << "begin " << ints_str(begin) << ", end " << ints_str(end) << " and strides "
                    << ints_str(strides) << " must have one value per sliced axis of the "
                    << "operand " << ints_str(shape);
    }
    std::vector<int64_t> b(rank, 0), e(shape), s(rank, 1), dropped;
    for (size_t d = 0; d < begin.size(); ++d) {
        int64_t n = shape[d];
        if (strides[d] == 0) ctx.error() << "the stride of axis " << d << " is 0";
        s[d] = strides[d];
        bool forward = strides[d] > 0;
        auto clamp = [&](int64_t i) {
            if (i < 0) i += n;
            // Forward: [0, n]; backward: [-1, n - 1] (-1 is "before the first").
            return forward ? std::clamp<int64_t>(i, 0, n) : std::clamp<int64_t>(i, -1, n - 1);
        };
        b[d] = bit(begin_mask, d) ? (forward ? 0 : n - 1) : clamp(begin[d]);
        if (bit(shrink_mask, d)) {
            int64_t i = begin[d] < 0 ? begin[d] + n : begin[d];
            if (i < 0 || i >= n) {
                ctx.error() << "axis " << d << " shrinks to index " << begin[d]
                            << ", outside its extent " << n;
            }
            b[d] = i;
            e[d] = i + 1;
            s[d] = 1;
            dropped.push_back(int64_t(d));
            continue;
        }
        int64_t stop = offset ? begin[d] + end[d] : end[d];
        e[d] = bit(end_mask, d) ? (forward ? n : -1) : clamp(stop);
    }
    // strided_slice reads a negative index as counting from the back: "before the first"
    // element of a backward slice is written as -(n + 1).
    for (size_t d = 0; d < rank; ++d) {
        if (s[d] < 0 && e[d] == -1) e[d] = -shape[d] - 1;
        if (s[d] < 0 && b[d] == -1) b[d] = -shape[d] - 1;
    }
    Expr y = strided_slice(ctx, x, b, e, s);
    if (!dropped.empty()) {
        auto [attrs, a] = new_attrs<ops::SqueezeAttrs>();
        a->axes = dropped;
        y = ctx.call("squeeze", {y}, attrs);
    }
    ctx.set_output(0, y);
}

}  // namespace anvil::frontend::tflite
