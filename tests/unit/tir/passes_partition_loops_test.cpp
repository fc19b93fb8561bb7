#include "passes_programs.h"
#include "tir/printer.h"

namespace anvil::tir::testing {
namespace {

int count_ifs(const Stmt& s) {
    return count_stmts(s, [](const Stmt& x) { return x.is<IfThenElse>(); });
}

TEST(PartitionLoops, ConstantSplitTail) {
    auto f = make_split_add(37, 8, ForKind::Vectorized);
    auto g = apply(f, partition_loops);
    auto* seq = g->body.as<SeqStmt>();
    ASSERT_NE(seq, nullptr);
    ASSERT_EQ(seq->seq.size(), 2u);
    auto* main = seq->seq[0].as<For>();
    auto* tail = seq->seq[1].as<For>();
    ASSERT_TRUE(main && tail);
    EXPECT_TRUE(is_const_int(main->extent, 4));
    EXPECT_TRUE(is_const_int(tail->min, 4));
    EXPECT_TRUE(is_const_int(tail->extent, 1));
    EXPECT_EQ(count_ifs(seq->seq[0]), 0);
    // The tail's vectorized loop is narrowed to its 5 live lanes, unguarded.
    EXPECT_EQ(count_ifs(seq->seq[1]), 0);
    auto* narrowed = tail->body.as<For>();
    ASSERT_NE(narrowed, nullptr);
    EXPECT_EQ(narrowed->for_kind, ForKind::Vectorized);
    EXPECT_TRUE(is_const_int(narrowed->extent, 5));
    expect_equivalent(f, g);
    // Then both parts vectorize: 8 lanes in the main part, 5 in the tail.
    auto v = apply(flatten_storage(g, LowerContext{}), vectorize_loops);
    EXPECT_EQ(count_loops(v->body, ForKind::Vectorized), 0);
    EXPECT_EQ(count_loops(v->body, ForKind::Serial), 2);
    expect_equivalent(f, v);
}

TEST(PartitionLoops, SymbolicSplit) {
    auto f = make_split_add(0, 8, ForKind::Vectorized, true);
    auto g = apply(f, partition_loops);
    ASSERT_TRUE(g->body.is<SeqStmt>());
    EXPECT_EQ(count_ifs(g->body.as<SeqStmt>()->seq[0]), 0);
    auto v = apply(apply(flatten_storage(g, LowerContext{}), simplify), vectorize_loops);
    for (int64_t n : {0, 1, 7, 8, 9, 37, 64}) {
        expect_equivalent(f, g, {n}, n > 0);
        expect_equivalent(f, v, {n}, n > 0);
    }
}

TEST(PartitionLoops, MatmulWithGuardedInnerLoops) {
    auto f = make_matmul(3, 13, 5, 4, ForKind::Vectorized);
    auto g = apply(f, partition_loops);
    // Both jo loops split; their tails' vectorized loops are narrowed, so no guard is left.
    EXPECT_EQ(count_ifs(g->body), 0);
    EXPECT_EQ(count_loops(g->body, ForKind::Vectorized), 4);
    expect_equivalent(f, g);
    auto v = apply(apply(flatten_storage(g, LowerContext{}), simplify), vectorize_loops);
    EXPECT_EQ(count_loops(v->body, ForKind::Vectorized), 0);
    expect_equivalent(f, v);
}

TEST(PartitionLoops, LowerBoundsAndOtherComparisons) {
    auto A = make_buffer("A", DataType::int32(), {40});
    auto i = make_var("i");
    auto loop = [&](const PrimExpr& cond) {
        return make_for(i, 0, 20, ForKind::Serial,
                        make_if(likely(cond), make_store(A, make_load(A, {i}) + 1, {i})));
    };
    PrimExpr iv = i;
    std::vector<PrimExpr> conds = {iv >= 5,         iv > 5,   iv * 3 + 1 <= 20, 7 > iv,
                                   0 - iv * 2 < -9, iv < 100, iv >= -3};
    for (const auto& c : conds) {
        auto f = make_prim_func("f", {A}, loop(c));
        auto g = apply(f, partition_loops);
        EXPECT_LE(count_ifs(g->body), 1) << c;
        EXPECT_FALSE(g->body.same_as(f->body)) << c;
        expect_equivalent(f, g);
    }
    // Always true on [0, 20): the guard simply goes.
    EXPECT_EQ(count_ifs(apply(make_prim_func("f", {A}, loop(iv < 100)), partition_loops)->body), 0);
}

// for f in [0, tiles * 2) parallel { tile(B = 0); for k in [start, start + 3) { tile(B += A) } }
// over 4 x 4 tiles of B[n, 8] whose rows test `row < n`, or `row + 1 <= n` with `other_form`;
// the k loop starts at 0, or at the scalar parameter s with `param_start`.
struct TileProgram {
    Ref<Var> n, f, i, j;
    Ref<Buffer> B;
    PrimExpr tiles, row, col;
    Ref<PrimFunc> fn;
};

TileProgram make_tile_program(bool other_form, bool param_start) {
    TileProgram p;
    p.n = make_var("n");
    auto sv = make_var("s");
    PrimExpr n = p.n;
    auto A = make_buffer("A", DataType::float32(), {n, 6});
    p.B = make_buffer("B", DataType::float32(), {n, 8});
    p.f = make_var("f"), p.i = make_var("i"), p.j = make_var("j");
    auto k = make_var("k");
    p.tiles = floordiv(n + 3, 4);
    p.row = floormod(PrimExpr(p.f), p.tiles) * 4 + p.i;
    p.col = floordiv(PrimExpr(p.f), p.tiles) * 4 + p.j;
    Stmt update =
        make_store(p.B, make_load(p.B, {p.row, p.col}) + make_load(A, {p.row, k}), {p.row, p.col});
    Stmt init = make_store(p.B, 0.0f, {p.row, p.col});
    PrimExpr test = other_form ? p.row + 1 <= n : p.row < n;
    auto tile = [&](Stmt s) {
        return make_for(p.i, 0, 4, ForKind::Unrolled,
                        make_for(p.j, 0, 4, ForKind::Vectorized, make_if(likely(test), s)));
    };
    PrimExpr start = param_start ? PrimExpr(sv) : PrimExpr(0);
    Stmt body = make_seq({tile(init), make_for(k, start, 3, ForKind::Serial, tile(update))});
    std::vector<Ref<Var>> scalars = {p.n};
    if (param_start) scalars.push_back(sv);
    p.fn = make_prim_func("tiles", {A, p.B}, make_for(p.f, 0, p.tiles * 2, ForKind::Parallel, body),
                          scalars);
    return p;
}

// The unswitched shape: the loop's body is one branch, tests-free when taken, both tile tests in
// the other side. Returns the branch's condition.
std::string expect_unswitched(const Ref<PrimFunc>& g) {
    auto* loop = g->body.as<For>();
    auto* branch = loop ? loop->body.as<IfThenElse>() : nullptr;
    EXPECT_NE(branch, nullptr) << print(g);
    if (!branch) return "";
    EXPECT_EQ(count_ifs(branch->then_case), 0) << print(g);
    EXPECT_EQ(count_ifs(branch->else_case), 2) << print(g);
    return to_string(branch->cond);
}

// A loop fused from 2 column panels and ceil(n / 4) row tiles, as the dense schedules write it
// for a symbolic row count: the row test floormod(f, tiles) * 4 + i < n is not linear in f, so
// no split removes it, but the k loop repeats it. The body is unswitched: full tiles run the k
// loop without tests, the tail tile keeps them.
TEST(PartitionLoops, UnswitchesATileTestThatNoSplitRemoves) {
    TileProgram p = make_tile_program(false, false);
    auto g = apply(p.fn, partition_loops);
    EXPECT_NE(expect_unswitched(g).find("floormod(f, floordiv(n + 3, 4)) * 4"), std::string::npos)
        << print(g);
    for (int64_t rows : {1, 3, 4, 5, 8, 13}) expect_equivalent(p.fn, g, {rows});
    // A loop with nothing inside to repeat the test (only a vectorized one) is left alone.
    Stmt single = make_for(
        p.f, 0, p.tiles * 2, ForKind::Serial,
        make_for(p.j, 0, 4, ForKind::Vectorized,
                 make_if(likely(p.row < PrimExpr(p.n)), make_store(p.B, 1.0f, {p.row, p.col}))));
    Stmt bound = make_let(p.i, 0, single);
    EXPECT_TRUE(partition_loops(bound, LowerContext{}).same_as(bound));
}

// The same tile with its test written another way (row + 1 <= n) and its k loop starting at a
// parameter: unswitched the same way, and computing the same for every size and start.
TEST(PartitionLoops, UnswitchKeepsExpressionGuardsAndSymbolicLoopStartsEquivalent) {
    TileProgram p = make_tile_program(true, true);
    auto g = apply(p.fn, partition_loops);
    expect_unswitched(g);
    for (int64_t rows : {1, 3, 4, 5, 8, 13}) {
        for (int64_t start : {0, 3}) expect_equivalent(p.fn, g, {rows, start});
    }
}

TEST(PartitionLoops, UnrecognisedGuardsStay) {
    auto A = make_buffer("A", DataType::int32(), {40});
    auto i = make_var("i"), t = make_var("t");
    Stmt store = make_store(A, 1, {i});
    std::vector<Stmt> loops = {
        make_for(i, 0, 20, ForKind::Serial, make_if(likely(PrimExpr(i) * i < 10), store)),
        make_for(i, 0, 20, ForKind::Serial,
                 make_let(t, make_load(A, {i}), make_if(likely(PrimExpr(i) < t), store))),
        make_for(i, 0, 20, ForKind::Serial, make_if(likely(eq(PrimExpr(i), 3)), store)),
        // A vectorized loop guarded by a term that is not a constant bound.
        make_for(i, 0, 8, ForKind::Vectorized, make_if(likely(PrimExpr(i) * i < 5), store)),
    };
    for (const auto& s : loops) EXPECT_TRUE(partition_loops(s, LowerContext{}).same_as(s));
    // A constant bound narrows a vectorized loop instead.
    Stmt narrowed = partition_loops(
        make_for(i, 0, 8, ForKind::Vectorized, make_if(likely(PrimExpr(i) < 5), store)),
        LowerContext{});
    ASSERT_TRUE(narrowed.is<For>());
    EXPECT_TRUE(is_const_int(narrowed.as<For>()->extent, 5));
    EXPECT_EQ(count_ifs(narrowed), 0);
}

}  // namespace
}  // namespace anvil::tir::testing

