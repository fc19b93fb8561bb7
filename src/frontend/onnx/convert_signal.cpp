// Converters of ONNX's signal ops: DFT (opset 17+, dft_length known at import time or absent)
// as products with constant cosine and sine matrices along the signal axis, exact multiples of
// a quarter turn getting exact 0 and ±1 entries; STFT as frames gathered from the signal, times
// the window, by the same products (the matrices computed by ops when the frame length is known
// only at run time); and the window functions (Hann, Hamming, Blackman) as elementwise ops over a
// range, their size possibly known only at run time.
#include <cmath>
#include <numbers>
#include <optional>
#include <tuple>

#include "frontend/onnx/convert_ops.h"
#include "ir/analyzer.h"
#include "ops/axes.h"
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

// The [n, k] matrices of cos and sin of 2 pi ((j k) mod n) / n at row j, column k, for n known
// only at run time: `length` is n as an int64 scalar tensor, `start` a 0 carrying the binding of
// n's variable. The angles are reduced mod n first and taken in float64, so float32 entries are
// within rounding of the exact values (quarter turns are not snapped to exact 0 and ±1 as in
// trig_matrix: a zero comes out as about 1e-16).
std::pair<Expr, Expr> runtime_trig_matrices(ConvertContext& ctx, const PrimExpr& n,
                                            const PrimExpr& k, const Expr& length,
                                            const Expr& start, DataType dtype) {
    Expr j = expand_dims(ctx, iota(ctx, n, start), 1);  // [n, 1]
    Expr c = iota(ctx, k, start);                       // [k]
    Expr r = ctx.call("floor_mod", {ctx.call("multiply", {j, c}), length});
    DataType f64 = DataType::float64();
    Expr angle = ctx.call(
        "divide", {ctx.call("multiply",
                            {cast_to(ctx, r, f64), ctx.constant_scalar(f64, 2 * std::numbers::pi)}),
                   cast_to(ctx, length, f64)});
    return {cast_to(ctx, ctx.call("cos", {angle}), dtype),
            cast_to(ctx, ctx.call("sin", {angle}), dtype)};
}

