// rfactor schedules compiled and run against references computed here in C++: divisible and
// non-divisible splits, both factor_axis positions, vectorized and parallel loops, max, two
// reduction axes with a condition, and a replayed record. (The stages and loops rfactor makes
// are checked in tests/unit/te/schedule_rfactor_test.cpp.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "run_kernel.h"
#include "te/reduction.h"

namespace anvil {
namespace {

using testing::build_and_run;
using testing::random_tensor;
using testing::zeros;

constexpr int M = 13;

// B[i] = reduce over k of A[i, k] (sum or max).
struct RowReduce {
    te::Tensor A, B;
    Ref<IterVar> k;
    int K;
    bool is_max;
};

RowReduce row_reduce(int K, bool is_max = false) {
    RowReduce r{.K = K, .is_max = is_max};
    r.A = te::placeholder({M, K}, DataType::float32(), "A");
    r.k = te::reduce_axis(K, "k");
    r.B = te::compute(
        {M},
        [&](PrimExpr i) {
            PrimExpr x = r.A(i, r.k->var);
            return is_max ? te::max(x, {r.k}) : te::sum(x, {r.k});
        },
        "B");
    return r;
}

void check_row_reduce(const RowReduce& r, const te::Schedule& s) {
    // Negative values make a max that wrongly includes the identity or a zero visible.
    auto a = random_tensor({M, r.K}, 7, -2.0f, -0.5f), b = zeros({M});
    build_and_run(s, {r.A, r.B}, {a, b});
    const float *pa = a.data<float>(), *pb = b.data<float>();
    for (int i = 0; i < M; ++i) {
        double ref = r.is_max ? -INFINITY : 0.0;
        for (int k = 0; k < r.K; ++k) {
            double x = pa[i * r.K + k];
            ref = r.is_max ? std::max(ref, x) : ref + x;
        }
        ASSERT_NEAR(pb[i], ref, 1e-4) << "at " << i;
    }
}

// split k by `factor`, rfactor k.inner at `factor_axis`; optionally vectorize the factored axis
// of the new stage (after moving it innermost) and run the final reduction in parallel.
te::Schedule rfactor_inner(const RowReduce& r, int64_t factor, int factor_axis, bool vectorize) {
    te::Schedule s = te::create_schedule({r.B});
    auto [ko, ki] = s[r.B].split(r.k, factor);
    te::Tensor rf = s.rfactor(r.B, ki, factor_axis);
    if (vectorize) {
        auto ax = s[rf].op_axis();
        auto data = ax[factor_axis == 0 ? 1 : 0], factored = ax[factor_axis];
        s[rf].reorder({data, s[rf].op_reduce_axis()[0], factored});
        s[rf].vectorize(factored);
        s[r.B].parallel(s[r.B].op_axis()[0]);
    }
    return s;
}

TEST(Rfactor, SumDivisible) {
    RowReduce r = row_reduce(64);
    check_row_reduce(r, rfactor_inner(r, 16, 0, false));
    check_row_reduce(r, rfactor_inner(r, 16, 1, false));
}

TEST(Rfactor, SumNonDivisible) {
    RowReduce r = row_reduce(100);
    check_row_reduce(r, rfactor_inner(r, 16, 0, false));
    check_row_reduce(r, rfactor_inner(r, 16, 1, false));
}

TEST(Rfactor, VectorizedFactoredAxisAndParallelFinalReduction) {
    for (int K : {64, 100}) {
        RowReduce r = row_reduce(K);
        check_row_reduce(r, rfactor_inner(r, 16, 0, true));
        check_row_reduce(r, rfactor_inner(r, 16, 1, true));
    }
}

TEST(Rfactor, MaxNonDivisible) {
    RowReduce r = row_reduce(100, true);
    check_row_reduce(r, rfactor_inner(r, 16, 1, true));
    check_row_reduce(r, rfactor_inner(r, 16, 0, false));
}

TEST(Rfactor, OuterLoopOfNpartsSplitComputedAtTheConsumer) {
    RowReduce r = row_reduce(100);
    te::Schedule s = te::create_schedule({r.B});
    auto [ko, ki] = s[r.B].split_nparts(r.k, 3);
    te::Tensor rf = s.rfactor(r.B, ko, 1);
    s[rf].compute_at(s[r.B], s[r.B].op_axis()[0]);
    check_row_reduce(r, s);
}

TEST(Rfactor, NestedSplitFactorsTheMiddleLoop) {
    RowReduce r = row_reduce(100);
    te::Schedule s = te::create_schedule({r.B});
    auto [ko, ki] = s[r.B].split(r.k, 24);
    auto [kio, kii] = s[r.B].split(ki, 5);
    s.rfactor(r.B, kio);
    check_row_reduce(r, s);
}

TEST(Rfactor, ReplayedRecordComputesTheSame) {
    RowReduce r = row_reduce(100);
    te::Schedule s = rfactor_inner(r, 16, 1, true);
    te::Schedule replay = te::create_schedule({r.B});
    replay.apply(te::parse_record(te::print_record(s.record())));
    check_row_reduce(r, replay);
}

// B[i] = sum over k1, k2 of A[i, k1, k2] where k1 + k2 < 12.
TEST(Rfactor, OneOfTwoReductionAxesWithACondition) {
    constexpr int K1 = 9, K2 = 10;
    te::Tensor A = te::placeholder({M, K1, K2}, DataType::float32(), "A");
    auto k1 = te::reduce_axis(K1, "k1");
    auto k2 = te::reduce_axis(K2, "k2");
    te::Tensor B = te::compute(
        {M},
        [&](PrimExpr i) {
            return te::sum(A(i, k1->var, k2->var), {k1, k2}, k1->var + k2->var < 12);
        },
        "B");
    auto check = [&](const te::Schedule& s) {
        auto a = random_tensor({M, K1, K2}, 3), b = zeros({M});
        build_and_run(s, {A, B}, {a, b});
        const float *pa = a.data<float>(), *pb = b.data<float>();
        for (int i = 0; i < M; ++i) {
            double ref = 0;
            for (int x = 0; x < K1; ++x) {
                for (int y = 0; y < K2; ++y) {
                    if (x + y < 12) ref += pa[(i * K1 + x) * K2 + y];
                }
            }
            ASSERT_NEAR(pb[i], ref, 1e-4) << "at " << i;
        }
    };
    {
        te::Schedule s = te::create_schedule({B});
        auto [o, in] = s[B].split(k2, 4);
        s[B].reorder({o, k1, in});
        te::Tensor rf = s.rfactor(B, in, 1);
        auto ax = s[rf].op_axis();
        auto red = s[rf].op_reduce_axis();
        s[rf].reorder({ax[0], red[0], red[1], ax[1]});
        s[rf].vectorize(ax[1]);
        check(s);
    }
    {
        te::Schedule s = te::create_schedule({B});
        s.rfactor(B, k1);
        check(s);
    }
}

}  // namespace
}  // namespace anvil
