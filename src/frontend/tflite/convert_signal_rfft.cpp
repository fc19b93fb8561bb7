// The converter of TFLite Micro's SignalRfft: the real FFT of each frame (the innermost axis,
// zero-padded to fft_length), as fft_length / 2 + 1 complex bins (re, im interleaved).
//
// TFLite Micro computes it with kissfft v130 (kiss_fftr over a complex FFT of half the length,
// decimation in time, radix 4, 2, 3 and 5 butterflies). For int16 and int32 data kissfft works in
// fixed point: every butterfly input is divided by the radix with rounding (C_FIXDIV), every
// product rounds half up (sround), sums wrap in the data type, twiddles are the rounded
// floor(0.5 + max * cos). This converter builds the same stages from graph ops, step for step in
// the same types, so integer results equal TFLite Micro's bit for bit; float32 follows the same
// stages in float (equal up to rounding).
//
// The stages: kissfft's recursion first copies the input into a digit-reversed order (the
// leaves), then applies the butterflies level by level from the innermost, each level over all
// its segments at once. Here the copy is one gather and each level one set of elementwise ops on
// the data reshaped [frames, segments, radix, m].
#include <cmath>

#include "frontend/composite_ops.h"
#include "frontend/tflite/convert_ops.h"
#include "frontend/tflite/signal_arithmetic.h"
#include "frontend/tflite/tflite_schema.h"
#include "ops/transform.h"

namespace anvil::frontend::tflite {

using graph::Expr;

namespace {

struct Complex {
    Expr re, im;
};

// kissfft's kf_factor: radix 4 first, then 2, 3, 5, ...; (radix, remaining length) pairs.
std::vector<std::pair<int64_t, int64_t>> kiss_factors(int64_t n) {
    std::vector<std::pair<int64_t, int64_t>> factors;
    int64_t p = 4;
    const double floor_sqrt = std::floor(std::sqrt(double(n)));
    do {
        while (n % p != 0) {
            p = p == 4 ? 2 : p == 2 ? 3 : p + 2;
            if (double(p) > floor_sqrt) p = n;
        }
        n /= p;
        factors.emplace_back(p, n);
    } while (n > 1);
    return factors;
}

// Where kissfft's recursion puts each input element before the first butterfly: leaf[j] is the
// input index that lands at position j.
void kiss_leaves(const std::vector<std::pair<int64_t, int64_t>>& factors, size_t level, int64_t out,
                 int64_t in, int64_t stride, std::vector<int64_t>& leaf) {
    auto [p, m] = factors[level];
    for (int64_t j = 0; j < p; ++j) {
        if (m == 1) {
            leaf[size_t(out + j)] = in + j * stride;
        } else {
            kiss_leaves(factors, level + 1, out + j * m, in + j * stride, stride * p, leaf);
        }
    }
}

// kissfft's arithmetic for one data type, on graph values.
class KissArithmetic {
public:
    KissArithmetic(const TfContext& ctx, int8_t type) : ctx_(ctx) {
        if (type == tensor_type::kInt16) {
            scalar_ = DataType::int_(16), product_ = DataType::int32(), frac_bits_ = 15;
        } else if (type == tensor_type::kInt32) {
            scalar_ = DataType::int32(), product_ = DataType::int64(), frac_bits_ = 31;
        } else {
            scalar_ = product_ = DataType::float32(), frac_bits_ = 0;
        }
    }

    bool fixed() const { return frac_bits_ != 0; }
    DataType scalar() const { return scalar_; }
    int64_t max() const { return (int64_t{1} << frac_bits_) - 1; }  // SAMP_MAX

    // A constant of the data type: fixed-point values as integers, floats as float32.
    Expr constant(const std::vector<double>& values, const std::vector<int64_t>& shape) const {
        if (fixed()) {
            std::vector<int64_t> ints(values.begin(), values.end());
            return integer_constant(ctx_, scalar_, ints, shape);
        }
        runtime::NDArray array = runtime::NDArray::empty(shape, graph::dl_dtype_of(scalar_));
        for (size_t k = 0; k < values.size(); ++k) array.data<float>()[k] = float(values[k]);
        return ctx_.constant(array);
    }

