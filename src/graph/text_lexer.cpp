#include "graph/text_lexer.h"

#include <string_view>

#include "support/token_cursor.h"

namespace anvil::graph::text {

using anvil::text::is_digit;
using anvil::text::is_name_char;
using anvil::text::is_name_start;
using anvil::text::TextScanner;

std::string describe(const Token& t) {
    if (t.kind == Tok::Local) return "'%" + t.text + "'";
    if (t.kind == Tok::Global) return "'@" + t.text + "'";
    return anvil::text::describe_token(t);
}

namespace {

// A dot joins names only when a name follows, so `nn.relu` is one token.
std::string take_dotted_name(TextScanner& scan) {
    std::string out;
    while (is_name_char(scan.at()) || (scan.at() == '.' && is_name_start(scan.at(1)))) {
        out += scan.take();
    }
    return out;
}

// A local's name: dotted when the dots join a parameter name such as `%features.0.weight`
// rather than tuple projections (`%5.0`), as anvil::text::is_dotted_name decides.
std::string take_local_name(TextScanner& scan) {
    size_t n = 0;
    while (is_name_char(scan.at(n)) || (scan.at(n) == '.' && is_name_char(scan.at(n + 1)))) ++n;
    std::string run;
    for (size_t k = 0; k < n; ++k) run += scan.at(k);
    // The longest dotted name the run starts with; the `.digits` after it are projections.
    for (size_t end = run.size();;) {
        if (anvil::text::is_dotted_name(std::string_view(run).substr(0, end))) {
            for (size_t k = 0; k < end; ++k) scan.take();
            return run.substr(0, end);
        }
        size_t dot = run.rfind('.', end - 1);
        if (dot == std::string::npos) return scan.take_name();
        end = dot;
    }
}

}  // namespace

std::vector<Token> lex_text(const std::string& text) {
    static constexpr std::string_view kPairs[] = {"->", "<=", ">=", "==", "!=", "&&", "||"};
    TextScanner scan(text);
    std::vector<Token> out;
    for (;;) {
        while (scan.skip_space() || scan.skip_line_comment() || scan.skip_block_comment()) continue;
        Token t;
        t.line = scan.line();
        t.col = scan.col();
        t.offset = scan.offset();
        if (scan.at_end()) {
            out.push_back(t);
            return out;
        }
        char c = scan.at();
        bool after_dot = !out.empty() && out.back().kind == Tok::Punct && out.back().text == ".";
        if (is_name_start(c)) {
            t.kind = Tok::Ident;
            t.text = take_dotted_name(scan);
        } else if (is_digit(c)) {
            t.kind = Tok::Number;
            if (after_dot) {
                t.text = scan.take_digits();
            } else {
                scan.take_number(t.text, t.suffix);
            }
        } else if (c == '"') {
            t.kind = Tok::String;
            t.text = scan.take_string(t.line, t.col);
        } else if (c == '%' && is_name_char(scan.at(1))) {
            scan.take();
            t.kind = Tok::Local;
            t.text = take_local_name(scan);
        } else if (c == '@' && (is_name_start(scan.at(1)) || scan.at(1) == '"')) {
            scan.take();
            t.kind = Tok::Global;
            t.text = scan.at() == '"' ? scan.take_string(t.line, t.col) : take_dotted_name(scan);
        } else {
            t.kind = Tok::Punct;
            t.text = scan.take_pair(kPairs);
            if (t.text.empty()) t.text = scan.take();
        }
        out.push_back(std::move(t));
    }
}

}  // namespace anvil::graph::text
