#include "ir/expr_printer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace anvil {
namespace {

class ExprPrinterTest : public ::testing::Test {
protected:
    Ref<Var> a_ = make_var("a"), b_ = make_var("b"), c_ = make_var("c");
    Ref<Var> p_ = make_var("p", DataType::bool_()), q_ = make_var("q", DataType::bool_()),
             r_ = make_var("r", DataType::bool_());
    Ref<Var> f_ = make_var("f", DataType::float32());
    PrimExpr a = a_, b = b_, c = c_, p = p_, q = q_, r = r_, f = f_;
};

TEST_F(ExprPrinterTest, Precedence) {
    struct Row {
        int line;
        PrimExpr e;
        const char* want;
    };
    const Row rows[] = {
        {__LINE__, a + b * c, "a + b * c"},
        {__LINE__, (a + b) * c, "(a + b) * c"},
        {__LINE__, a - (b - c), "a - (b - c)"},
        {__LINE__, (a - b) - c, "a - b - c"},
        {__LINE__, a - (b + c), "a - (b + c)"},
        {__LINE__, a * (b / c), "a * (b / c)"},
        {__LINE__, a / b % c, "a / b % c"},
        {__LINE__, a + b < c, "a + b < c"},
        {__LINE__, eq(a < b, p), "a < b == p"},
        {__LINE__, (p && q) || r, "p && q || r"},
        {__LINE__, p && (q || r), "p && (q || r)"},
        {__LINE__, !(a < b), "!(a < b)"},
        {__LINE__, !p && q, "!p && q"},
        {__LINE__, !(p && q), "!(p && q)"},
        {__LINE__, floordiv(a + b, 4) * 4, "floordiv(a + b, 4) * 4"},
        {__LINE__, floormod(a, 4) + min(a, b) - max(b, c),
         "floormod(a, 4) + min(a, b) - max(b, c)"},
        {__LINE__, a + -1, "a + (-1)"},
        {__LINE__, select(p, a, b + 1), "select(p, a, b + 1)"},
        {__LINE__, cast(DataType::float32(), a) * 2.0f, "cast<float32>(a) * 2.0f"},
    };
    for (const Row& row : rows) EXPECT_EQ(to_string(row.e), row.want) << "line " << row.line;
}

TEST_F(ExprPrinterTest, Literals) {
    EXPECT_EQ(to_string(7), "7");
    EXPECT_EQ(to_string(-7), "-7");
    EXPECT_EQ(to_string(make_int(DataType::int64(), 7)), "7i64");
    EXPECT_EQ(to_string(make_int(DataType::int_(8), -3)), "-3i8");
    EXPECT_EQ(to_string(make_int(DataType::uint(8), 7)), "7u8");
    EXPECT_EQ(to_string(make_bool(true)), "true");
    EXPECT_EQ(to_string(make_bool(false)), "false");
    EXPECT_EQ(to_string(2.5f), "2.5f");
    EXPECT_EQ(to_string(1.0f), "1.0f");
    EXPECT_EQ(to_string(make_float(DataType::float64(), 2.5)), "2.5f64");
    EXPECT_EQ(to_string(make_float(DataType::float16(), 2.5)), "2.5f16");
    EXPECT_EQ(to_string(make_float(DataType::bfloat16(), 2.5)), "2.5bf16");
    EXPECT_EQ(to_string(make_float(DataType::float64(), 0.1)), "0.10000000000000001f64");
    EXPECT_EQ(ExprPrinter::literal(make_int(DataType::uint(32), 4294967295)), "4294967295u32");
}

TEST_F(ExprPrinterTest, CallsLoadsAndVectors) {
    Ref<Buffer> buf = make_buffer("A", DataType::float32(), {16, 16});
    EXPECT_EQ(to_string(make_load(buf, {a, b + 1})), "A[a, b + 1]");
    EXPECT_EQ(to_string(make_ramp(a * 4, 1, 4)), "ramp(a * 4, 1, 4)");
    EXPECT_EQ(to_string(make_broadcast(1.0f, 8)), "broadcast(1.0f, 8)");
    EXPECT_EQ(to_string(make_call(DataType::float32(), "exp", {f})), "exp(f)");
    EXPECT_EQ(to_string(make_call(DataType::int32(), "foo", {a, 2})), "call<int32>(\"foo\", a, 2)");
    EXPECT_EQ(to_string(make_call(DataType::int32(), "bar", {})), "call<int32>(\"bar\")");
}

TEST_F(ExprPrinterTest, NameHooks) {
    ExprPrinter printer;
    printer.var_name = [](const Var* v) { return v->name + "_1"; };
    printer.buffer_name = [](const Buffer* b) { return "%" + b->name; };
    Ref<Buffer> buf = make_buffer("B", DataType::float32(), {4});
    EXPECT_EQ(printer.str(make_load(buf, {a}) * 2.0f), "%B[a_1] * 2.0f");
}

}  // namespace
}  // namespace anvil
