// Winograd convolution F(m, 3) for 3x3 stride-1 convolutions (Lavin & Gray, "Fast Algorithms
// for Convolutional Neural Networks", 2016) on channel-blocked data: m x m outputs of a tile
// from alpha x alpha = (m + 2) x (m + 2) inputs with alpha^2 multiplications per channel pair
// instead of 9 m^2 (2.25x fewer for F(2,3), 4x for F(4,3)).
//   nn.winograd_weight_transform  U = G g G^T per (output, input) channel pair, in the blocks of
//                                 the convolution's output; folded at compile time
//   nn.conv2d_winograd_nchwc      one kernel of four stages:
//     padded input  (kPaddedInputTag) zero padding to whole tiles: ceil(OH/m) * m + 2 rows
//     V             (kWinogradInputTag) V[xi, nu, p, c] = (B^T d_p B)[xi, nu], p = (n, th, tw)
//     M             (kWinogradProductTag) M[xi, nu, kb, p, ki] = sum_c U[xi, nu, kb, c, ki] V[..]
//     Y             the output: Y[n, kb, h, w, ki] = (A^T M_p A)[h % m, w % m]
// The matrices are exact rationals; each transform is written as an explicit sum per (row,
// column) of its result, chosen by a select chain on the constant index, so that once the
// schedule unrolls those indices the simplifier folds the chain and no product by 0 or +-1 is
// left (the simplifier keeps x * 0, which is not 0 for inf and NaN).
// Schedules: ops/conv_winograd_schedule.cpp.
#include <algorithm>
#include <optional>
#include <sstream>

#include "graph/op.h"
#include "ops/axes.h"
#include "ops/conv.h"
#include "ops/op_spec.h"
#include "ops/tensor_shape.h"
#include "ops/tile_schedule.h"
#include "support/error.h"
#include "te/reduction.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::Type;

namespace {

PrimExpr I(int64_t v) {
    return make_int(DataType::int32(), v);
}

struct Rational {
    int64_t num = 0, den = 1;
    double value() const { return static_cast<double>(num) / static_cast<double>(den); }
};

Rational operator*(Rational a, Rational b) {
    return {a.num * b.num, a.den * b.den};
}

// The transforms of F(m, 3): BT (alpha x alpha, input), G (alpha x 3, weight), AT (m x alpha,
// output). F(4,3) interpolates at 0, +-1, +-2 and infinity.
struct WinogradMatrices {
    int64_t m = 0, alpha = 0;
    std::vector<std::vector<Rational>> bt, g, at;
};

std::vector<std::vector<Rational>> integers(const std::vector<std::vector<int64_t>>& rows) {
    std::vector<std::vector<Rational>> r;
    for (const auto& row : rows) {
        r.emplace_back();
        for (int64_t v : row) r.back().push_back({v, 1});
    }
    return r;
}

const WinogradMatrices& winograd_matrices(int64_t m) {
    static const WinogradMatrices f2{
        2,
        4,
        integers({{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}}),
        {{{1, 1}, {0, 1}, {0, 1}},
         {{1, 2}, {1, 2}, {1, 2}},
         {{1, 2}, {-1, 2}, {1, 2}},
         {{0, 1}, {0, 1}, {1, 1}}},
        integers({{1, 1, 1, 0}, {0, 1, -1, -1}}),
    };
    static const WinogradMatrices f4{
        4,
        6,
        integers({{4, 0, -5, 0, 1, 0},
                  {0, -4, -4, 1, 1, 0},
                  {0, 4, -4, -1, 1, 0},
                  {0, -2, -1, 2, 1, 0},
                  {0, 2, -1, -2, 1, 0},
                  {0, 4, 0, -5, 0, 1}}),
        {{{1, 4}, {0, 1}, {0, 1}},
         {{-1, 6}, {-1, 6}, {-1, 6}},
         {{-1, 6}, {1, 6}, {-1, 6}},
         {{1, 24}, {1, 12}, {1, 6}},
         {{1, 24}, {-1, 12}, {1, 6}},
         {{0, 1}, {0, 1}, {1, 1}}},
        integers(
            {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}),
    };
    ANVIL_CHECK(m == 2 || m == 4) << "Winograd F(" << m << ",3) is not implemented";
    return m == 2 ? f2 : f4;
}

// sum of coef * term over the nonzero coefficients, with no product for +-1; 0 when none.
PrimExpr linear_combination(const std::vector<std::pair<Rational, PrimExpr>>& terms, DataType t) {
    PrimExpr sum;
    for (const auto& [c, x] : terms) {
        if (c.num == 0) continue;
        bool unit = c.num == c.den || c.num == -c.den;
        bool negative = c.num < 0;
        PrimExpr magnitude = unit ? x : x * make_float(t, negative ? -c.value() : c.value());
        if (!sum.defined()) {
            sum = negative ? -magnitude : magnitude;
        } else {
            sum = negative ? sum - magnitude : sum + magnitude;
        }
    }
    return sum.defined() ? sum : make_float(t, 0.0);
}

// cases[index] by a select chain on `index` (which is one of 0 .. cases.size() - 1).
PrimExpr pick(const PrimExpr& index, const std::vector<PrimExpr>& cases) {
    PrimExpr r = cases.back();
    for (size_t k = cases.size() - 1; k-- > 0;) {
        r = select(eq(index, I(static_cast<int64_t>(k))), cases[k], r);
    }
    return r;
}

bool valid_tile_size(int64_t m) {
    return m == 2 || m == 4;
}

Type winograd_weight_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                          const SourceLoc& loc) {
    const auto& a = attrs_as<Conv2DWinogradWeightAttrs>(attrs);
    const auto& w = graph::expect_tensor(args[0], loc, "the weight of " + op.name);
    if (!valid_tile_size(a.tile_size)) {
        user_error(loc) << op.name << ": tile_size must be 2 (F(2,3)) or 4 (F(4,3)), got "
                        << a.tile_size;
    }
    if (w.ndim() != 4 || !w.is_static() || w.static_shape()[2] != 3 || w.static_shape()[3] != 3) {
        user_error(loc) << op.name << ": the weight must be OIHW with a static shape and a 3x3 "
                        << "kernel, got " << graph::type_str(args[0]);
    }
    std::vector<int64_t> ws = w.static_shape();
    if (a.out_block <= 0 || ws[0] % a.out_block != 0) {
        user_error(loc) << op.name << ": out_block=" << a.out_block << " must divide the " << ws[0]
                        << " output channels of " << graph::type_str(args[0]);
    }
    int64_t alpha = a.tile_size + 2;
    return graph::make_tensor_type(
        std::vector<int64_t>{alpha, alpha, ws[0] / a.out_block, ws[1], a.out_block}, w.dtype);
}

