#include "tir/parser.h"

#include <cctype>
#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_map>

#include "ir/intrinsics.h"
#include "support/error.h"
#include "support/token_cursor.h"
#include "tir/printer.h"
#include "tir/structural_equal.h"
#include "tir/text_lexer.h"

namespace anvil::tir {

namespace {

using text::fail_at;
using text::lex_text;
using text::Tok;
using text::Token;

// ---------------------------------------------------------------------------------------------
// Parser

struct Decl {
    std::string name;
    Ref<Var> var;
    Ref<Buffer> buffer;
};

class Parser : anvil::text::TokenCursor<Token> {
public:
    // Printed loop IR nests a few dozen levels (found by fuzzing: a stack overflow before).
    explicit Parser(const std::string& text)
        : TokenCursor(lex_text(text), 512, "statements, parentheses or operators") {}

    void declare_scope(const ParseScope& scope) {
        for (const auto& v : scope.vars) scope_.push_back({v->name, v, {}});
        for (const auto& b : scope.buffers) scope_.push_back({b->name, {}, b});
    }

    Ref<PrimFunc> func() {
        expect_keyword("prim_func", "to start a function");
        std::string name;
        if (peek().kind == Tok::String) {
            name = next().text;
        } else {
            name = ident("the function's name");
        }
        auto [buffers, scalars] = params();
        Stmt body = block("the function body");
        expect_end("after the function");
        return make_prim_func(name, buffers, body, scalars);
    }

    Stmt stmt_list() {
        std::vector<Stmt> list;
        while (peek().kind != Tok::End) list.push_back(stmt());
        return list.size() == 1 ? list[0] : Stmt(new SeqStmt(std::move(list)));
    }

private:
    // ---- tokens

    std::string ident(const std::string& what) {
        if (peek().kind != Tok::Ident) expected(what);
        return next().text;
    }
    std::string string_literal(const std::string& what) {
        if (peek().kind != Tok::String) expected(what + " (a string in double quotes)");
        return next().text;
    }
    DataType dtype() {
        const Token& t = peek();
        if (t.kind != Tok::Ident) expected("a type such as float32 or int64x4");
        DataType out;
        if (!DataType::parse(t.text, &out)) fail(t, "unknown type '" + t.text + "'");
        next();
        return out;
    }

    // Runs a checking constructor; its complaint becomes a parse error at `at`.
    template <typename F>
    auto build(const Token& at, const std::string& what, F&& f) -> decltype(f()) {
        try {
            return f();
        } catch (const Error& e) {
            std::string msg = e.what();
            if (auto k = msg.find("check failed: "); k != std::string::npos) {
                auto colon = msg.find(": ", k + 14);
                msg = colon == std::string::npos ? msg.substr(k + 14) : msg.substr(colon + 2);
            }
            fail(at, "ill-typed " + what + ": " + msg);
        }
    }

    // ---- scopes

    const Decl* lookup(const std::string& name) const {
        for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
            if (it->name == name) return &*it;
        }
        return nullptr;
    }
    Ref<Var> find_var(const Token& t) const {
        const Decl* d = lookup(t.text);
        if (!d) fail(t, "undefined variable '" + t.text + "'");
        if (!d->var.defined()) fail(t, "'" + t.text + "' is a buffer; expected a variable");
        return d->var;
    }
    Ref<Buffer> find_buffer(const Token& t) const {
        const Decl* d = lookup(t.text);
        if (!d) fail(t, "undefined buffer '" + t.text + "'");
        if (!d->buffer.defined()) fail(t, "'" + t.text + "' is a variable; expected a buffer");
        return d->buffer;
    }
    std::string declared_name(const std::string& what) {
        const Token& t = peek();
        std::string name = ident(what);
        if (is_reserved_name(name)) fail(t, "'" + name + "' is reserved and cannot name " + what);
        return name;
    }

    // ---- declarations

