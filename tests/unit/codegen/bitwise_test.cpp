// The bit-operation intrinsics (ir/intrinsics.h) on scalar and vector code of each integer width
// and signedness against C++: and, or, xor, not, shift_left, and shift_right (arithmetic for
// signed types, logical for unsigned ones), for shift amounts in [0, bits).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "codegen_test_util.h"
#include "ir/intrinsics.h"

namespace anvil {
namespace {

using namespace codegen_test;

template <typename T>
void check_bitwise(DataType t) {
    constexpr int bits = sizeof(T) * 8;
    // Values of both signs, the extremes, and shift amounts 0 .. bits - 1 (so 8 of each).
    std::vector<T> a = {T(1),
                        T(-1),
                        T(0x5a),
                        static_cast<T>(T(1) << (bits - 1)),
                        T(-37),
                        T(37),
                        static_cast<T>(~T(0) >> 1),
                        T(6)};
    std::vector<T> b = {T(0), T(1), T(3), T(bits - 1), T(2), T(bits - 2), T(bits / 2), T(5)};
    for (int lanes : {1, 4, 8}) {
        for (const char* name : {intrin::kBitwiseAnd, intrin::kBitwiseOr, intrin::kBitwiseXor,
                                 intrin::kBitwiseNot, intrin::kShiftLeft, intrin::kShiftRight}) {
            std::string op = name;
            auto f = elementwise2("bits", t, t, t, 8, lanes, [&](PrimExpr x, PrimExpr y) {
                if (op == intrin::kBitwiseNot) return make_call(x.dtype(), op, {x});
                return make_call(x.dtype(), op, {x, y});
            });
            runtime::NDArray A = make_array(a, t), B = make_array(b, t), C = make_empty(t, {8});
            jit(f)(A, B, C);
            std::vector<T> got = C.to_vector<T>();
            for (size_t i = 0; i < a.size(); ++i) {
                T x = a[i], y = b[i], want;
                if (op == intrin::kBitwiseAnd) want = T(x & y);
                if (op == intrin::kBitwiseOr) want = T(x | y);
                if (op == intrin::kBitwiseXor) want = T(x ^ y);
                if (op == intrin::kBitwiseNot) want = T(~x);
                if (op == intrin::kShiftLeft) want = T(uint64_t(x) << y);
                if (op == intrin::kShiftRight) want = T(x >> y);  // arithmetic when T is signed
                EXPECT_EQ(got[i], want)
                    << t.str() << " x" << lanes << " " << op << "(" << +x << ", " << +y << ")";
            }
        }
    }
}

TEST(Bitwise, EveryOpOnEveryIntegerType) {
    check_bitwise<int8_t>(DataType::int_(8));
    check_bitwise<uint8_t>(DataType::uint(8));
    check_bitwise<int16_t>(DataType::int_(16));
    check_bitwise<int32_t>(DataType::int32());
    check_bitwise<uint32_t>(DataType::uint(32));
    check_bitwise<int64_t>(DataType::int64());
    check_bitwise<uint64_t>(DataType::uint(64));
}

TEST(Bitwise, AreElementwiseIntrinsics) {
    for (const char* name : {intrin::kBitwiseAnd, intrin::kBitwiseOr, intrin::kBitwiseXor,
                             intrin::kShiftLeft, intrin::kShiftRight}) {
        EXPECT_TRUE(intrin::is_bitwise(name)) << name;
        EXPECT_FALSE(intrin::is_math(name)) << name;
        EXPECT_EQ(intrin::arity(name), 2) << name;
    }
    EXPECT_EQ(intrin::arity(intrin::kBitwiseNot), 1);
    EXPECT_FALSE(intrin::is_bitwise(intrin::kExp));
}

}  // namespace
}  // namespace anvil
