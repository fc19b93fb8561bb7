// Printer and parser of the loop IR: exact text for a small function, round trips of IR using
// every statement, loop kind and expression form, unique names, and parse errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/intrinsics.h"
#include "support/error.h"
#include "tir/parser.h"
#include "tir/printer.h"
#include "tir/structural_equal.h"

namespace anvil::tir {
namespace {

const DataType f32 = DataType::float32();
const DataType i32 = DataType::int32();
const DataType i64 = DataType::int64();

void expect_round_trip(const Ref<PrimFunc>& f) {
    std::string text = print(f);
    Ref<PrimFunc> back;
    ASSERT_NO_THROW(back = parse_prim_func(text)) << text;
    EXPECT_TRUE(structural_equal(back, f)) << text << "---- reads back as ----\n" << print(back);
    EXPECT_EQ(print(back), text);
}

Ref<PrimFunc> make_matmul() {
    auto A = make_buffer("A", f32, {64, 64});
    auto B = make_buffer("B", f32, {64, 64});
    auto C = make_buffer("C", f32, {64, 64});
    auto n = make_var("n");
    auto i = make_var("i"), j = make_var("j"), k = make_var("k"), jj = make_var("j");
    auto L = make_buffer("C_local", f32, {16}, "local");
    Stmt init = make_for(j, 0, 16, ForKind::Vectorized, make_store(L, 0.0f, {j}));
    Stmt update = make_for(
        k, 0, 64, ForKind::Serial,
        make_for(jj, 0, 16, ForKind::Vectorized,
                 make_store(L, make_load(L, {jj}) + make_load(A, {i, k}) * make_load(B, {k, jj}),
                            {jj})));
    Stmt body = make_for(
        i, 0, 64, ForKind::Parallel,
        make_allocate(
            L, make_seq({init, update, make_if(i < n, make_store(C, make_load(L, {0}), {i, 0}))})));
    return make_prim_func("matmul", {A, B, C}, body, {n});
}

TEST(TirText, PrintsReadableText) {
    const char* expected =
        "prim_func matmul(A: float32[64, 64], B: float32[64, 64], C: float32[64, 64], n: int32) {\n"
        "  for i in [0, 64) parallel {\n"
        "    allocate C_local: float32[16] local {\n"
        "      for j in [0, 16) vectorized { C_local[j] = 0.0f }\n"
        "      for k in [0, 64) {\n"
        "        for j_1 in [0, 16) vectorized { C_local[j_1] = C_local[j_1] + A[i, k] * B[k, j_1] "
        "}\n"
        "      }\n"
        "      if i < n { C[i, 0] = C_local[0] }\n"
        "    }\n"
        "  }\n"
        "}\n";
    EXPECT_EQ(print(make_matmul()), expected);
    expect_round_trip(make_matmul());
}

// One function with every statement kind, loop kind and expression form.
Ref<PrimFunc> make_everything() {
    auto n = make_var("n"), m = make_var("m", i64), flag = make_var("flag", DataType::bool_());
    auto A = make_buffer("A", f32, {n, 16});
    auto B = make_buffer("B", DataType::float64(), {8});
    auto H = make_buffer("H", DataType::float16(), {8}, "shared.dyn");
    auto Z = make_buffer("Z", DataType::bfloat16(), {4});
    auto U = make_buffer("U", DataType::uint(8), {m});
    auto S = make_buffer("S", i32, {});  // zero-dimensional
    auto i = make_var("i"), j = make_var("j"), k = make_var("k"), t = make_var("t");
    auto q = make_var("q", i64), x = make_var("x"), y = make_var("y", f32);
    auto L = make_buffer("L", f32, {4, n}, "local"), G = make_buffer("G", i32, {2});
    auto Sh = make_buffer("Sh", f32, {32}, "shared"), W = make_buffer("W", f32, {1}, "my scope!");
    PrimExpr a_ij = make_load(A, {i, j});
    std::vector<Stmt> seq = {
        // literals of every type, signs and specials
        make_store(B, make_float(DataType::float64(), 0.1), {0}),
        make_store(B, make_float(DataType::float64(), -std::numeric_limits<double>::infinity()),
                   {1}),
        make_store(
            B,
            make_float(DataType::float64(), std::nan("")) * make_float(DataType::float64(), -0.0),
            {2}),
        make_store(H,
                   make_float(DataType::float16(), 2.5) +
                       make_float(DataType::float16(), std::numeric_limits<double>::infinity()),
                   {3}),
        make_store(Z, make_float(DataType::bfloat16(), 1e20), {0}),
        make_store(U, make_int(DataType::uint(8), 255) - make_int(DataType::uint(8), 3),
                   {make_int(i64, -9)}),
        make_store(U, make_load(U, {m - make_int(i64, std::numeric_limits<int64_t>::min())}), {m}),
        make_store(S, -7, {}),
        make_store(S, make_load(S, {}) * -2, {}),
        make_store(A, make_float(f32, 1.5e-7), {0, 0}),
        // operators and precedence
        make_store(G, (x + 1) * (x - (2 - x)) - x - x / 3 % 5, {0}),
        make_store(G,
                   select(!(x < 3) && (flag || x >= 4) && !PrimExpr(flag), floordiv(x, 2),
                          floormod(x, -3)),
                   {1}),
        make_store(G,
                   min(max(x, 0), 9) + cast(i32, eq(x, 1)) + cast(i32, ne(x, 2)) +
                       cast(i32, x <= 5) + cast(i32, x > 6),
                   {0}),
        // calls: math, external, zero arguments, likely, reinterpret
        make_evaluate(make_call(i32, "anvil_trace", {})),
        make_evaluate(make_call(DataType::void_(), "print_me", {x, make_float(f32, 1.0)})),
        make_store(A,
                   make_call(f32, intrin::kExp, {a_ij}) +
                       make_call(f32, intrin::kFma, {a_ij, a_ij, make_float(f32, 2.0)}),
                   {i, j}),
        make_store(A, make_call(f32, intrin::kReinterpret, {x}), {i, j}),
        make_store(A, make_call(f32, intrin::kSqrt, {cast(f32, x)}), {0, j}),
        // registry calls: tensors (one seen with another shape), scalars, no arguments
        make_call_packed("env.linear", {tensor_arg(A), tensor_arg(L), scalar_arg(x + 1),
                                        scalar_arg(y), PackedArg{G, {2, n}, {}}}),
        make_call_packed("env.tick", {}),
        // vectors
        make_for(k, 0, 4, ForKind::Serial,
                 make_store(A, make_load(A, {k, make_ramp(0, 1, 4)}) + make_broadcast(y, 4),
                            {k, make_ramp(4, 2, 4)})),
    };
    Stmt inner = make_seq(seq);
    // Built directly: make_seq would flatten the nested sequences at the end.
    Stmt body = Stmt(new SeqStmt({
        make_for(i, 0, n, ForKind::Parallel,
                 make_for(j, i * 2, n - i, ForKind::Serial,
                          make_let(x, i + j,
                                   make_let(y, cast(f32, x),
                                            make_allocate(L, make_allocate(G, inner)))))),
        make_for(t, 0, 32, ForKind::ThreadBinding, make_allocate(Sh, make_store(Sh, 1.0f, {t})),
                 "threadIdx.x"),
        make_for(t, 0, 4, ForKind::Unrolled, make_store(A, cast(f32, t), {t, t})),
        make_for(q, make_int(i64, 0), make_int(i64, 8), ForKind::Serial,
                 make_store(U, make_int(DataType::uint(8), 1), {q})),
        make_for(q, make_int(i64, 3), m, ForKind::Serial,
                 make_store(U, make_int(DataType::uint(8), 0), {q})),
        make_if(n > 4 && flag, make_seq({make_store(S, 1, {}), make_store(S, 2, {})}),
                make_if(n < 0, make_store(S, 3, {}))),
        make_if(make_call(DataType::bool_(), intrin::kLikely, {n < 100}), make_store(S, 4, {}),
                make_store(S, 5, {})),
        make_assert(n > 0, "n must be \"positive\"\n\tand\\small", make_store(S, n, {})),
        make_assert(n < 1000, "no body", Stmt()),
        make_allocate(W, make_store(W, 0.0f, {0})),
        Stmt(new SeqStmt({make_store(S, 6, {})})),  // one-element sequence
        Stmt(new SeqStmt({Stmt(new SeqStmt({make_store(S, 7, {}), make_store(S, 8, {})})),
                          make_store(S, 9, {})})),  // nested sequence
        make_for(k, 0, 8, ForKind::Vectorized, make_store(A, make_float(f32, 0.0), {0, k})),
    }));
    return make_prim_func("everything", {A, B, H, Z, U, S}, body, {n, m, flag});
}

TEST(TirText, RoundTripsEveryNodeAndExpressionForm) {
    Ref<PrimFunc> f = make_everything();
    expect_round_trip(f);
    std::string text = print(f);
    for (const char* piece :
         {"0.10000000000000001f64",
          "-inff64",
          "nanf64 * (-0.0f64)",
          "2.5f16 + inff16",
          "1e+20bf16",
          "255u8 - 3u8",
          "U[-9i64]",
          "m - (-9223372036854775808i64)",
          "S[] = -7",
          "S[] * (-2)",
          "1.5e-07f",
          "(x + 1) * (x - (2 - x)) - x - x / 3 % 5",
          "select(!(x < 3) && (flag || x >= 4) && !flag, floordiv(x, 2), floormod(x, -3))",
          "min(max(x, 0), 9) + cast<int32>(x == 1)",
          "evaluate(call<int32>(\"anvil_trace\"))",
          "call<void>(\"print_me\", x, 1.0f)",
          "exp(A[i, j]) + fma(A[i, j], A[i, j], 2.0f)",
          "call<float32>(\"reinterpret\", x)",
          "sqrt(cast<float32>(x))",
          "call_packed(\"env.linear\", A, L, x + 1, y, G as [2, n])",
          "call_packed(\"env.tick\")",
          "A[k, ramp(4, 2, 4)] = A[k, ramp(0, 1, 4)] + broadcast(y, 4)",
          "for j in [i * 2, i * 2 + (n - i)) {",
          "let x = i + j {",
          "let y = cast<float32>(x) {",
          "allocate L: float32[4, n] local {",
          "for t in [0, 32) thread_binding(\"threadIdx.x\")",
          "allocate Sh: float32[32] shared { Sh[t] = 1.0f }",
          "for t in [0, 4) unrolled",
          "for q in [0i64, 8i64) { U[q] = 1u8 }",
          "for q in [3i64, 3i64 + m) { U[q] = 0u8 }",
          "if n > 4 && flag {",
          "} else {",
          "if call<bool>(\"likely\", n < 100) { S[] = 4 } else { S[] = 5 }",
          "assert(n > 0, \"n must be \\\"positive\\\"\\n\\tand\\\\small\") { S[] = n }",
          "assert(n < 1000, \"no body\")\n",
          "allocate W: float32[1] \"my scope!\" { W[0] = 0.0f }",
          "H: float16[8] shared.dyn",
          "S: int32[]",
          "n: int32, m: int64, flag: bool)",
          "for k in [0, 8) vectorized { A[0, k] = 0.0f }"}) {
        EXPECT_NE(text.find(piece), std::string::npos) << "missing `" << piece << "` in\n" << text;
    }
}

TEST(TirText, RoundTripsNestedSequencesExactly) {
    Ref<PrimFunc> f = make_everything();
    std::string text = print(f);
    EXPECT_NE(text.find("  seq { S[] = 6 }\n"), std::string::npos) << text;
    EXPECT_NE(
        text.find("  seq {\n    seq {\n      S[] = 7\n      S[] = 8\n    }\n    S[] = 9\n  }\n"),
        std::string::npos)
        << text;
    Ref<PrimFunc> back = parse_prim_func(text);
    auto* seq = back->body.as<SeqStmt>();
    ASSERT_NE(seq, nullptr);
    EXPECT_TRUE(seq->seq[seq->seq.size() - 3].is<SeqStmt>());
    EXPECT_EQ(seq->seq[seq->seq.size() - 3].as<SeqStmt>()->seq.size(), 1u);
}

// A body-less assert followed by a nested sequence must not read the sequence as its body.
TEST(TirText, AssertWithoutBodyBeforeANestedSequence) {
    auto A = make_buffer("A", f32, {4});
    auto n = make_var("n");
    Stmt inner = Stmt(new SeqStmt({make_store(A, 1.0f, {0}), make_store(A, 2.0f, {1})}));
    Stmt body = Stmt(new SeqStmt({make_assert(n > 0, "n > 0", Stmt()), inner}));
    auto f = make_prim_func("f", {A}, body, {n});
    EXPECT_EQ(print(f),
              "prim_func f(A: float32[4], n: int32) {\n"
              "  assert(n > 0, \"n > 0\")\n"
              "  seq {\n"
              "    A[0] = 1.0f\n"
              "    A[1] = 2.0f\n"
              "  }\n"
              "}\n");
    expect_round_trip(f);
}

TEST(TirText, EmptyBodiesAndEmptyFunctions) {
    auto f = make_prim_func("empty", {}, make_seq({}));
    EXPECT_EQ(print(f), "prim_func empty() {}\n");
    expect_round_trip(f);
    auto i = make_var("i");
    auto g = make_prim_func("loops", {}, make_for(i, 0, 4, ForKind::Serial, make_seq({})));
    EXPECT_EQ(print(g), "prim_func loops() {\n  for i in [0, 4) {}\n}\n");
    expect_round_trip(g);
}

TEST(TirText, MakesNamesUnique) {
    auto i1 = make_var("i"), i2 = make_var("i"), kw = make_var("for"), odd = make_var("x.y");
    auto anon = make_var(""), digit = make_var("0a"), taken = make_var("i_1");
    auto A = make_buffer("A", f32, {4}), A2 = make_buffer("A", f32, {4}),
         ex = make_buffer("exp", f32, {4});
    auto Avar = make_var("A");
    Stmt body = make_seq({
        make_for(i1, 0, 4, ForKind::Serial, make_store(A, make_load(A2, {i1}), {i1})),
        make_for(i2, 0, 4, ForKind::Serial, make_store(A2, cast(f32, i2), {i2})),
        make_for(kw, 0, 4, ForKind::Serial, make_store(ex, 1.0f, {kw})),
        make_let(odd, 1,
                 make_let(anon, odd,
                          make_let(digit, anon,
                                   make_let(taken, digit,
                                            make_let(Avar, taken,
                                                     make_store(A, cast(f32, Avar), {0})))))),
    });
    auto f = make_prim_func("names", {A, A2, ex}, body);
    std::string text = print(f);
    for (const char* piece :
         {"(A: float32[4], A_1: float32[4], exp_1: float32[4])",
          "for i in [0, 4) { A[i] = A_1[i] }",
          "for i_1 in [0, 4) { A_1[i_1] = cast<float32>(i_1) }",
          "for for_1 in [0, 4) { exp_1[for_1] = 1.0f }", "let x_y = 1 {", "let v = x_y {",
          "let _0a = v {", "let i_1_1 = _0a {", "let A_2 = i_1_1 {"}) {
        EXPECT_NE(text.find(piece), std::string::npos) << "missing `" << piece << "` in\n" << text;
    }
    expect_round_trip(f);
}

TEST(TirText, SameVarInSiblingLoopsKeepsItsName) {
    auto i = make_var("i");
    auto A = make_buffer("A", f32, {4});
    auto f =
        make_prim_func("f", {A},
                       make_seq({make_for(i, 0, 4, ForKind::Serial, make_store(A, 0.0f, {i})),
                                 make_for(i, 0, 4, ForKind::Serial, make_store(A, 1.0f, {i}))}));
    EXPECT_EQ(print(f),
              "prim_func f(A: float32[4]) {\n  for i in [0, 4) { A[i] = 0.0f }\n"
              "  for i in [0, 4) { A[i] = 1.0f }\n}\n");
    expect_round_trip(f);
}

TEST(TirText, LongLeafBodiesGoOnTheirOwnLine) {
    auto i = make_var("a_rather_long_loop_variable_name");
    auto A = make_buffer("a_buffer_with_a_long_name", f32, {1024});
    PrimExpr v = make_load(A, {i});
    for (int r = 0; r < 4; ++r) v = v * make_load(A, {i});
    auto f = make_prim_func("f", {A}, make_for(i, 0, 1024, ForKind::Serial, make_store(A, v, {i})));
    std::string text = print(f);
    EXPECT_NE(text.find("1024) {\n    a_buffer_with_a_long_name[a_rather"), std::string::npos)
        << text;
    expect_round_trip(f);
}

TEST(TirText, ParsesStatementsWithPredeclaredNames) {
    auto A = make_buffer("A", f32, {16}), B = make_buffer("B", f32, {16});
    auto n = make_var("n");
    ParseScope scope{.vars = {n}, .buffers = {A, B}};
    std::string text =
        "for i in [0, n) {\n"
        "  B[i] = A[i] * 2.0f  // comments are skipped\n"
        "}\n"
        "evaluate(call<int32>(\"done\", n))\n";
    Stmt s = parse_stmt(text, scope);
    auto* seq = s.as<SeqStmt>();
    ASSERT_NE(seq, nullptr);
    auto* loop = seq->seq[0].as<For>();
    ASSERT_NE(loop, nullptr);
    EXPECT_TRUE(loop->extent.same_as(n));
    EXPECT_TRUE(loop->body.as<Store>()->buffer.same_as(B));
    EXPECT_EQ(print(s),
              "for i in [0, n) { B[i] = A[i] * 2.0f }\nevaluate(call<int32>(\"done\", n))\n");
    EXPECT_TRUE(structural_equal(parse_stmt(print(s), scope), s));
    // A single statement comes back as itself, not wrapped in a sequence.
    EXPECT_TRUE(parse_stmt("A[0] = 1.0f", scope).is<Store>());
}

TEST(TirText, InnermostDeclarationWins) {
    Stmt s = parse_stmt(
        "for i in [0, 4) {\n"
        "  for i in [0, 8) { evaluate(i) }\n"
        "  evaluate(i)\n"
        "}\n");
    auto* outer = s.as<For>();
    auto* seq = outer->body.as<SeqStmt>();
    auto* inner = seq->seq[0].as<For>();
    EXPECT_TRUE(inner->body.as<Evaluate>()->value.same_as(inner->var));
    EXPECT_TRUE(seq->seq[1].as<Evaluate>()->value.same_as(outer->var));
    EXPECT_FALSE(inner->var.same_as(outer->var));
    // Printing separates the two names again.
    EXPECT_NE(print(s).find("for i_1 in [0, 8) { evaluate(i_1) }"), std::string::npos) << print(s);
}

TEST(TirText, AcceptsConveniencesOfHandWrittenText) {
    auto A = make_buffer("A", f32, {16});
    ParseScope scope{.buffers = {A}};
    // likely(c), else if, a loop range that is not written min + extent, an explicit 'serial',
    // literals that take the other operand's type.
    Stmt s = parse_stmt(
        "for i: int64 in [2i64, 10i64) serial {\n"
        "  if likely(i < 8) { A[i] = 1.0f } else if i == 9 { A[i] = 2.0f }\n"
        "}\n",
        scope);
    auto* loop = s.as<For>();
    ASSERT_NE(loop, nullptr);
    EXPECT_EQ(loop->var->dtype, i64);
    EXPECT_EQ(to_string(loop->extent), "10i64 - 2i64");
    auto* branch = loop->body.as<IfThenElse>();
    EXPECT_EQ(branch->cond.as<Call>()->name, "likely");
    EXPECT_TRUE(branch->else_case.is<IfThenElse>());
}

// Parses `text` expecting a UserError starting with `where` and containing `what`.
void expect_parse_error(const std::string& text, const std::string& where, const std::string& what,
                        const ParseScope& scope = {}) {
    try {
        if (text.rfind("prim_func", 0) == 0) {
            parse_prim_func(text);
        } else {
            parse_stmt(text, scope);
        }
        ADD_FAILURE() << "no error for:\n" << text;
    } catch (const UserError& e) {
        std::string msg = e.what();
        EXPECT_EQ(msg.rfind(where + ": ", 0), 0u) << "message: " << msg;
        EXPECT_NE(msg.find(what), std::string::npos) << "message: " << msg;
    }
}

// Text nesting deeper than the parser's limit is an error, not a stack overflow (found by
// fuzzing): parentheses, prefix operators and statements alike.
TEST(TirText, DeepNestingIsAnErrorNotACrash) {
    expect_parse_error(
        "evaluate(" + std::string(100000, '(') + "1" + std::string(100000, ')') + ")", "1:265",
        "nested more than 512 levels deep");
    expect_parse_error("evaluate(" + std::string(100000, '!') + "true)", "1:520",
                       "nested more than 512 levels deep");
    std::string loops;
    for (int i = 0; i < 20000; ++i) loops += "seq { ";
    expect_parse_error(loops, "1:3073", "nested more than 512 levels deep");
    // Nesting within the limit reads.
    EXPECT_NO_THROW(
        parse_stmt("evaluate(" + std::string(100, '(') + "1" + std::string(100, ')') + ")"));
}

TEST(TirText, ReportsParseErrorsWithLineAndColumn) {
    expect_parse_error("prim_func f() {\n  for i in [0, 4) {\n    A[i] = 1.0f\n  }\n}\n", "3:5",
                       "undefined buffer 'A'");
    expect_parse_error("prim_func f(n: int32 {\n}", "1:22",
                       "expected ')' to close the parameter list, found '{'");
    expect_parse_error("prim_func f(A: float7[4]) {}", "1:16", "unknown type 'float7'");
    expect_parse_error("prim_func f() {\n  for i in [0, 4) {\n", "3:1",
                       "expected '}' to close the loop body, found end of input");
    expect_parse_error("prim_func f(n: int32) {\n  evaluate(n + 1q8)\n}", "2:16",
                       "unknown literal suffix 'q8'");
    expect_parse_error("prim_func f(A: float32[4]) {\n  A[0] = 1\n}", "2:3",
                       "ill-typed store to 'A': store of int32 into A of float32");
    expect_parse_error("prim_func f() {\n  for i in [0, 4) fast { evaluate(i) }\n}", "2:19",
                       "unknown loop kind 'fast'");
    expect_parse_error("evaluate(foo(1))", "1:10", "unknown function 'foo'");
    expect_parse_error("evaluate(1 @ 2)", "1:12", "unexpected character '@'");
    expect_parse_error("for if in [0, 4) {}", "1:5", "'if' is reserved");
    expect_parse_error("evaluate(x + 1)", "1:10", "undefined variable 'x'");
    expect_parse_error("for i in [0, 4) { evaluate(i[0]) }", "1:28",
                       "'i' is a variable; expected a buffer");
    expect_parse_error("for i in [0, 4) { evaluate(i + 2.5f) }", "1:30",
                       "ill-typed operator '+': operands of '+' have different types");
    expect_parse_error("evaluate(cast(1))", "1:14", "expected '<' after 'cast'");
    expect_parse_error("evaluate(min(1))", "1:10", "'min' takes 2 arguments, got 1");
    expect_parse_error("assert(true, \"unterminated) {}", "1:14", "unterminated string");
    expect_parse_error("let x = 1 { evaluate(x) } }", "1:27", "expected a statement");
    expect_parse_error("prim_func f() {} trailing", "1:18", "expected end of input");
    expect_parse_error("if 1 { evaluate(0) }", "1:1", "ill-typed if: if condition of type int32");
    expect_parse_error("for i in [0, 4) thread_binding { }", "1:32",
                       "expected '(' after 'thread_binding'");
    expect_parse_error("call_packed(env.f)", "1:13", "expected the registered function's name");
    expect_parse_error("prim_func f(A: float32[4]) {\n  call_packed(\"env.f\", A as 4)\n}", "2:29",
                       "expected '[' to open the tensor's shape after 'as'");
    expect_parse_error("call_packed(\"env.f\", B)", "1:22", "undefined variable 'B'");
}

}  // namespace
}  // namespace anvil::tir
