// Reads the loop IR's text form (see tir/printer.h for the syntax) back into IR.
//
// Names resolve to the innermost enclosing declaration: a function parameter, a loop or let
// variable, an allocated buffer, or an entry of the ParseScope given to parse_stmt. Each
// declaration creates a new Var or Buffer object. Nodes are built with the checking
// constructors, so ill-typed text is rejected. Every error is an anvil::UserError reading
// `line:column: message`, naming what was expected and what was found.
//
// Grammar (`*` repeats, `?` is optional; whitespace and `// comments` are ignored):
//   func    := 'prim_func' (IDENT | STRING) '(' (param (',' param)*)? ')' block
//   param   := IDENT ':' DTYPE ('[' exprs? ']' scope?)?       -- a buffer when it has a shape;
//                                                             -- shapes may name scalar params,
//                                                             -- and other names declare
//                                                             -- dimension variables (int32;
//                                                             -- int64 inside a cast), bound
//                                                             -- from the arguments' shapes
//   block   := '{' stmt* '}'                                  -- one stmt: itself; else SeqStmt
//   stmt    := 'for' IDENT (':' DTYPE)? 'in' '[' expr ',' expr ')' kind? block
//            | 'let' IDENT (':' DTYPE)? '=' expr block
//            | 'allocate' IDENT ':' DTYPE '[' exprs? ']' scope? block
//            | 'if' expr block ('else' (block | if-stmt))?
//            | 'assert' '(' expr ',' STRING ')' block?
//            | 'evaluate' '(' expr ')'
//            | IDENT '[' exprs? ']' '=' expr                  -- a store
//            | 'seq' '{' stmt* '}'                            -- always a SeqStmt
//   kind    := 'serial' | 'parallel' | 'vectorized' | 'unrolled' | 'thread_binding' '(' STRING ')'
//   scope   := IDENT ('.' IDENT)* | STRING                    -- "global" when omitted
//   expr    := binary operators || && (== !=) (< <= > >=) (+ -) (* / %), left-associative,
//              loosest first; unary ! and -; ExprPrinter's literals and call forms, plus
//              `likely(c)` for call<T>("likely", c).
// A loop `[min, end)` takes `end` to be `min + extent` when it is written that way (as the
// printer does), `extent` when min is 0, and otherwise extent = end - min.
#pragma once

#include <string>
#include <vector>

#include "tir/stmt.h"

namespace anvil::tir {

// Variables and buffers a statement may refer to without declaring them, by their names.
struct ParseScope {
    std::vector<Ref<Var>> vars;
    std::vector<Ref<Buffer>> buffers;
};

Ref<PrimFunc> parse_prim_func(const std::string& text);
// A sequence of statements (as print(Stmt) writes them); one statement is returned as itself.
Stmt parse_stmt(const std::string& text, const ParseScope& scope = {});

}  // namespace anvil::tir
