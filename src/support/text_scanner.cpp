#include "support/text_scanner.h"

#include <cctype>

#include "support/error.h"

namespace anvil::text {

void fail_at(int line, int col, const std::string& message) {
    user_error() << line << ":" << col << ": " << message;
    ANVIL_UNREACHABLE();
}

bool is_name_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool is_dotted_name(std::string_view s) {
    size_t start = 0;
    for (size_t part = 0;; ++part) {
        size_t end = s.find('.', start);
        std::string_view p = s.substr(start, end == std::string_view::npos ? s.npos : end - start);
        if (p.empty()) return false;
        bool digits = true;
        for (char c : p) {
            if (!is_name_char(c)) return false;
            digits = digits && is_digit(c);
        }
        // The last part names: `%a.b.0` is item 0 of `%a.b`.
        if (end == std::string_view::npos) return part > 0 && !digits;
        start = end + 1;
    }
}

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c));
}

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                out += c;
        }
    }
    return out + "\"";
}

char TextScanner::take() {
    char c = s_[i_++];
    if (c == '\n') {
        ++line_;
        col_ = 1;
    } else {
        ++col_;
    }
    return c;
}

bool TextScanner::skip_space() {
    bool any = false;
    while (!at_end() && std::isspace(static_cast<unsigned char>(at()))) {
        take();
        any = true;
    }
    return any;
}

bool TextScanner::skip_line_comment() {
    if (at(0) != '/' || at(1) != '/') return false;
    while (!at_end() && at() != '\n') take();
    return true;
}

bool TextScanner::skip_block_comment() {
    if (at(0) != '/' || at(1) != '*') return false;
    int line = line_, col = col_;
    take();
    take();
    while (!(at(0) == '*' && at(1) == '/')) {
        if (at_end()) fail_at(line, col, "unterminated comment");
        take();
    }
    take();
    take();
    return true;
}

std::string TextScanner::take_name() {
    std::string out;
    while (is_name_char(at())) out += take();
    return out;
}

std::string TextScanner::take_digits() {
    std::string out;
    while (is_digit(at())) out += take();
    return out;
}

void TextScanner::take_number(std::string& digits, std::string& suffix) {
    digits = take_digits();
    if (at(0) == '.' && is_digit(at(1))) {
        digits += take();
        digits += take_digits();
    }
    bool sign = at(1) == '+' || at(1) == '-';
    if ((at(0) == 'e' || at(0) == 'E') && is_digit(at(sign ? 2 : 1))) {
        digits += take();
        if (sign) digits += take();
        digits += take_digits();
    }
    suffix = take_name();
}

std::string TextScanner::take_string(int line, int col) {
    std::string out;
    take();
    for (;;) {
        if (at_end() || at() == '\n') fail_at(line, col, "unterminated string");
        char c = take();
        if (c == '"') return out;
        if (c != '\\') {
            out += c;
            continue;
        }
        if (at_end()) fail_at(line, col, "unterminated string");
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

std::string TextScanner::take_pair(std::span<const std::string_view> pairs) {
    for (std::string_view p : pairs) {
        if (at(0) == p[0] && at(1) == p[1]) {
            std::string out(1, take());
            out += take();
            return out;
        }
    }
    return {};
}

}  // namespace anvil::text
