// Tokens of the graph IR's text form, for graph/parser.cpp.
//
// Identifiers may contain dots (`nn.conv2d`, `image.resize2d`); `%name` and `@name` are one
// token each (a local and a global name; `@"any text"` quotes a global name that is not an
// identifier). Numbers are digits with an optional fraction, exponent and type suffix; right
// after a '.' only the digits are taken, so that `%3.0.1` reads as two tuple projections.
// Strings are in double quotes with \n \t \" \\ escapes. `//` comments run to the end of the
// line and `/* */` comments (the printer's type annotations) may span lines. Any other character
// is one punctuation token, except the pairs -> <= >= == != && ||: the module parser only
// matches braces inside loop-IR kernels, which tir::parse_prim_func then reads itself. The
// characters are scanned by support/text_scanner.h, which the loop IR's lexer shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "support/text_scanner.h"

namespace anvil::graph::text {

enum class Tok : uint8_t { Ident, Local, Global, Number, String, Punct, End };

struct Token {
    Tok kind = Tok::End;
    std::string text;    // identifier, name without % or @, punctuation, string contents, digits
    std::string suffix;  // a number's type suffix ("i64", "f"), possibly empty
    int line = 1;
    int col = 1;
    size_t offset = 0;  // byte offset in the text, for slicing out kernels
};

// The tokens of `text`, ending with one Tok::End. Throws UserError on an unterminated string or
// comment.
std::vector<Token> lex_text(const std::string& text);

// Throws UserError("line:col: message").
using anvil::text::fail_at;

// How a token reads in "found ..." messages: 'fn', '%x', string "x", end of input.
std::string describe(const Token& t);

}  // namespace anvil::graph::text