// The DFT along the last axis of re and im ([..., n]; im undefined for a real signal) by the
// [n, k] cos and sin matrices: forward, re cos + im sin and im cos - re sin; inverse (without the
// 1/n), the conjugate.
std::pair<Expr, Expr> transform_parts(ConvertContext& ctx, const Expr& re, const Expr& im,
                                      const Expr& cosm, const Expr& sinm, bool inverse,
                                      DataType dt) {
    auto mm = [&](const Expr& a, const Expr& m) {
        return ctx.call("nn.matmul", {a, m}, make_ref<ops::MatmulAttrs>());
    };
    double s = inverse ? -1.0 : 1.0;
    Expr out_re = mm(re, cosm),
         out_im = ctx.call("multiply", {mm(re, sinm), ctx.constant_scalar(dt, -s)});
    if (im.defined()) {
        out_re = ctx.call(
            "add", {out_re, ctx.call("multiply", {mm(im, sinm), ctx.constant_scalar(dt, s)})});
        out_im = ctx.call("add", {out_im, mm(im, cosm)});
    }
    return {out_re, out_im};
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
    Expr cosm = trig_matrix(ctx, n, k, false, dt), sinm = trig_matrix(ctx, n, k, true, dt);
    auto [out_re, out_im] = transform_parts(ctx, re, im, cosm, sinm, inverse, dt);
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

// STFT (opset 17): frame f of the signal [batch, length, 1 or 2] is its samples f * step ..
// f * step + L - 1, L the window's length or frame_length (both must agree); each frame times
// the window, then its DFT ([batch, frames, bins, 2], bins L / 2 + 1 when onesided). frame_step
// and frame_length may be model inputs: their values are bound to dimension variables at run
// time, with the checks that they fit the signal.
Exprs convert_stft(ConvertContext& ctx) {
    Expr signal = ctx.input(0);
    DataType dt = ctx.tensor_type(signal, "the signal").dtype;
    if (!dt.is_floating()) ctx.error() << "the signal must be floating-point, got " << dt.str();
    std::vector<int64_t> shape = ctx.static_shape(signal, "the signal");
    if (shape.size() != 3 || (shape[2] != 1 && shape[2] != 2)) {
        ctx.error() << "the signal must be [batch, length, 1] (real) or [batch, length, 2] "
                    << "(complex), got " << graph::type_str(signal->type);
    }
    DataType i64 = DataType::int64();
    // frame_step and frame_length: one integer each, constants or bound at run time.
    auto scalar_operand = [&](const Expr& e, const char* what) {
        const auto& t = ctx.tensor_type(e, what);
        if (!t.dtype.is_integer() || !t.is_static() || t.num_elements() != 1) {
            ctx.error() << what << " must be one integer, got " << graph::type_str(e->type);
        }
        ShapeValues v = shape_values(ctx, e, what);
        // Named for what they are, so that a failed run-time check reads well.
        if (v.bound_from.defined()) v.values = {make_var(what, i64)};
        return v;
    };
    // The operand as an int64 scalar tensor, for the ops that compute with it.
    auto as_tensor = [&](const Expr& e, const ShapeValues& v) {
        return v.all_constant ? ctx.constant_scalar(i64, static_cast<double>(v.constants[0]))
                              : reshape_to(ctx, cast_to(ctx, e, i64), {});
    };
    Expr step_input = ctx.input(1);
    ShapeValues step = scalar_operand(step_input, "frame_step");
    Expr window = ctx.optional_input(2), length_input = ctx.optional_input(3);
    if (!window.defined() && !length_input.defined()) {
        ctx.error() << "needs a window or a frame_length to give the frame length";
    }
    // Conditions and what their failure means (they fail at import only over constants).
    std::vector<std::pair<PrimExpr, std::string>> checks;
    PrimExpr length;
    ShapeValues given_length;
    if (length_input.defined()) {
        given_length = scalar_operand(length_input, "frame_length");
        length = given_length.values[0];
    }
    if (window.defined()) {
        std::vector<int64_t> w = ctx.static_shape(window, "the window");
        if (w.size() != 1) {
            ctx.error() << "the window must be 1-D, got " << graph::type_str(window->type);
        }
        PrimExpr window_length = make_int(i64, w[0]);
        if (length.defined()) {
            checks.emplace_back(eq(length, window_length),
                                "frame_length " + ops::dim_str(length) +
                                    " differs from the window's length " + std::to_string(w[0]));
        }
        length = window_length;
    }
    int64_t n = shape[1];
    checks.emplace_back(step.values[0] >= make_int(i64, 1),
                        "frame_step must be positive, got " + ops::dim_str(step.values[0]));
    checks.emplace_back(length >= make_int(i64, 1),
                        "the frame length must be positive, got " + ops::dim_str(length));
    checks.emplace_back(length <= make_int(i64, n), "the frame length " + ops::dim_str(length) +
                                                        " exceeds the signal's length " +
                                                        std::to_string(n));
    // What import time can decide fails now; the executor checks the rest.
    std::vector<PrimExpr> run_time;
    for (const auto& [check, what] : checks) {
        PrimExpr c = simplify(check);
        const int64_t* holds = as_const_int(c);
        if (holds && *holds == 0) ctx.error() << what;
        if (!holds) run_time.push_back(c);
    }
    PrimExpr frames = simplify(floordiv(make_int(i64, n) - length, step.values[0]) + 1);
    bool onesided = ctx.attr_int("onesided", 1) != 0;
    PrimExpr bins = onesided ? simplify(floordiv(length, make_int(i64, 2)) + 1) : length;
    std::vector<Expr> bound;
    std::vector<PrimExpr> vars;
    for (const ShapeValues* v : {&step, &given_length}) {
        if (!v->bound_from.defined()) continue;
        bound.push_back(v->bound_from);
        vars.insert(vars.end(), v->values.begin(), v->values.end());
    }
    Expr start = ctx.constant_scalar(i64, 0);
    if (!bound.empty() || !run_time.empty()) start = ctx.bind_values(start, bound, vars, run_time);
    // positions[f, j] = f * step + j, then frames [batch, frames, L, 1 or 2].
    Expr offsets = ctx.call("multiply", {iota(ctx, frames, start), as_tensor(step_input, step)});
    Expr positions = ctx.call("add", {expand_dims(ctx, offsets, 1), iota(ctx, length, start)});
    auto [take_attrs, ta] = new_attrs<ops::TakeAttrs>();
    ta->axis = 1;
    Expr framed = ctx.call("take", {signal, positions}, take_attrs);
    auto part = [&](int64_t c) {
        auto [attrs, a] = new_attrs<ops::TakeAttrs>();
        a->axis = 3;
        Expr p =
            ctx.call("take", {framed, ctx.constant_scalar(i64, static_cast<double>(c))}, attrs);
        return window.defined() ? ctx.call("multiply", {p, cast_to(ctx, window, dt)}) : p;
    };
    Expr re = part(0), im = shape[2] == 2 ? part(1) : Expr();
    Expr cosm, sinm;
    if (const int64_t* l = as_const_int(length)) {
        int64_t k = *as_const_int(bins);
        cosm = trig_matrix(ctx, *l, k, false, dt);
        sinm = trig_matrix(ctx, *l, k, true, dt);
    } else {
        std::tie(cosm, sinm) = runtime_trig_matrices(
            ctx, length, bins, as_tensor(length_input, given_length), start, dt);
    }
    auto [out_re, out_im] = transform_parts(ctx, re, im, cosm, sinm, false, dt);
    auto [cattrs, ca] = new_attrs<ops::ConcatenateAttrs>();
    ca->axis = 3;
    return {ctx.call("concatenate", {expand_dims(ctx, out_re, 3), expand_dims(ctx, out_im, 3)},
                     cattrs)};
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
