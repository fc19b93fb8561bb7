// The every-op cases of the transform families (transform_shape.cpp, transform_layout.cpp,
// transform_slice.cpp, transform_index.cpp, transform_resize.cpp): each op at odd shapes, its
// reference an index map written out here (out[index] = in[f(index)]), or for resize2d,
// grid_sample and roi_align the ONNX definitions' bilinear sampling in double precision.
#include <algorithm>
#include <cmath>

#include "every_op.h"

namespace anvil::every_op {
namespace {

using Values = std::vector<double>;

// Reads element `index` of a row-major tensor of `shape` with values `v`.
double at(const Values& v, const Shape& shape, const Shape& index) {
    int64_t off = 0;
    for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + index[d];
    return v[off];
}

// A case whose result is out[index] = f(index) over `out`.
OpCase map_case(std::string name, std::string text, std::vector<VMValue> inputs, Shape out,
                const std::function<double(const Shape&)>& f, double tol = 0) {
    Values want;
    for_each_index(out, [&](const Shape& i) { want.push_back(f(i)); });
    return {std::move(name), std::move(text), std::move(inputs), tensor_want(out, want, tol)};
}

std::string params(const std::vector<std::pair<std::string, std::string>>& p) {
    std::string s;
    for (const auto& [name, type] : p) s += (s.empty() ? "%" : ", %") + name + ": " + type;
    return s;
}

std::string main_of(const std::vector<std::pair<std::string, std::string>>& p,
                    const std::string& body) {
    return "def @main(" + params(p) + ") { " + body + " }";
}

std::vector<OpCase> shape_cases() {
    std::vector<OpCase> cases;
    const Shape s{3, 5, 7};
    NDArray x = rand_f32(s, 201);
    Values xv = values_of(x);
    const std::string tx = tensor_type(s);
    cases.push_back(map_case("reshape 3x5x7 -> 7x15",
                             main_of({{"x", tx}}, "reshape(%x, newshape=[7, -1])"), {x}, {7, 15},
                             [&](const Shape& i) { return xv[i[0] * 15 + i[1]]; }));
    NDArray x4 = rand_f32({2, 3, 5, 7}, 202);
    Values x4v = values_of(x4);
    cases.push_back(map_case("flatten axis 2",
                             main_of({{"x", tensor_type({2, 3, 5, 7})}}, "flatten(%x, axis=2)"),
                             {x4}, {6, 35}, [&](const Shape& i) { return x4v[i[0] * 35 + i[1]]; }));
    cases.push_back(map_case("transpose [2, 0, 1]",
                             main_of({{"x", tx}}, "transpose(%x, axes=[2, 0, 1])"), {x}, {7, 3, 5},
                             [&](const Shape& i) {
                                 return at(xv, s, {i[1], i[2], i[0]});
                             }));
    NDArray sq = rand_f32({3, 1, 7, 1}, 203);
    Values sqv = values_of(sq);
    cases.push_back(map_case(
        "squeeze axis 1", main_of({{"x", tensor_type({3, 1, 7, 1})}}, "squeeze(%x, axes=[1])"),
        {sq}, {3, 7, 1}, [&](const Shape& i) { return sqv[i[0] * 7 + i[1]]; }));
    NDArray e = rand_f32({3, 5}, 204);
    Values ev = values_of(e);
    cases.push_back(
        map_case("expand_dims axis 1 x2",
                 main_of({{"x", tensor_type({3, 5})}}, "expand_dims(%x, axis=1, num_newaxis=2)"),
                 {e}, {3, 1, 1, 5}, [&](const Shape& i) { return ev[i[0] * 5 + i[3]]; }));
    // Three parts of 5, 2 and 1 along the middle axis.
    NDArray b = rand_f32({3, 2, 7}, 205), c = rand_f32({3, 1, 7}, 206);
    Values bv = values_of(b), cv = values_of(c);
    cases.push_back(
        map_case("concatenate axis 1",
                 main_of({{"a", tx}, {"b", tensor_type({3, 2, 7})}, {"c", tensor_type({3, 1, 7})}},
                         "concatenate(%a, %b, %c, axis=1)"),
                 {x, b, c}, {3, 8, 7}, [&](const Shape& i) {
                     if (i[1] < 5) return at(xv, s, i);
                     if (i[1] < 7) return at(bv, {3, 2, 7}, {i[0], i[1] - 5, i[2]});
                     return at(cv, {3, 1, 7}, {i[0], 0, i[2]});
                 }));
    // split at indices [4, 9] of 13, and into 4 sections of ceil(13 / 4) = 4 (the last 1).
    NDArray sp = rand_f32({3, 13, 7}, 207);
    Values spv = values_of(sp);
    auto parts = [&](const std::vector<int64_t>& bounds) {
        std::vector<Want> fields;
        for (size_t k = 0; k + 1 < bounds.size(); ++k) {
            Shape ps{3, bounds[k + 1] - bounds[k], 7};
            Values pv;
            for_each_index(ps, [&](const Shape& i) {
                pv.push_back(at(spv, {3, 13, 7}, {i[0], i[1] + bounds[k], i[2]}));
            });
            fields.push_back(tensor_want(ps, pv, 0));
        }
        return tuple_want(fields);
    };
    cases.push_back({"split indices [4, 9]",
                     main_of({{"x", tensor_type({3, 13, 7})}}, "split(%x, indices=[4, 9], axis=1)"),
                     {sp},
                     parts({0, 4, 9, 13})});
    cases.push_back({"split 4 sections of 13",
                     main_of({{"x", tensor_type({3, 13, 7})}}, "split(%x, sections=4, axis=1)"),
                     {sp},
                     parts({0, 4, 8, 12, 13})});
    NDArray bc = rand_f32({5, 1}, 208);
    Values bcv = values_of(bc);
    cases.push_back(
        map_case("broadcast_to 5x1 -> 3x5x7",
                 main_of({{"x", tensor_type({5, 1})}}, "broadcast_to(%x, shape=[3, 5, 7])"), {bc},
                 {3, 5, 7}, [&](const Shape& i) { return bcv[i[1]]; }));
    cases.push_back(map_case("tile 3x5 by [2, 1, 3]",
                             main_of({{"x", tensor_type({3, 5})}}, "tile(%x, reps=[2, 1, 3])"), {e},
                             {2, 3, 15}, [&](const Shape& i) { return ev[i[1] * 5 + i[2] % 5]; }));
    // depth_to_space / space_to_depth, blocksize 2, 3 channels out of 12.
    NDArray d = rand_f32({2, 12, 3, 5}, 209);
    Values dv = values_of(d);
    for (const char* mode : {"DCR", "CRD"}) {
        bool dcr = std::string(mode) == "DCR";
        cases.push_back(
            map_case(std::string("depth_to_space ") + mode,
                     main_of({{"x", tensor_type({2, 12, 3, 5})}},
                             std::string("depth_to_space(%x, blocksize=2, mode=\"") + mode + "\")"),
                     {d}, {2, 3, 6, 10}, [&, dcr](const Shape& i) {
                         int64_t bi = i[2] % 2, bj = i[3] % 2;
                         int64_t ch = dcr ? (bi * 2 + bj) * 3 + i[1] : i[1] * 4 + bi * 2 + bj;
                         return at(dv, {2, 12, 3, 5}, {i[0], ch, i[2] / 2, i[3] / 2});
                     }));
    }
    NDArray sd = rand_f32({2, 3, 6, 10}, 210);
    Values sdv = values_of(sd);
    cases.push_back(map_case(
        "space_to_depth 2",
        main_of({{"x", tensor_type({2, 3, 6, 10})}}, "space_to_depth(%x, blocksize=2)"), {sd},
        {2, 12, 3, 5}, [&](const Shape& i) {
            int64_t block = i[1] / 3, ch = i[1] % 3;
            return at(sdv, {2, 3, 6, 10}, {i[0], ch, i[2] * 2 + block / 2, i[3] * 2 + block % 2});
        }));
    return cases;
}

std::vector<OpCase> layout_and_slice_cases() {
    std::vector<OpCase> cases;
    // NCHW -> NCHW8c (16 channels in 2 blocks) and back.
    NDArray x = rand_f32({1, 16, 3, 5}, 221);
    Values xv = values_of(x);
    cases.push_back(
        map_case("layout_transform NCHW -> NCHW8c",
                 main_of({{"x", tensor_type({1, 16, 3, 5})}},
                         "layout_transform(%x, src_layout=\"NCHW\", dst_layout=\"NCHW8c\")"),
                 {x}, {1, 2, 3, 5, 8}, [&](const Shape& i) {
                     return at(xv, {1, 16, 3, 5}, {i[0], i[1] * 8 + i[4], i[2], i[3]});
                 }));
    NDArray blocked = rand_f32({2, 3, 3, 5, 8}, 222);
    Values bv = values_of(blocked);
    cases.push_back(
        map_case("layout_transform NCHW8c -> NCHW",
                 main_of({{"x", tensor_type({2, 3, 3, 5, 8})}},
                         "layout_transform(%x, src_layout=\"NCHW8c\", dst_layout=\"NCHW\")"),
                 {blocked}, {2, 24, 3, 5}, [&](const Shape& i) {
                     return at(bv, {2, 3, 3, 5, 8}, {i[0], i[1] / 8, i[2], i[3], i[1] % 8});
                 }));
    // strided_slice with a positive, a negative and a wide stride.
    const Shape s{7, 11, 13};
    NDArray v = rand_f32(s, 223);
    Values vv = values_of(v);
    cases.push_back(
        map_case("strided_slice strides [2, -3, 4]",
                 main_of({{"x", tensor_type(s)}},
                         "strided_slice(%x, begin=[1, 10, 0], end=[6, 0, 13], strides=[2, -3, 4])"),
                 {v}, {3, 4, 4}, [&](const Shape& i) {
                     return at(vv, s, {1 + 2 * i[0], 10 - 3 * i[1], 4 * i[2]});
                 }));
    // pad: constant, reflect, edge and wrap, uneven widths; a negative width crops.
    const Shape ps{3, 5, 7};
    NDArray p = rand_f32(ps, 224);
    Values pv = values_of(p);
    const std::vector<int64_t> width{1, 0, 2, 1, 3, 2};
    const Shape pout{4, 8, 12};
    auto source = [&](int64_t j, int64_t n, const std::string& mode) -> int64_t {
        if (j >= 0 && j < n) return j;
        if (mode == "edge") return std::clamp<int64_t>(j, 0, n - 1);
        if (mode == "wrap") return ((j % n) + n) % n;
        if (mode == "reflect") return j < 0 ? -j : 2 * (n - 1) - j;
        return -1;  // constant
    };
    for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
        std::string m = mode;
        cases.push_back(map_case("pad " + m,
                                 main_of({{"x", tensor_type(ps)}},
                                         "nn.pad(%x, pad_width=[1, 0, 2, 1, 3, 2], pad_mode=\"" +
                                             m + "\", pad_value=0.5)"),
                                 {p}, pout, [&, m](const Shape& i) {
                                     Shape j(3);
                                     for (int d = 0; d < 3; ++d) {
                                         j[d] = source(i[d] - width[2 * d], ps[d], m);
                                         if (j[d] < 0) return 0.5;
                                     }
                                     return at(pv, ps, j);
                                 }));
    }
    // Rows wider than a vector (nn.pad vectorizes each row: 45 = two vectors and a tail), with
    // padding at both ends of them.
    const Shape rs{2, 3, 40};
    NDArray r = rand_f32(rs, 225);
    Values rv = values_of(r);
    cases.push_back(map_case(
        "pad wide rows",
        main_of({{"x", tensor_type(rs)}}, "nn.pad(%x, pad_width=[0, 0, 1, 2, 3, 2], pad_value=-1)"),
        {r}, {2, 6, 45}, [&](const Shape& i) {
            if (i[1] < 1 || i[1] > 3 || i[2] < 3 || i[2] >= 43) return -1.0;
            return at(rv, rs, {i[0], i[1] - 1, i[2] - 3});
        }));
    cases.push_back(map_case(
        "pad crop", main_of({{"x", tensor_type(ps)}}, "nn.pad(%x, pad_width=[0, -1, -2, 1, 0, 0])"),
        {p}, {2, 4, 7}, [&](const Shape& i) {
            if (i[1] == 3) return 0.0;
            return at(pv, ps, {i[0], i[1] + 2, i[2]});
        }));
    return cases;
}

std::vector<OpCase> index_cases() {
    std::vector<OpCase> cases;
    const Shape s{3, 5, 7};
    NDArray x = rand_f32(s, 231);
    Values xv = values_of(x);
    const std::string tx = tensor_type(s);
    // take along axis 1 with negative indices.
    NDArray idx = rand_int({2, 3}, 232, -5, 4);
    Values iv = values_of(idx);
    auto wrap = [](double i, int64_t n) { return int64_t(i < 0 ? i + n : i); };
    cases.push_back(
        map_case("take axis 1",
                 main_of({{"x", tx}, {"i", tensor_type({2, 3}, "int64")}}, "take(%x, %i, axis=1)"),
                 {x, idx}, {3, 2, 3, 7}, [&](const Shape& i) {
                     return at(xv, s, {i[0], wrap(iv[i[1] * 3 + i[2]], 5), i[3]});
                 }));
    NDArray ge = rand_int({3, 4, 7}, 233, -5, 4);
    Values gev = values_of(ge);
    cases.push_back(map_case("gather_elements axis 1",
                             main_of({{"x", tx}, {"i", tensor_type({3, 4, 7}, "int64")}},
                                     "gather_elements(%x, %i, axis=1)"),
                             {x, ge}, {3, 4, 7}, [&](const Shape& i) {
                                 return at(xv, s, {i[0], wrap(at(gev, {3, 4, 7}, i), 5), i[2]});
                             }));
    for (auto [upper, k] : {std::pair<bool, int64_t>{true, 1}, {false, -2}}) {
        cases.push_back(map_case(
            std::string("trilu ") + (upper ? "upper" : "lower") + " k " + std::to_string(k),
            main_of({{"x", tx}, {"k", tensor_type({1}, "int64")}},
                    std::string("trilu(%x, %k, upper=") + (upper ? "True" : "False") + ")"),
            {x, array_of({1}, {double(k)}, "int64")}, s, [&, upper, k](const Shape& i) {
                bool keep = upper ? i[2] - i[1] >= k : i[2] - i[1] <= k;
                return keep ? at(xv, s, i) : 0.0;
            }));
    }
    // gather_nd: 4 index pairs into the first two axes.
    NDArray nd = array_of({4, 2}, {0, 4, 2, -1, 1, 0, -3, 2}, "int64");
    Values ndv = values_of(nd);
    cases.push_back(
        map_case("gather_nd pairs",
                 main_of({{"x", tx}, {"i", tensor_type({4, 2}, "int64")}}, "gather_nd(%x, %i)"),
                 {x, nd}, {4, 7}, [&](const Shape& i) {
                     return at(xv, s, {wrap(ndv[i[0] * 2], 3), wrap(ndv[i[0] * 2 + 1], 5), i[1]});
                 }));
    // reverse_sequence: time axis 0 (7 steps), batch axis 1 (3), lengths 7, 1, 4.
    const Shape rs{7, 3, 5};
    NDArray r = rand_f32(rs, 234);
    Values rv = values_of(r);
    NDArray lens = array_of({3}, {7, 1, 4}, "int64");
    cases.push_back(map_case("reverse_sequence",
                             main_of({{"x", tensor_type(rs)}, {"l", tensor_type({3}, "int64")}},
                                     "reverse_sequence(%x, %l, batch_axis=1, time_axis=0)"),
                             {r, lens}, rs, [&](const Shape& i) {
                                 int64_t len = std::vector<int64_t>{7, 1, 4}[i[1]];
                                 int64_t t = i[0] < len ? len - 1 - i[0] : i[0];
                                 return at(rv, rs, {t, i[1], i[2]});
                             }));
    // scatter_elements with add: duplicate positions accumulate.
    NDArray su = rand_f32({3, 2, 7}, 235);
    NDArray si = rand_int({3, 2, 7}, 236, -5, 4);
    Values suv = values_of(su), siv = values_of(si), scattered = xv;
    for_each_index({3, 2, 7}, [&](const Shape& i) {
        int64_t j = wrap(at(siv, {3, 2, 7}, i), 5);
        scattered[(i[0] * 5 + j) * 7 + i[2]] += at(suv, {3, 2, 7}, i);
    });
    cases.push_back(
        {"scatter_elements add axis 1",
         main_of({{"x", tx}, {"i", tensor_type({3, 2, 7}, "int64")}, {"u", tensor_type({3, 2, 7})}},
                 "scatter_elements(%x, %i, %u, axis=1, reduction=\"add\")"),
         {x, si, su},
         tensor_want(s, scattered, 1e-6)});
    // scatter_nd: rows 4, 0 and 2 of a 5x7 matrix replaced.
    NDArray m = rand_f32({5, 7}, 237), mu = rand_f32({3, 7}, 238);
    Values mv = values_of(m), muv = values_of(mu);
    Values rows = mv;
    const int64_t targets[] = {4, 0, 2};
    for (int64_t k = 0; k < 3; ++k)
        for (int64_t j = 0; j < 7; ++j) rows[targets[k] * 7 + j] = muv[k * 7 + j];
    cases.push_back({"scatter_nd rows",
                     main_of({{"x", tensor_type({5, 7})},
                              {"i", tensor_type({3, 1}, "int64")},
                              {"u", tensor_type({3, 7})}},
                             "scatter_nd(%x, %i, %u)"),
                     {m, array_of({3, 1}, {4, 0, 2}, "int64"), mu},
                     tensor_want({5, 7}, rows, 0)});
    return cases;
}

// Bilinear sample of plane `p` (h x w) at (y, x) with taps outside the plane read as zero.
double bilinear_zero(const double* p, int64_t h, int64_t w, double y, double x) {
    double y0 = std::floor(y), x0 = std::floor(x), acc = 0;
    for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
            int64_t yy = int64_t(y0) + dy, xx = int64_t(x0) + dx;
            if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
            double wy = dy ? y - y0 : 1 - (y - y0), wx = dx ? x - x0 : 1 - (x - x0);
            acc += wy * wx * p[yy * w + xx];
        }
    return acc;
}