std::vector<te::Tensor> winograd_weight_compute(const std::vector<te::Tensor>& in,
                                                const Attrs& attrs, const Type& out) {
    const auto& a = attrs_as<Conv2DWinogradWeightAttrs>(attrs);
    const WinogradMatrices& mat = winograd_matrices(a.tile_size);
    const te::Tensor& g = in[0];
    const DataType f64 = DataType::float64();
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            PrimExpr o = i[2] * I(a.out_block) + i[4];
            // Per row xi of G: sum over (r, s) of G[xi, r] G[nu, s] g[o, c, r, s], in float64.
            auto row = [&](int64_t xi) {
                std::vector<PrimExpr> by_nu;
                for (int64_t nu = 0; nu < mat.alpha; ++nu) {
                    std::vector<std::pair<Rational, PrimExpr>> terms;
                    for (int64_t r = 0; r < 3; ++r) {
                        for (int64_t s = 0; s < 3; ++s) {
                            terms.push_back(
                                {mat.g[xi][r] * mat.g[nu][s], cast(f64, g(o, i[3], I(r), I(s)))});
                        }
                    }
                    by_nu.push_back(linear_combination(terms, f64));
                }
                return pick(i[1], by_nu);
            };
            std::vector<PrimExpr> by_xi;
            for (int64_t xi = 0; xi < mat.alpha; ++xi) by_xi.push_back(row(xi));
            return cast(g.dtype(), pick(i[0], by_xi));
        },
        "winograd_weight_transform")};
}

struct WinogradGeometry {
    int64_t m, alpha, tiles_h, tiles_w;
};

std::string list_str(const std::vector<int64_t>& v) {
    std::ostringstream os;
    os << "[";
    for (size_t k = 0; k < v.size(); ++k) os << (k ? ", " : "") << v[k];
    os << "]";
    return os.str();
}

void check_unit(const SourceLoc& loc, const std::string& op, const char* what,
                const std::vector<int64_t>& v) {
    if (v.size() != 2 || v[0] != 1 || v[1] != 1) {
        user_error(loc) << op << ": Winograd convolutions have " << what << " [1, 1] only, got "
                        << list_str(v);
    }
}

