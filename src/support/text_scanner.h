// Character-level scanning shared by the IR text lexers (tir/text_lexer.cpp and
// graph/text_lexer.cpp) and the string quoting their printers use.
//
// TextScanner is a cursor over the text that keeps the 1-based line and column of the next
// character. Its skip_* and take_* pieces are what both text forms spell alike: white space,
// `//` and `/* */` comments, names (a letter or '_', then letters, digits and '_'), numbers with an
// optional fraction, exponent and type suffix, double-quoted strings with \n \t \" \\ escapes,
// and two-character punctuation. Each lexer owns its token loop: it picks the pieces its
// language has, in its own order, and scans its own tokens (graph's `%x`, `@x`, dotted names)
// with at() and take().
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace anvil::text {

// Throws UserError("line:col: message").
[[noreturn]] void fail_at(int line, int col, const std::string& message);

bool is_name_start(char c);  // a letter or '_'
bool is_name_char(char c);   // a letter, a digit or '_'
bool is_digit(char c);
// True if `s` is names joined by single dots whose last part is not all digits
// (`features.0.0_weight`, `conv1.bias`): the graph text reads such a `%name` as one variable,
// where `%5.0`, `%x.1` and `%a.b.0` (item 0 of `%a.b`) are tuple projections.
bool is_dotted_name(std::string_view s);

// `s` in double quotes, with the escapes TextScanner::take_string reads back.
std::string quote(const std::string& s);

class TextScanner {
public:
    explicit TextScanner(const std::string& text) : s_(text) {}

    bool at_end() const { return i_ >= s_.size(); }
    // The character `k` places ahead; '\0' past the end.
    char at(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
    char take();
    int line() const { return line_; }
    int col() const { return col_; }
    size_t offset() const { return i_; }

    // Each skips what it names, if the text continues with it, and says whether it did.
    bool skip_space();
    bool skip_line_comment();   // `//` to the end of the line
    bool skip_block_comment();  // `/* */`, possibly over lines; UserError if it is not closed

    std::string take_name();  // name characters, possibly none
    std::string take_digits();
    // digits ('.' digits)? (('e'|'E') ('+'|'-')? digits)?, then a suffix of name characters
    // ("i64", "f") into `suffix`.
    void take_number(std::string& digits, std::string& suffix);
    // A string in double quotes: its contents with escapes resolved. An unterminated string is
    // reported at `line`:`col`, where its token starts.
    std::string take_string(int line, int col);
    // The first of `pairs` (two-character punctuation such as "<=") the text continues with,
    // taken; empty if none.
    std::string take_pair(std::span<const std::string_view> pairs);

private:
    const std::string& s_;
    size_t i_ = 0;
    int line_ = 1;
    int col_ = 1;
};

}  // namespace anvil::text