namespace anvil::tir::testing {
namespace {

// Two split axes guarded by one conjunction, as schedule_to_loops writes it: each loop level
// removes its own term.
TEST(PartitionLoops, ConjunctionGuards) {
    auto A = make_buffer("A", DataType::float32(), {10, 13});
    auto B = make_buffer("B", DataType::float32(), {10, 13});
    auto yo = make_var("yo"), yi = make_var("yi"), xo = make_var("xo"), xi = make_var("xi");
    PrimExpr y = PrimExpr(yo) * 4 + yi, x = PrimExpr(xo) * 8 + xi;
    Stmt store = make_store(B, make_load(A, {y, x}) * 2.0f, {y, x});
    Stmt body = make_for(yo, 0, 3, ForKind::Serial,
                         make_for(xo, 0, 2, ForKind::Serial,
                                  make_for(yi, 0, 4, ForKind::Serial,
                                           make_for(xi, 0, 8, ForKind::Vectorized,
                                                    make_if(likely(y < 10 && x < 13), store)))));
    auto f = make_prim_func("f", {A, B}, body);
    auto g = apply(f, partition_loops);
    // yo splits into [0, 2) and [2, 3), each xo into [0, 1) and [1, 2), and in the yo tail the
    // serial yi loop splits too. Guards keep only the terms they still need; in the xo tails the
    // vectorized xi loop is narrowed to its 5 live lanes instead of keeping the x term.
    std::vector<std::string> conds;
    pre_order_visit(g->body, [&](const Stmt& s) {
        if (auto* i = s.as<IfThenElse>()) conds.push_back(to_string(i->cond.as<Call>()->args[0]));
    });
    EXPECT_EQ(conds, (std::vector<std::string>{"yo * 4 + yi < 10", "yo * 4 + yi < 10"}))
        << print(g);
    expect_equivalent(f, g);
    // Partitioning again finds loops whose copies share variables; it must stay correct.
    expect_equivalent(f, apply(g, partition_loops));
    auto v = apply(apply(apply(flatten_storage(f, LowerContext{}), simplify), partition_loops),
                   simplify);
    v = apply(v, vectorize_loops);
    EXPECT_GE(count_stmts(v->body,
                          [](const Stmt& s) {
                              auto* st = s.as<Store>();
                              return st && st->value.dtype().lanes() == 8;
                          }),
              1);
    expect_equivalent(f, v);
}

}  // namespace
}  // namespace anvil::tir::testing

