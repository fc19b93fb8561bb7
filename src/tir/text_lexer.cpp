#include "tir/text_lexer.h"

#include <cstring>
#include <string_view>

#include "support/token_cursor.h"

namespace anvil::tir::text {

using anvil::text::is_digit;
using anvil::text::is_name_start;
using anvil::text::TextScanner;

std::string describe(const Token& t) {
    return anvil::text::describe_token(t);
}

namespace {

void punct(TextScanner& scan, Token& t) {
    static constexpr std::string_view kPairs[] = {"<=", ">=", "==", "!=", "&&", "||"};
    t.kind = Tok::Punct;
    t.text = scan.take_pair(kPairs);
    if (!t.text.empty()) return;
    if (!std::strchr("()[]{}<>!+-*/%,:=.", scan.at())) {
        fail_at(scan.line(), scan.col(), std::string("unexpected character '") + scan.at() + "'");
    }
    t.text += scan.take();
}

}  // namespace

std::vector<Token> lex_text(const std::string& text) {
    TextScanner scan(text);
    std::vector<Token> out;
    for (;;) {
        while (scan.skip_space() || scan.skip_line_comment()) continue;
        Token t;
        t.line = scan.line();
        t.col = scan.col();
        if (scan.at_end()) {
            out.push_back(t);
            return out;
        }
        char c = scan.at();
        if (is_name_start(c)) {
            t.kind = Tok::Ident;
            t.text = scan.take_name();
        } else if (is_digit(c)) {
            t.kind = Tok::Number;
            scan.take_number(t.text, t.suffix);
        } else if (c == '"') {
            t.kind = Tok::String;
            t.text = scan.take_string(t.line, t.col);
        } else {
            punct(scan, t);
        }
        out.push_back(std::move(t));
    }
}

}  // namespace anvil::tir::text
