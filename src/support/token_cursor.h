// A parser's place in a token list, with the reads and complaints both IR text parsers
// (tir/parser.cpp, graph/parser.cpp) phrase alike: "line:col: expected ')' to close the list,
// found 'x'".
//
// `Token` is a language's token: a `kind` whose enum has Ident, Number, String, Punct and End,
// the `text` (a number's digits, a string's contents), a number's `suffix`, and the `line` and
// `col` it starts at, with a `describe(const Token&)` beside it that says how the token reads
// after "found" (describe_token, unless the language has tokens of its own). The list ends with
// one End token, which peek() and next() never pass.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "support/text_scanner.h"

namespace anvil::text {

// How a token reads in "found ..." messages: end of input, string "x", or its text as written
// in quotes ('for', '1.5f').
template <typename Token>
std::string describe_token(const Token& t) {
    using Kind = decltype(Token::kind);
    switch (t.kind) {
        case Kind::End:
            return "end of input";
        case Kind::String:
            return "string \"" + t.text + "\"";
        case Kind::Number:
            return "'" + t.text + t.suffix + "'";
        default:
            return "'" + t.text + "'";
    }
}

template <typename Token>
class TokenCursor {
protected:
    using Kind = decltype(Token::kind);

    // `max_nesting` bounds nest(); `nesting_what` names what nests in its message.
    TokenCursor(std::vector<Token> toks, int max_nesting, std::string nesting_what)
        : toks_(std::move(toks)),
          max_nesting_(max_nesting),
          nesting_what_(std::move(nesting_what)) {}

    const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
    const Token& next() {
        const Token& t = peek();
        if (pos_ < toks_.size() - 1) ++pos_;
        return t;
    }
    bool is_punct(const char* p, size_t k = 0) const {
        return peek(k).kind == Kind::Punct && peek(k).text == p;
    }
    bool is_keyword(const char* w, size_t k = 0) const {
        return peek(k).kind == Kind::Ident && peek(k).text == w;
    }
    bool accept(const char* p) {
        if (!is_punct(p)) return false;
        next();
        return true;
    }

    [[noreturn]] void fail(const Token& t, const std::string& message) const {
        fail_at(t.line, t.col, message);
    }
    // "expected WHAT, found ..." at the next token.
    [[noreturn]] void expected(const std::string& what) const {
        fail(peek(), "expected " + what + ", found " + describe(peek()));
    }
    void expect(const char* p, const std::string& context) {
        if (!accept(p)) expected(std::string("'") + p + "' " + context);
    }
    void expect_keyword(const char* w, const std::string& context) {
        if (!is_keyword(w)) expected(std::string("'") + w + "' " + context);
        next();
    }
    void expect_end(const std::string& context) {
        if (peek().kind != Kind::End) expected("end of input " + context);
    }

    // One more level of a recursive construct opened at `at`, until the returned guard goes. A
    // recursive-descent parser recurses on each level, and hostile text nesting a million
    // levels deep must be an error rather than a stack overflow.
    struct NestingGuard {
        int* depth;
        ~NestingGuard() { --*depth; }
    };
    [[nodiscard]] NestingGuard nest(const Token& at) {
        if (depth_ >= max_nesting_) {
            fail(at, "nested more than " + std::to_string(max_nesting_) + " levels deep (" +
                         nesting_what_ + ")");
        }
        ++depth_;
        return NestingGuard{&depth_};
    }

    std::vector<Token> toks_;
    size_t pos_ = 0;

private:
    int max_nesting_;
    std::string nesting_what_;
    int depth_ = 0;
};

}  // namespace anvil::text
