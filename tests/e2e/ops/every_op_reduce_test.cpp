// The every-op cases of the reduction family (reduce.cpp): sum, mean, max, min and prod over
// inner, outer, several and all axes of a 3x5x7 (or 2x3x5x7) tensor, with and without keepdims;
// argmax / argmin with ties; cumsum forward, exclusive and reversed; einsum as a batched
// contraction. References are loops over the input in double precision.
#include <algorithm>
#include <cmath>
#include <limits>

#include "every_op.h"

namespace anvil::every_op {
namespace {

// The reduced shape, and for each input index the output offset it folds into.
struct Reduction {
    Shape out;
    std::vector<int64_t> target;  // per input element
};

Reduction reduce_map(const Shape& s, const std::vector<int64_t>& axes, bool keepdims) {
    std::vector<bool> reduced(s.size(), axes.empty());
    for (int64_t a : axes) reduced[a < 0 ? a + s.size() : a] = true;
    Reduction r;
    Shape kept;  // the output shape with reduced axes as 1
    for (size_t d = 0; d < s.size(); ++d) {
        kept.push_back(reduced[d] ? 1 : s[d]);
        if (!reduced[d] || keepdims) r.out.push_back(reduced[d] ? 1 : s[d]);
    }
    for_each_index(s, [&](const Shape& i) {
        Shape j = i;
        for (size_t d = 0; d < s.size(); ++d) {
            if (reduced[d]) j[d] = 0;
        }
        int64_t off = 0;
        for (size_t d = 0; d < s.size(); ++d) off = off * kept[d] + j[d];
        r.target.push_back(off);
    });
    return r;
}

OpCase reduce_case(const std::string& op, const Shape& s, const std::vector<int64_t>& axes,
                   bool keepdims, uint32_t seed) {
    // prod of many values in [-1, 1] underflows toward 0: keep them near 1.
    NDArray x = op == "prod" ? rand_f32(s, seed, 0.5, 1.5) : rand_f32(s, seed);
    Reduction r = reduce_map(s, axes, keepdims);
    int64_t n = num_elements(r.out);
    double init = op == "max"    ? -std::numeric_limits<double>::infinity()
                  : op == "min"  ? std::numeric_limits<double>::infinity()
                  : op == "prod" ? 1.0
                                 : 0.0;
    std::vector<double> acc(n, init), xv = values_of(x);
    std::vector<int64_t> counts(n, 0);
    for (size_t i = 0; i < xv.size(); ++i) {
        double& a = acc[r.target[i]];
        ++counts[r.target[i]];
        if (op == "max") {
            a = std::max(a, xv[i]);
        } else if (op == "min") {
            a = std::min(a, xv[i]);
        } else if (op == "prod") {
            a *= xv[i];
        } else {
            a += xv[i];
        }
    }
    if (op == "mean") {
        for (int64_t i = 0; i < n; ++i) acc[i] /= double(counts[i]);
    }
    std::string attrs = axes.empty() ? "" : ", axes=" + int_list(axes);
    if (keepdims) attrs += ", keepdims=True";
    std::string text = "def @main(%x: " + tensor_type(s) + ") { " + op + "(%x" + attrs + ") }";
    return {op + " axes " + int_list(axes) + (keepdims ? " keepdims" : ""),
            text,
            {x},
            tensor_want(r.out, acc, 1e-5)};
}

// argmax / argmin along `axis` of values with ties (small integers), first or last index.
OpCase arg_case(const std::string& op, int64_t axis, bool keepdims, bool last, uint32_t seed) {
    Shape s{3, 5, 7};
    NDArray x = array_of(s, values_of(rand_int(s, seed, -2, 2)));
    std::vector<double> xv = values_of(x);
    Shape out;
    for (int64_t d = 0; d < 3; ++d) {
        if (d != axis) out.push_back(s[d]);
        if (d == axis && keepdims) out.push_back(1);
    }
    Shape st = strides_of(s), outer = s;
    outer[axis] = 1;
    std::vector<double> want;
    for_each_index(outer, [&](const Shape& i) {
        int64_t base = i[0] * st[0] + i[1] * st[1] + i[2] * st[2], best = 0;
        for (int64_t k = 1; k < s[axis]; ++k) {
            double v = xv[base + k * st[axis]], b = xv[base + best * st[axis]];
            bool better = op == "argmax" ? v > b : v < b;
            if (better || (last && v == b)) best = k;
        }
        want.push_back(double(best));
    });
    std::string attrs = ", axis=" + std::to_string(axis) +
                        (keepdims ? ", keepdims=True" : ", keepdims=False") +
                        (last ? ", select_last_index=True" : "");
    return {op + " axis " + std::to_string(axis) + (last ? " last" : ""),
            "def @main(%x: " + tensor_type(s) + ") { " + op + "(%x" + attrs + ") }",
            {x},
            tensor_want(out, want, 0, "int64")};
}

OpCase cumsum_case(int64_t axis, bool exclusive, bool reverse, uint32_t seed) {
    Shape s{3, 5, 7};
    NDArray x = rand_f32(s, seed);
    std::vector<double> xv = values_of(x), want(xv.size());
    Shape st = strides_of(s);
    for_each_index(s, [&](const Shape& i) {
        int64_t off = i[0] * st[0] + i[1] * st[1] + i[2] * st[2];
        double acc = 0;
        for (int64_t k = 0; k < s[axis]; ++k) {
            bool in = reverse ? (exclusive ? k > i[axis] : k >= i[axis])
                              : (exclusive ? k < i[axis] : k <= i[axis]);
            if (in) acc += xv[off + (k - i[axis]) * st[axis]];
        }
        want[off] = acc;
    });
    std::string attrs = ", axis=" + std::to_string(axis) + (exclusive ? ", exclusive=True" : "") +
                        (reverse ? ", reverse=True" : "");
    return {"cumsum axis " + std::to_string(axis) + (exclusive ? " exclusive" : "") +
                (reverse ? " reverse" : ""),
            "def @main(%x: " + tensor_type(s) + ") { cumsum(%x" + attrs + ") }",
            {x},
            tensor_want(s, want)};
}

// einsum "bij,bjk->bik" (a batched matmul) at 3x5x7 . 3x7x11, and "ii->i" (a diagonal).
std::vector<OpCase> einsum_cases() {
    NDArray a = rand_f32({3, 5, 7}, 61), b = rand_f32({3, 7, 11}, 62);
    std::vector<double> av = values_of(a), bv = values_of(b), want;
    for (int64_t n = 0; n < 3; ++n)
        for (int64_t i = 0; i < 5; ++i)
            for (int64_t k = 0; k < 11; ++k) {
                double acc = 0;
                for (int64_t j = 0; j < 7; ++j)
                    acc += av[(n * 5 + i) * 7 + j] * bv[(n * 7 + j) * 11 + k];
                want.push_back(acc);
            }
    OpCase matmul{"einsum bij,bjk->bik",
                  "def @main(%a: " + tensor_type({3, 5, 7}) + ", %b: " + tensor_type({3, 7, 11}) +
                      ") { einsum(%a, %b, equation=\"bij,bjk->bik\") }",
                  {a, b},
                  tensor_want({3, 5, 11}, want)};
    NDArray d = rand_f32({13, 13}, 63);
    std::vector<double> dv = values_of(d), diag;
    for (int64_t i = 0; i < 13; ++i) diag.push_back(dv[i * 13 + i]);
    OpCase diagonal{
        "einsum ii->i",
        "def @main(%a: " + tensor_type({13, 13}) + ") { einsum(%a, equation=\"ii->i\") }",
        {d},
        tensor_want({13}, diag)};
    return {matmul, diagonal};
}

}  // namespace

std::vector<OpCase> reduce_cases() {
    std::vector<OpCase> cases;
    uint32_t seed = 40;
    const Shape s3{3, 5, 7}, s4{2, 3, 5, 7};
    for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
        cases.push_back(reduce_case(op, s3, {2}, false, seed++));     // innermost
        cases.push_back(reduce_case(op, s3, {0}, true, seed++));      // outermost, kept
        cases.push_back(reduce_case(op, s4, {1, 3}, false, seed++));  // two apart
        cases.push_back(reduce_case(op, s3, {}, false, seed++));      // all
    }
    for (const char* op : {"argmax", "argmin"}) {
        cases.push_back(arg_case(op, 2, false, false, seed++));
        cases.push_back(arg_case(op, 1, true, true, seed++));
    }
    cases.push_back(cumsum_case(2, false, false, seed++));
    cases.push_back(cumsum_case(1, true, false, seed++));
    cases.push_back(cumsum_case(0, true, true, seed++));
    for (OpCase& c : einsum_cases()) cases.push_back(std::move(c));
    return cases;
}

namespace {

TEST(EveryOp, Reductions) {
    run_cases(reduce_cases());
}

}  // namespace
}  // namespace anvil::every_op
