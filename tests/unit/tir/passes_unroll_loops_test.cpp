#include <map>

#include "passes_programs.h"

namespace anvil::tir::testing {
namespace {

// How many times each Var object is bound by a loop or let.
std::map<const Var*, int> binding_counts(const Stmt& s) {
    std::map<const Var*, int> out;
    pre_order_visit(s, [&](const Stmt& x) {
        if (auto* f = x.as<For>()) ++out[f->var.get()];
        if (auto* l = x.as<LetStmt>()) ++out[l->var.get()];
    });
    return out;
}

// for i in [1, 4) unrolled { let t = i * 2 { allocate T[4] { for j { T[j] = A[t + j] };
//                                                            for j { B[i*4 + j] = T[j] * 2 } } } }
Ref<PrimFunc> make_nest(ForKind kind, int extent) {
    auto A = make_buffer("A", DataType::float32(), {4 * extent + 8});
    auto B = make_buffer("B", DataType::float32(), {4 * extent + 4});
    auto T = make_buffer("T", DataType::float32(), {4}, "local");
    auto i = make_var("i"), j = make_var("j"), j2 = make_var("j"), t = make_var("t");
    Stmt fill =
        make_for(j, 0, 4, ForKind::Serial, make_store(T, make_load(A, {PrimExpr(t) + j}), {j}));
    Stmt use = make_for(j2, 0, 4, ForKind::Serial,
                        make_store(B, make_load(T, {j2}) * 2.0f, {PrimExpr(i) * 4 + j2}));
    Stmt body = make_let(t, PrimExpr(i) * 2, make_allocate(T, make_seq({fill, use})));
    return make_prim_func("nest", {A, B}, make_for(i, 1, extent, kind, body));
}

TEST(UnrollLoops, CopiesGetFreshBinders) {
    auto f = make_nest(ForKind::Unrolled, 3);
    auto g = apply(f, unroll_loops);
    EXPECT_EQ(count_loops(g->body, ForKind::Unrolled), 0);
    auto* seq = g->body.as<SeqStmt>();
    ASSERT_NE(seq, nullptr);
    EXPECT_EQ(seq->seq.size(), 3u);
    for (const auto& [var, n] : binding_counts(g->body)) EXPECT_EQ(n, 1) << var->name;
    std::set<const Buffer*> allocated;
    pre_order_visit(g->body, [&](const Stmt& s) {
        if (auto* a = s.as<Allocate>()) EXPECT_TRUE(allocated.insert(a->buffer.get()).second);
    });
    EXPECT_EQ(allocated.size(), 3u);
    // The loop variable is gone: each copy has its constant.
    auto* first = seq->seq[0].as<LetStmt>();
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(to_string(first->value), "1 * 2");
    expect_equivalent(f, g);
}

TEST(UnrollLoops, NestedUnrolledLoopsFlatten) {
    auto A = make_buffer("A", DataType::int32(), {5, 3});
    auto i = make_var("i"), j = make_var("j");
    Stmt body = make_for(i, 0, 5, ForKind::Unrolled,
                         make_for(j, 0, 3, ForKind::Unrolled,
                                  make_store(A, make_load(A, {i, j}) * PrimExpr(i) + j, {i, j})));
    auto f = make_prim_func("f", {A}, body);
    auto g = apply(f, unroll_loops);
    EXPECT_EQ(count_stmts(g->body, [](const Stmt& s) { return s.is<For>(); }), 0);
    EXPECT_EQ(count_stmts(g->body, [](const Stmt& s) { return s.is<Store>(); }), 15);
    expect_equivalent(f, g);
}

TEST(UnrollLoops, LargeOrSymbolicLoopsBecomeSerial) {
    auto f = make_nest(ForKind::Unrolled, 9);
    auto g = apply(f, unroll_loops, LowerContext{.max_unroll_extent = 8});
    EXPECT_EQ(count_loops(g->body, ForKind::Unrolled), 0);
    EXPECT_TRUE(g->body.is<For>());
    expect_equivalent(f, g);
    auto n = make_var("n");
    auto A = make_buffer("A", DataType::float32(), {n});
    auto i = make_var("i");
    Stmt s = make_for(i, 0, n, ForKind::Unrolled, make_store(A, 1.0f, {i}));
    Stmt u = unroll_loops(s, LowerContext{});
    ASSERT_TRUE(u.is<For>());
    EXPECT_EQ(u.as<For>()->for_kind, ForKind::Serial);
}

}  // namespace
}  // namespace anvil::tir::testing
