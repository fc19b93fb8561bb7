#include "graph/text_lexer.h"

#include <cctype>
#include <cstring>

#include "support/error.h"

namespace anvil::graph::text {

void fail_at(int line, int col, const std::string& message) {
    user_error() << line << ":" << col << ": " << message;
    ANVIL_UNREACHABLE();
}

std::string describe(const Token& t) {
    switch (t.kind) {
        case Tok::End:
            return "end of input";
        case Tok::String:
            return "string \"" + t.text + "\"";
        case Tok::Local:
            return "'%" + t.text + "'";
        case Tok::Global:
            return "'@" + t.text + "'";
        case Tok::Number:
            return "'" + t.text + t.suffix + "'";
        default:
            return "'" + t.text + "'";
    }
}

namespace {

bool is_alpha(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_alnum(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c));
}

class Lexer {
public:
    explicit Lexer(const std::string& text) : s_(text) {}

    std::vector<Token> run() {
        std::vector<Token> out;
        for (;;) {
            skip_space();
            Token t;
            t.line = line_;
            t.col = col_;
            t.offset = i_;
            if (i_ >= s_.size()) {
                out.push_back(t);
                return out;
            }
            char c = s_[i_];
            bool after_dot =
                !out.empty() && out.back().kind == Tok::Punct && out.back().text == ".";
            if (is_alpha(c)) {
                identifier(t);
            } else if (is_digit(c)) {
                number(t, after_dot);
            } else if (c == '"') {
                t.kind = Tok::String;
                t.text = string(t);
            } else if (c == '%' && is_alnum(at(1))) {
                take();
                t.kind = Tok::Local;
                while (is_alnum(at(0))) t.text += take();
            } else if (c == '@' && (is_alpha(at(1)) || at(1) == '"')) {
                take();
                t.kind = Tok::Global;
                if (at(0) == '"') {
                    t.text = string(t);
                } else {
                    while (is_alnum(at(0)) || (at(0) == '.' && is_alpha(at(1)))) t.text += take();
                }
            } else {
                punct(t);
            }
            out.push_back(std::move(t));
        }
    }

private:
    char at(size_t k) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
    char take() {
        char c = s_[i_++];
        if (c == '\n') {
            ++line_;
            col_ = 1;
        } else {
            ++col_;
        }
        return c;
    }

    void skip_space() {
        while (i_ < s_.size()) {
            if (std::isspace(static_cast<unsigned char>(s_[i_]))) {
                take();
            } else if (at(0) == '/' && at(1) == '/') {
                while (i_ < s_.size() && s_[i_] != '\n') take();
            } else if (at(0) == '/' && at(1) == '*') {
                int line = line_, col = col_;
                take();
                take();
                while (!(at(0) == '*' && at(1) == '/')) {
                    if (i_ >= s_.size()) fail_at(line, col, "unterminated comment");
                    take();
                }
                take();
                take();
            } else {
                return;
            }
        }
    }

    // A dot joins identifiers only when a letter follows, so `nn.relu` is one token.
    void identifier(Token& t) {
        t.kind = Tok::Ident;
        while (is_alnum(at(0)) || (at(0) == '.' && is_alpha(at(1)))) t.text += take();
    }

    // digits ('.' digits)? (('e'|'E') ('+'|'-')? digits)? suffix?
    void number(Token& t, bool digits_only) {
        t.kind = Tok::Number;
        while (is_digit(at(0))) t.text += take();
        if (digits_only) return;
        if (at(0) == '.' && is_digit(at(1))) {
            t.text += take();
            while (is_digit(at(0))) t.text += take();
        }
        bool sign = at(1) == '+' || at(1) == '-';
        if ((at(0) == 'e' || at(0) == 'E') && is_digit(at(sign ? 2 : 1))) {
            t.text += take();
            if (sign) t.text += take();
            while (is_digit(at(0))) t.text += take();
        }
        while (is_alnum(at(0))) t.suffix += take();
    }

    std::string string(const Token& t) {
        std::string out;
        take();
        for (;;) {
            if (i_ >= s_.size() || at(0) == '\n') fail_at(t.line, t.col, "unterminated string");
            char c = take();
            if (c == '"') return out;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= s_.size()) fail_at(t.line, t.col, "unterminated string");
            char e = take();
            switch (e) {
                case 'n':
                    out += '\n';
                    break;
                case 't':
                    out += '\t';
                    break;
                case '"':
                case '\\':
                    out += e;
                    break;
                default:
                    fail_at(line_, col_ - 2,
                            std::string("unknown escape '\\") + e +
                                "' in string (expected \\n, \\t, \\\" or \\\\)");
            }
        }
    }

    void punct(Token& t) {
        t.kind = Tok::Punct;
        static const char* kTwo[] = {"->", "<=", ">=", "==", "!=", "&&", "||"};
        for (const char* p : kTwo) {
            if (at(0) == p[0] && at(1) == p[1]) {
                t.text += take();
                t.text += take();
                return;
            }
        }
        t.text += take();
    }

    const std::string& s_;
    size_t i_ = 0;
    int line_ = 1;
    int col_ = 1;
};

}  // namespace

std::vector<Token> lex_text(const std::string& text) {
    return Lexer(text).run();
}

}  // namespace anvil::graph::text
