// Structural equality: bound variables and buffers match by position, free ones by identity.
#include "tir/structural_equal.h"

#include <gtest/gtest.h>

#include <cmath>

namespace anvil::tir {
namespace {

const DataType f32 = DataType::float32();

Stmt fill(const Ref<Var>& i, const Ref<Buffer>& A, PrimExpr extent = 16,
          ForKind kind = ForKind::Serial) {
    return make_for(i, 0, extent, kind, make_store(A, cast(f32, i) * 2.0f, {i}));
}

TEST(TirStructuralEqual, MatchesBoundVariablesByPosition) {
    auto A = make_buffer("A", f32, {16});
    auto i = make_var("i"), j = make_var("j");
    EXPECT_TRUE(structural_equal(fill(i, A), fill(j, A)));
    EXPECT_TRUE(structural_equal(fill(i, A), fill(i, A)));
    // Swapped roles are not equal: for a { for b { A[a] } } vs for a { for b { A[b] } }.
    auto a = make_var("a"), b = make_var("b");
    Stmt x = make_for(a, 0, 4, ForKind::Serial,
                      make_for(b, 0, 4, ForKind::Serial, make_store(A, 1.0f, {a})));
    Stmt y = make_for(a, 0, 4, ForKind::Serial,
                      make_for(b, 0, 4, ForKind::Serial, make_store(A, 1.0f, {b})));
    EXPECT_FALSE(structural_equal(x, y));
    // Let variables too.
    Stmt l1 = make_let(a, 3, make_store(A, cast(f32, a), {a}));
    Stmt l2 = make_let(b, 3, make_store(A, cast(f32, b), {b}));
    EXPECT_TRUE(structural_equal(l1, l2));
    EXPECT_FALSE(structural_equal(l1, make_let(b, 4, make_store(A, cast(f32, b), {b}))));
}

TEST(TirStructuralEqual, FreeVariablesAndBuffersMustBeTheSameObjects) {
    auto A = make_buffer("A", f32, {16}), A2 = make_buffer("A", f32, {16});
    auto n = make_var("n"), n2 = make_var("n"), i = make_var("i");
    EXPECT_FALSE(structural_equal(fill(i, A), fill(i, A2)));
    EXPECT_FALSE(structural_equal(fill(i, A, n), fill(i, A, n2)));
    EXPECT_TRUE(structural_equal(fill(i, A, n), fill(i, A, n)));
    // A variable free on the left may not equal the same object bound on the right.
    Stmt left = make_for(i, 0, 4, ForKind::Serial, make_store(A, cast(f32, n), {i}));
    Stmt right = make_for(n, 0, 4, ForKind::Serial, make_store(A, cast(f32, n), {n}));
    EXPECT_FALSE(structural_equal(left, right));
}

TEST(TirStructuralEqual, ComparesEveryField) {
    auto A = make_buffer("A", f32, {16});
    auto i = make_var("i");
    Stmt base = fill(i, A);
    EXPECT_FALSE(structural_equal(base, fill(i, A, 8)));
    EXPECT_FALSE(structural_equal(base, fill(i, A, 16, ForKind::Unrolled)));
    EXPECT_FALSE(structural_equal(
        make_for(i, 0, 4, ForKind::ThreadBinding, make_evaluate(i), "threadIdx.x"),
        make_for(i, 0, 4, ForKind::ThreadBinding, make_evaluate(i), "threadIdx.y")));
    EXPECT_FALSE(structural_equal(make_assert(i < 2, "a", make_evaluate(0)),
                                  make_assert(i < 2, "b", make_evaluate(0))));
    EXPECT_FALSE(structural_equal(make_if(i < 2, make_evaluate(0)),
                                  make_if(i < 2, make_evaluate(0), make_evaluate(1))));
    EXPECT_FALSE(structural_equal(make_evaluate(make_float(f32, 1.0)),
                                  make_evaluate(make_float(DataType::float64(), 1.0))));
    EXPECT_FALSE(structural_equal(make_evaluate(make_float(f32, 0.0)),
                                  make_evaluate(make_float(f32, -0.0))));
    EXPECT_TRUE(structural_equal(make_evaluate(make_float(f32, std::nan(""))),
                                 make_evaluate(make_float(f32, std::nan("")))));
    // The text writes every NaN as `nan`, so sign and payload do not matter.
    EXPECT_TRUE(structural_equal(make_evaluate(make_float(f32, -std::nan(""))),
                                 make_evaluate(make_float(f32, std::nan("")))));
    EXPECT_FALSE(structural_equal(make_evaluate(make_call(f32, "f", {})),
                                  make_evaluate(make_call(f32, "g", {}))));
    EXPECT_FALSE(
        structural_equal(make_evaluate(make_ramp(0, 1, 4)), make_evaluate(make_ramp(0, 1, 8))));
    EXPECT_FALSE(structural_equal(make_seq({base, base}), make_seq({base, base, base})));
    // Sequences are compared as built, not flattened.
    Stmt nested = Stmt(new SeqStmt({Stmt(new SeqStmt({base, base})), base}));
    EXPECT_FALSE(structural_equal(nested, make_seq({base, base, base})));
    // Names and source locations do not matter.
    EXPECT_TRUE(
        structural_equal(make_evaluate(0, SourceLoc{.file = "a.py", .line = 3}), make_evaluate(0)));
}

// unroll_loops and partition_loops leave one Var bound by sibling loops, where parsed text has one
// Var per loop (or the other way round); bindings are scoped, so both compare equal.
TEST(TirStructuralEqual, OneVarInSiblingLoopsEqualsDistinctVars) {
    auto A = make_buffer("A", f32, {16});
    auto i = make_var("i"), j = make_var("j"), k = make_var("k");
    Stmt shared = make_seq({fill(i, A), fill(i, A)});
    Stmt distinct = make_seq({fill(j, A), fill(k, A)});
    EXPECT_TRUE(structural_equal(shared, distinct));
    EXPECT_TRUE(structural_equal(distinct, shared));
    // But the variable of the first loop is not visible in the second.
    Stmt leak = make_seq({fill(i, A), make_store(A, 0.0f, {i})});
    EXPECT_FALSE(structural_equal(leak, make_seq({fill(j, A), make_store(A, 0.0f, {j})})));
}

TEST(TirStructuralEqual, MatchesAllocatedBuffersByPositionAndShape) {
    auto i = make_var("i");
    auto T = make_buffer("T", f32, {4}, "local"), U = make_buffer("U", f32, {4}, "local");
    auto body = [&](const Ref<Buffer>& b) {
        return make_allocate(
            b, make_for(i, 0, 4, ForKind::Serial, make_store(b, make_const(b->dtype, 0), {i})));
    };
    EXPECT_TRUE(structural_equal(body(T), body(U)));
    EXPECT_FALSE(structural_equal(body(T), body(make_buffer("T", f32, {4}, "global"))));
    EXPECT_FALSE(structural_equal(body(T), body(make_buffer("T", f32, {8}, "local"))));
    EXPECT_FALSE(
        structural_equal(body(T), body(make_buffer("T", DataType::float16(), {4}, "local"))));
}

TEST(TirStructuralEqual, MatchesFunctionParametersByPosition) {
    auto make = [](const std::string& name, DataType t) {
        auto n = make_var("n");
        auto A = make_buffer("A", t, {n});
        auto i = make_var("i");
        return make_prim_func(
            name, {A}, make_for(i, 0, n, ForKind::Serial, make_store(A, make_const(t, 1), {i})),
            {n});
    };
    EXPECT_TRUE(structural_equal(make("f", f32), make("f", f32)));
    EXPECT_FALSE(structural_equal(make("f", f32), make("g", f32)));
    EXPECT_FALSE(structural_equal(make("f", f32), make("f", DataType::float64())));
}

}  // namespace
}  // namespace anvil::tir