    std::optional<std::string> scope_suffix() {
        if (peek().kind == Tok::String) return next().text;
        if (peek().kind != Tok::Ident) return std::nullopt;
        std::string s = next().text;
        while (is_punct(".") && peek(1).kind == Tok::Ident) {
            next();
            s += "." + next().text;
        }
        return s;
    }

    std::vector<PrimExpr> expr_list(const char* close, const std::string& context) {
        std::vector<PrimExpr> out;
        if (accept(close)) return out;
        do {
            out.push_back(expr());
        } while (accept(","));
        expect(close, context);
        return out;
    }

    // After `NAME ':' DTYPE`: '[' shape ']' scope?
    Ref<Buffer> buffer_rest(const std::string& name, DataType t, const Token& at) {
        expect("[", "to open the buffer's shape");
        std::vector<PrimExpr> shape = expr_list("]", "to close the buffer's shape");
        std::string scope = scope_suffix().value_or("global");
        return build(at, "buffer '" + name + "'",
                     [&] { return make_buffer(name, t, shape, scope); });
    }

    // Scalars are declared before any shape is read, since `A: float32[n], n: int32` is how
    // the printer writes a shape that depends on a scalar parameter.
    std::pair<std::vector<Ref<Buffer>>, std::vector<Ref<Var>>> params() {
        expect("(", "after the function's name");
        struct Pending {
            std::string name;
            DataType t;
            Token at;
            size_t shape_pos;
        };
        std::vector<Pending> pending;
        std::vector<Ref<Var>> scalars;
        if (!is_punct(")")) {
            do {
                Token at = peek();
                std::string name = declared_name("a parameter");
                expect(":", "after the parameter's name");
                DataType t = dtype();
                if (is_punct("[")) {
                    pending.push_back({name, t, at, pos_});
                    skip_brackets();
                    scope_suffix();
                } else {
                    scalars.push_back(make_var(name, t));
                    scope_.push_back({name, scalars.back(), {}});
                }
            } while (accept(","));
        }
        expect(")", "to close the parameter list");
        size_t end = pos_;
        std::vector<Ref<Buffer>> buffers;
        // A name no scalar declares is a dimension variable, bound from the argument's shape
        // when the kernel is called (ir::dimension_var): int32 like loop variables, int64 (the
        // graph's dimension type) inside a cast such as cast<int32>(n).
        new_dim_type_ = DataType::int32();
        for (const Pending& p : pending) {
            pos_ = p.shape_pos;
            buffers.push_back(buffer_rest(p.name, p.t, p.at));
        }
        new_dim_type_.reset();
        for (const auto& b : buffers) scope_.push_back({b->name, {}, b});
        pos_ = end;
        return {buffers, scalars};
    }

    void skip_brackets() {
        int depth = 0;
        do {
            if (peek().kind == Tok::End) expected("']' to close the buffer's shape");
            if (is_punct("[") || is_punct("(")) ++depth;
            if (is_punct("]") || is_punct(")")) --depth;
            next();
        } while (depth > 0);
    }

    // ---- statements

    Stmt block(const std::string& what) {
        expect("{", "to open " + what);
        std::vector<Stmt> list = stmts_until_brace(what);
        return list.size() == 1 ? list[0] : Stmt(new SeqStmt(std::move(list)));
    }

    std::vector<Stmt> stmts_until_brace(const std::string& what) {
        std::vector<Stmt> list;
        while (!accept("}")) {
            if (peek().kind == Tok::End) expected("'}' to close " + what);
            list.push_back(stmt());
        }
        return list;
    }

    Stmt stmt() {
        const Token& t = peek();
        NestingGuard guard = nest(t);
        if (is_keyword("seq")) {
            next();
            expect("{", "after 'seq'");
            return Stmt(new SeqStmt(stmts_until_brace("the seq block")));
        }
        if (t.kind == Tok::Ident) {
            if (t.text == "for") return for_stmt();
            if (t.text == "let") return let_stmt();
            if (t.text == "allocate") return allocate_stmt();
            if (t.text == "if") return if_stmt();
            if (t.text == "assert") return assert_stmt();
            if (t.text == "call_packed") return call_packed_stmt();
            if (t.text == "evaluate") {
                next();
                expect("(", "after 'evaluate'");
                PrimExpr e = expr();
                expect(")", "to close 'evaluate('");
                return make_evaluate(e);
            }
            if (is_punct("[", 1)) return store_stmt();
        }
        expected(
            "a statement (for, let, allocate, if, assert, evaluate, call_packed, seq or a "
            "store 'B[i] = v')");
    }

