// Table-driven tests of the rewrite simplifier: each row is an input expression, the facts the
// analyzer is given, and the expected result (compared structurally). Rows whose input is
// scalar integer arithmetic are also evaluated at sample points satisfying the facts, so a
// wrong rule fails even when the table's expectation was written to match it.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>

#include "int_eval.h"
#include "ir/analyzer.h"
#include "ir/expr_functor.h"
#include "ir/structural_equal.h"

namespace anvil {
namespace {

struct Fact {
    Ref<Var> var;
    int64_t min = 0;
    int64_t extent = 0;
    PrimExpr value;  // defined: var == value instead of a range
};

Fact in(const Ref<Var>& v, int64_t min, int64_t extent) {
    return {v, min, extent, {}};
}
Fact is(const Ref<Var>& v, PrimExpr value) {
    return {v, 0, 0, std::move(value)};
}

struct Row {
    int line;
    PrimExpr input;
    std::vector<Fact> facts;
    PrimExpr expected;
};

PrimExpr i8(int64_t v) {
    return make_int(DataType::int_(8), v);
}
PrimExpr u8(int64_t v) {
    return make_int(DataType::uint(8), v);
}
PrimExpr u32(int64_t v) {
    return make_int(DataType::uint(32), v);
}
PrimExpr i64(int64_t v) {
    return make_int(DataType::int64(), v);
}
PrimExpr f32(double v) {
    return make_float(DataType::float32(), v);
}
PrimExpr f16(double v) {
    return make_float(DataType::float16(), v);
}
PrimExpr f64(double v) {
    return make_float(DataType::float64(), v);
}
PrimExpr bc(PrimExpr v, int lanes) {
    return make_broadcast(std::move(v), lanes);
}
PrimExpr ramp(PrimExpr b, PrimExpr s, int lanes) {
    return make_ramp(std::move(b), std::move(s), lanes);
}
PrimExpr T() {
    return make_bool(true);
}
PrimExpr F() {
    return make_bool(false);
}
// Builders that bypass the operators' literal conversion where a row needs exact node shapes.
PrimExpr bin(ExprKind k, PrimExpr a, PrimExpr b) {
    return make_binary(k, std::move(a), std::move(b));
}

using testing::Env;

bool is_int32_or_bool_scalar(const PrimExpr& e) {
    bool ok = true;
    pre_order_visit(e, [&](const PrimExpr& x) {
        DataType t = x.dtype();
        ok &= t.is_scalar() && (t == DataType::int32() || t.is_bool()) &&
              (x.is<IntImm>() || x.is<Var>() || x.is<Not>() || x.is<Select>() ||
               x->kind <= ExprKind::Or);
    });
    return ok;
}

// Compares input and result at random points that satisfy the facts.
void check_by_evaluation(const Row& row, const PrimExpr& got) {
    if (!is_int32_or_bool_scalar(row.input) || !is_int32_or_bool_scalar(got)) return;
    for (const Fact& f : row.facts) {
        if (f.value.defined() && !as_const_int(f.value)) return;  // symbolic let: skip
    }
    std::vector<const Var*> vars;
    pre_order_visit(row.input, [&](const PrimExpr& x) {
        if (auto* v = x.as<Var>()) vars.push_back(v);
    });
    std::mt19937 rng(row.line);
    for (int trial = 0; trial < 200; ++trial) {
        Env env;
        for (const Var* v : vars) {
            std::uniform_int_distribution<int64_t> any(v->dtype.is_bool() ? 0 : -1000,
                                                       v->dtype.is_bool() ? 1 : 1000);
            env[v] = any(rng);
            for (const Fact& f : row.facts) {
                if (f.var.get() != v) continue;
                if (f.value.defined()) {
                    env[v] = *as_const_int(f.value);
                } else {
                    std::uniform_int_distribution<int64_t> inside(f.min, f.min + f.extent - 1);
                    env[v] = inside(rng);
                }
            }
        }
        auto want = testing::eval(row.input, env);
        auto have = testing::eval(got, env);
        if (!want) continue;  // division by zero at this point: undefined
        ASSERT_TRUE(have.has_value()) << "line " << row.line << ": result not evaluable: " << got;
        ASSERT_EQ(*want, *have) << "line " << row.line << ": " << row.input << " simplified to "
                                << got << " differs at a sample point";
    }
}

void run_table(const std::vector<Row>& rows) {
    for (const Row& row : rows) {
        Analyzer analyzer;
        for (const Fact& f : row.facts) {
            if (f.value.defined()) {
                analyzer.bind(f.var, f.value);
            } else {
                analyzer.bind(
                    f.var, Range{make_int(f.var->dtype, f.min), make_int(f.var->dtype, f.extent)});
            }
        }
        PrimExpr got = analyzer.simplify(row.input);
        EXPECT_TRUE(structural_equal(got, row.expected))
            << "line " << row.line << ": simplify(" << row.input << ")\n   got: " << got
            << "\n  want: " << row.expected;
        PrimExpr again = analyzer.simplify(got);
        EXPECT_TRUE(structural_equal(again, got))
            << "line " << row.line << ": not a fixpoint: " << got << " -> " << again;
        check_by_evaluation(row, got);
    }
}

class SimplifyTable : public ::testing::Test {
protected:
    Ref<Var> i_ = make_var("i"), j_ = make_var("j"), k_ = make_var("k");
    Ref<Var> x_ = make_var("x"), y_ = make_var("y");
    Ref<Var> n_ = make_var("n", DataType::int64());
    Ref<Var> u_ = make_var("u", DataType::uint(32));
    Ref<Var> f_ = make_var("f", DataType::float32()), g_ = make_var("g", DataType::float32());
    Ref<Var> p_ = make_var("p", DataType::bool_()), q_ = make_var("q", DataType::bool_());
    PrimExpr i = i_, j = j_, k = k_, x = x_, y = y_, n = n_, u = u_, f = f_, g = g_, p = p_, q = q_;
};

TEST_F(SimplifyTable, ConstantFolding) {
    run_table({
        {__LINE__, PrimExpr(3) + 4, {}, 7},
        {__LINE__, PrimExpr(7) - 10, {}, -3},
        {__LINE__, PrimExpr(6) * -7, {}, -42},
        {__LINE__, i8(100) + i8(100), {}, i8(-56)},  // wraps at 8 bits
        {__LINE__, i8(-128) * i8(-1), {}, i8(-128)},
        {__LINE__, u8(200) + u8(100), {}, u8(44)},
        {__LINE__, u32(0) - u32(1), {}, u32(4294967295)},
        {__LINE__, u32(4294967295) / u32(2), {}, u32(2147483647)},  // unsigned division
        {__LINE__, u8(200) < u8(100), {}, F()},                     // unsigned comparison
        {__LINE__, PrimExpr(-7) / 2, {}, -3},                       // truncating
        {__LINE__, PrimExpr(-7) % 2, {}, -1},
        {__LINE__, floordiv(-7, 2), {}, -4},
        {__LINE__, floormod(-7, 2), {}, 1},
        {__LINE__, bin(ExprKind::Div, 7, 0), {}, bin(ExprKind::Div, 7, 0)},  // not folded
        {__LINE__, floormod(7, 0), {}, bin(ExprKind::FloorMod, 7, 0)},
        {__LINE__, min(PrimExpr(3), 5), {}, 3},
        {__LINE__, max(PrimExpr(3), 5), {}, 5},
        {__LINE__, PrimExpr(3) < 5, {}, T()},
        {__LINE__, eq(PrimExpr(3), 4), {}, F()},
        {__LINE__, i64(int64_t{1} << 40) * i64(4), {}, i64(int64_t{1} << 42)},
        {__LINE__, f32(0.1) + f32(0.2), {}, f32(static_cast<double>(0.1f + 0.2f))},
        {__LINE__, f16(1.0) + f16(0.0001), {}, f16(1.0)},  // in half precision
        {__LINE__, f16(60000.0) * f16(2.0), {}, f16(INFINITY)},
        {__LINE__, f64(1.0) / f64(3.0), {}, f64(1.0 / 3.0)},
        {__LINE__, f32(1.0) / f32(0.0), {}, bin(ExprKind::Div, f32(1.0), f32(0.0))},
        {__LINE__, max(f32(1.5), f32(NAN)), {}, f32(1.5)},  // maxnum
        {__LINE__, f32(2.0) < f32(3.0), {}, T()},
        {__LINE__, T() && F(), {}, F()},
        {__LINE__, !T(), {}, F()},
        {__LINE__, make_cast(DataType::int_(8), 300), {}, i8(44)},
        {__LINE__, make_cast(DataType::float32(), 3), {}, f32(3.0)},
        {__LINE__, make_cast(DataType::int32(), f32(-3.7)), {}, -3},
        {__LINE__, make_cast(DataType::bool_(), 5), {}, T()},
        {__LINE__, make_cast(DataType::float16(), f32(0.1)), {}, f16(0.0999755859375)},
        // Narrow integers wrap (through int32, as the code generator converts).
        {__LINE__, make_cast(DataType::int_(8), f32(1000.0)), {}, i8(-24)},
        {__LINE__, make_cast(DataType::uint(8), f32(-8.5)), {}, u8(248)},
        {__LINE__,
         make_cast(DataType::int_(16), f32(40000.0)),
         {},
         make_int(DataType::int_(16), -25536)},
        {__LINE__,
         make_cast(DataType::uint(32), f32(-1.0)),
         {},
         make_int(DataType::uint(32), 4294967295)},
        {__LINE__, make_cast(DataType::int_(8), f32(-2147483648.0)), {}, i8(0)},
        // Constants as their type holds them: float32 16777217 is 16777216; bfloat16 rounds
        // through float32, whose tie then rounds to even.
        {__LINE__, eq(f32(16777217.0), f32(16777216.0)), {}, T()},
        {__LINE__,
         make_cast(DataType::float32(), make_float(DataType::bfloat16(), 1.00390625 + 0x1p-40)),
         {},
         f32(1.0)},
        {__LINE__,
         make_cast(DataType::int_(16), f32(16777217.0)),
         {},
         make_int(DataType::int_(16), 0)},
        {__LINE__,
         make_cast(DataType::int_(8), f32(2147483648.0)),
         {},
         make_cast(DataType::int_(8), f32(2147483648.0))},
        {__LINE__,
         make_cast(DataType::int_(8), f32(3e9)),
         {},
         make_cast(DataType::int_(8), f32(3e9))},  // out of int32's range: undefined, kept
        {__LINE__,
         make_cast(DataType::int32(), f32(3e9)),
         {},
         make_cast(DataType::int32(), f32(3e9))},
    });
}

TEST_F(SimplifyTable, LinearForms) {
    run_table({
        {__LINE__, i + 0, {}, i},
        {__LINE__, i * 1, {}, i},
        {__LINE__, i * 0, {}, 0},
        {__LINE__, (i * 4 + j) - i * 4, {}, j},
        {__LINE__, i + 1 - 1, {}, i},
        {__LINE__, x * 2 + x * 3, {}, x * 5},
        {__LINE__, (i + 1) * 4, {}, i * 4 + 4},
        {__LINE__, i - i, {}, 0},
        {__LINE__, (i + j) - (j + i), {}, 0},
        {__LINE__, j - i + i * 2, {}, j + i},
        {__LINE__, PrimExpr(10) - i - 3, {}, PrimExpr(7) - i},
        {__LINE__, PrimExpr(0) - i, {}, i * -1},
        {__LINE__, i - 3 + j, {}, i + j - 3},
        {__LINE__, i * 2 + j * 2 - (i + j) * 2, {}, 0},
        {__LINE__, x * y + 1 - 1, {}, x * y},
        {__LINE__, floordiv(i, 4) * 4 + floormod(i, 4), {}, i},  // split, then fused back
        // Three axes fused and split back (n, c, h*w digits of one index).
        {__LINE__, floordiv(i, 12) * 12 + floormod(floordiv(i, 4), 3) * 4 + floormod(i, 4), {}, i},
        {__LINE__, floormod(floordiv(i, 4), 3) * 8 + floormod(i, 4) * 2, {}, floormod(i, 12) * 2},
        // ... but not into a modulus the index type cannot hold (2^32 for int32).
        {__LINE__,
         floormod(floordiv(i, 65536), 65536) * 65536 + floormod(i, 65536),
         {},
         floormod(floordiv(i, 65536), 65536) * 65536 + floormod(i, 65536)},
        {__LINE__, (n + i64(1)) - i64(1), {}, n},
        {__LINE__, (u + u32(1)) - u32(1), {}, u},
        {__LINE__, u - u32(1), {}, u - u32(1)},
        {__LINE__, u * u32(0), {}, u32(0)},
    });
}

TEST_F(SimplifyTable, FloatsAreNotReassociated) {
    run_table({
        {__LINE__, (f + 1.0f) - 1.0f, {}, (f + 1.0f) - 1.0f},
        {__LINE__, f * 0.0f, {}, f * 0.0f},  // NaN * 0 is NaN
        {__LINE__, f + 0.0f, {}, f + 0.0f},  // -0 + 0 is +0
        {__LINE__, f - f, {}, f - f},
        {__LINE__, (f + g) + 1.0f, {}, (f + g) + 1.0f},
        {__LINE__, f * 2.0f + f * 3.0f, {}, f * 2.0f + f * 3.0f},
        {__LINE__, f * 1.0f, {}, f},
        {__LINE__, f / 1.0f, {}, f},
        {__LINE__, f - 0.0f, {}, f},
        {__LINE__, f + (f32(1.0) + f32(2.0)), {}, f + 3.0f},  // constants fold inside
    });
}

TEST_F(SimplifyTable, DivisionAndModulo) {
    run_table({
        {__LINE__, floordiv(i * 8 + j, 8), {in(j_, 0, 8)}, i},
        {__LINE__, floormod(i * 8 + j, 8), {in(j_, 0, 8)}, j},
        {__LINE__, floordiv(i, 16), {in(i_, 0, 16)}, 0},
        {__LINE__, floormod(i, 16), {in(i_, 0, 16)}, i},
        {__LINE__, floordiv(i + 3, 8), {}, floordiv(i + 3, 8)},  // unknown i: nothing to do
        {__LINE__, floormod(i + 3, 8), {}, floormod(i + 3, 8)},
        {__LINE__, floordiv(i + 3, 8), {in(i_, 0, 8)}, floordiv(i + 3, 8)},  // crosses 8
        {__LINE__, floordiv(i * 8 + j, 8), {}, i + floordiv(j, 8)},
        {__LINE__, floormod(i * 8 + j + 11, 8), {}, floormod(j + 3, 8)},
        {__LINE__, floordiv(i * 8 + 11, 8), {}, i + 1},
        {__LINE__, floordiv(i * 4, 8), {}, floordiv(i, 2)},
        {__LINE__, floordiv(i * 6 + 3, 3), {}, i * 2 + 1},
        {__LINE__, floordiv(i * 8 + j * 4 + k, 4), {in(k_, 0, 4)}, i * 2 + j},
        {__LINE__, floordiv(i - 1, 8), {in(i_, 1, 8)}, 0},
        {__LINE__, floormod(i + 8, 8), {in(i_, 0, 8)}, i},
        {__LINE__, floordiv(floordiv(i, 4), 8), {}, floordiv(i, 32)},
        {__LINE__, floormod(floormod(i, 16), 8), {}, floormod(i, 8)},
        {__LINE__, floordiv(i, 1), {}, i},
        {__LINE__, floormod(i, 1), {}, 0},
        {__LINE__, floordiv(i, 0), {}, bin(ExprKind::FloorDiv, i, 0)},
        {__LINE__, floordiv(i, j), {}, floordiv(i, j)},  // symbolic divisor
        // Truncating division equals flooring for non-negative operands.
        {__LINE__, (i * 8 + j) / 8, {in(i_, 0, 4), in(j_, 0, 8)}, i},
        {__LINE__, (i * 8 + j) % 8, {in(i_, 0, 4), in(j_, 0, 8)}, j},
        {__LINE__, i / 4, {in(i_, 0, 64)}, floordiv(i, 4)},
        {__LINE__, (i - 8) / 8, {}, (i - 8) / 8},  // may be negative: must stay truncating
        {__LINE__, i % 8, {in(i_, -4, 8)}, i % 8},
        {__LINE__, floordiv(u, u32(16)), {in(u_, 0, 16)}, u32(0)},
        {__LINE__, floormod(u, u32(16)), {in(u_, 0, 16)}, u},
    });
}

TEST_F(SimplifyTable, MinMax) {
    run_table({
        {__LINE__, min(i, 100), {in(i_, 0, 16)}, i},
        {__LINE__, max(i, 100), {in(i_, 0, 16)}, 100},
        {__LINE__, min(i, 8), {in(i_, 0, 16)}, min(i, 8)},
        {__LINE__, max(x, x), {}, x},
        {__LINE__, min(x, x + 1), {}, x},
        {__LINE__, max(x - 1, x), {}, x},
        {__LINE__, min(min(x, 5), 3), {}, min(x, 3)},
        {__LINE__, max(max(x, 5), 3), {}, max(x, 5)},
        {__LINE__, min(x, y), {}, min(x, y)},
        {__LINE__, min(i * 4 + j, i * 4 + 4), {in(j_, 0, 4)}, i * 4 + j},
        {__LINE__, min(f, f), {}, f},
        {__LINE__, min(f, g), {}, min(f, g)},
        {__LINE__, max(u, u32(0)), {}, u},
    });
}

TEST_F(SimplifyTable, Comparisons) {
    run_table({
        {__LINE__, i < 16, {in(i_, 0, 16)}, T()},
        {__LINE__, i < 15, {in(i_, 0, 16)}, i < 15},
        // A floor quotient against a constant: the dividend against the block's edge.
        {__LINE__, floordiv(i, 3025) < 64, {}, i < 193600},
        {__LINE__, floordiv(i, 4) <= 2, {}, i < 12},
        {__LINE__, PrimExpr(2) < floordiv(i, 4), {}, PrimExpr(12) <= i},
        {__LINE__, PrimExpr(2) <= floordiv(i, 4), {}, PrimExpr(8) <= i},
        {__LINE__, floordiv(i, -4) < 2, {}, floordiv(i, -4) < 2},  // negative divisor: kept
        {__LINE__, i >= 0, {in(i_, 0, 16)}, T()},
        {__LINE__, i > 20, {in(i_, 0, 16)}, F()},
        {__LINE__, eq(i, 20), {in(i_, 0, 16)}, F()},
        {__LINE__, ne(i, 20), {in(i_, 0, 16)}, T()},
        {__LINE__, x < x + 1, {}, T()},
        {__LINE__, eq(x, x), {}, T()},
        {__LINE__, x + 1 < y + 1, {}, x < y},
        {__LINE__, i * 4 + j < i * 4 + 8, {}, j < 8},
        {__LINE__, x > y, {}, y < x},
        {__LINE__, x >= y, {}, y <= x},
        {__LINE__, i * 8 + j < 64, {in(i_, 0, 8), in(j_, 0, 8)}, T()},
        {__LINE__, eq(f, f), {}, eq(f, f)},  // NaN != NaN
        {__LINE__, f < f, {}, F()},
        {__LINE__, f <= f, {}, f <= f},
        {__LINE__, u < u32(0), {}, F()},
    });
}

TEST_F(SimplifyTable, Logic) {
    run_table({
        {__LINE__, p && T(), {}, p},
        {__LINE__, p && F(), {}, F()},
        {__LINE__, p || T(), {}, T()},
        {__LINE__, p || F(), {}, p},
        {__LINE__, p && p, {}, p},
        {__LINE__, p && !p, {}, F()},
        {__LINE__, p || !p, {}, T()},
        {__LINE__, !(x < y), {}, y <= x},
        {__LINE__, !(x <= y), {}, y < x},
        {__LINE__, !eq(x, y), {}, ne(x, y)},
        {__LINE__, !!p, {}, p},
        {__LINE__, !(f < g), {}, !(f < g)},  // NaN: not g <= f
        {__LINE__, p && q, {}, p && q},
        {__LINE__, (i < 16) && p, {in(i_, 0, 16)}, p},
        {__LINE__, select(T(), x, y), {}, x},
        {__LINE__, select(F(), x, y), {}, y},
        {__LINE__, select(p, x, x), {}, x},
        {__LINE__, select(i < 16, x, y), {in(i_, 0, 16)}, x},
        {__LINE__, select(p, x + 1 - 1, y), {}, select(p, x, y)},
    });
}

TEST_F(SimplifyTable, VectorsAndCasts) {
    Ref<Buffer> ibuf = make_buffer("A", DataType::int32(), {64});
    Ref<Buffer> fbuf = make_buffer("B", DataType::float32(), {64});
    PrimExpr vload = make_load(ibuf, {ramp(i * 4, 1, 4)});
    PrimExpr fload = make_load(fbuf, {ramp(i * 4, 1, 4)});
    run_table({
        {__LINE__, bc(x, 4) + bc(y, 4), {}, bc(x + y, 4)},
        {__LINE__, bc(3, 4) + bc(4, 4), {}, bc(7, 4)},
        {__LINE__, ramp(x, 1, 4) + bc(y, 4), {}, ramp(x + y, 1, 4)},
        {__LINE__, bc(y, 4) + ramp(x, 1, 4), {}, ramp(y + x, 1, 4)},
        {__LINE__, ramp(x, 1, 4) + ramp(y, 2, 4), {}, ramp(x + y, 3, 4)},
        {__LINE__, ramp(x, 1, 4) - bc(x, 4), {}, ramp(0, 1, 4)},
        {__LINE__, ramp(x, 1, 4) * bc(2, 4), {}, ramp(x * 2, 2, 4)},
        {__LINE__, ramp(x, 2, 4) - ramp(y, 2, 4), {}, bc(x - y, 4)},
        {__LINE__, ramp(x, 0, 4), {}, bc(x, 4)},
        {__LINE__, bc(f, 4) + bc(f32(1.0), 4), {}, bc(f + 1.0f, 4)},
        {__LINE__, ramp(f, f32(1.0), 4) + bc(g, 4), {}, ramp(f, f32(1.0), 4) + bc(g, 4)},
        {__LINE__, floordiv(ramp(i * 8, 1, 8), bc(8, 8)), {}, bc(i, 8)},
        {__LINE__, floormod(ramp(i * 8, 1, 8), bc(8, 8)), {}, ramp(0, 1, 8)},
        {__LINE__,
         floordiv(ramp(i * 8 + 4, 1, 8), bc(8, 8)),
         {},
         floordiv(ramp(i * 8 + 4, 1, 8), bc(8, 8))},  // lanes straddle two quotients
        // 16 lanes from a multiple of 16 stay in one block of 64, whatever x is.
        {__LINE__, floordiv(ramp(x * 16, 1, 16), bc(64, 16)), {}, bc(floordiv(x, 4), 16)},
        {__LINE__,
         floormod(ramp(x * 16 + 32, 1, 16), bc(64, 16)),
         {},
         ramp(floormod(x * 16 + 32, 64), 1, 16)},
        {__LINE__,
         floordiv(ramp(x * 16 + 8, 1, 16), bc(64, 16)),
         {},
         floordiv(ramp(x * 16 + 8, 1, 16), bc(64, 16))},  // the lanes may cross a block
        // The vectorizer's clamp of an index into a buffer of 384: gone where every lane is in
        // bounds, its lower half only where the ramp may overrun.
        {__LINE__,
         max(min(ramp(i * 32, 1, 32), bc(383, 32)), bc(0, 32)),
         {in(i_, 0, 12)},
         ramp(i * 32, 1, 32)},
        {__LINE__,
         max(min(ramp(i * 32, 1, 32), bc(383, 32)), bc(0, 32)),
         {in(i_, 0, 13)},
         min(ramp(i * 32, 1, 32), bc(383, 32))},
        // The other operand where it is the smaller (larger) in every lane.
        {__LINE__, min(ramp(i * 32 + 384, 1, 32), bc(383, 32)), {in(i_, 0, 12)}, bc(383, 32)},
        {__LINE__, max(ramp(i * 32, 1, 32), bc(-1, 32)), {in(i_, 0, 12)}, ramp(i * 32, 1, 32)},
        {__LINE__, bc(x, 4) < bc(y, 4), {}, bc(x < y, 4)},
        {__LINE__, vload + bc(0, 4), {}, vload},
        {__LINE__, vload * bc(1, 4), {}, vload},
        {__LINE__, vload * bc(0, 4), {}, vload * bc(0, 4)},  // not worth a rule; kept exact
        {__LINE__, fload * bc(1.0f, 4), {}, fload},
        {__LINE__, fload + bc(0.0f, 4), {}, fload + bc(0.0f, 4)},  // -0 + 0 is +0
        {__LINE__, make_cast(DataType::int32(), i), {}, i},
        {__LINE__, make_cast(DataType::float_(32, 4), bc(3, 4)), {}, bc(f32(3.0), 4)},
        {__LINE__, make_cast(DataType::int64(), i + 0), {}, make_cast(DataType::int64(), i)},
    });
}

TEST_F(SimplifyTable, Facts) {
    run_table({
        {__LINE__, x + 1, {is(x_, 5)}, 6},
        {__LINE__, i * 2, {in(i_, 3, 1)}, 6},  // a one-point range is a constant
        {__LINE__, x + y, {is(y_, x + 1)}, x * 2 + 1},
        {__LINE__, floordiv(i * 16 + j * 4 + k, 16), {in(j_, 0, 4), in(k_, 0, 4)}, i},
        {__LINE__, floormod(i * 16 + j * 4 + k, 16), {in(j_, 0, 4), in(k_, 0, 4)}, j * 4 + k},
        {__LINE__, floordiv(floormod(i * 16 + j * 4 + k, 16), 4), {in(j_, 0, 4), in(k_, 0, 4)}, j},
    });
}

}  // namespace
}  // namespace anvil
