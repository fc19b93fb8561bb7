// The graph text parser's reads of types and dimensions (graph/parser.h): Tensor, tuple, fn,
// Sequence and Optional types, element types, and dimension expressions with the symbolic
// dimensions they name (one variable per name). The module parser derives from it.
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/text_lexer.h"
#include "graph/type.h"
#include "support/error.h"
#include "support/token_cursor.h"

namespace anvil::graph::text {

class TypeReader : protected anvil::text::TokenCursor<Token> {
protected:
    // Printed graph IR nests a few levels (bindings name the operands).
    explicit TypeReader(std::vector<Token> toks)
        : TokenCursor(std::move(toks), 256, "brackets, blocks, types or dimension expressions") {}

    // Runs a checking constructor; its complaint becomes a parse error at `at`.
    template <typename F>
    auto build(const Token& at, const std::string& what, F&& f) -> decltype(f()) {
        try {
            return f();
        } catch (const Error& e) {
            fail(at, what + ": " + e.what());
        }
    }

    // After '(': the items `read` reads up to ')', separated by commas. The flag is set for one
    // item without a comma, `(x)`, which is x in parentheses rather than a tuple, `(x,)`.
    template <typename F>
    auto tuple_items(F&& read, const std::string& where)
        -> std::pair<std::vector<decltype(read())>, bool> {
        std::vector<decltype(read())> items;
        bool comma = false;
        while (!accept(")")) {
            items.push_back(read());
            comma = accept(",");
            if (!comma && !is_punct(")")) expected("',' or ')' " + where);
        }
        bool parenthesized = items.size() == 1 && !comma;
        return {std::move(items), parenthesized};
    }

    // A non-negative integer literal; `what` names it when the next token is not one.
    int64_t integer(const std::string& what);
    Type type();
    // After 'Sequence': [(?, 3), float32], [?, float32] or [empty, float32].
    Type sequence_type();
    DataType dtype();
    // Dimensions: `t` is the type a bare literal or a new symbolic name takes here. Conditions
    // on dimensions (bind_values' checks) add comparisons, `&&`, `||`, `!` and select(c, a, b).
    PrimExpr dim(DataType t);
    PrimExpr dim_and(DataType t);
    PrimExpr dim_compare(DataType t);
    PrimExpr dim_sum(DataType t);
    PrimExpr dim_term(DataType t);
    PrimExpr dim_atom(DataType t);

    std::unordered_map<std::string, Ref<anvil::Var>> dim_vars_;

private:
    // Dimension arithmetic on two constants, refused when it overflows 64 bits (it would fold
    // to a wrapped-around size).
    PrimExpr arith(const Token& op, anvil::ExprKind kind, const PrimExpr& a, const PrimExpr& b);
};

}  // namespace anvil::graph::text
