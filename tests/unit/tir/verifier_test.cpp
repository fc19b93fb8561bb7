// The loop-IR verifier: accepts valid IR, and names each class of broken invariant.
#include "tir/verifier.h"

#include <gtest/gtest.h>

#include "ir/intrinsics.h"
#include "support/error.h"
#include "tir/parser.h"

namespace anvil::tir {
namespace {

const DataType f32 = DataType::float32();

// Verifies `f` expecting an InternalError whose message contains every piece.
void expect_invalid(const Ref<PrimFunc>& f, std::initializer_list<const char*> pieces) {
    try {
        verify(f);
        ADD_FAILURE() << "verify accepted an invalid function";
    } catch (const InternalError& e) {
        std::string msg = e.what();
        for (const char* p : pieces) {
            EXPECT_NE(msg.find(p), std::string::npos) << "missing `" << p << "` in: " << msg;
        }
    }
}

TEST(TirVerifier, AcceptsValidIR) {
    EXPECT_NO_THROW(verify(parse_prim_func(R"(
prim_func ok(A: float32[n, 16], B: float32[16], n: int32) {
  for i in [0, n) parallel {
    allocate T: float32[16] local {
      for j in [0, 16) vectorized { T[j] = A[i, j] }
      for j in [0, 4) unrolled { B[ramp(j * 4, 1, 4)] = T[ramp(j * 4, 1, 4)] }
      let x = i * 2 {
        if x < n { A[x, 0] = 1.0f } else { evaluate(call<int32>("f", x)) }
      }
      assert(i >= 0, "negative") { A[i, 1] = B[0] }
    }
  }
  for t in [0, 32) thread_binding("threadIdx.x") { B[t % 16] = 0.0f }
  for t in [0, 32) { B[t % 16] = 1.0f }
}
)")));
}

TEST(TirVerifier, PrefetchTakesOneScalarLoad) {
    auto A = make_buffer("A", f32, {16});
    auto ok = make_prim_func(
        "ok", {A},
        make_evaluate(make_call(DataType::int32(), intrin::kPrefetch, {make_load(A, {100})})));
    EXPECT_NO_THROW(verify(ok));
    auto bad = make_prim_func(
        "bad", {A}, make_evaluate(make_call(DataType::int32(), intrin::kPrefetch, {1.0f})));
    expect_invalid(bad, {"prefetch takes one scalar load"});
}

TEST(TirVerifier, AmxTileCallsTakeConstantTilesAndAFirstElement) {
    auto A = make_buffer("A", f32, {256});
    auto i = make_var("i");
    auto amx = [](const char* name, std::vector<PrimExpr> args) {
        return make_evaluate(make_call(DataType::int32(), name, std::move(args)));
    };
    auto ok = make_prim_func(
        "ok", {A},
        make_for(i, 0, 2, ForKind::Serial,
                 make_seq({amx(intrin::kAmxTileConfig, {16, 64, 16, 64, 16, 64}),
                           amx(intrin::kAmxTileLoad, {1, make_load(A, {PrimExpr(i) * 16}), 64}),
                           amx(intrin::kAmxTileStore, {1, make_load(A, {0}), PrimExpr(i) * 64})})));
    EXPECT_NO_THROW(verify(ok));
    expect_invalid(make_prim_func("bad", {A}, amx(intrin::kAmxTileLoad, {1, 1.0f, 64})),
                   {"takes the scalar load of the tile's first element"});
    expect_invalid(make_prim_func("bad", {A},
                                  make_for(i, 0, 2, ForKind::Serial,
                                           amx(intrin::kAmxTileZero, {PrimExpr(i)}))),
                   {"takes constant tile numbers and shapes in range"});
    expect_invalid(make_prim_func("bad", {A}, amx(intrin::kAmxTileZero, {3})),
                   {"takes constant tile numbers and shapes in range"});
    expect_invalid(
        make_prim_func("bad", {A}, amx(intrin::kAmxTileConfig, {16, 64, 17, 64, 16, 64})),
        {"takes constant tile numbers and shapes in range"});
    expect_invalid(
        make_prim_func("bad", {A}, amx(intrin::kAmxTileConfig, {16, 64, 16, 62, 16, 64})),
        {"takes constant tile numbers and shapes in range"});
    expect_invalid(make_prim_func("bad", {A}, amx(intrin::kAmxTileDotBF16, {0, 1})),
                   {"amx_tile_dot_bf16 takes 3 arguments"});
}

TEST(TirVerifier, RejectsUndefinedVariables) {
    auto A = make_buffer("A", f32, {16});
    auto i = make_var("i"), k = make_var("k");
    auto f =
        make_prim_func("f", {A}, make_for(i, 0, 16, ForKind::Serial, make_store(A, 0.0f, {k})));
    expect_invalid(
        f, {"prim_func 'f' is invalid", "use of undefined variable 'k'", "in: A[k] = 0.0f"});
    // A loop variable is not visible after its loop, nor in its own bounds.
    auto g = make_prim_func("g", {A},
                            make_seq({make_for(i, 0, 16, ForKind::Serial, make_store(A, 0.0f, {i})),
                                      make_store(A, 1.0f, {i})}));
    expect_invalid(g, {"undefined variable 'i'"});
    auto h = make_prim_func("h", {A}, make_for(i, 0, i, ForKind::Serial, make_evaluate(0)));
    expect_invalid(h, {"undefined variable 'i'", "in: for i in [0, i)"});
    // Buffer shapes are checked too: a dimension that is a variable (or a cast of one) binds it
    // from the argument's shape, as the generated entry does; any other expression must use
    // variables bound that way.
    auto B = make_buffer("B", f32, {k + 1});
    expect_invalid(make_prim_func("s", {B}, make_evaluate(0)), {"undefined variable 'k'"});
    auto C = make_buffer("C", f32, {k}), D = make_buffer("D", f32, {k * 2});
    EXPECT_NO_THROW(verify(make_prim_func("t", {D, C}, make_evaluate(0))));
}

TEST(TirVerifier, RejectsUndefinedBuffers) {
    auto A = make_buffer("A", f32, {16}), T = make_buffer("T", f32, {16});
    expect_invalid(make_prim_func("f", {A}, make_store(T, make_load(A, {0}), {0})),
                   {"store to undefined buffer 'T'"});
    expect_invalid(make_prim_func("f", {A}, make_store(A, make_load(T, {0}), {0})),
                   {"load from undefined buffer 'T'"});
    // An allocation ends with its body.
    Stmt body = make_seq({make_allocate(T, make_store(T, 0.0f, {0})), make_store(T, 1.0f, {1})});
    expect_invalid(make_prim_func("f", {A}, body), {"undefined buffer 'T'", "in: T[1] = 1.0f"});
    // A registry call's tensors and the variables of its shapes and scalars.
    auto k = make_var("k");
    expect_invalid(make_prim_func("f", {A}, make_call_packed("env.f", {tensor_arg(T)})),
                   {"call_packed with undefined buffer 'T'", "in: call_packed(\"env.f\", T)"});
    expect_invalid(
        make_prim_func("f", {A}, make_call_packed("env.f", {PackedArg{A, {k}, {}}, scalar_arg(k)})),
        {"use of undefined variable 'k'"});
}

TEST(TirVerifier, RejectsDuplicateBindings) {
    auto A = make_buffer("A", f32, {16});
    auto i = make_var("i"), n = make_var("n");
    auto nested = make_for(i, 0, 4, ForKind::Serial,
                           make_for(i, 0, 4, ForKind::Serial, make_store(A, 0.0f, {i})));
    expect_invalid(make_prim_func("f", {A}, nested),
                   {"loop binds variable 'i' again while an enclosing binding"});
    expect_invalid(make_prim_func("f", {A}, make_let(n, 1, make_evaluate(n)), {n}),
                   {"let binds variable 'n' again"});
    expect_invalid(make_prim_func("f", {A}, make_allocate(A, make_evaluate(0))),
                   {"allocate binds buffer 'A' again"});
    expect_invalid(make_prim_func("f", {A, A}, make_evaluate(0)),
                   {"parameter binds buffer 'A' again"});
    // The same Var in sibling loops (as unrolling leaves it) is fine.
    auto siblings = make_seq({make_for(i, 0, 4, ForKind::Serial, make_store(A, 0.0f, {i})),
                              make_for(i, 0, 4, ForKind::Serial, make_store(A, 1.0f, {i}))});
    EXPECT_NO_THROW(verify(make_prim_func("f", {A}, siblings)));
}

TEST(TirVerifier, RejectsIndexCountsThatDoNotMatchTheRank) {
    auto A = make_buffer("A", f32, {4, 4});
    expect_invalid(make_prim_func("f", {A}, make_store(A, 0.0f, {1, 2, 3})),
                   {"store to 'A' with 3 indices, but it has 2 dimensions"});
    auto B = make_buffer("B", f32, {2, 2, 2});
    expect_invalid(make_prim_func("f", {B}, make_store(B, 0.0f, {1, 2})),
                   {"store to 'B' with 2 indices, but it has 3 dimensions"});
    // One index is a flat row-major offset, as flatten_storage leaves parameters.
    EXPECT_NO_THROW(verify(make_prim_func("f", {A}, make_store(A, make_load(A, {5}), {15}))));
    expect_invalid(make_prim_func("f", {A}, make_store(A, make_load(A, {1, 2, 3}), {1, 2})),
                   {"load from 'A' with 3 indices, but it has 2 dimensions"});
}

TEST(TirVerifier, RejectsTypeMismatches) {
    auto A = make_buffer("A", f32, {16});
    auto i = make_var("i"), x = make_var("x");
    // Nodes built directly, past the checking constructors.
    Stmt bad_value = Stmt(new Store(A, PrimExpr(1), {PrimExpr(0)}));
    expect_invalid(make_prim_func("f", {A}, bad_value),
                   {"store to 'A': value of type int32, buffer of type float32"});
    Stmt bad_lanes = Stmt(new Store(A, make_broadcast(1.0f, 4), {PrimExpr(0)}));
    expect_invalid(make_prim_func("f", {A}, bad_lanes),
                   {"store to 'A': index 0 has 1 lanes, value has 4"});
    Stmt bad_index = Stmt(new Store(A, PrimExpr(1.0f), {PrimExpr(0.5f)}));
    expect_invalid(make_prim_func("f", {A}, bad_index), {"index 0 of type float32"});
    Stmt bad_let = Stmt(new LetStmt(x, PrimExpr(1.0f), make_evaluate(x)));
    expect_invalid(make_prim_func("f", {A}, bad_let),
                   {"let 'x' of type int32 bound to a value of type float32"});
    Stmt bad_loop = Stmt(new For(i, make_int(DataType::int64(), 0), make_int(DataType::int64(), 4),
                                 ForKind::Serial, make_evaluate(i)));
    expect_invalid(make_prim_func("f", {A}, bad_loop),
                   {"loop 'i' of type int32 has bounds of type int64 and int64"});
    Stmt bad_if = Stmt(new IfThenElse(PrimExpr(1), make_evaluate(0), Stmt()));
    expect_invalid(make_prim_func("f", {A}, bad_if), {"if condition of type int32"});
    PrimExpr bad_add = PrimExpr(new Add(f32, PrimExpr(1.0f), PrimExpr(1)));
    expect_invalid(make_prim_func("f", {A}, make_evaluate(bad_add)),
                   {"Add of mismatched types float32 and int32"});
}

TEST(TirVerifier, RejectsParallelInsideParallel) {
    auto A = make_buffer("A", f32, {16, 16});
    auto i = make_var("i"), j = make_var("j"), k = make_var("k");
    Stmt body =
        make_for(i, 0, 16, ForKind::Parallel,
                 make_for(k, 0, 1, ForKind::Serial,
                          make_for(j, 0, 16, ForKind::Parallel, make_store(A, 0.0f, {i, j}))));
    expect_invalid(make_prim_func("f", {A}, body),
                   {"parallel loop 'j' nested inside another parallel loop"});
    // Parallel loops one after the other are fine.
    Stmt seq = make_seq({make_for(i, 0, 16, ForKind::Parallel, make_store(A, 0.0f, {i, 0})),
                         make_for(j, 0, 16, ForKind::Parallel, make_store(A, 0.0f, {j, 0}))});
    EXPECT_NO_THROW(verify(make_prim_func("f", {A}, seq)));
}

TEST(TirVerifier, RejectsNonConstantVectorizedAndUnrolledExtents) {
    auto A = make_buffer("A", f32, {16});
    auto n = make_var("n"), i = make_var("i");
    for (ForKind kind : {ForKind::Vectorized, ForKind::Unrolled}) {
        auto f = make_prim_func("f", {A}, make_for(i, 0, n, kind, make_store(A, 0.0f, {i})), {n});
        expect_invalid(f, {for_kind_name(kind), " loop 'i' has a non-constant extent (n)"});
    }
}

TEST(TirVerifier, RejectsThreadBindingWithoutTag) {
    auto A = make_buffer("A", f32, {16});
    auto i = make_var("i");
    auto f = make_prim_func("f", {A},
                            make_for(i, 0, 16, ForKind::ThreadBinding, make_store(A, 0.0f, {i})));
    expect_invalid(f, {"thread_binding loop 'i' without a thread tag"});
}

TEST(TirVerifier, ReportsMissingPiecesWithoutCrashing) {
    auto A = make_buffer("A", f32, {16});
    auto i = make_var("i");
    Stmt body = make_seq(
        {Stmt(new For(Ref<Var>(), 0, 4, ForKind::Serial, make_evaluate(0))),
         Stmt(new Allocate(Ref<Buffer>(), make_evaluate(0))),
         Stmt(new Store(A, PrimExpr(), {PrimExpr()})),
         Stmt(new For(i, 0, 4, ForKind::Serial, Stmt())),
         make_evaluate(make_load(A, {PrimExpr(new Add(DataType::int32(), PrimExpr(), 1))}))});
    expect_invalid(make_prim_func("f", {A}, body),
                   {"For without its variable or buffer", "in: for <undefined> in [0, 4)",
                    "Allocate without its variable or buffer", "undefined expression",
                    "in: A[<undefined>] = <undefined>", "undefined statement",
                    "in: evaluate(A[<undefined> + 1])"});
}

TEST(TirVerifier, ListsEveryProblemWithItsOrigin) {
    auto A = make_buffer("A", f32, {16});
    auto k = make_var("k"), m = make_var("m");
    Stmt body = make_seq({make_store(A, 0.0f, {k}, SourceLoc{.file = "model.py", .line = 7}),
                          make_store(A, 0.0f, {m})});
    expect_invalid(make_prim_func("f", {A}, body), {"(2 problems)", "undefined variable 'k'",
                                                    "from: model.py:7", "undefined variable 'm'"});
}

}  // namespace
}  // namespace anvil::tir