    template <typename F>
    Stmt with_decl(Decl d, F&& body) {
        scope_.push_back(std::move(d));
        Stmt s = body();
        retired_[scope_.back().name] = scope_.back();
        scope_.pop_back();
        return s;
    }

    // The printer gives one object one name, so a name declared again after its first
    // declaration went out of scope (sibling loops after unrolling) is the same object again,
    // as long as it agrees with it. Distinct objects always print under distinct names.
    const Decl* retired(const std::string& name) const {
        if (lookup(name)) return nullptr;  // in scope: a new declaration shadows it
        auto it = retired_.find(name);
        return it == retired_.end() ? nullptr : &it->second;
    }
    Ref<Var> declare_var(const std::string& name, DataType t) {
        const Decl* d = retired(name);
        if (d && d->var.defined() && d->var->dtype == t) return d->var;
        return make_var(name, t);
    }
    Ref<Buffer> declare_buffer(Ref<Buffer> b) {
        const Decl* d = retired(b->name);
        if (!d || !d->buffer.defined()) return b;
        const Buffer& old = *d->buffer;
        if (old.dtype != b->dtype || old.scope != b->scope || old.shape.size() != b->shape.size()) {
            return b;
        }
        for (size_t k = 0; k < old.shape.size(); ++k) {
            if (!structural_equal(make_evaluate(old.shape[k]), make_evaluate(b->shape[k]))) {
                return b;
            }
        }
        return d->buffer;
    }

    Stmt for_stmt() {
        const Token at = next();
        std::string name = declared_name("a loop variable");
        std::optional<DataType> t;
        if (accept(":")) t = dtype();
        expect_keyword("in", "to start the loop's range");
        expect("[", "to open the loop's range '[min, end)'");
        PrimExpr min = expr();
        expect(",", "between the loop's min and end");
        const Token& end_at = peek();
        PrimExpr end = expr();
        expect(")", "to close the loop's range '[min, end)'");
        PrimExpr extent = loop_extent(min, end, end_at);
        ForKind kind = ForKind::Serial;
        std::string tag;
        if (peek().kind == Tok::Ident) {
            const Token& k = next();
            if (!parse_for_kind(k.text, &kind)) {
                fail(k, "unknown loop kind '" + k.text + "' (expected serial, parallel, " +
                            "vectorized, unrolled or thread_binding)");
            }
            if (kind == ForKind::ThreadBinding) {
                expect("(", "after 'thread_binding'");
                tag = string_literal("the thread tag");
                expect(")", "to close 'thread_binding('");
            }
        }
        Ref<Var> var = declare_var(name, t.value_or(min.dtype()));
        Stmt body = with_decl({name, var, {}}, [&] { return block("the loop body"); });
        return build(at, "loop '" + name + "'",
                     [&] { return make_for(var, min, extent, kind, body, tag); });
    }

    PrimExpr loop_extent(const PrimExpr& min, const PrimExpr& end, const Token& at) {
        if (is_zero(min)) return end;
        if (auto* add = end.as<Add>()) {
            if (structural_equal(make_evaluate(add->a), make_evaluate(min))) return add->b;
        }
        return build(at, "loop range", [&] { return end - min; });
    }

    Stmt let_stmt() {
        const Token at = next();
        std::string name = declared_name("a let variable");
        std::optional<DataType> t;
        if (accept(":")) t = dtype();
        expect("=", "after the let variable");
        PrimExpr value = expr();
        Ref<Var> var = declare_var(name, t.value_or(value.dtype()));
        Stmt body = with_decl({name, var, {}}, [&] { return block("the let body"); });
        return build(at, "let '" + name + "'", [&] { return make_let(var, value, body); });
    }