Type conv2d_winograd_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                          const SourceLoc& loc) {
    const auto& a = attrs_as<Conv2DWinogradAttrs>(attrs);
    const auto& d = graph::expect_tensor(args[0], loc, "the data of " + op.name);
    const auto& u = graph::expect_tensor(args[1], loc, "the transformed weight of " + op.name);
    if (!valid_tile_size(a.tile_size)) {
        user_error(loc) << op.name << ": tile_size must be 2 (F(2,3)) or 4 (F(4,3)), got "
                        << a.tile_size;
    }
    check_unit(loc, op.name, "strides", a.strides);
    check_unit(loc, op.name, "dilation", a.dilation);
    if (a.padding.size() != 4 ||
        std::any_of(a.padding.begin(), a.padding.end(), [](int64_t p) { return p < 0; })) {
        user_error(loc) << op.name << ": padding must be [top, left, bottom, right] of "
                        << "non-negative values, got " << list_str(a.padding);
    }
    std::optional<int64_t> c_blocks = d.ndim() == 5 ? static_dim(d.shape[1]) : std::nullopt;
    std::optional<int64_t> h = d.ndim() == 5 ? static_dim(d.shape[2]) : std::nullopt;
    std::optional<int64_t> w = d.ndim() == 5 ? static_dim(d.shape[3]) : std::nullopt;
    std::optional<int64_t> ib = d.ndim() == 5 ? static_dim(d.shape[4]) : std::nullopt;
    if (!c_blocks || !h || !w || !ib) {
        user_error(loc) << op.name << ": the data must be NCHW<b>c with static channels, "
                        << "height and width, got " << graph::type_str(args[0]);
    }
    int64_t alpha = a.tile_size + 2;
    if (u.ndim() != 5 || !u.is_static() || u.static_shape()[0] != alpha ||
        u.static_shape()[1] != alpha) {
        user_error(loc) << op.name << ": the weight must be nn.winograd_weight_transform's "
                        << "[" << alpha << ", " << alpha
                        << ", O/ob, C, ob] for tile_size=" << a.tile_size << ", got "
                        << graph::type_str(args[1]);
    }
    std::vector<int64_t> us = u.static_shape();
    if (us[3] != *c_blocks * *ib) {
        user_error(loc) << op.name << ": the weight " << graph::type_str(args[1]) << " reads "
                        << us[3] << " input channels, the data " << graph::type_str(args[0])
                        << " has " << *c_blocks * *ib;
    }
    int64_t oh = *h + a.padding[0] + a.padding[2] - 2;
    int64_t ow = *w + a.padding[1] + a.padding[3] - 2;
    if (oh < 1 || ow < 1) {
        user_error(loc) << op.name << ": the padded data " << graph::type_str(args[0])
                        << " is smaller than the 3x3 kernel";
    }
    auto dim = [&](int64_t v) { return make_int(d.shape[1].dtype(), v); };
    return graph::make_tensor_type({d.shape[0], dim(us[2]), dim(oh), dim(ow), dim(us[4])}, d.dtype);
}