    // kf_cexp: the twiddle e^(i phase), rounded to the fixed-point scale.
    std::pair<double, double> twiddle(double phase) const {
        if (!fixed()) return {float(std::cos(phase)), float(std::sin(phase))};
        // floor(.5 + max * cos) converted to the scalar type (a value in range).
        return {std::floor(.5 + double(max()) * std::cos(phase)),
                std::floor(.5 + double(max()) * std::sin(phase))};
    }

    Expr add(const Expr& a, const Expr& b) const { return ctx_.call("add", {a, b}); }
    Expr sub(const Expr& a, const Expr& b) const { return ctx_.call("subtract", {a, b}); }
    Expr neg(const Expr& a) const { return sub(constant({0}, {}), a); }

    // smul: the product in the product type (wrapping).
    Expr smul(const Expr& a, const Expr& b) const {
        return ctx_.call("multiply", {cast_to(ctx_, a, product_), cast_to(ctx_, b, product_)});
    }
    // sround: a product rounded half up to frac_bits fewer bits, in the scalar type.
    Expr sround(const Expr& p) const {
        if (!fixed()) return p;
        Expr half = with_scalar(ctx_, "add", p, int64_t{1} << (frac_bits_ - 1));
        return cast_to(ctx_, with_scalar(ctx_, "right_shift", half, frac_bits_), scalar_);
    }
    Expr s_mul(const Expr& a, const Expr& b) const { return sround(smul(a, b)); }
    Complex c_mul(const Complex& a, const Complex& b) const {
        return {sround(ctx_.call("subtract", {smul(a.re, b.re), smul(a.im, b.im)})),
                sround(ctx_.call("add", {smul(a.re, b.im), smul(a.im, b.re)}))};
    }
    // C_FIXDIV: both parts times max / k, rounded (fixed point only).
    Complex fixdiv(const Complex& c, int64_t k) const {
        if (!fixed()) return c;
        Expr factor = constant({double(max() / k)}, {});
        return {s_mul(c.re, factor), s_mul(c.im, factor)};
    }
    Complex add(const Complex& a, const Complex& b) const {
        return {add(a.re, b.re), add(a.im, b.im)};
    }
    Complex sub(const Complex& a, const Complex& b) const {
        return {sub(a.re, b.re), sub(a.im, b.im)};
    }
    // HALF_OF(a + b) or HALF_OF(a - b) (`op` "add" or "subtract"): computed in C's int (int32),
    // shifted right once, stored in the scalar type (negating b in the scalar type first would
    // wrap at -32768); floats halve.
    Expr half_of(const char* op, const Expr& a, const Expr& b) const {
        if (!fixed()) return ctx_.call("multiply", {ctx_.call(op, {a, b}), constant({0.5}, {})});
        const DataType i32 = DataType::int32();
        Expr wide = ctx_.call(op, {cast_to(ctx_, a, i32), cast_to(ctx_, b, i32)});
        return cast_to(ctx_, with_scalar(ctx_, "right_shift", wide, 1), scalar_);
    }
    // HALF_OF(x) of one stored value.
    Expr half_of(const Expr& a) const {
        if (!fixed()) return ctx_.call("multiply", {a, constant({0.5}, {})});
        return with_scalar(ctx_, "right_shift", a, 1);
    }

private:
    const TfContext& ctx_;
    DataType scalar_, product_;
    int frac_bits_ = 0;
};

// The complex FFT of length n over the innermost axis of z [frames, n], as kissfft computes it.
class KissFft {
public:
    KissFft(const TfContext& ctx, const KissArithmetic& k, int64_t n) : ctx_(ctx), k_(k), n_(n) {
        const double pi = 3.141592653589793238462643383279502884197169399375105820974944;
        for (int64_t i = 0; i < n; ++i)
            twiddles_.push_back(k.twiddle(-2 * pi * double(i) / double(n)));
        factors_ = kiss_factors(n);
    }