namespace anvil::tir::testing {
namespace {

// Reads of A under if_then_else(likely(...)) and plain reads of A, in a statement.
struct GuardedReads {
    int guarded = 0, plain = 0;
};
GuardedReads count_reads(const Stmt& s, const Ref<Buffer>& a) {
    GuardedReads n;
    struct Visitor : StmtVisitor {
        const Buffer* a;
        GuardedReads* n;
        int depth = 0;  // if_then_else calls around the current expression
        void visit_(const Call* op) override {
            bool guard = op->name == intrin::kIfThenElse;
            depth += guard;
            StmtVisitor::visit_(op);
            depth -= guard;
        }
        void visit_(const Load* op) override {
            if (op->buffer.get() == a) ++(depth ? n->guarded : n->plain);
            StmtVisitor::visit_(op);
        }
    } v;
    v.a = a.get();
    v.n = &n;
    v.visit_stmt(s);
    return n;
}

// A 3x3 window over a zero-padded H x W input read in place, as a depthwise convolution whose
// padding is inlined: B[y, x] = sum over (ry, rx) of if_then_else(likely(inside), A[..], 0),
// x tiled by 4 with the pixels unrolled inside the window loops.
Ref<PrimFunc> make_padded_window(int H, int W, int stride) {
    const int OH = (H + 2 - 3) / stride + 1, OW = (W + 2 - 3) / stride + 1;
    auto A = make_buffer("A", DataType::float32(), {H, W});
    auto B = make_buffer("B", DataType::float32(), {OH, OW});
    auto y = make_var("y"), xo = make_var("xo"), xi = make_var("xi");
    auto ry = make_var("ry"), rx = make_var("rx");
    PrimExpr x = PrimExpr(xo) * 4 + xi;
    PrimExpr iy = PrimExpr(y) * stride + ry - 1, ix = x * stride + rx - 1;
    PrimExpr inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
    PrimExpr read =
        make_call(DataType::float32(), intrin::kIfThenElse,
                  {likely(inside), make_load(A, {iy, ix}), make_const(DataType::float32(), 0.0)});
    Stmt init = make_for(xi, 0, 4, ForKind::Unrolled, make_store(B, 0.0f, {y, x}));
    Stmt update = make_for(ry, 0, 3, ForKind::Serial,
                           make_for(rx, 0, 3, ForKind::Serial,
                                    make_for(xi, 0, 4, ForKind::Unrolled,
                                             make_store(B, make_load(B, {y, x}) + read, {y, x}))));
    Stmt body = make_for(y, 0, OH, ForKind::Serial,
                         make_for(xo, 0, OW / 4, ForKind::Serial, make_seq({init, update})));
    return make_prim_func("padded_window", {A, B}, body);
}

// Expression guards: the rows and tiles away from the border read A without a test, every
// border keeps it, the result is unchanged. Pieces of one iteration (the first row, whose
// variables simplify reads as constants) drop the terms that hold there; the loops inside a
// piece are analysed over their whole range, not as the previous piece last bound them.
TEST(PartitionLoops, InlinedPaddingReadsTheInteriorWithoutTests) {
    for (int stride : {1, 2}) {
        auto f = make_padded_window(stride == 1 ? 7 : 14, stride == 1 ? 16 : 32, stride);
        auto g = apply(f, partition_loops);
        GuardedReads before = count_reads(f->body, f->params[0]);
        GuardedReads after = count_reads(g->body, g->params[0]);
        EXPECT_EQ(before.plain, 0);
        EXPECT_GT(after.plain, 0) << print(g);
        EXPECT_GT(after.guarded, 0) << print(g);
        // The interior (rows 1..OH-2, tiles 1..2) is one piece: for y in [1, ...) { for xo in
        // [1, 3) ... } whose window loops read A plainly.
        int interior_tiles = count_stmts(g->body, [&](const Stmt& s) {
            auto* loop = s.as<For>();
            if (!loop || loop->var->name != "xo" || !is_const_int(loop->min, 1)) return false;
            GuardedReads r = count_reads(s, g->params[0]);
            return r.guarded == 0 && r.plain > 0;
        });
        EXPECT_GE(interior_tiles, 1) << print(g);
        expect_equivalent(f, g);
        auto v = apply(apply(apply(flatten_storage(g, LowerContext{}), simplify), unroll_loops),
                       simplify);
        expect_equivalent(f, v);
    }
}

}  // namespace
}  // namespace anvil::tir::testing

