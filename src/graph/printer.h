// Text form of the graph IR, in Relay's familiar style. The parser (graph/parser.h) reads it
// back: parse(print(m)) is structurally equal to m, and print(parse(text)) == text for text the
// printer produced.
//
//   def @main(%x: Tensor[(1, 16), float32], %w: Tensor[(16,), float32]) -> Tensor[(1, 16), float32]
//   {
//     %0 = add(%x, meta[Constant][0]) /* ty=Tensor[(1, 16), float32] */;
//     %1 = fn (%p0: Tensor[(1, 16), float32], primitive=1) -> Tensor[(1, 16), float32] {
//       %2 = nn.relu(%p0) /* ty=Tensor[(1, 16), float32] */;
//       %3 = exp(%2) /* ty=Tensor[(1, 16), float32] */;
//       %3
//     };
//     %4 = %1(%0) /* ty=Tensor[(1, 16), float32] */;
//     let %y: Tensor[(1, 16), float32] = multiply(%4, %w) /* ty=Tensor[(1, 16), float32] */;
//     %5 = (%y, %4);
//     %6 = %5.0 /* ty=Tensor[(1, 16), float32] */;
//     %6
//   }
//
//   prim_func fused_add(...) { ... }          -- kernels, in tir::print's syntax
//
//   #[metadata]
//   meta[Constant][0]: Tensor[(16,), float32] = "AACAPwAAAEA..."    -- base64 of the raw bytes
//
// A-normal form: every call, tuple, projection and function is bound to a numbered temporary
// `%N` the first time it is needed, and each later use refers to that name, so a shared node is
// printed once (within its scope: a function body starts a new scope, see below). A call, tuple
// or projection used only as a `let`'s value is written inline there. Numbers
// count up through a whole `def`, nested functions included, so a name never shadows another.
//
// Scopes: a function body is a scope of its own and refers to nothing outside but constants
// (functions are closed), so a node it shares with the enclosing function is printed in both
// (the IR may share more than the text shows; parsing gives equal, unshared copies). A Let in
// operand position prints as a block `{ let ...; result }` that sees the enclosing names; its
// let variables end with it, its numbered temporaries stay visible after it (a node used again
// outside the block cannot depend on the block's variables in valid IR).
//
// Names: every distinct Var object gets its own name, unique within its function scope (`%x`,
// `%x_1`; a nested function starts afresh); characters other than letters, digits and '_'
// become '_'. Temporaries are plain numbers, so they never collide with variables. Symbolic
// dimensions print by their own names and are identified by name in text. Calls print attributes
// that differ from the op's defaults (graph::attrs_str); `/* ty=... */` annotations are comments
// the parser ignores, as are source locations, which are not printed. Constants print as
// `meta[Constant][i]`, numbered in order of first use across the module; the metadata section holds
// their exact bytes.
#pragma once

#include <ostream>
#include <string>

#include "graph/expr.h"
#include "graph/module.h"

namespace anvil::graph {

struct PrintOptions {
    // Off: constants still print as meta[Constant][i], but their data is replaced by a comment
    // (for dumps of large models; such text does not parse back).
    bool metadata = true;
};

std::string print(const IRModule& m, const PrintOptions& options = {});
// A block without braces (bindings, then the result); free variables print by name.
std::string print(const Expr& e, const PrintOptions& options = {});

std::ostream& operator<<(std::ostream& os, const IRModule& m);
std::ostream& operator<<(std::ostream& os, const Expr& e);

}  // namespace anvil::graph