    Stmt allocate_stmt() {
        next();
        const Token at = peek();
        std::string name = declared_name("a buffer");
        expect(":", "after the buffer's name");
        DataType t = dtype();
        Ref<Buffer> buffer = declare_buffer(buffer_rest(name, t, at));
        Stmt body = with_decl({name, {}, buffer}, [&] { return block("the allocate body"); });
        return make_allocate(buffer, body);
    }

    Stmt if_stmt() {
        const Token at = next();
        PrimExpr cond = expr();
        Stmt then_case = block("the then-branch");
        Stmt else_case;
        if (is_keyword("else")) {
            next();
            if (is_keyword("if")) {
                else_case = if_stmt();
            } else {
                else_case = block("the else-branch");
            }
        }
        return build(at, "if", [&] { return make_if(cond, then_case, else_case); });
    }

    Stmt assert_stmt() {
        const Token at = next();
        expect("(", "after 'assert'");
        PrimExpr cond = expr();
        expect(",", "between the assert's condition and message");
        std::string message = string_literal("the assert's message");
        std::vector<PrimExpr> args;  // one per {} of the message
        while (accept(",")) args.push_back(expr());
        expect(")", "to close 'assert('");
        Stmt body;
        if (is_punct("{")) body = block("the assert body");
        return build(at, "assert", [&] { return make_assert(cond, message, body, {}, args); });
    }

    // call_packed("name", args): an argument naming a buffer (not indexed) is a tensor,
    // optionally `as [shape]`; anything else is a scalar expression.
    Stmt call_packed_stmt() {
        const Token at = next();
        expect("(", "after 'call_packed'");
        std::string func = string_literal("the registered function's name");
        std::vector<PackedArg> args;
        while (accept(",")) {
            const Token& t = peek();
            const Decl* d = t.kind == Tok::Ident ? lookup(t.text) : nullptr;
            if (!d || !d->buffer.defined() || is_punct("[", 1)) {
                args.push_back(scalar_arg(expr()));
                continue;
            }
            next();
            PackedArg arg = tensor_arg(d->buffer);
            if (is_keyword("as")) {
                next();
                expect("[", "to open the tensor's shape after 'as'");
                arg.shape = expr_list("]", "to close the tensor's shape");
            }
            args.push_back(std::move(arg));
        }
        expect(")", "to close 'call_packed('");
        return build(at, "call_packed", [&] { return make_call_packed(func, std::move(args)); });
    }

    Stmt store_stmt() {
        const Token at = next();
        Ref<Buffer> buffer = find_buffer(at);
        next();  // '['
        std::vector<PrimExpr> indices = expr_list("]", "to close the store's indices");
        expect("=", "after the store's target");
        PrimExpr value = expr();
        return build(at, "store to '" + at.text + "'",
                     [&] { return make_store(buffer, value, indices); });
    }

    // ---- expressions

    PrimExpr expr() {
        NestingGuard guard = nest(peek());
        return binary(0);
    }

    // Operator levels, loosest first; each is left-associative.
    PrimExpr binary(int level) {
        static const std::vector<std::vector<const char*>> kLevels = {
            {"||"}, {"&&"}, {"==", "!="}, {"<", "<=", ">", ">="}, {"+", "-"}, {"*", "/", "%"}};
        if (level == static_cast<int>(kLevels.size())) return unary();
        PrimExpr lhs = binary(level + 1);
        for (;;) {
            const char* op = nullptr;
            for (const char* o : kLevels[level]) {
                if (is_punct(o)) op = o;
            }
            if (!op) return lhs;
            const Token at = next();
            PrimExpr rhs = binary(level + 1);
            lhs = build(at, std::string("operator '") + op + "'",
                        [&] { return apply(op, lhs, rhs); });
        }
    }

