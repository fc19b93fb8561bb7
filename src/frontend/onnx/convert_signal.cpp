// Converters of ONNX's signal ops: DFT (opset 17+, dft_length known at import time or absent)
// as products with constant cosine and sine matrices along the signal axis, exact multiples of
// a quarter turn getting exact 0 and ±1 entries; and the window functions (Hann, Hamming,
// Blackman) as elementwise ops over a range, their size possibly known only at run time.
#include <cmath>
#include <numbers>
#include <optional>

#include "frontend/onnx/convert_ops.h"
#include "ir/analyzer.h"
#include "ops/dense.h"
#include "ops/transform.h"

namespace anvil::frontend {

using graph::Expr;

namespace {

// The [n, k] matrix of cos (or sin) of 2 pi k j / n at row j, column k, as `dtype`.
Expr trig_matrix(ConvertContext& ctx, int64_t n, int64_t k, bool sine, DataType dtype) {
    runtime::NDArray m = runtime::NDArray::empty({n, k}, graph::dl_dtype_of(DataType::float64()));
    auto* p = static_cast<double*>(m.raw_data());
    for (int64_t j = 0; j < n; ++j) {
        for (int64_t c = 0; c < k; ++c) {
            int64_t r = (j * c) % n;  // the angle is 2 pi r / n
            double v;
            if ((4 * r) % n == 0) {
                int64_t quarter = 4 * r / n;  // 0..3
                static const double kCos[] = {1, 0, -1, 0}, kSin[] = {0, 1, 0, -1};
                v = sine ? kSin[quarter] : kCos[quarter];
            } else {
                double a = 2 * std::numbers::pi * static_cast<double>(r) / static_cast<double>(n);
                v = sine ? std::sin(a) : std::cos(a);
            }
            p[j * k + c] = v;
        }
    }
    return cast_to(ctx, ctx.constant(m), dtype);
}

Expr transpose(ConvertContext& ctx, const Expr& x, std::vector<int64_t> perm) {
    auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
    a->axes = std::move(perm);
    return ctx.call("transpose", {x}, attrs);
}

}  // namespace

Exprs convert_dft(ConvertContext& ctx) {
    Expr x = ctx.input(0);
    DataType dt = ctx.tensor_type(x, "the input").dtype;
    if (!dt.is_floating()) ctx.error() << "the input must be floating-point, got " << dt.str();
    std::vector<int64_t> shape = ctx.static_shape(x, "the input");
    int64_t r = static_cast<int64_t>(shape.size());
    if (r < 2 || (shape.back() != 1 && shape.back() != 2)) {
        ctx.error() << "the input must end in an axis of 1 (real) or 2 (complex) elements";
    }
    int64_t axis = ctx.attr_int("axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r - 1)
        ctx.error() << "axis " << ctx.attr_int("axis", 1) << " is out of range";
    if (ctx.optional_input(1).defined()) ctx.error() << "dft_length is not supported";
    bool inverse = ctx.attr_int("inverse", 0) != 0, onesided = ctx.attr_int("onesided", 0) != 0;
    if (inverse && onesided) ctx.error() << "inverse with onesided is not supported";
    int64_t n = shape[static_cast<size_t>(axis)];
    int64_t k = onesided ? n / 2 + 1 : n;
    // Real and imaginary parts, the signal axis moved last: [..., n].
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < r - 1; ++d) {
        if (d != axis) perm.push_back(d);
    }
    perm.push_back(axis);
    std::vector<int64_t> inv(perm.size());
    for (size_t d = 0; d < perm.size(); ++d)
        inv[static_cast<size_t>(perm[d])] = static_cast<int64_t>(d);
    std::vector<int64_t> part_shape(shape.begin(), shape.end() - 1);
    auto part = [&](int64_t c) {
        auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
        a->begin = {c};
        a->end = {c + 1};
        a->strides = {1};
        a->axes = {r - 1};
        Expr p = reshape_to(ctx, ctx.call("strided_slice", {x}, attrs), part_shape);
        return transpose(ctx, p, perm);
    };
    Expr re = part(0), im = shape.back() == 2 ? part(1) : Expr();
    auto mm = [&](const Expr& a, const Expr& m) {
        return ctx.call("nn.matmul", {a, m}, make_ref<ops::MatmulAttrs>());
    };
    Expr cosm = trig_matrix(ctx, n, k, false, dt), sinm = trig_matrix(ctx, n, k, true, dt);
    // forward: re' = re cos + im sin, im' = im cos - re sin; inverse: the conjugate, over n.
    double s = inverse ? -1.0 : 1.0;
    Expr out_re = mm(re, cosm),
         out_im = ctx.call("multiply", {mm(re, sinm), ctx.constant_scalar(dt, -s)});
    if (im.defined()) {
        out_re = ctx.call(
            "add", {out_re, ctx.call("multiply", {mm(im, sinm), ctx.constant_scalar(dt, s)})});
        out_im = ctx.call("add", {out_im, mm(im, cosm)});
    }
    if (inverse) {
        out_re = ctx.call("divide", {out_re, ctx.constant_scalar(dt, double(n))});
        out_im = ctx.call("divide", {out_im, ctx.constant_scalar(dt, double(n))});
    }
    auto finish = [&](const Expr& p) {
        Expr t = transpose(ctx, p, inv);
        auto [attrs, a] = new_attrs<ops::ExpandDimsAttrs>();
        a->axis = r - 1;
        return ctx.call("expand_dims", {t}, attrs);
    };
    auto [cattrs, ca] = new_attrs<ops::ConcatenateAttrs>();
    ca->axis = r - 1;
    return {ctx.call("concatenate", {finish(out_re), finish(out_im)}, cattrs)};
}

// HannWindow, HammingWindow, BlackmanWindow: sum_k a_k cos(2 pi k n / D) for n in [0, size),
// D = size (periodic) or size - 1 (symmetric); computed in float32, then output_datatype.
Exprs convert_window(ConvertContext& ctx) {
    const std::string& op = ctx.node().op_type();
    std::vector<double> coefficients;  // a_0, a_1, a_2
    if (op == "HannWindow") {
        coefficients = {0.5, -0.5};
    } else if (op == "HammingWindow") {
        coefficients = {25.0 / 46.0, -21.0 / 46.0};
    } else {
        coefficients = {0.42, -0.5, 0.08};
    }
    auto onnx_type = static_cast<int>(ctx.attr_int("output_datatype", 1));
    std::optional<DataType> out = dtype_from_onnx(onnx_type);
    if (!out)
        ctx.error() << "output_datatype " << onnx_dtype_name(onnx_type) << " is not supported";
    Expr size = ctx.input(0);
    if (!ctx.tensor_type(size, "the size").dtype.is_integer()) {
        ctx.error() << "the size must be an integer";
    }
    ShapeValues n = shape_values(ctx, size, "the size");
    if (n.values.size() != 1) ctx.error() << "the size must be one value";
    DataType f32 = DataType::float32();
    Expr index = iota(ctx, simplify(max(n.values[0], make_int(DataType::int64(), 0))),
                      bind_shape_values(ctx, ctx.constant_scalar(f32, 0.0), n, {}));
    Expr denominator = cast_to(ctx, size, f32);
    if (ctx.attr_int("periodic", 1) == 0) {
        denominator = ctx.call("subtract", {denominator, ctx.constant_scalar(f32, 1.0)});
    }
    // The angle 2 pi n / D, then a_0 + a_1 cos(angle) + a_2 cos(2 angle).
    Expr angle = ctx.call(
        "divide", {ctx.call("multiply", {index, ctx.constant_scalar(f32, 2 * std::numbers::pi)}),
                   denominator});
    Expr y = ctx.constant_scalar(f32, coefficients[0]);
    for (size_t k = 1; k < coefficients.size(); ++k) {
        Expr turn =
            k == 1 ? angle : ctx.call("multiply", {angle, ctx.constant_scalar(f32, double(k))});
        y = ctx.call("add", {y, ctx.call("multiply", {ctx.call("cos", {turn}),
                                                      ctx.constant_scalar(f32, coefficients[k])})});
    }
    return {cast_to(ctx, y, *out)};
}

}  // namespace anvil::frontend
