// Every variant of the matmul walk (examples/matmul) at sizes that divide none of its tiles,
// including sizes smaller than a tile, against a double-precision reference.
#include <gtest/gtest.h>

#include "matmul_schedules.h"
#include "run_kernel.h"

namespace anvil {
namespace {

struct Size {
    int64_t M, N, K;
};

class MatmulVariants : public ::testing::TestWithParam<std::string> {};

TEST_P(MatmulVariants, MatchReferenceAtOddSizes) {
    for (Size sz : {Size{1, 1, 1}, Size{5, 7, 3}, Size{13, 33, 17}, Size{70, 65, 31}}) {
        examples::Matmul m = examples::make_matmul(GetParam(), sz.M, sz.N, sz.K);
        auto a = testing::random_tensor({sz.M, sz.K}, 11),
             b = testing::random_tensor({sz.K, sz.N}, 12);
        auto c = testing::zeros({sz.M, sz.N});
        testing::build_and_run(m.schedule, {m.A, m.B, m.C}, {a, b, c});
        for (int64_t i = 0; i < sz.M; ++i) {
            for (int64_t j = 0; j < sz.N; ++j) {
                double ref = 0;
                for (int64_t k = 0; k < sz.K; ++k) {
                    ref += double(a.data<float>()[i * sz.K + k]) * b.data<float>()[k * sz.N + j];
                }
                ASSERT_NEAR(c.data<float>()[i * sz.N + j], ref, 1e-4)
                    << GetParam() << " " << sz.M << "x" << sz.N << "x" << sz.K << " at " << i
                    << ", " << j;
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, MatmulVariants,
                         ::testing::ValuesIn(examples::matmul_variants()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace anvil