    Complex run(const Complex& z, int64_t frames) const {
        auto leaf = std::vector<int64_t>(size_t(n_));
        kiss_leaves(factors_, 0, 0, 0, 1, leaf);
        Expr order = ctx_.constant_int64(leaf, {n_});
        Complex x{gather(z.re, order, 1), gather(z.im, order, 1)};
        // Level l has radix p_l, sub-length m_l and twiddle stride p_0 * ... * p_(l-1).
        std::vector<int64_t> strides = {1};
        for (auto [p, m] : factors_) strides.push_back(strides.back() * p);
        for (size_t l = factors_.size(); l-- > 0;) {
            x = level(x, frames, factors_[l].first, factors_[l].second, strides[l]);
        }
        return x;
    }

private:
    Expr gather(const Expr& x, const Expr& index, int64_t axis) const {
        return take_along(ctx_, x, index, axis);
    }

    // Twiddles tw[(r * u * stride)] for u in [0, m), as constants [m].
    Complex twiddle_row(int64_t r, int64_t m, int64_t stride) const {
        std::vector<double> re, im;
        for (int64_t u = 0; u < m; ++u) {
            auto [c, s] = twiddles_[size_t(r * u * stride)];
            re.push_back(c);
            im.push_back(s);
        }
        return {k_.constant(re, {m}), k_.constant(im, {m})};
    }
    Complex twiddle_at(int64_t i) const {
        auto [c, s] = twiddles_[size_t(i)];
        return {k_.constant({c}, {}), k_.constant({s}, {})};
    }

    // One level of butterflies of radix p over x [frames, n] seen as [frames, segments, p, m].
    Complex level(const Complex& x, int64_t frames, int64_t p, int64_t m, int64_t stride) const {
        std::vector<int64_t> blocks = {frames, n_ / (p * m), p, m};
        Expr re4 = reshape_to(ctx_, x.re, blocks), im4 = reshape_to(ctx_, x.im, blocks);
        std::vector<Complex> f;
        for (int64_t r = 0; r < p; ++r) {
            Expr at = ctx_.constant_int64({r}, {});
            f.push_back(k_.fixdiv({gather(re4, at, 2), gather(im4, at, 2)}, p));
        }
        std::vector<Complex> out = butterfly(f, p, m, stride);
        std::vector<Expr> res, ims;
        for (const Complex& c : out) {
            res.push_back(expand_dims(ctx_, c.re, 2));
            ims.push_back(expand_dims(ctx_, c.im, 2));
        }
        auto concat = [&](std::vector<Expr> parts) {
            return reshape_to(ctx_, concatenate_along(ctx_, std::move(parts), 2), {frames, n_});
        };
        return {concat(res), concat(ims)};
    }

    // kf_bfly2/3/4/5 (forward) on inputs already divided by the radix.
    std::vector<Complex> butterfly(const std::vector<Complex>& f, int64_t p, int64_t m,
                                   int64_t stride) const {
        const KissArithmetic& k = k_;
        auto tw = [&](int64_t r) { return twiddle_row(r, m, stride); };
        if (p == 2) {
            Complex t = k.c_mul(f[1], tw(1));
            return {k.add(f[0], t), k.sub(f[0], t)};
        }
        if (p == 4) {
            Complex s0 = k.c_mul(f[1], tw(1)), s1 = k.c_mul(f[2], tw(2)), s2 = k.c_mul(f[3], tw(3));
            Complex s5 = k.sub(f[0], s1), f0 = k.add(f[0], s1);
            Complex s3 = k.add(s0, s2), s4 = k.sub(s0, s2);
            return {k.add(f0, s3),
                    {k.add(s5.re, s4.im), k.sub(s5.im, s4.re)},
                    k.sub(f0, s3),
                    {k.sub(s5.re, s4.im), k.add(s5.im, s4.re)}};
        }
        if (p == 3) {
            Complex epi3 = twiddle_at(stride * m);
            Complex s1 = k.c_mul(f[1], tw(1)), s2 = k.c_mul(f[2], tw(2));
            Complex s3 = k.add(s1, s2), s0 = k.sub(s1, s2);
            Complex fm = {k.sub(f[0].re, k.half_of(s3.re)), k.sub(f[0].im, k.half_of(s3.im))};
            s0 = {k.s_mul(s0.re, epi3.im), k.s_mul(s0.im, epi3.im)};
            return {k.add(f[0], s3),
                    {k.sub(fm.re, s0.im), k.add(fm.im, s0.re)},
                    {k.add(fm.re, s0.im), k.sub(fm.im, s0.re)}};
        }
        // p == 5
        Complex ya = twiddle_at(stride * m), yb = twiddle_at(stride * 2 * m);
        Complex s1 = k.c_mul(f[1], tw(1)), s2 = k.c_mul(f[2], tw(2)), s3 = k.c_mul(f[3], tw(3)),
                s4 = k.c_mul(f[4], tw(4));
        Complex s7 = k.add(s1, s4), s10 = k.sub(s1, s4), s8 = k.add(s2, s3), s9 = k.sub(s2, s3);
        auto S = [&](const Expr& a, const Expr& b) { return k.s_mul(a, b); };
        Complex out0 = {k.add(f[0].re, k.add(s7.re, s8.re)), k.add(f[0].im, k.add(s7.im, s8.im))};
        Complex s5 = {k.add(k.add(f[0].re, S(s7.re, ya.re)), S(s8.re, yb.re)),
                      k.add(k.add(f[0].im, S(s7.im, ya.re)), S(s8.im, yb.re))};
        Complex s6 = {k.add(S(s10.im, ya.im), S(s9.im, yb.im)),
                      k.sub(k.neg(S(s10.re, ya.im)), S(s9.re, yb.im))};
        Complex s11 = {k.add(k.add(f[0].re, S(s7.re, yb.re)), S(s8.re, ya.re)),
                       k.add(k.add(f[0].im, S(s7.im, yb.re)), S(s8.im, ya.re))};
        Complex s12 = {k.add(k.neg(S(s10.im, yb.im)), S(s9.im, ya.im)),
                       k.sub(S(s10.re, yb.im), S(s9.re, ya.im))};
        return {out0, k.sub(s5, s6), k.add(s11, s12), k.sub(s11, s12), k.add(s5, s6)};
    }

