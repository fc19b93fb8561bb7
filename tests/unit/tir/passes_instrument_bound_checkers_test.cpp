// instrument_bound_checkers on the reference interpreter: an access out of bounds fails at its
// check with a message naming the kernel, the buffer, the index and the extent, while every
// access that the generated code really makes in bounds (guarded padding reads, masked and
// nested-masked vector loads, clamped selects) passes: the pipeline with the checks computes
// exactly what it computes without them.
#include "ir/intrinsics.h"
#include "passes_programs.h"
#include "tir/parser.h"
#include "tir/printer.h"
#include "tir/structural_equal.h"

namespace anvil::tir::testing {
namespace {

LowerContext checked(const std::string& name) {
    LowerContext ctx;
    ctx.bound_checks = BoundChecks::on;
    ctx.function_name = name;
    return ctx;
}

int count_asserts(const Stmt& s) {
    return count_stmts(s, [](const Stmt& x) { return x.is<AssertStmt>(); });
}

// The driver's pipeline with the checks where the driver puts them; `simplify_checks` false
// stops before the final simplify, so every check is still there.
Ref<PrimFunc> lower_checked(const Ref<PrimFunc>& f, bool simplify_checks = true) {
    LowerContext ctx = checked(f->name);
    Ref<PrimFunc> g = flatten_storage(f, ctx);
    for (auto pass :
         {simplify, partition_loops, simplify, vectorize_loops, unroll_loops, prefetch_streams,
          lower_intrinsics, instrument_bound_checkers, reuse_storage}) {
        g = apply(g, pass, ctx);
        verify(g);
    }
    return simplify_checks ? apply(g, simplify, ctx) : g;
}

// The message of the failure running `f` on pseudo-random inputs, or "" when it runs.
std::string failure_of(const Ref<PrimFunc>& f, const std::vector<int64_t>& scalars = {}) {
    try {
        run_func(f, make_inputs(f, scalars), scalars);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "";
}

// Runs f lowered with checks (before and after the final simplify) and expects what f computes.
void expect_checked_equivalent(const Ref<PrimFunc>& f, const std::vector<int64_t>& scalars = {}) {
    Ref<PrimFunc> all = lower_checked(f, false);
    EXPECT_GT(count_asserts(all->body), 0) << print(all);
    expect_equivalent(f, all, scalars);
    expect_equivalent(f, lower_checked(f), scalars);
}

PrimExpr if_then_else(const PrimExpr& c, const PrimExpr& a, const PrimExpr& b) {
    return make_call(a.dtype(), intrin::kIfThenElse, {c, a, b});
}

TEST(InstrumentBoundCheckers, InBoundsProgramsRunUnchanged) {
    for (int n : {5, 32, 37}) expect_checked_equivalent(make_split_add(n, 8, ForKind::Vectorized));
    auto sym = make_split_add(0, 4, ForKind::Vectorized, true);
    for (int64_t n : {1, 3, 4, 29}) expect_checked_equivalent(sym, {n});
    expect_checked_equivalent(make_matmul(3, 13, 6, 4, ForKind::Vectorized));
}

TEST(InstrumentBoundCheckers, GuardedAndMaskedReadsAreCheckedOnlyWhereTheyHappen) {
    // B[i] = i in [2, 10) ? A[i - 2] : 0, vectorized: a masked load whose masked-off lanes
    // point before A; and the same with the branch doubled (a select of a clamped load).
    auto A = make_buffer("A", DataType::float32(), {8});
    auto B = make_buffer("B", DataType::float32(), {12});
    auto i = make_var("i");
    for (bool twice : {false, true}) {
        PrimExpr value = make_load(A, {i - 2});
        if (twice) value = value * 2.0f;
        for (ForKind kind : {ForKind::Vectorized, ForKind::Serial}) {
            Stmt body = make_store(B, if_then_else(i >= 2 && i < 10, value, 0.0f), {i});
            expect_checked_equivalent(
                make_prim_func("pad", {A, B}, make_for(i, 0, 12, kind, body)));
        }
    }
    // D[i] = i < 5 ? A[i] : (i < 8 ? C[i - 5] : E[i - 8]) over 12 lanes: each input is read in
    // its own lanes only (C's lanes 0-4 would lie before it).
    auto A5 = make_buffer("A", DataType::float32(), {5});
    auto C = make_buffer("C", DataType::float32(), {3});
    auto E = make_buffer("E", DataType::float32(), {4});
    auto D = make_buffer("D", DataType::float32(), {12});
    Stmt concat = make_for(
        i, 0, 12, ForKind::Vectorized,
        make_store(D,
                   if_then_else(i < 5, make_load(A5, {i}),
                                if_then_else(i < 8, make_load(C, {i - 5}), make_load(E, {i - 8}))),
                   {i}));
    expect_checked_equivalent(make_prim_func("concat", {A5, C, E, D}, concat));
}

TEST(InstrumentBoundCheckers, AConditionReadingMemoryGuardsTheChecksBelowIt) {
    // B[i] = i >= 1 ? (A[i - 1] > 0 ? A[i - 1] : 0) : 0: the inner condition itself reads A[-1]
    // for i = 0 unless the outer guard is checked first.
    auto f = parse_prim_func(R"(prim_func nested(A: float32[8], B: float32[8]) {
  for i in [0, 8) {
    B[i] = call<float32>("if_then_else", i >= 1, call<float32>("if_then_else", A[i - 1] > 0.0f, A[i - 1], 0.0f), 0.0f)
  }
})");
    expect_checked_equivalent(f);
}

TEST(InstrumentBoundCheckers, OutOfBoundsLoadNamesKernelBufferIndexAndExtent) {
    auto f = parse_prim_func(R"(prim_func shift(A: float32[10], B: float32[10]) {
  for i in [0, 10) { B[i] = A[i + 1] }
})");
    EXPECT_NE(failure_of(f).find("index 10 out of bounds [0, 10) of A"), std::string::npos)
        << "the interpreter itself should see the read";
    for (bool simplified : {false, true}) {
        EXPECT_EQ(failure_of(lower_checked(f, simplified)),
                  "interpreter: assertion: kernel shift: buffer 'A' index 10 out of bounds [0, 10) "
                  "(load)");
    }
}

TEST(InstrumentBoundCheckers, VectorAccessesReportAnIndexOutside) {
    // Lanes [4, 12) of a 10-element buffer: the highest lane is reported; lanes [-2, 6): the
    // lowest.
    auto f = parse_prim_func(R"(prim_func vec(A: float32[10], B: float32[10]) {
  B[ramp(4, 1, 8)] = broadcast(1.0f, 8)
  B[ramp(0, 1, 8)] = A[ramp(-2, 1, 8)]
})");
    Ref<PrimFunc> g = with_body(f, instrument_bound_checkers(f->body, checked("vec")));
    EXPECT_EQ(
        failure_of(g),
        "interpreter: assertion: kernel vec: buffer 'B' index 11 out of bounds [0, 10) (store)");
    auto h = parse_prim_func(R"(prim_func vec(A: float32[10], B: float32[10]) {
  B[ramp(0, 1, 8)] = A[ramp(-2, 1, 8)]
})");
    EXPECT_EQ(
        failure_of(with_body(h, instrument_bound_checkers(h->body, checked("vec")))),
        "interpreter: assertion: kernel vec: buffer 'A' index -2 out of bounds [0, 10) (load)");
    // A gather: the first lane out.
    auto gather = parse_prim_func(R"(prim_func gather(A: float32[10], B: float32[4]) {
  B[ramp(0, 1, 4)] = A[ramp(0, 1, 4) * broadcast(3, 4) + broadcast(1, 4)]
})");
    EXPECT_EQ(
        failure_of(with_body(gather, instrument_bound_checkers(gather->body, checked("gather")))),
        "interpreter: assertion: kernel gather: buffer 'A' index 10 out of bounds [0, 10) (load)");
}