std::vector<te::Tensor> conv2d_winograd_compute(const std::vector<te::Tensor>& in,
                                                const Attrs& attrs, const Type& out) {
    const auto& a = attrs_as<Conv2DWinogradAttrs>(attrs);
    const WinogradMatrices& mat = winograd_matrices(a.tile_size);
    const te::Tensor &x = in[0], &u = in[1];
    const std::vector<PrimExpr> out_shape = te_shape(out);
    const int64_t m = mat.m, alpha = mat.alpha;
    const int64_t oh = const_dim(out_shape[2], "winograd output height");
    const int64_t ow = const_dim(out_shape[3], "winograd output width");
    const int64_t ib = const_dim(x.shape()[4], "winograd input block");
    const int64_t channels = const_dim(u.shape()[3], "winograd input channels");
    const int64_t th = (oh + m - 1) / m, tw = (ow + m - 1) / m;
    const int64_t h = const_dim(x.shape()[2], "winograd input height");
    const int64_t w = const_dim(x.shape()[3], "winograd input width");
    // Zero rows and columns past the bottom and right padding up to whole tiles.
    te::Tensor xp = pad_input(
        "conv2d_winograd", x,
        {a.padding[0], a.padding[1], th * m + 2 - h - a.padding[0], tw * m + 2 - w - a.padding[1]});
    const DataType t = x.dtype();
    const PrimExpr n_dim = x.shape()[0];
    PrimExpr tiles = n_dim * I(th * tw);

    // V[xi, nu, p, c] = sum over (i, j) of BT[xi, i] d[i, j] BT[nu, j].
    te::Tensor v =
        te::set_tag(te::compute(
                        {I(alpha), I(alpha), tiles, I(channels)},
                        [&](std::span<const PrimExpr> i) {
                            const PrimExpr& p = i[2];
                            PrimExpr n = floordiv(p, I(th * tw));
                            PrimExpr row0 = floormod(floordiv(p, I(tw)), I(th)) * I(m);
                            PrimExpr col0 = floormod(p, I(tw)) * I(m);
                            PrimExpr cb = floordiv(i[3], I(ib)), ci = floormod(i[3], I(ib));
                            std::vector<PrimExpr> row_sums;  // (d BT^T)[r, nu] per input row r
                            for (int64_t r = 0; r < alpha; ++r) {
                                std::vector<PrimExpr> by_nu;
                                for (int64_t nu = 0; nu < alpha; ++nu) {
                                    std::vector<std::pair<Rational, PrimExpr>> terms;
                                    for (int64_t s = 0; s < alpha; ++s) {
                                        if (mat.bt[nu][s].num == 0) continue;
                                        terms.push_back({mat.bt[nu][s],
                                                         xp(n, cb, row0 + I(r), col0 + I(s), ci)});
                                    }
                                    by_nu.push_back(linear_combination(terms, t));
                                }
                                row_sums.push_back(pick(i[1], by_nu));
                            }
                            std::vector<PrimExpr> by_xi;
                            for (int64_t xi = 0; xi < alpha; ++xi) {
                                std::vector<std::pair<Rational, PrimExpr>> terms;
                                for (int64_t r = 0; r < alpha; ++r)
                                    terms.push_back({mat.bt[xi][r], row_sums[r]});
                                by_xi.push_back(linear_combination(terms, t));
                            }
                            return pick(i[0], by_xi);
                        },
                        "winograd_input"),
                    kWinogradInputTag);

    // M[xi, nu, kb, p, ki] = sum over c of U[xi, nu, kb, c, ki] V[xi, nu, p, c].
    auto rc = te::reduce_axis(I(channels), "rc");
    te::Tensor prod = te::set_tag(
        te::compute(
            {I(alpha), I(alpha), u.shape()[2], tiles, u.shape()[4]},
            [&](std::span<const PrimExpr> i) {
                return te::sum(u(i[0], i[1], i[2], rc->var, i[4]) * v(i[0], i[1], i[3], rc->var),
                               {rc});
            },
            "winograd_product"),
        kWinogradProductTag);

    // Y[n, kb, y, x, ki] = sum over (xi, nu) of AT[y % m, xi] M[xi, nu, kb, p, ki] AT[x % m, nu].
    return {te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            PrimExpr p = (i[0] * I(th) + floordiv(i[2], I(m))) * I(tw) + floordiv(i[3], I(m));
            PrimExpr r = floormod(i[2], I(m)), s = floormod(i[3], I(m));
            std::vector<PrimExpr> col_sums;  // (M AT^T)[xi, s] per xi
            for (int64_t xi = 0; xi < alpha; ++xi) {
                std::vector<PrimExpr> by_s;
                for (int64_t sc = 0; sc < m; ++sc) {
                    std::vector<std::pair<Rational, PrimExpr>> terms;
                    for (int64_t nu = 0; nu < alpha; ++nu) {
                        if (mat.at[sc][nu].num == 0) continue;
                        terms.push_back({mat.at[sc][nu], prod(I(xi), I(nu), i[1], p, i[4])});
                    }
                    by_s.push_back(linear_combination(terms, t));
                }
                col_sums.push_back(pick(s, by_s));
            }
            std::vector<PrimExpr> by_r;
            for (int64_t rr = 0; rr < m; ++rr) {
                std::vector<std::pair<Rational, PrimExpr>> terms;
                for (int64_t xi = 0; xi < alpha; ++xi)
                    terms.push_back({mat.at[rr][xi], col_sums[xi]});
                by_r.push_back(linear_combination(terms, t));
            }
            return pick(r, by_r);
        },
        "conv2d_winograd")};
}

}  // namespace

Ref<Op> make_winograd_weight_transform_op() {
    return make_op(
        {.name = "nn.winograd_weight_transform",
         .num_inputs = 1,
         .make_default_attrs = default_attrs<Conv2DWinogradWeightAttrs>,
         .infer_type = winograd_weight_type,
         .compute = winograd_weight_compute,
         .schedule =
             schedule_by_target<schedule_winograd_weight_x86, schedule_winograd_weight_generic>,
         .pattern = OpPattern::Opaque,
         .description = "Winograd F(m,3) weight transform G g G^T of an OIHW 3x3 weight into "
                        "[m+2, m+2, O/ob, C, ob] (computed in float64; folded at compile time)"});
}

Ref<Op> make_conv2d_winograd_nchwc_op() {
    return make_op(
        {.name = "nn.conv2d_winograd_nchwc",
         .num_inputs = 2,
         .make_default_attrs = default_attrs<Conv2DWinogradAttrs>,
         .infer_type = conv2d_winograd_type,
         .compute = conv2d_winograd_compute,
         .schedule =
             schedule_by_target<schedule_conv2d_winograd_x86, schedule_conv2d_winograd_generic>,
         .pattern = OpPattern::OutEWiseFusable,
         .description = "3x3 stride-1 convolution by Winograd F(m,3) on NCHW<b>c data with a "
                        "nn.winograd_weight_transform weight; float32 error per output at most "
                        "c_m * sum(|x| |w|) over its receptive field, c_2 = 5e-7, c_4 = 6e-6"});
}

}  // namespace anvil::ops