    const TfContext& ctx_;
    const KissArithmetic& k_;
    int64_t n_;
    std::vector<std::pair<double, double>> twiddles_;
    std::vector<std::pair<int64_t, int64_t>> factors_;
};

}  // namespace

void convert_signal_rfft(TfContext& ctx) {
    ctx.expect_arity(1, 1, 1);
    TfliteCustomOptions options = ctx.custom_options();
    // Audio front ends use 64 .. 2048 (TFLite's Python wrapper's range); the graph this
    // converter builds grows with the length, so lengths past 65536 are refused.
    int64_t fft_length = options.integer("fft_length", 4, 65536);
    int8_t type = ctx.input_tensor(0).type;
    if (type != tensor_type::kInt16 && type != tensor_type::kInt32 &&
        type != tensor_type::kFloat32) {
        ctx.error() << "the input must be int16, int32 or float32, got " << tensor_type_name(type);
    }
    if (options.integer("T", 0, 127) != type || ctx.output_tensor(0).type != type) {
        ctx.error() << "the option T (TFLite type " << options.integer("T", 0, 127)
                    << "), the input and the result must have one type";
    }
    const int64_t half = fft_length / 2;  // kissfft's complex FFT length
    std::vector<std::pair<int64_t, int64_t>> factors = kiss_factors(half);
    bool radix_ok = fft_length % 2 == 0 && std::all_of(factors.begin(), factors.end(),
                                                       [](auto f) { return f.first <= 5; });
    if (!radix_ok) {
        ctx.error() << "fft_length " << fft_length << " must be even with fft_length / 2 a "
                    << "product of 2, 3 and 5 (kissfft's butterflies in TFLite Micro)";
    }
    std::vector<int64_t> shape = ctx.static_shape(ctx.input_tflite(0), "the input");
    if (shape.empty()) ctx.error() << "the input must have at least one axis";
    const int64_t length = shape.back();
    if (length > fft_length) {
        ctx.error() << "frames of " << length << " values are longer than fft_length "
                    << fft_length;
    }
    std::vector<int64_t> out_shape = shape;
    out_shape.back() = 2 * (half + 1);
    std::vector<int64_t> declared(ctx.output_tensor(0).shape.begin(),
                                  ctx.output_tensor(0).shape.end());
    if (declared != out_shape) {
        ctx.error() << "the result must be " << ints_str(out_shape) << " (fft_length / 2 + 1 "
                    << "complex bins per frame), the model declares " << ints_str(declared);
    }
    int64_t frames = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d) frames *= shape[d];

