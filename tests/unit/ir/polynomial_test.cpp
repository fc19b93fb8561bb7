// Proving symbolic shape expressions equal: the linear simplifier, then polynomial comparison.
#include "ir/polynomial.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(Polynomial, ProvesProductsOfDimensionsEqual) {
    auto n = make_var("n", DataType::int64()), seq = make_var("seq", DataType::int64());
    auto c = [](int64_t v) { return make_int(DataType::int64(), v); };
    PrimExpr a = PrimExpr(seq) * PrimExpr(n) * c(32);
    PrimExpr b = PrimExpr(seq) * (PrimExpr(n) * c(2)) * c(16);
    EXPECT_TRUE(provably_equal(a, b));
    EXPECT_TRUE(provably_equal((PrimExpr(n) + c(1)) * (PrimExpr(n) - c(1)),
                               PrimExpr(n) * PrimExpr(n) - c(1)));
    // Not proven: different, or outside the polynomials (division).
    EXPECT_FALSE(provably_equal(a, PrimExpr(seq) * PrimExpr(n) * c(31)));
    EXPECT_FALSE(provably_equal(floordiv(PrimExpr(n) * PrimExpr(seq), c(2)), PrimExpr(n)));
    EXPECT_FALSE(as_polynomial(floordiv(PrimExpr(n), c(2))).has_value());
    // An int32 twin under a cast is the same variable.
    EXPECT_TRUE(provably_equal(cast(DataType::int64(), cast(DataType::int32(), n)) * c(2),
                               PrimExpr(n) + PrimExpr(n)));
}

}  // namespace
}  // namespace anvil