    static PrimExpr apply(const std::string& op, const PrimExpr& a, const PrimExpr& b) {
        if (op == "||") return a || b;
        if (op == "&&") return a && b;
        if (op == "==") return eq(a, b);
        if (op == "!=") return ne(a, b);
        if (op == "<") return a < b;
        if (op == "<=") return a <= b;
        if (op == ">") return a > b;
        if (op == ">=") return a >= b;
        if (op == "+") return a + b;
        if (op == "-") return a - b;
        if (op == "*") return a * b;
        if (op == "/") return a / b;
        return a % b;
    }

    PrimExpr unary() {
        const Token& t = peek();
        NestingGuard guard = nest(t);  // `!!!!x` and `- - x` recurse here
        if (accept("!")) {
            PrimExpr a = unary();
            return build(t, "'!'", [&] { return make_not(a); });
        }
        if (accept("-")) {
            // A minus sign directly before a literal is part of it: `-3` is IntImm(-3).
            if (peek().kind == Tok::Number || is_special_float(peek().text)) {
                return literal(next(), true);
            }
            PrimExpr a = unary();
            return build(t, "'-'", [&] { return -a; });
        }
        return primary();
    }

    static bool is_special_float(const std::string& s) {
        return (s.rfind("nan", 0) == 0 || s.rfind("inf", 0) == 0) && is_reserved_name(s);
    }

    PrimExpr literal(const Token& t, bool negative);
    PrimExpr primary();
    PrimExpr call_form(const Token& name);

    std::vector<Decl> scope_;

    // Set while a buffer parameter's shape is read: the type an undeclared name gets there.
    std::optional<DataType> new_dim_type_;
    std::unordered_map<std::string, Decl> retired_;
};

DataType literal_type(const Token& t, bool is_float) {
    const std::string& s = t.suffix;
    if (s.empty()) return is_float ? DataType::float32() : DataType::int32();
    auto bits_of = [&](size_t from) -> int {
        int bits = 0;
        auto r = std::from_chars(s.data() + from, s.data() + s.size(), bits);
        return r.ec == std::errc() && r.ptr == s.data() + s.size() ? bits : -1;
    };
    DataType out;
    if (s == "f") return DataType::float32();
    if (s == "bf16") return DataType::bfloat16();
    if (s[0] == 'f' && DataType::parse("float" + s.substr(1), &out) && bits_of(1) > 0) return out;
    if (!is_float && s[0] == 'i' && DataType::parse("int" + s.substr(1), &out) && bits_of(1) > 0) {
        return out;
    }
    if (!is_float && s[0] == 'u' && DataType::parse("uint" + s.substr(1), &out) && bits_of(1) > 0) {
        return out;
    }
    fail_at(t.line, t.col,
            "unknown literal suffix '" + s + "' in '" + t.text + s +
                "' (expected i8..i64, u8..u64, f, f16, f64 or bf16)");
}

PrimExpr Parser::literal(const Token& t, bool negative) {
    if (t.kind == Tok::Ident) {  // nanf, inff64, ...
        Token suffix_only = t;
        suffix_only.suffix = t.text.substr(3);
        DataType type = literal_type(suffix_only, true);
        double v = t.text[0] == 'n' ? std::numeric_limits<double>::quiet_NaN()
                                    : std::numeric_limits<double>::infinity();
        return make_float(type, negative ? -v : v);
    }
    bool is_float = t.text.find_first_of(".eE") != std::string::npos;
    DataType type = literal_type(t, is_float);
    if (type.is_floating()) {
        double v = 0;
        auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
        if (r.ec != std::errc()) fail(t, "float literal '" + t.text + "' out of range");
        return make_float(type, negative ? -v : v);
    }
    uint64_t v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc()) fail(t, "integer literal '" + t.text + "' out of range");
    // Wraps like the IR's integers: -1u64 is all ones, -9223372036854775808i64 is INT64_MIN.
    return make_int(type, static_cast<int64_t>(negative ? uint64_t{0} - v : v));
}

