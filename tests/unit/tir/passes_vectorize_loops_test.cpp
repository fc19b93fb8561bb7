#include "ir/intrinsics.h"
#include "passes_programs.h"

namespace anvil::tir::testing {
namespace {

Ref<PrimFunc> vectorize(const Ref<PrimFunc>& f) {
    return apply(f, vectorize_loops);
}

// Loads and stores of `lanes` lanes whose index is a ramp with stride 1.
int count_ramp_accesses(const Stmt& s, int lanes) {
    int n = 0;
    auto is_ramp = [&](const PrimExpr& i) {
        auto* r = i.as<Ramp>();
        return r && r->lanes == lanes && is_one(r->stride);
    };
    visit_exprs(s, [&](const PrimExpr& e) {
        if (auto* l = e.as<Load>()) n += is_ramp(l->indices.back()) ? 1 : 0;
    });
    n += count_stmts(s, [&](const Stmt& x) {
        auto* st = x.as<Store>();
        return st && is_ramp(st->indices.back()) && st->value.dtype().lanes() == lanes;
    });
    return n;
}

TEST(VectorizeLoops, ElementwiseBecomesRampAccesses) {
    auto f = flatten_storage(make_split_add(64, 8, ForKind::Vectorized), LowerContext{});
    auto g = vectorize(f);
    EXPECT_EQ(count_loops(g->body, ForKind::Vectorized), 0);
    EXPECT_EQ(count_loops(g->body, ForKind::Serial), 1);  // only the outer loop
    EXPECT_EQ(count_ramp_accesses(g->body, 8), 3);        // two loads, one store
    expect_equivalent(f, g);
}

TEST(VectorizeLoops, GuardedBodyFallsBackToSerial) {
    // 37 is not a multiple of 8: the guard is a vector condition, so the loop stays scalar.
    auto f = flatten_storage(make_split_add(37, 8, ForKind::Vectorized), LowerContext{});
    auto g = vectorize(f);
    EXPECT_EQ(count_loops(g->body, ForKind::Vectorized), 0);
    EXPECT_EQ(count_loops(g->body, ForKind::Serial), 2);
    expect_equivalent(f, g);
    auto s = flatten_storage(make_split_add(0, 4, ForKind::Vectorized, true), LowerContext{});
    for (int64_t n : {1, 13, 16}) expect_equivalent(s, vectorize(s), {n});
}

TEST(VectorizeLoops, ReductionInsideVectorizedLoop) {
    auto f = flatten_storage(make_matmul(5, 16, 7, 8, ForKind::Vectorized), LowerContext{});
    auto g = vectorize(f);
    EXPECT_EQ(count_loops(g->body, ForKind::Vectorized), 0);
    // init store + (load C, load B, store C); the A load is scalar and broadcast.
    EXPECT_EQ(count_ramp_accesses(g->body, 8), 4);
    expect_equivalent(f, g);
}

TEST(VectorizeLoops, InnerLoopWithInvariantBoundsStaysALoop) {
    // for i vectorized { for k { C[i] = C[i] + A[i * 5 + k] } }: the k loop keeps its shape and
    // the A access becomes a strided ramp.
    auto A = make_buffer("A", DataType::float32(), {30});
    auto C = make_buffer("C", DataType::float32(), {6});
    auto i = make_var("i"), k = make_var("k");
    Stmt body = make_for(
        i, 0, 6, ForKind::Vectorized,
        make_for(k, 0, 5, ForKind::Serial,
                 make_store(C, make_load(C, {i}) + make_load(A, {PrimExpr(i) * 5 + k}), {i})));
    auto f = make_prim_func("rowsum", {A, C}, body);
    auto g = vectorize(f);
    ASSERT_EQ(count_loops(g->body, ForKind::Serial), 1);
    auto* loop = g->body.as<For>();
    ASSERT_NE(loop, nullptr);
    auto* st = loop->body.as<Store>();
    ASSERT_NE(st, nullptr);
    EXPECT_EQ(st->value.dtype(), DataType::float32().with_lanes(6));
    bool strided = false;
    visit_exprs(g->body, [&](const PrimExpr& e) {
        auto* l = e.as<Load>();
        auto* r = l ? l->indices[0].as<Ramp>() : nullptr;
        strided |= r && is_const_int(r->stride, 5);
    });
    EXPECT_TRUE(strided);
    expect_equivalent(f, g);
}

TEST(VectorizeLoops, MathCallsSelectsAndCastsBecomeVectors) {
    auto A = make_buffer("A", DataType::float32(), {12});
    auto B = make_buffer("B", DataType::int32(), {12});
    auto i = make_var("i");
    PrimExpr a = make_load(A, {i});
    PrimExpr v = make_call(DataType::float32(), intrin::kExp, {a}) +
                 select(PrimExpr(i) < 5, a, 1.0f) * cast(DataType::float32(), i);
    Stmt body = make_for(i, 0, 12, ForKind::Vectorized,
                         make_store(B, cast(DataType::int32(), v * 10.0f), {i}));
    auto f = make_prim_func("f", {A, B}, body);
    auto g = vectorize(f);
    EXPECT_EQ(count_stmts(g->body, [](const Stmt& s) { return s.is<For>(); }), 0);
    bool vector_exp = false;
    visit_exprs(g->body, [&](const PrimExpr& e) {
        auto* c = e.as<Call>();
        vector_exp |= c && c->name == intrin::kExp && c->dtype.lanes() == 12;
    });
    EXPECT_TRUE(vector_exp);
    expect_equivalent(f, g);
}

TEST(VectorizeLoops, LetsOfVectors) {
    auto A = make_buffer("A", DataType::float32(), {16});
    auto B = make_buffer("B", DataType::float32(), {16});
    auto i = make_var("i");
    // A vector let used in arithmetic vectorizes.
    auto t = make_var("t", DataType::float32());
    Stmt ok = make_for(i, 0, 16, ForKind::Vectorized,
                       make_let(t, make_load(A, {i}) * 2.0f, make_store(B, PrimExpr(t) + t, {i})));
    auto f = make_prim_func("f", {A, B}, ok);
    auto g = vectorize(f);
    EXPECT_EQ(count_loops(g->body, ForKind::Serial), 0);
    expect_equivalent(f, g);
    // A vector let used as an index falls back to a serial loop.
    auto j = make_var("j");
    Stmt bad = make_for(i, 0, 16, ForKind::Vectorized,
                        make_let(j, 15 - PrimExpr(i), make_store(B, make_load(A, {j}), {i})));
    auto f2 = make_prim_func("f2", {A, B}, bad);
    auto g2 = vectorize(f2);
    EXPECT_EQ(count_loops(g2->body, ForKind::Serial), 1);
    expect_equivalent(f2, g2);
}

TEST(VectorizeLoops, UnvectorizableBodiesStaySerial) {
    auto A = make_buffer("A", DataType::float32(), {8});
    auto B = make_buffer("B", DataType::float32(), {8});
    auto i = make_var("i");
    // A store to a loop-invariant address: every iteration writes B[0] in turn.
    Stmt invariant = make_for(i, 0, 8, ForKind::Vectorized,
                              make_store(B, make_load(B, {0}) + make_load(A, {i}), {0}));
    // A call that is not an elementwise intrinsic.
    Stmt external = make_for(
        i, 0, 8, ForKind::Vectorized,
        make_store(B, make_call(DataType::float32(), "my_func", {make_load(A, {i})}), {i}));
    for (const Stmt& s : {invariant, external}) {
        Stmt v = vectorize_loops(s, LowerContext{});
        EXPECT_EQ(count_loops(v, ForKind::Vectorized), 0);
        EXPECT_EQ(count_loops(v, ForKind::Serial), 1);
    }
    auto f = make_prim_func("f", {A, B}, invariant);
    expect_equivalent(f, vectorize(f));
}

TEST(VectorizeLoops, PaddingIfThenElseKeepsItsGuardOrClampsItsLoads) {
    // B[i] = i in [2, 10) ? A[i - 2] : 0: lanes outside the guard would read A out of bounds.
    auto A = make_buffer("A", DataType::float32(), {8});
    auto B = make_buffer("B", DataType::float32(), {12});
    auto i = make_var("i");
    auto pad = [&](PrimExpr value) {
        return make_for(
            i, 0, 12, ForKind::Vectorized,
            make_store(B,
                       make_call(DataType::float32(), intrin::kIfThenElse,
                                 {i >= 2 && i < 10, value, make_float(DataType::float32(), 0.0)}),
                       {i}));
    };
    auto count = [](const Stmt& v) {
        struct {
            int guarded = 0, selects = 0, clamped = 0, ramps = 0;
        } n;
        visit_exprs(v, [&](const PrimExpr& e) {
            if (auto* c = e.as<Call>(); c && c->name == intrin::kIfThenElse) {
                n.guarded += c->args[0].dtype().lanes() == 12;
            }
            n.selects += e.is<Select>() && e.dtype().lanes() == 12;
            if (auto* l = e.as<Load>()) {
                n.clamped += l->indices[0].is<Max>();
                n.ramps += l->indices[0].is<Ramp>();
            }
        });
        return n;
    };
    // A guarded load stays guarded, per lane, with its contiguous index: the code generator
    // masks it.
    Stmt v = vectorize_loops(pad(make_load(A, {i - 2})), LowerContext{});
    EXPECT_EQ(count_loops(v, ForKind::Serial) + count_loops(v, ForKind::Vectorized), 0);
    auto n = count(v);
    EXPECT_EQ(n.guarded, 1);
    EXPECT_EQ(n.ramps, 1);
    EXPECT_EQ(n.clamped, 0);
    auto f = make_prim_func("f", {A, B}, pad(make_load(A, {i - 2})));
    expect_equivalent(f, vectorize(f));
    // Any other guarded branch is evaluated for every lane, its loads clamped into bounds.
    PrimExpr twice = make_load(A, {i - 2}) * make_float(DataType::float32(), 2.0);
    v = vectorize_loops(pad(twice), LowerContext{});
    n = count(v);
    EXPECT_EQ(n.selects, 1);
    EXPECT_EQ(n.clamped, 1);
    auto g = make_prim_func("g", {A, B}, pad(twice));
    expect_equivalent(g, vectorize(g));
    // A branch that may trap where its guard is false (a division by a loaded value) stays
    // scalar.
    auto D = make_buffer("D", DataType::int32(), {8});
    Stmt div = pad(make_cast(DataType::float32(),
                             floordiv(make_int(DataType::int32(), 7), make_load(D, {i - 2}))));
    Stmt sv = vectorize_loops(div, LowerContext{});
    EXPECT_EQ(count_loops(sv, ForKind::Serial), 1);
}

TEST(VectorizeLoops, UniformGuardBranchesWithoutClamping) {
    // B[j, i] = j < 3 ? A[j, i] : 0 with i vectorized: the guard is the same in every lane, so
    // the vector code branches on it and A's load stays a plain contiguous one (rows 3 and 4 of
    // A do not exist).
    auto A = make_buffer("A", DataType::float32(), {3, 8});
    auto B = make_buffer("B", DataType::float32(), {5, 8});
    auto i = make_var("i"), j = make_var("j");
    Stmt loop = make_for(j, 0, 5, ForKind::Serial,
                         make_for(i, 0, 8, ForKind::Vectorized,
                                  make_store(B,
                                             make_call(DataType::float32(), intrin::kIfThenElse,
                                                       {j < 3, make_load(A, {j, i}),
                                                        make_float(DataType::float32(), 0.0)}),
                                             {j, i})));
    Stmt v = vectorize_loops(loop, LowerContext{});
    int uniform = 0, clamped = 0;
    visit_exprs(v, [&](const PrimExpr& e) {
        if (auto* c = e.as<Call>(); c && c->name == intrin::kIfThenElse) {
            uniform += c->args[0].dtype().is_scalar() && c->dtype.lanes() == 8;
        }
        if (auto* l = e.as<Load>()) clamped += l->indices.back().is<Max>();
    });
    EXPECT_EQ(uniform, 1);
    EXPECT_EQ(clamped, 0);
    auto f = make_prim_func("f", {A, B}, loop);
    expect_equivalent(f, vectorize(f));
}

TEST(VectorizeLoops, ConcatenationMasksBothLoads) {
    // C[i] = i < 5 ? A[i] : B[i - 5]: each load reads only its own lanes, neither is clamped.
    auto A = make_buffer("A", DataType::float32(), {5});
    auto B = make_buffer("B", DataType::float32(), {7});
    auto C = make_buffer("C", DataType::float32(), {12});
    auto i = make_var("i");
    Stmt loop = make_for(i, 0, 12, ForKind::Vectorized,
                         make_store(C,
                                    make_call(DataType::float32(), intrin::kIfThenElse,
                                              {i < 5, make_load(A, {i}), make_load(B, {i - 5})}),
                                    {i}));
    Stmt v = vectorize_loops(loop, LowerContext{});
    int ramps = 0, clamped = 0;
    visit_exprs(v, [&](const PrimExpr& e) {
        if (auto* l = e.as<Load>()) {
            ramps += l->indices[0].is<Ramp>();
            clamped += l->indices[0].is<Max>();
        }
    });
    EXPECT_EQ(ramps, 2);
    EXPECT_EQ(clamped, 0);
    auto f = make_prim_func("f", {A, B, C}, loop);
    expect_equivalent(f, vectorize(f));
}

TEST(VectorizeLoops, ConcatenationOfThreeReadsEachInputInItsOwnLanes) {
    // D[i] = i < 5 ? A[i] : (i < 8 ? B[i - 5] : C[i - 8]) over 12 lanes: B is shorter than a
    // vector, so the inner guard alone would let B's load reach before B (lanes 0-4, which the
    // outer guard gives to A). The interpreter fails on any such read.
    auto A = make_buffer("A", DataType::float32(), {5});
    auto B = make_buffer("B", DataType::float32(), {3});
    auto C = make_buffer("C", DataType::float32(), {4});
    auto D = make_buffer("D", DataType::float32(), {12});
    auto i = make_var("i");
    auto ite = [](PrimExpr c, PrimExpr a, PrimExpr b) {
        return make_call(DataType::float32(), intrin::kIfThenElse, {c, a, b});
    };
    Stmt loop = make_for(i, 0, 12, ForKind::Vectorized,
                         make_store(D,
                                    ite(i < 5, make_load(A, {i}),
                                        ite(i < 8, make_load(B, {i - 5}), make_load(C, {i - 8}))),
                                    {i}));
    auto f = make_prim_func("f", {A, B, C, D}, loop);
    expect_equivalent(f, vectorize(f));
}

TEST(VectorizeLoops, ExtentOneLoopIsSubstituted) {
    auto f = flatten_storage(make_split_add(9, 1, ForKind::Vectorized), LowerContext{});
    auto g = vectorize(f);
    EXPECT_EQ(count_loops(g->body, ForKind::Serial), 1);
    expect_equivalent(f, g);
}

}  // namespace
}  // namespace anvil::tir::testing
