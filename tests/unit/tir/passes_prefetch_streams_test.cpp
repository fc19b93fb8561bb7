// prefetch_streams: the stream of a register-tiled reduction loop (a packed panel) is prefetched
// a fixed distance ahead, one prefetch per cache line; other loops are left alone.
#include "ir/intrinsics.h"
#include "passes_programs.h"

namespace anvil::tir::testing {
namespace {

// The prefetch calls of a statement, printed.
std::vector<std::string> prefetches(const Stmt& s) {
    std::vector<std::string> out;
    pre_order_visit(s, [&](const Stmt& x) {
        auto* ev = x.as<Evaluate>();
        auto* call = ev ? ev->value.as<Call>() : nullptr;
        if (call && call->name == intrin::kPrefetch) out.push_back(to_string(call->args[0]));
    });
    return out;
}

// The micro-kernel of a matmul tile after vectorize_loops and unroll_loops: for p (panels),
// for k { for i unrolled { acc[i, :] += A[i, k] * B[p, k, :] } }, acc a local [rows, vb] tile.
Ref<PrimFunc> tile_kernel(int rows, int vb, int K, DataType t = DataType::float32()) {
    const int panels = 2;
    auto A = make_buffer("A", t, {rows, K});
    auto B = make_buffer("B", t, {panels, K, vb});
    auto C = make_buffer("C", t, {rows, panels * vb});
    auto acc = make_buffer("acc", t, {rows, vb}, "local");
    auto p = make_var("p"), k = make_var("k"), i = make_var("i"), j = make_var("j");
    auto i0 = make_var("i0"), j0 = make_var("j0"), i1 = make_var("i1"), j1 = make_var("j1");
    Stmt init = make_for(
        i0, 0, rows, ForKind::Unrolled,
        make_for(j0, 0, vb, ForKind::Vectorized, make_store(acc, make_const(t, 0.0), {i0, j0})));
    Stmt update =
        make_for(k, 0, K, ForKind::Serial,
                 make_for(i, 0, rows, ForKind::Unrolled,
                          make_for(j, 0, vb, ForKind::Vectorized,
                                   make_store(acc,
                                              make_load(acc, {i, j}) +
                                                  make_load(A, {i, k}) * make_load(B, {p, k, j}),
                                              {i, j}))));
    Stmt out =
        make_for(i1, 0, rows, ForKind::Serial,
                 make_for(j1, 0, vb, ForKind::Vectorized,
                          make_store(C, make_load(acc, {i1, j1}), {i1, PrimExpr(p) * vb + j1})));
    Stmt body =
        make_for(p, 0, panels, ForKind::Serial, make_allocate(acc, make_seq({init, update, out})));
    auto f = make_prim_func("tile", {A, B, C}, body);
    f = flatten_storage(f, LowerContext{});
    f = apply(f, simplify);
    f = apply(f, vectorize_loops);
    return apply(f, unroll_loops);
}

TEST(PrefetchStreams, PanelStreamIsPrefetchedPerCacheLineAhead) {
    const int K = 100;
    auto f = tile_kernel(4, 32, K);
    auto g = apply(f, prefetch_streams);
    // 32 floats are two 64-byte lines; 8 KiB ahead is 64 iterations of 128 bytes. One stream,
    // though every row of the tile loads it.
    // The index is the loads' own (int32) plus the distance in 64 bits.
    const std::string at = "B[cast<int64>(p * " + std::to_string(K * 32) + " + k * 32) + ";
    std::vector<std::string> want = {at + "2048i64]", at + "2064i64]"};
    EXPECT_EQ(prefetches(g->body), want);
    // The prefetches lead the k loop's body; the loop is otherwise unchanged.
    bool found = false;
    pre_order_visit(g->body, [&](const Stmt& s) {
        auto* loop = s.as<For>();
        if (!loop || loop->var->name != "k") return;
        auto* seq = loop->body.as<SeqStmt>();
        ASSERT_NE(seq, nullptr);
        EXPECT_TRUE(seq->seq[0].is<Evaluate>());
        found = true;
    });
    EXPECT_TRUE(found);
    // The interpreter ignores the hint (its addresses lie past B's end in the last iterations).
    expect_equivalent(f, g);
}

TEST(PrefetchStreams, NarrowStreamsGapsAndOtherLoopsAreLeftAlone) {
    // 8 floats per iteration: half a cache line, which the hardware prefetchers serve.
    EXPECT_TRUE(prefetches(apply(tile_kernel(4, 8, 64), prefetch_streams)->body).empty());
    // float64 x 8: one line per iteration, prefetched.
    auto wide = apply(tile_kernel(2, 8, 64, DataType::float64()), prefetch_streams);
    EXPECT_EQ(prefetches(wide->body).size(), 1u);

    // An elementwise loop (stores to a global buffer): not a register-tiled reduction.
    auto X = make_buffer("X", DataType::float32(), {4096});
    auto Y = make_buffer("Y", DataType::float32(), {4096});
    auto i = make_var("i");
    PrimExpr idx = make_ramp(PrimExpr(i) * 32, make_int(DataType::int32(), 1), 32);
    auto copy = make_prim_func(
        "copy", {X, Y},
        make_for(i, 0, 128, ForKind::Serial, make_store(Y, make_load(X, {idx}) * 2.0f, {idx})));
    EXPECT_TRUE(prefetches(apply(copy, prefetch_streams)->body).empty());

    // A gap: 32 lanes read every 64 elements would fetch lines never used.
    auto acc = make_buffer("acc", DataType::float32(), {32}, "local");
    auto k = make_var("k");
    PrimExpr lanes = make_ramp(make_int(DataType::int32(), 0), make_int(DataType::int32(), 1), 32);
    PrimExpr strided = make_ramp(PrimExpr(k) * 64, make_int(DataType::int32(), 1), 32);
    auto gap = make_prim_func(
        "gap", {X, Y},
        make_allocate(
            acc,
            make_seq({make_for(k, 0, 64, ForKind::Serial,
                               make_store(acc, make_load(acc, {lanes}) + make_load(X, {strided}),
                                          {lanes})),
                      make_store(Y, make_load(acc, {lanes}), {lanes})})));
    EXPECT_TRUE(prefetches(apply(gap, prefetch_streams)->body).empty());

    // GPU targets: nothing.
    LowerContext gpu;
    gpu.is_gpu = true;
    EXPECT_TRUE(prefetches(apply(tile_kernel(4, 32, 64), prefetch_streams, gpu)->body).empty());
}

// for k in [0, 64) { acc[...] += X[bases...] } over local acc, each base given with its lanes.
Ref<PrimFunc> stream_loop(const std::vector<std::pair<PrimExpr, int>>& loads, const Ref<Var>& k,
                          const Ref<Var>& let_var = {}, const PrimExpr& let_value = {}) {
    auto X = make_buffer("X", DataType::float32(), {1 << 16});
    auto Y = make_buffer("Y", DataType::float32(), {32});
    auto acc = make_buffer("acc", DataType::float32(), {32}, "local");
    PrimExpr lanes = make_ramp(make_int(DataType::int32(), 0), make_int(DataType::int32(), 1), 32);
    std::vector<Stmt> body;
    for (const auto& [base, n] : loads) {
        PrimExpr v = make_load(X, {make_ramp(base, make_int(DataType::int32(), 1), n)});
        if (n != 32) v = make_broadcast(make_load(X, {base}), 32);  // only its address matters
        body.push_back(make_store(acc, make_load(acc, {lanes}) + v, {lanes}));
    }
    Stmt loop_body = make_seq(body);
    if (let_var.defined()) loop_body = make_let(let_var, let_value, loop_body);
    return make_prim_func(
        "streams", {X, Y},
        make_allocate(acc, make_seq({make_for(k, 0, 64, ForKind::Serial, loop_body),
                                     make_store(Y, make_load(acc, {lanes}), {lanes})})));
}

TEST(PrefetchStreams, StreamsAreTheMergedIntervalsOfDistinctLoads) {
    auto k = make_var("k");
    PrimExpr k64 = PrimExpr(k) * 64;
    // The same 32 lanes loaded by two rows while the address moves by 64: a gap, however many
    // loads repeat it.
    auto dup = stream_loop({{k64, 32}, {k64, 32}}, k);
    EXPECT_TRUE(prefetches(apply(dup, prefetch_streams)->body).empty());
    // Two halves of the step, found in reverse order: one stream from the lower one, 8 KiB
    // (32 iterations of 256 bytes) ahead, 4 lines.
    auto halves = apply(stream_loop({{k64 + 32, 32}, {k64, 32}}, k), prefetch_streams);
    EXPECT_EQ(
        prefetches(halves->body),
        (std::vector<std::string>{
            "X[cast<int64>(k * 64 + 32) + 2016i64]", "X[cast<int64>(k * 64 + 32) + 2032i64]",
            "X[cast<int64>(k * 64 + 32) + 2048i64]", "X[cast<int64>(k * 64 + 32) + 2064i64]"}));
    // Two streams far apart in one buffer (two blocks of weights): each prefetched.
    PrimExpr k32 = PrimExpr(k) * 32;
    auto two = apply(stream_loop({{k32, 32}, {k32 + 4096, 32}}, k), prefetch_streams);
    EXPECT_EQ(prefetches(two->body).size(), 4u);
    // A first element from a let inside the body cannot be computed before it.
    auto t = make_var("t");
    auto let = apply(stream_loop({{PrimExpr(t), 32}}, k, t, k32), prefetch_streams);
    EXPECT_TRUE(prefetches(let->body).empty());
    // Nor one that reads memory (its index would move ahead too, unchecked).
    auto X = make_buffer("X", DataType::int32(), {64});
    auto via_load = apply(stream_loop({{k32 + make_load(X, {0}), 32}}, k), prefetch_streams);
    EXPECT_TRUE(prefetches(via_load->body).empty());
}

TEST(PrefetchStreams, BoundChecksSkipThePrefetchedAddress) {
    // The prefetch's element lies past B's end in the last 64 iterations: a hint, not an access,
    // so the checked mode adds no check for it (and the checked program runs).
    auto f = tile_kernel(4, 32, 16);
    LowerContext checked;
    checked.bound_checks = BoundChecks::all;
    checked.function_name = "tile";
    auto plain = apply(f, instrument_bound_checkers, checked);
    auto g = apply(apply(f, prefetch_streams), instrument_bound_checkers, checked);
    EXPECT_EQ(prefetches(g->body).size(), 2u);
    auto asserts = [](const Stmt& s) {
        return count_stmts(s, [](const Stmt& x) { return x.is<AssertStmt>(); });
    };
    EXPECT_EQ(asserts(g->body), asserts(plain->body));
    expect_equivalent(f, g);
}

}  // namespace
}  // namespace anvil::tir::testing