std::vector<OpCase> resize_cases() {
    std::vector<OpCase> cases;
    const Shape s{1, 2, 5, 7};
    NDArray x = rand_f32(s, 241);
    Values xv = values_of(x);
    // resize2d, linear, half_pixel: 5x7 -> 7x12 (scales 7/5 and 12/7), edges clamped.
    cases.push_back(map_case(
        "resize2d linear half_pixel 5x7 -> 7x12",
        main_of({{"x", tensor_type(s)}},
                "resize2d(%x, size=[7, 12], mode=\"linear\", "
                "coordinate_transformation_mode=\"half_pixel\")"),
        {x}, {1, 2, 7, 12},
        [&](const Shape& i) {
            double y = std::clamp((i[2] + 0.5) * 5 / 7 - 0.5, 0.0, 4.0);
            double z = std::clamp((i[3] + 0.5) * 7 / 12 - 0.5, 0.0, 6.0);
            int64_t y0 = int64_t(y), z0 = int64_t(z), y1 = std::min<int64_t>(y0 + 1, 4),
                    z1 = std::min<int64_t>(z0 + 1, 6);
            double fy = y - y0, fz = z - z0;
            auto v = [&](int64_t a, int64_t b) { return at(xv, s, {i[0], i[1], a, b}); };
            return (1 - fy) * ((1 - fz) * v(y0, z0) + fz * v(y0, z1)) +
                   fy * ((1 - fz) * v(y1, z0) + fz * v(y1, z1));
        },
        1e-5));
    // grid_sample, bilinear, zeros padding, align_corners off; the grid reaches past the edges.
    NDArray grid = rand_f32({1, 3, 4, 2}, 242, -1.2, 1.2);
    Values gv = values_of(grid);
    cases.push_back(map_case(
        "grid_sample bilinear zeros",
        main_of({{"x", tensor_type(s)}, {"g", tensor_type({1, 3, 4, 2})}},
                "grid_sample(%x, %g, mode=\"bilinear\", padding_mode=\"zeros\", "
                "align_corners=False)"),
        {x, grid}, {1, 2, 3, 4},
        [&](const Shape& i) {
            double gx = gv[(i[2] * 4 + i[3]) * 2], gy = gv[(i[2] * 4 + i[3]) * 2 + 1];
            double px = ((gx + 1) * 7 - 1) / 2, py = ((gy + 1) * 5 - 1) / 2;
            return bilinear_zero(&xv[i[1] * 35], 5, 7, py, px);
        },
        1e-5));
    // roi_align: two rois (one past the right edge) in half-pixel coordinates, 2x2 samples per
    // bin, spatial_scale 0.5; a sample outside [-1, size] is zero, others clamp to the edge.
    const Shape rs{2, 3, 7, 9};
    NDArray rx = rand_f32(rs, 243);
    Values rxv = values_of(rx);
    Values roi{1, 2, 13, 11, 4, 0.5, 20, 9};
    NDArray rois = array_of({2, 4}, roi), batch = array_of({2}, {1, 0}, "int64");
    auto sample = [&](int64_t n, int64_t c, double y, double x) {
        if (y < -1 || y > 7 || x < -1 || x > 9) return 0.0;
        y = std::max(y, 0.0);
        x = std::max(x, 0.0);
        int64_t y0 = int64_t(y), x0 = int64_t(x), y1 = y0 + 1, x1 = x0 + 1;
        if (y0 >= 6) y0 = y1 = 6, y = 6;
        if (x0 >= 8) x0 = x1 = 8, x = 8;
        double fy = y - y0, fx = x - x0;
        auto v = [&](int64_t a, int64_t b) { return at(rxv, rs, {n, c, a, b}); };
        return (1 - fy) * ((1 - fx) * v(y0, x0) + fx * v(y0, x1)) +
               fy * ((1 - fx) * v(y1, x0) + fx * v(y1, x1));
    };
    cases.push_back(map_case(
        "roi_align avg half_pixel",
        main_of(
            {{"x", tensor_type(rs)}, {"r", tensor_type({2, 4})}, {"b", tensor_type({2}, "int64")}},
            "roi_align(%x, %r, %b, output_height=3, output_width=2, sampling_ratio=2, "
            "spatial_scale=0.5, half_pixel=True)"),
        {rx, rois, batch}, {2, 3, 3, 2},
        [&](const Shape& i) {
            const double* q = &roi[i[0] * 4];
            double x1 = q[0] * 0.5 - 0.5, y1 = q[1] * 0.5 - 0.5;
            double bw = (q[2] * 0.5 - 0.5 - x1) / 2, bh = (q[3] * 0.5 - 0.5 - y1) / 3;
            int64_t n = i[0] == 0 ? 1 : 0;
            double acc = 0;
            for (int sy = 0; sy < 2; ++sy)
                for (int sx = 0; sx < 2; ++sx) {
                    acc += sample(n, i[1], y1 + i[2] * bh + (sy + 0.5) * bh / 2,
                                  x1 + i[3] * bw + (sx + 0.5) * bw / 2);
                }
            return acc / 4;
        },
        1e-5));
    return cases;
}

}  // namespace

std::vector<OpCase> transform_cases() {
    std::vector<OpCase> cases;
    for (auto* family : {shape_cases, layout_and_slice_cases, index_cases, resize_cases}) {
        for (OpCase& c : family()) cases.push_back(std::move(c));
    }
    return cases;
}

namespace {

TEST(EveryOp, Transforms) {
    run_cases(transform_cases());
}

}  // namespace
}  // namespace anvil::every_op
