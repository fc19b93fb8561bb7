// Text form of the loop IR. The parser (tir/parser.h) reads it back: parse(print(f)) is
// structurally equal to f, and print(parse(text)) == text for text the printer produced.
//
//   prim_func add_one(A: float32[n], B: float32[n], n: int32) {
//     for i in [0, n) parallel {
//       allocate T: float32[4] local {
//         for j in [0, 4) vectorized { T[j] = A[i * 4 + j] + 1f }
//         ...
//       }
//     }
//   }
//
// Statements: `for v in [min, min + extent) KIND { }` (KIND is empty for serial loops, else
// parallel, vectorized, unrolled or thread_binding("threadIdx.x"); the end is printed as
// `min + extent` and is just `extent` when min is 0), `let v = value { }`,
// `allocate B: dtype[shape] SCOPE { }` (the scope is omitted when "global"),
// `if cond { } else { }`, `assert(cond, "message") { }`, `evaluate(expr)`, `B[i, j] = value`,
// and `seq { }` for a sequence nested in a sequence or of one statement (a body block of
// several statements is a SeqStmt already). A body that is one store or evaluate and fits in 100
// columns stays on its header's line. Expressions use ExprPrinter's syntax
// (ir/expr_printer.h). SourceLocs are not printed.
//
// Names: every distinct Var or Buffer object gets its own name in one function-wide namespace
// (two variables named "i" print as `i` and `i_1`); characters other than letters, digits and
// '_' become '_', and names the syntax reserves (keywords, function names) get a suffix. A
// variable's dtype is printed only where its binding does not imply it (`for i: int64 in ...`
// when the bounds are int32 is ill-typed IR that the verifier rejects).
#pragma once

#include <ostream>
#include <string>

#include "tir/stmt.h"

namespace anvil::tir {

std::string print(const Ref<PrimFunc>& f);
// Free variables and buffers keep their own names where they can; see tir::ParseScope.
std::string print(const Stmt& s);

std::ostream& operator<<(std::ostream& os, const Ref<PrimFunc>& f);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

// True for words the text syntax reserves (statement keywords, expression function names,
// `true`, `false`, and the float literals `nanf`, `inff64`, ...). Shared with the parser.
bool is_reserved_name(const std::string& name);

}  // namespace anvil::tir