namespace anvil::tir::testing {
namespace {

// The tail of a padded row's vector loop: the row's split guard and the padding's read guard.
// The loop narrows to the lanes the split leaves, and the read loses the term that range proves.
TEST(PartitionLoops, TailVectorLoopWithAGuardedReadNarrows) {
    auto A = make_buffer("A", DataType::float32(), {7});
    auto P = make_buffer("P", DataType::float32(), {9});
    auto i = make_var("i");
    PrimExpr x = PrimExpr(i) + 8;  // the tail of 9 padded elements in vectors of 8
    PrimExpr read = make_call(DataType::float32(), intrin::kIfThenElse,
                              {likely(x - 1 < 7 && x - 1 >= 0), make_load(A, {x - 1}),
                               make_const(DataType::float32(), 0.0)});
    Stmt loop =
        make_for(i, 0, 8, ForKind::Vectorized, make_if(likely(x < 9), make_store(P, read, {x})));
    auto f = make_prim_func("f", {A, P}, loop);
    auto g = apply(f, partition_loops);
    auto* narrowed = g->body.as<For>();
    ASSERT_NE(narrowed, nullptr) << print(g);
    EXPECT_TRUE(is_const_int(narrowed->extent, 1)) << print(g);
    EXPECT_EQ(count_ifs(g->body), 0) << print(g);
    expect_equivalent(f, g);
}

// A bound that reads memory is not moved to the loop: the body may change what it reads.
TEST(PartitionLoops, BoundsThatReadMemoryStay) {
    auto A = make_buffer("A", DataType::int32(), {1});
    auto B = make_buffer("B", DataType::int32(), {10});
    auto i = make_var("i");
    PrimExpr flag = make_call(DataType::int32(), intrin::kIfThenElse,
                              {likely(PrimExpr(i) < make_load(A, {0})), 1, 0});
    Stmt body = make_seq({make_store(B, flag, {i}), make_store(A, 3, {0})});
    auto f = make_prim_func("f", {A, B}, make_for(i, 0, 10, ForKind::Serial, body));
    auto g = apply(f, partition_loops);
    EXPECT_TRUE(g->body.same_as(f->body)) << print(g);
}

}  // namespace
}  // namespace anvil::tir::testing
