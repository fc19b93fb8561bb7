// The passes in the driver's order on lowered-looking programs: the result must compute what
// the input computes, for sizes that divide the split factors and sizes that do not.
#include <cmath>

#include "passes_programs.h"

namespace anvil::tir::testing {
namespace {

int vector_stores(const Stmt& s, int lanes) {
    return count_stmts(s, [&](const Stmt& x) {
        auto* st = x.as<Store>();
        return st && st->value.dtype().lanes() == lanes;
    });
}

Ref<PrimFunc> run_pipeline(const Ref<PrimFunc>& f) {
    LowerContext ctx;
    Ref<PrimFunc> g = flatten_storage(f, ctx);
    for (auto pass : {simplify, partition_loops, simplify, vectorize_loops, unroll_loops,
                      prefetch_streams, lower_intrinsics, reuse_storage, simplify}) {
        g = apply(g, pass, ctx);
        verify(g);
    }
    return g;
}

TEST(PassPipeline, SplitElementwise) {
    for (int n : {5, 32, 37}) {
        auto f = make_split_add(n, 8, ForKind::Vectorized);
        auto g = run_pipeline(f);
        EXPECT_EQ(vector_stores(g->body, 8), n >= 8 ? 1 : 0) << n;
        expect_equivalent(f, g);
    }
    auto f = make_split_add(0, 4, ForKind::Vectorized, true);
    auto g = run_pipeline(f);
    EXPECT_EQ(vector_stores(g->body, 4), 1);
    for (int64_t n : {1, 3, 4, 29}) expect_equivalent(f, g, {n});
}

TEST(PassPipeline, Matmul) {
    for (int n : {8, 13}) {
        auto f = make_matmul(3, n, 6, 4, ForKind::Vectorized);
        auto g = run_pipeline(f);
        EXPECT_EQ(count_loops(g->body, ForKind::Vectorized), 0);
        expect_equivalent(f, g);
    }
}

// Unrolled inner loop around math on a staged buffer.
TEST(PassPipeline, StagedMathWithUnrolling) {
    auto A = make_buffer("A", DataType::float32(), {6, 8});
    auto B = make_buffer("B", DataType::float32(), {6, 8});
    auto T = make_buffer("T", DataType::float32(), {8}, "local");
    auto i = make_var("i"), j = make_var("j"), u = make_var("u");
    Stmt fill = make_for(
        j, 0, 8, ForKind::Vectorized,
        make_store(T, make_call(DataType::float32(), intrin::kTanh, {make_load(A, {i, j})}), {j}));
    Stmt use = make_for(
        u, 0, 8, ForKind::Unrolled,
        make_store(B, make_call(DataType::float32(), intrin::kExp, {make_load(T, {u})}), {i, u}));
    auto f = make_prim_func(
        "f", {A, B}, make_for(i, 0, 6, ForKind::Serial, make_allocate(T, make_seq({fill, use}))));
    auto g = run_pipeline(f);
    EXPECT_EQ(count_loops(g->body, ForKind::Unrolled), 0);
    // Lowered math is not bit-identical to libm: compare with a tolerance.
    auto inputs = make_inputs(f, {});
    auto a = run_func(f, inputs), b = run_func(g, inputs);
    for (size_t k = 0; k < a[1].size(); ++k) {
        EXPECT_NEAR(a[1][k], b[1][k], 1e-6 * std::fabs(a[1][k]));
    }
}

}  // namespace
}  // namespace anvil::tir::testing
