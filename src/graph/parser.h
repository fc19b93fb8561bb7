// Reads the graph IR's text form (see graph/printer.h) back into IR.
//
// Ops are looked up by name in the given table; attribute values are written into a clone of
// the op's default attributes through their visit_fields, so only fields the op declares can be
// set and each takes its declared kind of value. Nodes are built with the checking
// constructors, which re-derive every type: `/* ty=... */` annotations are comments. A `%name`
// resolves to the innermost enclosing definition: a parameter, a let variable, a binding, or an
// entry of the scope given to parse_expr; redefining a name that is visible is an error. A
// function body sees no enclosing names; a `{ }` block's let variables end with it while its
// bindings stay visible after it (see graph/printer.h). Every error is an anvil::UserError
// reading `line:column: message`.
//
// Grammar (`*` repeats, `?` is optional; whitespace, `// ...` and `/* ... */` are ignored):
//   module   := (def | kernel)* metadata?
//   def      := 'def' GLOBAL '(' params ')' ('->' type)? '{' block '}'
//   kernel   := 'prim_func' ...                   -- tir::parse_prim_func's syntax, up to its '}'
//   params   := (LOCAL ':' type (',' LOCAL ':' type)*)? (','? 'primitive' '=' INT)?
//   block    := (binding | let | dataflow)* expr
//   binding  := LOCAL '=' expr ';'                -- names expr for the rest of the block
//   dataflow := 'dataflow' '{' binding* 'output' LOCAL (',' LOCAL)* ';' '}'
//                                                 -- Relax's dataflow block: only the names
//                                                 -- after 'output' stay visible after it
//   let      := 'let' LOCAL (':' type)? '=' expr ';'     -- the rest of the block is its body
//   expr     := primary ('.' INT | '(' exprs? ')')*  -- tuple projection, call of a function
//   primary  := LOCAL | 'meta' '[' 'Constant' ']' '[' INT ']'
//             | OPNAME '(' (exprs (',' attr)* | attr (',' attr)*)? ')'
//             | 'call_tir' '(' GLOBAL ',' '(' exprs? ')' ',' type (',' '(' dims ')')? ')'
//             | 'call_packed' '(' STRING ',' '(' exprs? ')' ',' type ')'
//                                                 -- destination-passing calls (ops/call_tir.h)
//             | '(' ')' | '(' expr ')' | '(' expr ',' (expr (',' expr)*)? ','? ')'
//             | 'fn' '(' params ')' ('->' type)? '{' block '}'
//             | '{' block '}'                     -- a scope (a Let in operand position)
//   attr     := IDENT '=' value
//   value    := ('-')? NUMBER | 'nan' | 'inf' | '-' 'inf' | 'True' | 'False' | STRING | DTYPE
//             | '[' (value (',' value)*)? ']'
//             | '(' (dim (',' dim)* ','?)? ')'   -- a shape, symbolic dimensions allowed
//   type     := 'Tensor' '[' '(' (dim (',' dim)* ','?)? ')' ',' DTYPE ']'
//             | '(' (type (',' type)* ','?)? ')' | 'fn' '(' (type (',' type)*)? ')' '->' type
//   dim      := INT | IDENT | dim ('+' | '-' | '*' | '/' | '%') dim | '(' dim ')'
//             | 'cast' '<' 'int64' '>' '(' dim ')' | ('floordiv' | 'floormod' | 'min' | 'max')
//               '(' dim ',' dim ')'
//             | dim ('==' | '!=' | '<' | '<=' | '>' | '>=' | '&&' | '||') dim | '!' dim
//             | 'true' | 'false' | 'select' '(' dim ',' dim ',' dim ')'
//                                                 -- conditions on dimensions (bind_values)
//   metadata := '#' '[' 'metadata' ']' ('meta' '[' 'Constant' ']' '[' INT ']' ':' type '='
//               STRING)*                          -- STRING: base64 of the raw bytes
// A `->` return type, where given, must equal the body's type. A symbolic dimension (IDENT) is
// one int64 variable per name throughout the text (int32 where it appears as cast<int64>(n)).
#pragma once

#include <string>
#include <vector>

#include "graph/expr.h"
#include "graph/module.h"
#include "graph/op.h"

namespace anvil::graph {

IRModule parse_module(const std::string& text, const OpTable& ops);
// A block (as print(Expr) writes it), optionally followed by a metadata section. `free_vars`
// are visible by name, for text that uses variables it does not bind.
Expr parse_expr(const std::string& text, const OpTable& ops,
                const std::vector<Ref<Var>>& free_vars = {});
// A type as the printer writes it: "Tensor[(1, 3), float32]", "(Tensor[(2), int64], float32)".
Type parse_type(const std::string& text);

}  // namespace anvil::graph
