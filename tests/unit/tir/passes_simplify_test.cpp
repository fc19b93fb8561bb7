#include "passes_programs.h"

namespace anvil::tir::testing {
namespace {

Stmt run(const Stmt& s) {
    return simplify(s, LowerContext{});
}

TEST(Simplify, IndexArithmeticUnderLoopRanges) {
    auto A = make_buffer("A", DataType::float32(), {64});
    auto i = make_var("i"), j = make_var("j");
    PrimExpr idx = floordiv(PrimExpr(i) * 8 + j, 8) * 8 + floormod(PrimExpr(i) * 8 + j, 8);
    Stmt s = make_for(i, 0, 8, ForKind::Serial,
                      make_for(j, 0, 8, ForKind::Serial, make_store(A, 1.0f, {idx})));
    Stmt r = run(s);
    auto* st = r.as<For>()->body.as<For>()->body.as<Store>();
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(to_string(st->indices[0]), "i * 8 + j");
}

TEST(Simplify, ProvableBranchesAndUnitLoopsDisappear) {
    auto A = make_buffer("A", DataType::float32(), {16});
    auto i = make_var("i"), j = make_var("j");
    Stmt then_s = make_store(A, 1.0f, {i});
    Stmt else_s = make_store(A, 2.0f, {i});
    Stmt body = make_seq({
        make_if(likely(PrimExpr(i) < 16), then_s),   // always true
        make_if(PrimExpr(i) >= 16, then_s, else_s),  // always false: else branch
        make_if(PrimExpr(i) > 20, then_s),           // always false, no else: removed
        make_for(j, 0, 1, ForKind::Serial, make_store(A, 3.0f, {PrimExpr(i) + j})),
        make_evaluate(0),
    });
    Stmt r = run(make_for(i, 0, 16, ForKind::Serial, body));
    auto* loop = r.as<For>();
    ASSERT_NE(loop, nullptr);
    auto* seq = loop->body.as<SeqStmt>();
    ASSERT_NE(seq, nullptr);
    ASSERT_EQ(seq->seq.size(), 3u);
    EXPECT_TRUE(seq->seq[0].same_as(then_s));
    EXPECT_TRUE(seq->seq[1].same_as(else_s));
    auto* st = seq->seq[2].as<Store>();
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(to_string(st->indices[0]), "i");
    EXPECT_EQ(count_stmts(r, [](const Stmt& s) { return s.is<IfThenElse>(); }), 0);
}

// The then-branch of `if (n >= 1)` knows n >= 1, the else-branch and what follows do not; the
// parameters' dimension variables are sizes (not negative).
TEST(Simplify, BranchConditionsAndDimensionFacts) {
    auto n = make_var("n");
    auto A = make_buffer("A", DataType::float32(), {n});
    Stmt inside = make_if(PrimExpr(n) > 0, make_store(A, 1.0f, {0}));
    Stmt after = make_if(PrimExpr(n) > 0, make_store(A, 2.0f, {0}));
    Stmt s = make_seq({make_if(PrimExpr(n) >= 1, inside, inside), after,
                       make_if(PrimExpr(n) >= 0, make_store(A, 3.0f, {0}))});
    LowerContext ctx;
    ctx.params = {A};
    Stmt r = simplify(s, ctx);
    auto* seq = r.as<SeqStmt>();
    ASSERT_NE(seq, nullptr);
    ASSERT_EQ(seq->seq.size(), 3u);
    auto* branch = seq->seq[0].as<IfThenElse>();
    ASSERT_NE(branch, nullptr);
    EXPECT_TRUE(branch->then_case.is<Store>());       // n > 0 proven
    EXPECT_TRUE(branch->else_case.is<IfThenElse>());  // not proven there
    EXPECT_TRUE(seq->seq[1].is<IfThenElse>());        // nor after the branch
    EXPECT_TRUE(seq->seq[2].is<Store>());             // n >= 0: a dimension
    // Without the parameters, n may be negative.
    EXPECT_TRUE(simplify(s, LowerContext{}).as<SeqStmt>()->seq[2].is<IfThenElse>());
}

TEST(Simplify, EmptyStatementsAreRemoved) {
    auto A = make_buffer("A", DataType::float32(), {16});
    auto T = make_buffer("T", DataType::float32(), {4});
    auto i = make_var("i"), j = make_var("j");
    Stmt dead = make_for(i, 0, 16, ForKind::Serial,
                         make_allocate(T, make_if(PrimExpr(i) < 0, make_store(T, 1.0f, {0}))));
    Stmt zero = make_for(j, 0, 0, ForKind::Serial, make_store(A, 1.0f, {j}));
    Stmt kept = make_store(A, 5.0f, {3});
    Stmt r = run(make_seq({dead, zero, kept}));
    EXPECT_TRUE(r.same_as(kept));
}

TEST(Simplify, LetsOfIndexArithmeticAreInlined) {
    auto A = make_buffer("A", DataType::float32(), {32});
    auto i = make_var("i"), t = make_var("t"), x = make_var("x", DataType::float32());
    Stmt body = make_let(t, PrimExpr(i) * 2 + 0,
                         make_let(x, make_load(A, {t}),
                                  make_store(A, PrimExpr(x) * PrimExpr(x), {PrimExpr(t) + 1})));
    auto f = make_prim_func("f", {A}, make_for(i, 0, 16, ForKind::Serial, body));
    auto g = apply(f, simplify);
    // t is gone; the load stays bound once.
    EXPECT_EQ(count_stmts(g->body, [](const Stmt& s) { return s.is<LetStmt>(); }), 1);
    expect_equivalent(f, g);
}

TEST(Simplify, KeepsSemanticsOfLoweredPrograms) {
    for (int n : {8, 13}) {
        auto f = flatten_storage(make_matmul(3, n, 5, 4, ForKind::Serial), LowerContext{});
        expect_equivalent(f, apply(f, simplify));
    }
    auto s = make_split_add(0, 8, ForKind::Serial, true);
    for (int64_t n : {1, 8, 21}) expect_equivalent(s, apply(s, simplify), {n});
}

}  // namespace
}  // namespace anvil::tir::testing
