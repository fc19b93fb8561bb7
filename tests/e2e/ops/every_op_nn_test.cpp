// The every-op cases of the nn families (conv.cpp, conv_nchwc.cpp, dense.cpp, pool.cpp, norm.cpp,
// softmax.cpp): convolutions with strides, uneven padding, dilation and groups at prime sizes,
// their packed and channel-blocked forms chained with the ops that make their operands, dense
// products with broadcast batches, pools with padding and ceil_mode, normalizations and
// softmaxes. References: conv_reference.h for nn.conv2d, direct N-d loops here for the rest, in
// double precision.
#include <algorithm>
#include <cmath>
#include <limits>

#include "conv_reference.h"
#include "every_op.h"

namespace anvil::every_op {
namespace {

using Values = std::vector<double>;

// A convolution's geometry over nd spatial axes (padding: every begin, then every end).
struct ConvGeom {
    std::vector<int64_t> strides, padding, dilation, output_padding;
    int64_t groups = 1;
    std::string attrs() const {
        std::string s = ", strides=" + int_list(strides) + ", padding=" + int_list(padding) +
                        ", dilation=" + int_list(dilation) + ", groups=" + std::to_string(groups);
        if (!output_padding.empty()) s += ", output_padding=" + int_list(output_padding);
        return s;
    }
};

// The geometry of a 2-d convolution as nn.conv2d's attributes (conv_reference.h takes those).
ops::Conv2DAttrs conv2d_attrs(const ConvGeom& g) {
    ops::Conv2DAttrs a;
    a.strides = g.strides;
    a.padding = g.padding;
    a.dilation = g.dilation;
    a.groups = g.groups;
    return a;
}

// Direct N-d convolution (transposed: weight [C, O/g, k...], each input scattered into the
// output) in double precision; returns the output and its shape.
Values conv_nd(const NDArray& x, const NDArray& w, const ConvGeom& g, bool transposed, Shape* out) {
    Shape xs = shape_of(x), ws = shape_of(w);
    size_t nd = xs.size() - 2;
    int64_t oc = transposed ? ws[1] * g.groups : ws[0];
    *out = {xs[0], oc};
    for (size_t d = 0; d < nd; ++d) {
        int64_t k = g.dilation[d] * (ws[2 + d] - 1);
        out->push_back(
            transposed ? (xs[2 + d] - 1) * g.strides[d] - g.padding[d] - g.padding[nd + d] + k +
                             g.output_padding[d] + 1
                       : (xs[2 + d] + g.padding[d] + g.padding[nd + d] - k - 1) / g.strides[d] + 1);
    }
    Values xv = values_of(x), wv = values_of(w), y(num_elements(*out), 0.0);
    int64_t icg = xs[1] / g.groups, ocg = oc / g.groups;
    Shape kernel(ws.begin() + 2, ws.end()), xsp(xs.begin() + 2, xs.end());
    Shape osp(out->begin() + 2, out->end());
    Shape xst = strides_of(xs), wst = strides_of(ws), yst = strides_of(*out);
    // Every (input position, tap) pair: out position = in * stride - pad + tap * dilation.
    for_each_index({xs[0], xs[1]}, [&](const Shape& nc) {
        int64_t grp = nc[1] / icg;
        for_each_index(xsp, [&](const Shape& ip) {
            for_each_index(kernel, [&](const Shape& t) {
                // Forward: the input position ip is read by output op = (ip + pad - t*dil)/stride.
                Shape op(nd);
                for (size_t d = 0; d < nd; ++d) {
                    int64_t v = transposed
                                    ? ip[d] * g.strides[d] - g.padding[d] + t[d] * g.dilation[d]
                                    : ip[d] + g.padding[d] - t[d] * g.dilation[d];
                    if (!transposed) {
                        if (v % g.strides[d] != 0) return;
                        v /= g.strides[d];
                    }
                    if (v < 0 || v >= osp[d]) return;
                    op[d] = v;
                }
                int64_t xo = nc[0] * xst[0] + nc[1] * xst[1];
                for (size_t d = 0; d < nd; ++d) xo += ip[d] * xst[2 + d];
                for (int64_t o = 0; o < ocg; ++o) {
                    int64_t oo = grp * ocg + o;
                    int64_t wo = transposed ? nc[1] * wst[0] + o * wst[1]
                                            : oo * wst[0] + (nc[1] - grp * icg) * wst[1];
                    int64_t yo = nc[0] * yst[0] + oo * yst[1];
                    for (size_t d = 0; d < nd; ++d) {
                        wo += t[d] * wst[2 + d];
                        yo += op[d] * yst[2 + d];
                    }
                    y[yo] += xv[xo] * wv[wo];
                }
            });
        });
    });
    return y;
}

OpCase conv_case(const std::string& op, const Shape& xs, const Shape& ws, const ConvGeom& g,
                 bool transposed, uint32_t seed) {
    NDArray x = rand_f32(xs, seed), w = rand_f32(ws, seed + 1);
    Shape out;
    Values want = conv_nd(x, w, g, transposed, &out);
    return {op + " groups " + std::to_string(g.groups),
            "def @main(%x: " + tensor_type(xs) + ", %w: " + tensor_type(ws) + ") { " + op +
                "(%x, %w" + g.attrs() + ") }",
            {x, w},
            tensor_want(out, want, 1e-4)};
}

std::vector<OpCase> conv_cases() {
    std::vector<OpCase> cases;
    ConvGeom g2{{2, 1}, {1, 0, 2, 1}, {1, 2}, {}, 1};
    cases.push_back(conv_case("nn.conv2d", {2, 3, 13, 11}, {5, 3, 3, 2}, g2, false, 301));
    ConvGeom grouped{{1, 1}, {1, 1, 1, 1}, {1, 1}, {}, 3};
    cases.push_back(conv_case("nn.conv2d", {1, 6, 7, 9}, {9, 2, 3, 3}, grouped, false, 303));
    // nn.conv2d against conv_reference.h as well (the reference the op tests use).
    {
        NDArray x = rand_f32({1, 5, 11, 13}, 305), w = rand_f32({7, 5, 3, 3}, 306);
        ConvGeom g{{1, 2}, {1, 1, 0, 2}, {1, 1}, {}, 1};
        ops::Conv2DAttrs a = conv2d_attrs(g);
        Shape out;
        conv_nd(x, w, g, false, &out);
        cases.push_back({"nn.conv2d conv_reference",
                         "def @main(%x: " + tensor_type({1, 5, 11, 13}) + ", %w: " +
                             tensor_type({7, 5, 3, 3}) + ") { nn.conv2d(%x, %w" + g.attrs() + ") }",
                         {x, w},
                         tensor_want(out, testing::conv2d_reference(x, w, a), 1e-4)});
        // The packed weight (nn.conv2d_pack_weight) read by nn.conv2d_packed: the same result.
        cases.push_back({"nn.conv2d_pack_weight + nn.conv2d_packed",
                         "def @main(%x: " + tensor_type({1, 5, 11, 13}) +
                             ", %w: " + tensor_type({7, 5, 3, 3}) +
                             ") { %p = nn.conv2d_pack_weight(%w); nn.conv2d_packed(%x, %p" +
                             g.attrs() + ", channels=7) }",
                         {x, w},
                         tensor_want(out, testing::conv2d_reference(x, w, a), 1e-4)});
        // A tuning record's block (32, padded past 7), and the direct form (the weight as it
        // is): the same result.
        cases.push_back({"nn.conv2d_pack_weight(block=32) + nn.conv2d_packed",
                         "def @main(%x: " + tensor_type({1, 5, 11, 13}) +
                             ", %w: " + tensor_type({7, 5, 3, 3}) +
                             ") { %p = nn.conv2d_pack_weight(%w, block=32); nn.conv2d_packed(%x, "
                             "%p" +
                             g.attrs() + ", channels=7) }",
                         {x, w},
                         tensor_want(out, testing::conv2d_reference(x, w, a), 1e-4)});
        cases.push_back({"nn.conv2d_packed (direct form)",
                         "def @main(%x: " + tensor_type({1, 5, 11, 13}) +
                             ", %w: " + tensor_type({7, 5, 3, 3}) + ") { nn.conv2d_packed(%x, %w" +
                             g.attrs() + ", channels=7) }",
                         {x, w},
                         tensor_want(out, testing::conv2d_reference(x, w, a), 1e-4)});
    }
    // nn.conv2d_nchwc on NCHW8c data and an OIHW8i8o weight made by layout_transform, back to
    // NCHW: 16 input channels, 24 output channels (3 blocks), odd spatial sizes.
    {
        NDArray x = rand_f32({1, 16, 7, 9}, 307), w = rand_f32({24, 16, 3, 3}, 308);
        ConvGeom g{{2, 1}, {1, 0, 1, 2}, {1, 1}, {}, 1};
        ops::Conv2DAttrs a = conv2d_attrs(g);
        Shape out;
        conv_nd(x, w, g, false, &out);
        std::string body =
            "%xb = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\"); "
            "%wb = layout_transform(%w, src_layout=\"OIHW\", dst_layout=\"OIHW8i8o\"); "
            "%y = nn.conv2d_nchwc(%xb, %wb" +
            g.attrs() + "); layout_transform(%y, src_layout=\"NCHW8c\", dst_layout=\"NCHW\")";
        cases.push_back({"nn.conv2d_nchwc 16 -> 24 channels",
                         "def @main(%x: " + tensor_type({1, 16, 7, 9}) +
                             ", %w: " + tensor_type({24, 16, 3, 3}) + ") { " + body + " }",
                         {x, w},
                         tensor_want(out, testing::conv2d_reference(x, w, a), 1e-4)});
    }
    // The Winograd convolution: the weight transformed by nn.winograd_weight_transform (a
    // parameter here, so the transform runs as a kernel), NCHW8c data, F(4,3) with padding and
    // F(2,3) without, at sizes that are not multiples of the tile.
    for (int64_t m : {4, 2}) {
        NDArray x = rand_f32({1, 16, 7, 9}, 315), w = rand_f32({24, 16, 3, 3}, 316);
        ConvGeom g{{1, 1},
                   m == 4 ? std::vector<int64_t>{1, 0, 1, 2} : std::vector<int64_t>{0, 0, 0, 0},
                   {1, 1},
                   {},
                   1};
        Shape out;
        conv_nd(x, w, g, false, &out);
        std::string body =
            "%xb = layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\"); "
            "%u = nn.winograd_weight_transform(%w, tile_size=" +
            std::to_string(m) + ", out_block=8); %y = nn.conv2d_winograd_nchwc(%xb, %u, padding=" +
            int_list(g.padding) + ", tile_size=" + std::to_string(m) +
            "); layout_transform(%y, src_layout=\"NCHW8c\", dst_layout=\"NCHW\")";
        cases.push_back({"nn.winograd_weight_transform + nn.conv2d_winograd_nchwc F(" +
                             std::to_string(m) + ",3)",
                         "def @main(%x: " + tensor_type({1, 16, 7, 9}) +
                             ", %w: " + tensor_type({24, 16, 3, 3}) + ") { " + body + " }",
                         {x, w},
                         tensor_want(out, testing::conv2d_reference(x, w, conv2d_attrs(g)), 1e-4)});
    }
    ConvGeom t2{{2, 3}, {1, 0, 0, 1}, {1, 1}, {1, 2}, 1};
    cases.push_back(conv_case("nn.conv2d_transpose", {1, 3, 5, 7}, {3, 4, 3, 4}, t2, true, 309));
    ConvGeom g3{{1, 2, 1}, {1, 0, 1, 0, 1, 1}, {1, 1, 2}, {}, 1};
    cases.push_back(conv_case("nn.conv3d", {1, 3, 5, 7, 6}, {4, 3, 2, 3, 2}, g3, false, 311));
    ConvGeom t3{{2, 1, 2}, {0, 1, 1, 1, 0, 0}, {1, 1, 1}, {1, 0, 0}, 1};
    cases.push_back(
        conv_case("nn.conv3d_transpose", {1, 2, 3, 4, 5}, {2, 3, 2, 3, 3}, t3, true, 313));
    return cases;
}

// numpy.matmul of a [..., M, K] and b [..., K, N] (b given as [..., N, K] when `bt`).
Values matmul(const NDArray& a, const NDArray& b, bool bt, Shape* out) {
    Shape as = shape_of(a), bs = shape_of(b);
    int64_t m = as[as.size() - 2], k = as.back(), n = bt ? bs[bs.size() - 2] : bs.back();
    Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
    Shape batch = broadcast_shapes(ab, bb);
    Values av = values_of(a), bv = values_of(b), y;
    for_each_index(batch, [&](const Shape& i) {
        int64_t ao = broadcast_offset(i, ab) * m * k, bo = broadcast_offset(i, bb) * k * n;
        for (int64_t r = 0; r < m; ++r)
            for (int64_t c = 0; c < n; ++c) {
                double acc = 0;
                for (int64_t j = 0; j < k; ++j) {
                    acc += av[ao + r * k + j] * bv[bo + (bt ? c * k + j : j * n + c)];
                }
                y.push_back(acc);
            }
    });
    *out = batch;
    out->push_back(m);
    out->push_back(n);
    return y;
}

std::vector<OpCase> dense_cases() {
    std::vector<OpCase> cases;
    NDArray x = rand_f32({3, 5, 37}, 321), w = rand_f32({19, 37}, 322);
    Shape out;
    Values want = matmul(x, w, true, &out);
    std::string params = "%x: " + tensor_type({3, 5, 37}) + ", %w: " + tensor_type({19, 37});
    cases.push_back({"nn.dense 3x5x37 . (19x37)^T",
                     "def @main(" + params + ") { nn.dense(%x, %w) }",
                     {x, w},
                     tensor_want(out, want, 1e-4)});
    cases.push_back({"nn.dense_pack_weight + nn.dense_packed",
                     "def @main(" + params +
                         ") { %p = nn.dense_pack_weight(%w); nn.dense_packed(%x, %p, units=19) }",
                     {x, w},
                     tensor_want(out, want, 1e-4)});
    NDArray a = rand_f32({2, 1, 5, 13}, 323), b = rand_f32({3, 13, 7}, 324);
    want = matmul(a, b, false, &out);
    std::string ab = "%a: " + tensor_type({2, 1, 5, 13}) + ", %b: " + tensor_type({3, 13, 7});
    cases.push_back({"nn.matmul broadcast batch",
                     "def @main(" + ab + ") { nn.matmul(%a, %b) }",
                     {a, b},
                     tensor_want(out, want, 1e-4)});
    NDArray c = rand_f32({3, 5, 13}, 325), d = rand_f32({3, 7, 13}, 326);
    want = matmul(c, d, true, &out);
    cases.push_back({"nn.batch_matmul transpose_b",
                     "def @main(%a: " + tensor_type({3, 5, 13}) +
                         ", %b: " + tensor_type({3, 7, 13}) +
                         ") { nn.batch_matmul(%a, %b, transpose_b=True) }",
                     {c, d},
                     tensor_want(out, want, 1e-4)});
    NDArray bx = rand_f32({2, 5, 3, 7}, 327), bias = rand_f32({5}, 328);
    Values bxv = values_of(bx), biv = values_of(bias), biased;
    for_each_index({2, 5, 3, 7},
                   [&](const Shape& i) { biased.push_back(bxv[biased.size()] + biv[i[1]]); });
    cases.push_back({"nn.bias_add axis 1",
                     "def @main(%x: " + tensor_type({2, 5, 3, 7}) + ", %b: " + tensor_type({5}) +
                         ") { nn.bias_add(%x, %b, axis=1) }",
                     {bx, bias},
                     tensor_want({2, 5, 3, 7}, biased, 1e-6)});
    return cases;
}

// N-d pooling over the spatial axes of x (NC...): max, avg (count_include_pad or not), or the
// flat row-major index of the maximum (first wins).
Values pool_nd(const NDArray& x, const std::string& kind, const Shape& k, const Shape& st,
               const Shape& pad, bool ceil_mode, bool include_pad, Shape* out) {
    Shape xs = shape_of(x);
    size_t nd = k.size();
    *out = {xs[0], xs[1]};
    for (size_t d = 0; d < nd; ++d) {
        int64_t span = xs[2 + d] + pad[d] + pad[nd + d] - k[d];
        int64_t o = (ceil_mode ? (span + st[d] - 1) / st[d] : span / st[d]) + 1;
        // A ceil_mode window must start inside the input or the leading padding.
        if (ceil_mode && (o - 1) * st[d] >= xs[2 + d] + pad[d]) --o;
        out->push_back(o);
    }
    Values xv = values_of(x), y;
    Shape xsp(xs.begin() + 2, xs.end());
    int64_t plane = num_elements(xsp);
    for_each_index(*out, [&](const Shape& oi) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t arg = -1, inside = 0, padded = 0;
        for_each_index(k, [&](const Shape& t) {
            int64_t flat = 0;
            bool in = true, in_padded = true;
            for (size_t d = 0; d < nd; ++d) {
                int64_t p = oi[2 + d] * st[d] - pad[d] + t[d];
                in = in && p >= 0 && p < xs[2 + d];
                in_padded = in_padded && p < xs[2 + d] + pad[nd + d];
                flat = flat * xs[2 + d] + p;
            }
            padded += in_padded;
            if (!in) return;
            double v = xv[(oi[0] * xs[1] + oi[1]) * plane + flat];
            ++inside;
            sum += v;
            if (v > best) best = v, arg = (oi[0] * xs[1] + oi[1]) * plane + flat;
        });
        if (kind == "max") y.push_back(best);
        if (kind == "avg") y.push_back(sum / double(include_pad ? padded : inside));
        if (kind == "indices") y.push_back(double(arg));
    });
    return y;
}

OpCase pool_case(const std::string& op, const std::string& kind, const Shape& xs, const Shape& k,
                 const Shape& st, const Shape& pad, bool ceil_mode, bool include_pad,
                 uint32_t seed) {
    NDArray x = rand_f32(xs, seed);
    Shape out;
    Values want = pool_nd(x, kind, k, st, pad, ceil_mode, include_pad, &out);
    std::string attrs = ", pool_size=" + int_list(k) + ", strides=" + int_list(st) +
                        ", padding=" + int_list(pad) + (ceil_mode ? ", ceil_mode=True" : "");
    if (include_pad) attrs += ", count_include_pad=True";
    Want w = kind == "indices" ? tensor_want(out, want, 0, "int64") : tensor_want(out, want, 1e-5);
    return {op + (ceil_mode ? " ceil_mode" : "") + (include_pad ? " include_pad" : ""),
            "def @main(%x: " + tensor_type(xs) + ") { " + op + "(%x" + attrs + ") }",
            {x},
            w};
}

std::vector<OpCase> pool_cases() {
    std::vector<OpCase> cases;
    const Shape x2{2, 3, 11, 13};
    cases.push_back(
        pool_case("nn.max_pool2d", "max", x2, {3, 2}, {2, 2}, {1, 0, 1, 1}, false, false, 331));
    cases.push_back(
        pool_case("nn.max_pool2d", "max", x2, {3, 3}, {2, 2}, {0, 0, 0, 0}, true, false, 332));
    cases.push_back(
        pool_case("nn.avg_pool2d", "avg", x2, {3, 2}, {2, 3}, {1, 1, 1, 0}, false, false, 333));
    cases.push_back(
        pool_case("nn.avg_pool2d", "avg", x2, {3, 3}, {2, 2}, {1, 1, 1, 1}, true, true, 334));
    const Shape x3{1, 2, 5, 7, 6};
    cases.push_back(pool_case("nn.max_pool3d", "max", x3, {2, 3, 2}, {2, 2, 1}, {1, 1, 0, 0, 1, 1},
                              false, false, 335));
    cases.push_back(pool_case("nn.avg_pool3d", "avg", x3, {2, 3, 2}, {1, 2, 2}, {0, 1, 1, 1, 0, 1},
                              false, false, 336));
    cases.push_back(pool_case("nn.max_pool_indices", "indices", x2, {3, 2}, {2, 2}, {1, 0, 1, 1},
                              false, false, 337));
    NDArray x = rand_f32(x2, 338);
    Values xv = values_of(x), mx, av;
    for (int64_t p = 0; p < 6; ++p) {
        auto first = xv.begin() + p * 143, last = first + 143;
        mx.push_back(*std::max_element(first, last));
        double s = 0;
        for (auto it = first; it != last; ++it) s += *it;
        av.push_back(s / 143);
    }
    cases.push_back({"nn.global_max_pool2d",
                     "def @main(%x: " + tensor_type(x2) + ") { nn.global_max_pool2d(%x) }",
                     {x},
                     tensor_want({2, 3, 1, 1}, mx, 0)});
    cases.push_back({"nn.global_avg_pool2d",
                     "def @main(%x: " + tensor_type(x2) + ") { nn.global_avg_pool2d(%x) }",
                     {x},
                     tensor_want({2, 3, 1, 1}, av, 1e-5)});
    // Channel-blocked (NCHW8c: [N, C/8, H, W, 8]), as alter_op_layout makes it: each lane alone.
    const Shape xb{1, 2, 5, 7, 8};
    NDArray blocked = rand_f32(xb, 339);
    Values bv = values_of(blocked), bavg;
    for (int64_t cb = 0; cb < 2; ++cb) {
        for (int64_t lane = 0; lane < 8; ++lane) {
            double sum = 0;
            for (int64_t p = 0; p < 35; ++p) sum += bv[(cb * 35 + p) * 8 + lane];
            bavg.push_back(sum / 35);
        }
    }
    cases.push_back(
        {"nn.global_avg_pool2d NCHW8c",
         "def @main(%x: " + tensor_type(xb) + ") { nn.global_avg_pool2d(%x, layout=\"NCHW8c\") }",
         {blocked},
         tensor_want({1, 2, 1, 1, 8}, bavg, 1e-5)});
    return cases;
}

// Mean and biased variance of v[first + k * stride] for k < n.
std::pair<double, double> moments(const Values& v, int64_t first, int64_t n, int64_t stride) {
    double m = 0, var = 0;
    for (int64_t k = 0; k < n; ++k) m += v[first + k * stride];
    m /= double(n);
    for (int64_t k = 0; k < n; ++k)
        var += (v[first + k * stride] - m) * (v[first + k * stride] - m);
    return {m, var / double(n)};
}

std::vector<OpCase> norm_cases() {
    std::vector<OpCase> cases;
    const Shape s{2, 5, 3, 7};
    NDArray x = rand_f32(s, 341);
    Values xv = values_of(x);
    NDArray g = rand_f32({5}, 342), b = rand_f32({5}, 343), m = rand_f32({5}, 344);
    NDArray v = rand_f32({5}, 345, 0.1, 2);
    Values gv = values_of(g), bv = values_of(b), mv = values_of(m), vv = values_of(v), want;
    const std::string p5 = tensor_type({5});
    for_each_index(s, [&](const Shape& i) {
        int64_t c = i[1];
        want.push_back((xv[want.size()] - mv[c]) / std::sqrt(vv[c] + 1e-3) * gv[c] + bv[c]);
    });
    cases.push_back({"nn.batch_norm axis 1",
                     "def @main(%x: " + tensor_type(s) + ", %g: " + p5 + ", %b: " + p5 +
                         ", %m: " + p5 + ", %v: " + p5 +
                         ") { nn.batch_norm(%x, %g, %b, %m, %v, axis=1, epsilon=0.001) }",
                     {x, g, b, m, v},
                     tensor_want(s, want, 1e-5)});
    // layer_norm over the last two axes (3 x 7 = 21 values), gamma and beta [3, 7].
    NDArray lg = rand_f32({3, 7}, 346), lb = rand_f32({3, 7}, 347);
    Values lgv = values_of(lg), lbv = values_of(lb);
    want.clear();
    for (int64_t r = 0; r < 10; ++r) {
        auto [mean, var] = moments(xv, r * 21, 21, 1);
        for (int64_t k = 0; k < 21; ++k) {
            want.push_back((xv[r * 21 + k] - mean) / std::sqrt(var + 1e-5) * lgv[k] + lbv[k]);
        }
    }
    cases.push_back({"nn.layer_norm axis -2",
                     "def @main(%x: " + tensor_type(s) + ", %g: " + tensor_type({3, 7}) +
                         ", %b: " + tensor_type({3, 7}) +
                         ") { nn.layer_norm(%x, %g, %b, axis=-2, epsilon=1e-05) }",
                     {x, lg, lb},
                     tensor_want(s, want, 1e-4)});
    // instance_norm: each (n, c) plane of 21 values.
    want.clear();
    for (int64_t r = 0; r < 10; ++r) {
        auto [mean, var] = moments(xv, r * 21, 21, 1);
        for (int64_t k = 0; k < 21; ++k) {
            want.push_back((xv[r * 21 + k] - mean) / std::sqrt(var + 1e-5) * gv[r % 5] + bv[r % 5]);
        }
    }
    cases.push_back({"nn.instance_norm",
                     "def @main(%x: " + tensor_type(s) + ", %g: " + p5 + ", %b: " + p5 +
                         ") { nn.instance_norm(%x, %g, %b, epsilon=1e-05) }",
                     {x, g, b},
                     tensor_want(s, want, 1e-4)});
    // lrn across 5 channels with a window of 3.
    want.clear();
    for_each_index(s, [&](const Shape& i) {
        double sq = 0;
        for (int64_t c = std::max<int64_t>(0, i[1] - 1); c <= std::min<int64_t>(4, i[1] + 1); ++c) {
            double t = xv[((i[0] * 5 + c) * 3 + i[2]) * 7 + i[3]];
            sq += t * t;
        }
        want.push_back(xv[want.size()] / std::pow(2.0 + 0.3 / 3 * sq, 0.75));
    });
    cases.push_back({"nn.lrn size 3",
                     "def @main(%x: " + tensor_type(s) +
                         ") { nn.lrn(%x, size=3, alpha=0.3, beta=0.75, bias=2.0) }",
                     {x},
                     tensor_want(s, want, 1e-5)});
    // softmax and log_softmax along the channel axis (5) and the last axis (7).
    for (const char* op : {"nn.softmax", "nn.log_softmax"}) {
        for (int64_t axis : {1, -1}) {
            int64_t n = axis == 1 ? 5 : 7, stride = axis == 1 ? 21 : 1;
            Values sm(xv.size());
            for_each_index(s, [&](const Shape& i) {
                int64_t off = ((i[0] * 5 + i[1]) * 3 + i[2]) * 7 + i[3];
                int64_t pos = axis == 1 ? i[1] : i[3], first = off - pos * stride;
                double mx = -1e30, sum = 0;
                for (int64_t k = 0; k < n; ++k) mx = std::max(mx, xv[first + k * stride]);
                for (int64_t k = 0; k < n; ++k) sum += std::exp(xv[first + k * stride] - mx);
                sm[off] = std::string(op) == "nn.softmax" ? std::exp(xv[off] - mx) / sum
                                                          : xv[off] - mx - std::log(sum);
            });
            cases.push_back({std::string(op) + " axis " + std::to_string(axis),
                             "def @main(%x: " + tensor_type(s) + ") { " + op +
                                 "(%x, axis=" + std::to_string(axis) + ") }",
                             {x},
                             tensor_want(s, sm, 1e-5)});
        }
    }
    // attention over 2 heads of 5 queries and 6 keys, head size 3, with a padding mask [6].
    {
        NDArray q = rand_f32({2, 5, 3}, 348), k = rand_f32({2, 6, 3}, 349);
        NDArray v = rand_f32({2, 6, 3}, 350), mask = rand_f32({6}, 351);
        Values qv = values_of(q), kv = values_of(k), vv2 = values_of(v), mv2 = values_of(mask);
        Values att;
        for (int64_t h = 0; h < 2; ++h) {
            for (int64_t i = 0; i < 5; ++i) {
                Values p(6);
                double mx = -1e30, sum = 0;
                for (int64_t j = 0; j < 6; ++j) {
                    double dot = 0;
                    for (int64_t c = 0; c < 3; ++c)
                        dot += qv[(h * 5 + i) * 3 + c] * kv[(h * 6 + j) * 3 + c];
                    p[j] = dot * 0.5 + mv2[j];
                    mx = std::max(mx, p[j]);
                }
                for (double& x : p) sum += x = std::exp(x - mx);
                for (int64_t c = 0; c < 3; ++c) {
                    double acc = 0;
                    for (int64_t j = 0; j < 6; ++j) acc += p[j] * vv2[(h * 6 + j) * 3 + c];
                    att.push_back(acc / sum);
                }
            }
        }
        cases.push_back({"nn.attention with a mask",
                         "def @main(%q: " + tensor_type({2, 5, 3}) +
                             ", %k: " + tensor_type({2, 6, 3}) + ", %v: " + tensor_type({2, 6, 3}) +
                             ", %m: " + tensor_type({6}) +
                             ") { nn.attention(%q, %k, %v, %m, scale=0.5) }",
                         {q, k, v, mask},
                         tensor_want({2, 5, 3}, att, 1e-5)});
    }
    return cases;
}

}  // namespace

std::vector<OpCase> nn_cases() {
    std::vector<OpCase> cases;
    for (auto* family : {conv_cases, dense_cases, pool_cases, norm_cases}) {
        for (OpCase& c : family()) cases.push_back(std::move(c));
    }
    return cases;
}

namespace {

TEST(EveryOp, NeuralNetworkOps) {
    run_cases(nn_cases());
}

}  // namespace
}  // namespace anvil::every_op
