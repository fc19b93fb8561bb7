// make_const of a double into an integer type: in range it truncates like a C++ conversion; out
// of range (and NaN) it saturates, where a conversion would be undefined (found by fuzzing the
// IR text formats with UBSan: a 1e126 literal in an int32 context).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/expr.h"

namespace anvil {
namespace {

int64_t value_of(const PrimExpr& e) {
    const auto* imm = e.as<IntImm>();
    EXPECT_NE(imm, nullptr);
    return imm ? imm->value : 0;
}

TEST(MakeConst, IntegerFromDoubleTruncatesInRangeAndSaturatesOutside) {
    DataType i64 = DataType::int64();
    EXPECT_EQ(value_of(make_const(i64, 3.9)), 3);
    EXPECT_EQ(value_of(make_const(i64, -3.9)), -3);
    EXPECT_EQ(value_of(make_const(i64, 1.67e126)), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(value_of(make_const(i64, -1e300)), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(value_of(make_const(i64, 0x1p63)), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(value_of(make_const(i64, -0x1p63)), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(value_of(make_const(i64, INFINITY)), std::numeric_limits<int64_t>::max());
    EXPECT_EQ(value_of(make_const(i64, NAN)), 0);
}

}  // namespace
}  // namespace anvil