    KissArithmetic k(ctx, type);
    Expr x = reshape_to(ctx, ctx.input_tflite(0), {frames, length});
    if (length < fft_length) {  // zero-padded at the end
        // A pad, not a concatenated constant: fold_constants would make frames x padding
        // zeros part of the model.
        auto [attrs, a] = new_attrs<ops::PadAttrs>();
        a->pad_width = {0, 0, 0, fft_length - length};
        x = ctx.call("nn.pad", {x}, attrs);
    }
    // z[j] = x[2j] + i x[2j + 1]
    Expr pairs = reshape_to(ctx, x, {frames, half, 2});
    Complex z = KissFft(ctx, k, half)
                    .run({take_along(ctx, pairs, ctx.constant_int64({0}, {}), 2),
                          take_along(ctx, pairs, ctx.constant_int64({1}, {}), 2)},
                         frames);

    // kiss_fftr's split of the complex FFT into the real one.
    auto gather = [&](const Expr& e, const std::vector<int64_t>& index) {
        return take_along(ctx, e, ctx.constant_int64(index, {int64_t(index.size())}), 1);
    };
    const int64_t pairs_count = half / 2;  // k = 1 .. half / 2
    Complex dc = k.fixdiv({gather(z.re, {0}), gather(z.im, {0})}, 2);
    std::vector<int64_t> ks, mirrored;
    for (int64_t i = 1; i <= pairs_count; ++i) {
        ks.push_back(i);
        mirrored.push_back(half - i);
    }
    Expr first_re, first_im, second_re, second_im;
    if (pairs_count > 0) {
        std::vector<double> tw_re, tw_im;
        for (int64_t i = 0; i < pairs_count; ++i) {
            auto [c, s] =
                k.twiddle(-3.14159265358979323846264338327 * (double(i + 1) / double(half) + .5));
            tw_re.push_back(c);
            tw_im.push_back(s);
        }
        Complex fpk = k.fixdiv({gather(z.re, ks), gather(z.im, ks)}, 2);
        Complex fpnk = k.fixdiv({gather(z.re, mirrored), k.neg(gather(z.im, mirrored))}, 2);
        Complex f1k = k.add(fpk, fpnk), f2k = k.sub(fpk, fpnk);
        Complex tw =
            k.c_mul(f2k, {k.constant(tw_re, {pairs_count}), k.constant(tw_im, {pairs_count})});
        first_re = k.half_of("add", f1k.re, tw.re);
        first_im = k.half_of("add", f1k.im, tw.im);
        second_re = k.half_of("subtract", f1k.re, tw.re);
        second_im = k.half_of("subtract", tw.im, f1k.im);
    }
    // Candidates [dc, first(1..K), second(1..K), nyquist]; bin b takes the one kiss_fftr's loop
    // writes last (the mirrored store of step half - b when there is one at or after step b).
    std::vector<int64_t> pick(size_t(half + 1));
    pick[0] = 0;
    pick[size_t(half)] = 2 * pairs_count + 1;
    for (int64_t b = 1; b < half; ++b) {
        int64_t j = half - b;
        bool mirrored_store = j >= 1 && j <= pairs_count && (b > pairs_count || j >= b);
        pick[size_t(b)] = mirrored_store ? 1 + pairs_count + (j - 1) : 1 + (b - 1);
    }
    Expr zero = k.constant(std::vector<double>(size_t(frames), 0.0), {frames, 1});
    std::vector<Expr> re_parts = {k.add(dc.re, dc.im)}, im_parts = {zero};
    if (pairs_count > 0) {
        re_parts.insert(re_parts.end(), {first_re, second_re});
        im_parts.insert(im_parts.end(), {first_im, second_im});
    }
    re_parts.push_back(k.sub(dc.re, dc.im));
    im_parts.push_back(zero);
    Expr re = gather(concatenate_along(ctx, re_parts, 1), pick),
         im = gather(concatenate_along(ctx, im_parts, 1), pick);
    Expr bins = concatenate_along(ctx, {expand_dims(ctx, re, 2), expand_dims(ctx, im, 2)}, 2);
    ctx.set_output(0, reshape_to(ctx, bins, out_shape));
}

}  // namespace anvil::frontend::tflite
