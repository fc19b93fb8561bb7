// Every schedule primitive, compiled and run on odd, non-divisible sizes, against a naive
// reference computed here in C++.
#include <gtest/gtest.h>

#include <cmath>

#include "run_kernel.h"
#include "te/math.h"
#include "te/reduction.h"

namespace anvil {
namespace {

using testing::build_and_run;
using testing::random_tensor;
using testing::zeros;

constexpr int M = 37, N = 53, K = 29;

struct Matmul {
    te::Tensor A, B, C;
};

Matmul matmul() {
    te::Tensor A = te::placeholder({M, K}, DataType::float32(), "A");
    te::Tensor B = te::placeholder({K, N}, DataType::float32(), "B");
    auto k = te::reduce_axis(K, "k");
    te::Tensor C = te::compute(
        {M, N}, [&](PrimExpr i, PrimExpr j) { return te::sum(A(i, k->var) * B(k->var, j), {k}); },
        "C");
    return {A, B, C};
}

// Runs a matmul schedule and compares with a double-precision reference.
void check_matmul(const Matmul& m, const te::Schedule& s) {
    auto a = random_tensor({M, K}, 1), b = random_tensor({K, N}, 2), c = zeros({M, N});
    build_and_run(s, {m.A, m.B, m.C}, {a, b, c});
    const float *pa = a.data<float>(), *pb = b.data<float>(), *pc = c.data<float>();
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < N; ++j) {
            double ref = 0;
            for (int k = 0; k < K; ++k) ref += double(pa[i * K + k]) * pb[k * N + j];
            ASSERT_NEAR(pc[i * N + j], ref, 1e-4) << "at " << i << ", " << j;
        }
    }
}

TEST(Primitives, Default) {
    Matmul m = matmul();
    check_matmul(m, te::create_schedule({m.C}));
}

TEST(Primitives, SplitByFactorAndParts) {
    Matmul m = matmul();
    te::Schedule s = te::create_schedule({m.C});
    auto ax = s[m.C].op_axis();
    s[m.C].split(ax[0], 8);
    s[m.C].split_nparts(ax[1], 3);
    s[m.C].split(s[m.C].op_reduce_axis()[0], 4);
    check_matmul(m, s);
}

TEST(Primitives, TileAndReorder) {
    Matmul m = matmul();
    te::Schedule s = te::create_schedule({m.C});
    auto ax = s[m.C].op_axis();
    auto t = s[m.C].tile(ax[0], ax[1], 8, 16);
    auto k = s[m.C].op_reduce_axis()[0];
    s[m.C].reorder({t[1], t[0], k, t[3], t[2]});
    check_matmul(m, s);
}

TEST(Primitives, FuseAndParallel) {
    Matmul m = matmul();
    te::Schedule s = te::create_schedule({m.C});
    auto ax = s[m.C].op_axis();
    auto f = s[m.C].fuse({ax[0], ax[1]});
    auto [o, i] = s[m.C].split(f, 7);
    s[m.C].parallel(o);
    check_matmul(m, s);
}

TEST(Primitives, VectorizeAndUnroll) {
    Matmul m = matmul();
    te::Schedule s = te::create_schedule({m.C});
    auto ax = s[m.C].op_axis();
    auto k = s[m.C].op_reduce_axis()[0];
    auto [jo, ji] = s[m.C].split(ax[1], 16);
    auto [ko, ki] = s[m.C].split(k, 4);
    s[m.C].reorder({ax[0], jo, ko, ki, ji});
    s[m.C].unroll(ki);
    s[m.C].vectorize(ji);
    check_matmul(m, s);
}

TEST(Primitives, CacheWriteComputeAt) {
    Matmul m = matmul();
    te::Schedule s = te::create_schedule({m.C});
    te::Tensor CC = s.cache_write(m.C, "local");
    auto ax = s[m.C].op_axis();
    auto t = s[m.C].tile(ax[0], ax[1], 6, 16);
    s[m.C].vectorize(t[3]);
    s[m.C].parallel(t[0]);
    s[CC].compute_at(s[m.C], t[1]);
    auto cax = s[CC].op_axis();
    auto k = s[CC].op_reduce_axis()[0];
    s[CC].reorder({k, cax[0], cax[1]});
    s[CC].unroll(cax[0]);
    s[CC].vectorize(cax[1]);
    check_matmul(m, s);
}