PrimExpr Parser::primary() {
    const Token& t = peek();
    if (t.kind == Tok::Number) return literal(next(), false);
    if (accept("(")) {
        PrimExpr e = expr();
        expect(")", "to close the parenthesis");
        return e;
    }
    if (t.kind != Tok::Ident) expected("an expression");
    const Token name = next();
    if (name.text == "true" || name.text == "false") return make_bool(name.text == "true");
    if (is_special_float(name.text)) return literal(name, false);
    if (name.text == "cast" || name.text == "call" || is_punct("(")) return call_form(name);
    if (is_punct("[")) {
        Ref<Buffer> buffer = find_buffer(name);
        next();
        std::vector<PrimExpr> indices = expr_list("]", "to close the load's indices");
        return build(name, "load from '" + name.text + "'",
                     [&] { return make_load(buffer, indices); });
    }
    if (new_dim_type_ && !lookup(name.text)) {
        Ref<Var> v = make_var(name.text, *new_dim_type_);
        scope_.push_back({name.text, v, {}});
        return v;
    }
    return find_var(name);
}

PrimExpr Parser::call_form(const Token& name) {
    const std::string& f = name.text;
    std::optional<DataType> type;
    if (f == "cast" || f == "call") {
        expect("<", "after '" + f + "' (as in " + f + "<float32>(...))");
        type = dtype();
        expect(">", "to close the type of '" + f + "<'");
    }
    expect("(", "to open the arguments of '" + f + "'");
    std::string callee;
    if (f == "call") {
        callee = string_literal("the called function's name");
        if (!is_punct(")")) expect(",", "after the called function's name");
    }
    std::optional<DataType> dim_type = new_dim_type_;
    if (f == "cast" && new_dim_type_) new_dim_type_ = DataType::int64();
    std::vector<PrimExpr> args = expr_list(")", "to close the arguments of '" + f + "'");
    new_dim_type_ = dim_type;
    auto want = [&](size_t n) {
        if (args.size() != n) {
            fail(name, "'" + f + "' takes " + std::to_string(n) + " argument" +
                           (n == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
        }
    };
    auto lanes = [&](size_t i) {
        const int64_t* v = as_const_int(args[i]);
        if (!v) fail(name, "the lane count of '" + f + "' must be an integer literal");
        return static_cast<int>(*v);
    };
    std::string what = "'" + f + "'";
    if (f == "call") return make_call(*type, callee, args);
    if (f == "cast") {
        want(1);
        return build(name, what, [&] { return make_cast(*type, args[0]); });
    }
    if (f == "floordiv" || f == "floormod" || f == "min" || f == "max") {
        want(2);
        return build(name, what, [&] {
            if (f == "floordiv") return floordiv(args[0], args[1]);
            if (f == "floormod") return floormod(args[0], args[1]);
            return f == "min" ? min(args[0], args[1]) : max(args[0], args[1]);
        });
    }
    if (f == "select") {
        want(3);
        return build(name, what, [&] { return select(args[0], args[1], args[2]); });
    }
    if (f == "ramp") {
        want(3);
        return build(name, what, [&] { return make_ramp(args[0], args[1], lanes(2)); });
    }
    if (f == "broadcast") {
        want(2);
        return build(name, what, [&] { return make_broadcast(args[0], lanes(1)); });
    }
    if (f == "likely") {
        want(1);
        return make_call(args[0].dtype(), intrin::kLikely, args);
    }
    if (intrin::is_math(f)) {
        want(static_cast<size_t>(intrin::arity(f)));
        return make_call(args[0].dtype(), f, args);
    }
    fail(name, "unknown function '" + f + "' (write call<TYPE>(\"" + f +
                   "\", ...) for an "
                   "external function)");
}

}  // namespace

Ref<PrimFunc> parse_prim_func(const std::string& text) {
    return Parser(text).func();
}

Stmt parse_stmt(const std::string& text, const ParseScope& scope) {
    Parser p(text);
    p.declare_scope(scope);
    return p.stmt_list();
}

}  // namespace anvil::tir
