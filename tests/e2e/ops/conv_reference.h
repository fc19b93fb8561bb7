// The double-precision reference of nn.conv2d (NCHW data, OIHW weight), shared by the tests of
// nn.conv2d and of its blocked form nn.conv2d_nchwc.
#pragma once

#include <bit>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "ops/conv.h"
#include "runtime/ndarray.h"

namespace anvil::testing {

struct Shape4 {
    int64_t n, c, h, w;
};

inline Shape4 dims(const runtime::NDArray& a) {
    auto s = a.shape();
    return {s[0], s[1], s[2], s[3]};
}

inline std::vector<double> conv2d_reference(const runtime::NDArray& x, const runtime::NDArray& w,
                                            const ops::Conv2DAttrs& a) {
    Shape4 xs = dims(x), ws = dims(w);
    int64_t groups = a.groups, icg = xs.c / groups, ocg = ws.n / groups;
    int64_t oh =
        (xs.h + a.padding[0] + a.padding[2] - a.dilation[0] * (ws.h - 1) - 1) / a.strides[0] + 1;
    int64_t ow =
        (xs.w + a.padding[1] + a.padding[3] - a.dilation[1] * (ws.w - 1) - 1) / a.strides[1] + 1;
    std::vector<double> out(xs.n * ws.n * oh * ow, 0.0);
    const float *px = x.data<float>(), *pw = w.data<float>();
    for (int64_t n = 0; n < xs.n; ++n)
        for (int64_t o = 0; o < ws.n; ++o)
            for (int64_t y = 0; y < oh; ++y)
                for (int64_t z = 0; z < ow; ++z) {
                    double acc = 0;
                    for (int64_t c = 0; c < icg; ++c)
                        for (int64_t i = 0; i < ws.h; ++i)
                            for (int64_t j = 0; j < ws.w; ++j) {
                                int64_t iy = y * a.strides[0] + i * a.dilation[0] - a.padding[0];
                                int64_t ix = z * a.strides[1] + j * a.dilation[1] - a.padding[1];
                                if (iy < 0 || iy >= xs.h || ix < 0 || ix >= xs.w) continue;
                                int64_t ic = (o / ocg) * icg + c;
                                acc += double(px[((n * xs.c + ic) * xs.h + iy) * xs.w + ix]) *
                                       pw[((o * ws.c + c) * ws.h + i) * ws.w + j];
                            }
                    out[((n * ws.n + o) * oh + y) * ow + z] = acc;
                }
    return out;
}

// Random uint8 (or int8, `is_signed`) values of `shape` and the same values as float32, for
// the float reference.
inline std::pair<runtime::NDArray, runtime::NDArray> random_bytes(const std::vector<int64_t>& shape,
                                                                  uint32_t seed, bool is_signed) {
    auto t =
        runtime::NDArray::empty(shape, runtime::dl_dtype_from_string(is_signed ? "int8" : "uint8"));
    auto f = runtime::NDArray::empty(shape, runtime::dl_dtype_from_string("float32"));
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(is_signed ? -128 : 0, is_signed ? 127 : 255);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
        int v = dist(rng);
        f.data<float>()[i] = float(v);
        if (is_signed) {
            t.data<int8_t>()[i] = int8_t(v);
        } else {
            t.data<uint8_t>()[i] = uint8_t(v);
        }
    }
    return {t, f};
}

// Random bfloat16 values in [-2, 2) and the same values as float32.
inline std::pair<runtime::NDArray, runtime::NDArray> random_bfloat16(
    const std::vector<int64_t>& shape, uint32_t seed) {
    auto t = runtime::NDArray::empty(shape, runtime::dl_dtype_from_string("bfloat16"));
    auto f = runtime::NDArray::empty(shape, runtime::dl_dtype_from_string("float32"));
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (int64_t i = 0; i < t.num_elements(); ++i) {
        uint16_t bits = uint16_t(std::bit_cast<uint32_t>(dist(rng)) >> 16);  // truncated
        t.data<uint16_t>()[i] = bits;
        f.data<float>()[i] = std::bit_cast<float>(uint32_t(bits) << 16);
    }
    return {t, f};
}

// |f| of a float32 array: the reference of the magnitudes a float sum's rounding scales with.
inline runtime::NDArray abs_of(const runtime::NDArray& f) {
    auto a = runtime::NDArray::empty(std::vector<int64_t>(f.shape().begin(), f.shape().end()),
                                     f.dtype());
    for (int64_t i = 0; i < f.num_elements(); ++i) {
        a.data<float>()[i] = std::fabs(f.data<float>()[i]);
    }
    return a;
}

}  // namespace anvil::testing