TEST(Primitives, CacheReadPacksAPanel) {
    Matmul m = matmul();
    te::Schedule s = te::create_schedule({m.C});
    te::Tensor CC = s.cache_write(m.C, "local");
    auto ax = s[m.C].op_axis();
    auto [io, ii] = s[m.C].split(ax[0], 6);
    auto [jo, ji] = s[m.C].split(ax[1], 16);
    s[m.C].reorder({jo, io, ii, ji});
    s[CC].compute_at(s[m.C], io);
    te::Tensor BB = s.cache_read(m.B, "global", {CC});
    s[BB].compute_at(s[m.C], jo);  // an ancestor loop of CC's, not CC's own
    te::Tensor AA = s.cache_read(m.A, "local", {CC});
    s[AA].compute_at(s[m.C], io);
    check_matmul(m, s);
}

TEST(Primitives, ComputeInlineAndRoot) {
    te::Tensor A = te::placeholder({41}, DataType::float32(), "A");
    te::Tensor B = te::compute(
        {41}, [&](PrimExpr i) { return A(i) * 2.0f; }, "B");
    te::Tensor C = te::compute(
        {41}, [&](PrimExpr i) { return B(i) + 1.0f; }, "C");
    te::Tensor D = te::compute(
        {41}, [&](PrimExpr i) { return C(i) * C(i); }, "D");
    te::Schedule s = te::create_schedule({D});
    s[B].compute_inline();
    s[C].compute_root();
    auto a = random_tensor({41}, 3), d = zeros({41});
    build_and_run(s, {A, D}, {a, d});
    for (int i = 0; i < 41; ++i) {
        float c = a.data<float>()[i] * 2.0f + 1.0f;
        EXPECT_FLOAT_EQ(d.data<float>()[i], c * c);
    }
}

TEST(Primitives, ComputeAtWithHalo) {
    // A 3-point stencil over a producer computed per tile, including its halo.
    te::Tensor A = te::placeholder({100}, DataType::float32(), "A");
    te::Tensor B = te::compute(
        {100}, [&](PrimExpr i) { return A(i) * 3.0f; }, "B");
    te::Tensor C = te::compute(
        {98}, [&](PrimExpr i) { return B(i) + B(i + 1) + B(i + 2); }, "C");
    te::Schedule s = te::create_schedule({C});
    auto [o, in] = s[C].split(s[C].op_axis()[0], 16);
    s[B].compute_at(s[C], o);
    s[C].parallel(o);
    auto a = random_tensor({100}, 4), c = zeros({98});
    build_and_run(s, {A, C}, {a, c});
    const float* pa = a.data<float>();
    for (int i = 0; i < 98; ++i) {
        EXPECT_NEAR(c.data<float>()[i], 3.0f * (pa[i] + pa[i + 1] + pa[i + 2]), 1e-5) << i;
    }
}

TEST(Primitives, ComputeAtWithTwoReadersInsideTheLoop) {
    // B is read by C (a shifted window, attached in the same loop) and by D itself: B's tile
    // is the hull of both reads (attention's scores, read by the row maximum and by exp).
    te::Tensor A = te::placeholder({100}, DataType::float32(), "A");
    te::Tensor B = te::compute(
        {100}, [&](PrimExpr i) { return A(i) * 3.0f; }, "B");
    te::Tensor C = te::compute(
        {98}, [&](PrimExpr i) { return B(i + 2) - 1.0f; }, "C");
    te::Tensor D = te::compute(
        {98}, [&](PrimExpr i) { return B(i) * C(i); }, "D");
    te::Schedule s = te::create_schedule({D});
    auto [o, in] = s[D].split(s[D].op_axis()[0], 16);
    s[B].compute_at(s[D], o);
    s[C].compute_at(s[D], o);
    auto a = random_tensor({100}, 5), d = zeros({98});
    build_and_run(s, {A, D}, {a, d});
    const float* pa = a.data<float>();
    for (int i = 0; i < 98; ++i) {
        EXPECT_NEAR(d.data<float>()[i], 3.0f * pa[i] * (3.0f * pa[i + 2] - 1.0f), 1e-4) << i;
    }
}

