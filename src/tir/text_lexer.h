// Tokens of the loop IR's text form, for tir/parser.cpp.
//
// Identifiers, numbers (digits, optional fraction and exponent, then an optional type suffix
// such as i64, u8, f, f64, bf16), strings in double quotes with \n \t \" \\ escapes, and the
// punctuation ( ) [ ] { } < > <= >= == != ! && || + - * / % , : = . ; `//` starts a comment
// that runs to the end of the line. Positions are 1-based line and column. The characters are
// scanned by support/text_scanner.h, which the graph IR's lexer shares.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/text_scanner.h"

namespace anvil::tir::text {

enum class Tok : uint8_t { Ident, Number, String, Punct, End };

struct Token {
    Tok kind = Tok::End;
    std::string text;    // identifier, punctuation, string contents, or a number's digits
    std::string suffix;  // a number's type suffix ("i64", "f", "bf16"), possibly empty
    int line = 1;
    int col = 1;
};

// The tokens of `text`, ending with one Tok::End. Throws UserError on a bad character or string.
std::vector<Token> lex_text(const std::string& text);

// Throws UserError("line:col: message").
using anvil::text::fail_at;

// How a token reads in "found ..." messages: 'for', string "x", end of input.
std::string describe(const Token& t);

}  // namespace anvil::tir::text