TEST(InstrumentBoundCheckers, AMaskThatAdmitsALaneOutsideIsReportedAtThatLane) {
    // The guard admits i = 1, which reads A[-1]; lane 0 is masked off and not reported.
    auto f = parse_prim_func(R"(prim_func badpad(A: float32[8], B: float32[12]) {
  B[ramp(0, 1, 12)] = call<float32x12>("if_then_else", ramp(0, 1, 12) >= broadcast(1, 12) && ramp(0, 1, 12) < broadcast(10, 12), A[ramp(-2, 1, 12)], broadcast(0.0f, 12))
})");
    Ref<PrimFunc> g = with_body(f, instrument_bound_checkers(f->body, checked("badpad")));
    EXPECT_EQ(
        failure_of(g),
        "interpreter: assertion: kernel badpad: buffer 'A' index -1 out of bounds [0, 8) (load)");
}

TEST(InstrumentBoundCheckers, SymbolicExtentsAndAllocationsAreChecked) {
    auto f = parse_prim_func(R"(prim_func sym(A: float32[n, 4], B: float32[n, 4], n: int32) {
  for i in [0, n * 4) { B[i] = A[i + 4] }
})");
    EXPECT_EQ(
        failure_of(lower_checked(f), {3}),
        "interpreter: assertion: kernel sym: buffer 'A' index 12 out of bounds [0, 12) (load)");
    auto g = parse_prim_func(R"(prim_func scratch(A: float32[8], B: float32[8]) {
  allocate T: float32[4] {
    for i in [0, 8) { T[i] = A[i] }
    for i in [0, 4) { B[i] = T[i] }
  }
})");
    EXPECT_EQ(
        failure_of(lower_checked(g)),
        "interpreter: assertion: kernel scratch: buffer 'T' index 4 out of bounds [0, 4) (store)");
}

TEST(InstrumentBoundCheckers, SimplifyRemovesTheChecksItCanProve) {
    Ref<PrimFunc> g = lower_checked(make_split_add(64, 8, ForKind::Vectorized));
    EXPECT_EQ(count_asserts(g->body), 0) << print(g);
    EXPECT_GT(count_asserts(lower_checked(make_split_add(64, 8, ForKind::Vectorized), false)->body),
              0);
}

TEST(InstrumentBoundCheckers, AssertsWithMessageArgumentsPrintAndParse) {
    auto f = parse_prim_func(R"(prim_func shift(A: float32[n], B: float32[n], n: int32) {
  for i in [0, n) { B[i] = A[i + 1] }
})");
    Ref<PrimFunc> g = with_body(f, instrument_bound_checkers(f->body, checked("shift")));
    std::string text = print(g);
    EXPECT_NE(text.find("\"kernel shift: buffer 'A' index {} out of bounds [0, {}) (load)\", "
                        "cast<int64>(i + 1), cast<int64>(n))"),
              std::string::npos)
        << text;
    EXPECT_TRUE(structural_equal(parse_prim_func(text), g)) << text;
}

}  // namespace
}  // namespace anvil::tir::testing