TEST(Primitives, Reductions) {
    te::Tensor A = te::placeholder({13, 27}, DataType::float32(), "A");
    auto k1 = te::reduce_axis(27, "k");
    auto k2 = te::reduce_axis(27, "k");
    auto k3 = te::reduce_axis(27, "k");
    auto k4 = te::reduce_axis(27, "k");
    te::Tensor S = te::compute(
        {13}, [&](PrimExpr i) { return te::sum(A(i, k1->var), {k1}); }, "S");
    te::Tensor Mx = te::compute(
        {13}, [&](PrimExpr i) { return te::max(A(i, k2->var), {k2}); }, "Mx");
    te::Tensor Mn = te::compute(
        {13}, [&](PrimExpr i) { return te::min(A(i, k3->var), {k3}); }, "Mn");
    te::Reducer sum_sq = te::comm_reducer([](PrimExpr x, PrimExpr y) { return x + y; },
                                          [](DataType t) { return make_const(t, 0); }, "sum_sq");
    te::Tensor Q = te::compute(
        {13}, [&](PrimExpr i) { return sum_sq(A(i, k4->var) * A(i, k4->var), {k4}, PrimExpr()); },
        "Q");
    te::Schedule s = te::create_schedule({S, Mx, Mn, Q});
    auto [ko, ki] = s[S].split(k1, 8);
    (void)ko;
    s[Mx].split(k2, 5);
    auto a = random_tensor({13, 27}, 5);
    auto rs = zeros({13}), rmx = zeros({13}), rmn = zeros({13}), rq = zeros({13});
    build_and_run(s, {A, S, Mx, Mn, Q}, {a, rs, rmx, rmn, rq});
    for (int i = 0; i < 13; ++i) {
        double sum = 0, sq = 0;
        float mx = -INFINITY, mn = INFINITY;
        for (int k = 0; k < 27; ++k) {
            float v = a.data<float>()[i * 27 + k];
            sum += v;
            sq += double(v) * v;
            mx = std::max(mx, v);
            mn = std::min(mn, v);
        }
        EXPECT_NEAR(rs.data<float>()[i], sum, 1e-4);
        EXPECT_EQ(rmx.data<float>()[i], mx);
        EXPECT_EQ(rmn.data<float>()[i], mn);
        EXPECT_NEAR(rq.data<float>()[i], sq, 1e-4);
    }
}

TEST(Primitives, ReductionWithCondition) {
    te::Tensor A = te::placeholder({9, 31}, DataType::float32(), "A");
    auto k = te::reduce_axis(31, "k");
    // Sum of the even columns only.
    te::Tensor S = te::compute(
        {9}, [&](PrimExpr i) { return te::sum(A(i, k->var), {k}, eq(floormod(k->var, 2), 0)); },
        "S");
    te::Schedule s = te::create_schedule({S});
    auto a = random_tensor({9, 31}, 6), r = zeros({9});
    build_and_run(s, {A, S}, {a, r});
    for (int i = 0; i < 9; ++i) {
        double sum = 0;
        for (int c = 0; c < 31; c += 2) sum += a.data<float>()[i * 31 + c];
        EXPECT_NEAR(r.data<float>()[i], sum, 1e-5);
    }
}

TEST(Primitives, PaddingWithIfThenElse) {
    // Reads outside A only under a false condition: must not touch memory there.
    te::Tensor A = te::placeholder({5, 7}, DataType::float32(), "A");
    te::Tensor P = te::compute(
        {9, 11},
        [&](PrimExpr i, PrimExpr j) {
            PrimExpr inside = i >= 2 && i < 7 && j >= 2 && j < 9;
            return te::if_then_else(inside, A(i - 2, j - 2), 0.0f);
        },
        "P");
    te::Schedule s = te::create_schedule({P});
    auto [jo, ji] = s[P].split(s[P].op_axis()[1], 4);
    s[P].vectorize(ji);
    auto a = random_tensor({5, 7}, 7), p = zeros({9, 11});
    build_and_run(s, {A, P}, {a, p});
    for (int i = 0; i < 9; ++i) {
        for (int j = 0; j < 11; ++j) {
            bool inside = i >= 2 && i < 7 && j >= 2 && j < 9;
            float ref = inside ? a.data<float>()[(i - 2) * 7 + (j - 2)] : 0.0f;
            EXPECT_EQ(p.data<float>()[i * 11 + j], ref) << i << ", " << j;
        }
    }
}

}  // namespace
}  // namespace anvil
