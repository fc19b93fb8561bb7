#include "passes_programs.h"

namespace anvil::tir::testing {
namespace {

int count_allocs(const Stmt& s) {
    return count_stmts(s, [](const Stmt& x) { return x.is<Allocate>(); });
}

// allocate T { T[j] = A[j] * k for j < size; B[j] += T[size - 1 - j] }
Stmt stage(const Ref<Buffer>& A, const Ref<Buffer>& B, const std::string& name, int size, float k,
           const std::string& scope = "global", DataType t = DataType::float32()) {
    auto T = make_buffer(name, t, {size}, scope);
    auto j = make_var("j"), j2 = make_var("j");
    Stmt fill =
        make_for(j, 0, size, ForKind::Serial, make_store(T, cast(t, make_load(A, {j}) * k), {j}));
    Stmt use =
        make_for(j2, 0, size, ForKind::Serial,
                 make_store(B,
                            make_load(B, {j2}) +
                                cast(DataType::float32(), make_load(T, {size - 1 - PrimExpr(j2)})),
                            {j2}));
    return make_allocate(T, make_seq({fill, use}));
}

TEST(ReuseStorage, SequentialAllocationsShareOneBuffer) {
    auto A = make_buffer("A", DataType::float32(), {16});
    auto B = make_buffer("B", DataType::float32(), {16});
    Stmt body = make_seq(
        {stage(A, B, "T1", 10, 2.0f), stage(A, B, "T2", 16, 3.0f), stage(A, B, "T3", 7, 0.5f)});
    auto f = make_prim_func("f", {A, B}, body);
    auto g = apply(f, reuse_storage);
    ASSERT_EQ(count_allocs(g->body), 1);
    auto* alloc = g->body.as<Allocate>();
    ASSERT_NE(alloc, nullptr);
    EXPECT_TRUE(is_const_int(alloc->buffer->shape[0], 16));
    expect_equivalent(f, g);
}

TEST(ReuseStorage, DifferentScopesTypesAndOverlappingLifetimesStayApart) {
    auto A = make_buffer("A", DataType::float32(), {16});
    auto B = make_buffer("B", DataType::float32(), {16});
    // T1 and T2 are nested (both live at once); T3 is local; T4 is int32; T5 can take T1's slot
    // and T6 T2's.
    Stmt nested =
        make_allocate(make_buffer("U", DataType::float32(), {4}), stage(A, B, "T2", 8, 1.0f));
    Stmt body = make_seq(
        {stage(A, B, "T1", 12, 2.0f), nested, stage(A, B, "T3", 5, 1.0f, "local"),
         stage(A, B, "T4", 9, 1.0f, "global", DataType::int32()),
         make_allocate(make_buffer("V", DataType::float32(), {3}), stage(A, B, "T6", 6, 4.0f))});
    auto f = make_prim_func("f", {A, B}, body);
    auto g = apply(f, reuse_storage);
    // Slots: {T1, U, V} and {T2, T6} shared; T3 and T4 alone.
    EXPECT_EQ(count_allocs(g->body), 4);
    expect_equivalent(f, g);
}

TEST(ReuseStorage, ABufferAllocatedInSeveralPlacesIsLeftAlone) {
    // partition_loops copies a loop body, so one Allocate's buffer is allocated at several
    // sibling places, one of them inside a loop; merging it would nest it inside itself.
    auto A = make_buffer("A", DataType::float32(), {16});
    auto B = make_buffer("B", DataType::float32(), {16});
    Stmt copy = stage(A, B, "T", 8, 2.0f);
    auto i = make_var("i");
    Stmt body = make_seq(
        {copy, make_for(i, 0, 2, ForKind::Serial, copy), copy, stage(A, B, "T2", 8, 3.0f)});
    auto f = make_prim_func("f", {A, B}, body);
    auto g = apply(f, reuse_storage);
    EXPECT_EQ(count_allocs(g->body), 4);
    expect_equivalent(f, g);
}

TEST(ReuseStorage, NothingToShareLeavesTheStatement) {
    auto A = make_buffer("A", DataType::float32(), {16});
    auto B = make_buffer("B", DataType::float32(), {16});
    Stmt body = make_seq({stage(A, B, "T1", 12, 2.0f), stage(A, B, "T3", 5, 1.0f, "local")});
    EXPECT_TRUE(reuse_storage(body, LowerContext{}).same_as(body));
}

}  // namespace
}  // namespace anvil::tir::testing
