#include "graph/parser.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <optional>
#include <unordered_map>

#include "graph/dps_outputs.h"
#include "graph/text_attrs.h"
#include "graph/text_base64.h"
#include "graph/text_lexer.h"
#include "graph/text_scalar.h"
#include "graph/text_type_reader.h"
#include "support/error.h"
#include "support/token_cursor.h"
#include "tir/parser.h"
#include "tir/verifier.h"

namespace anvil::graph {

namespace {

using text::AttrArg;
using text::AttrValue;
using text::describe;
using text::fail_at;
using text::lex_text;
using text::Tok;
using text::Token;

// ---------------------------------------------------------------------------------------------
// Parser

class Parser : text::TypeReader {
public:
    Parser(const std::string& text, const OpTable& ops)
        : TypeReader(lex_text(text)), text_(text), ops_(ops) {
        split_metadata();
    }

    void declare_free_vars(const std::vector<Ref<Var>>& vars) {
        Token nowhere;
        nowhere.line = 0;  // declared outside the text
        for (const auto& v : vars)
            scopes_.back().names.emplace(v->name, Binding{v->name, Expr(v), nowhere, true});
    }

    IRModule module() {
        IRModule m;
        while (peek().kind != Tok::End) {
            if (is_keyword("def")) {
                next();
                const Token& at = peek();
                if (at.kind != Tok::Global) expected("a function name such as @main");
                std::string name = next().text;
                if (m.functions.count(name)) fail(at, "function @" + name + " is defined twice");
                m.functions[name] = function_rest();
            } else if (is_keyword("prim_func")) {
                const Token& at = peek();
                Ref<tir::PrimFunc> k = kernel();
                if (m.kernels.count(k->name)) fail(at, "kernel " + k->name + " is defined twice");
                m.kernels[k->name] = k;
            } else {
                expected("'def' or 'prim_func'");
            }
        }
        return m;
    }

    Expr expr_text() {
        Expr e = block_body();
        expect_end("after the result");
        return e;
    }

    Type type_text() {
        Type t = type();
        expect_end("after the type");
        return t;
    }

private:
    // ---- names

    struct Binding {
        std::string name;
        Expr value;
        Token at;
        bool is_var = false;  // a parameter or let variable, as opposed to a named node
    };
    struct Scope {
        std::unordered_map<std::string, Binding> names;
        bool sees_parent;
    };

    const Binding* lookup(const std::string& name) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto found = it->names.find(name);
            if (found != it->names.end()) return &found->second;
            if (!it->sees_parent) break;
        }
        return nullptr;
    }
    void define(const Token& at, Expr value, bool is_var = false) {
        if (const Binding* b = lookup(at.text)) {
            std::string where =
                b->at.line ? " at " + std::to_string(b->at.line) + ":" + std::to_string(b->at.col)
                           : " (a free variable)";
            fail(at, "'%" + at.text + "' is already defined" + where);
        }
        scopes_.back().names.emplace(at.text, Binding{at.text, std::move(value), at, is_var});
    }

    // ---- metadata and kernels

    // The metadata section is read first, since the text above it refers to its constants.
    void split_metadata() {
        for (size_t k = 0; k + 3 < toks_.size(); ++k) {
            const Token& t = toks_[k];
            if (!(t.kind == Tok::Punct && t.text == "#" && toks_[k + 1].text == "[" &&
                  toks_[k + 2].text == "metadata" && toks_[k + 3].text == "]")) {
                continue;
            }
            std::vector<Token> main(toks_.begin(), toks_.begin() + static_cast<ptrdiff_t>(k));
            Token end = t;  // the module text ends where the metadata starts
            end.kind = Tok::End;
            end.text.clear();
            main.push_back(end);
            toks_.erase(toks_.begin(), toks_.begin() + static_cast<ptrdiff_t>(k + 4));
            pos_ = 0;
            while (peek().kind != Tok::End) constant_entry();
            toks_ = std::move(main);
            pos_ = 0;
            return;
        }
    }

    // After 'meta': `[Constant][i]`, read for i.
    int64_t constant_index() {
        expect("[", "after 'meta'");
        expect_keyword("Constant", "in meta[Constant][i]");
        expect("]", "after 'Constant'");
        expect("[", "before the constant's index");
        int64_t index = integer("the constant's index");
        expect("]", "after the constant's index");
        return index;
    }

    void constant_entry() {
        const Token& at = peek();
        expect_keyword("meta", "to start a constant (meta[Constant][i]: type = \"base64\")");
        int64_t index = constant_index();
        if (constants_.count(index))
            fail(at, "constant " + std::to_string(index) + " is defined twice");
        expect(":", "before the constant's type");
        const Token& type_at = peek();
        Type t = type();
        auto* tt = t.as<TensorType>();
        if (!tt || !tt->is_static()) fail(type_at, "a constant needs a static tensor type");
        expect("=", "before the constant's data");
        const Token& data_at = peek();
        if (data_at.kind != Tok::String) expected("the constant's data (a base64 string)");
        std::vector<uint8_t> bytes = text::base64_decode(next().text, data_at.line, data_at.col);
        // The size is compared before the storage is allocated: a type declaring terabytes
        // with a few bytes of data is refused, not allocated (type() checked it fits 64 bits).
        int64_t nbytes = runtime::dl_dtype_bytes(dl_dtype_of(tt->dtype));
        for (int64_t d : tt->static_shape()) nbytes *= d;
        if (static_cast<int64_t>(bytes.size()) != nbytes) {
            fail(data_at, "constant " + std::to_string(index) + " of type " + type_str(t) +
                              " needs " + std::to_string(nbytes) + " bytes, the data has " +
                              std::to_string(bytes.size()));
        }
        auto data = build(type_at, "constant " + std::to_string(index), [&] {
            return runtime::NDArray::empty(tt->static_shape(), dl_dtype_of(tt->dtype));
        });
        data.copy_from(bytes.data(), bytes.size());
        Expr c = make_constant(data);
        if (!type_equal(c->type, t)) fail(type_at, "type " + type_str(t) + " cannot be stored");
        constants_[index] = c;
    }

    // A kernel is handed to the loop-IR parser as its own text, padded so that its line and
    // column numbers stay those of the module text.
    Ref<tir::PrimFunc> kernel() {
        const Token& start = peek();
        size_t depth = 0;
        while (!is_punct("{")) {
            if (peek().kind == Tok::End) expected("'{' to open the kernel's body");
            next();
        }
        for (;;) {
            const Token& t = next();
            if (t.kind == Tok::End) fail(start, "unbalanced braces: the kernel is not closed");
            if (t.kind != Tok::Punct) continue;
            if (t.text == "{") ++depth;
            if (t.text == "}" && --depth == 0) {
                std::string source(static_cast<size_t>(start.line - 1), '\n');
                source.append(static_cast<size_t>(start.col - 1), ' ');
                source += text_.substr(start.offset, t.offset + 1 - start.offset);
                // Written by the user: a kernel that breaks the loop IR's rules is their error.
                Ref<tir::PrimFunc> kernel = tir::parse_prim_func(source);
                try {
                    tir::check_user_function(kernel);
                } catch (const UserError& e) {
                    fail(start, e.what());
                }
                return kernel;
            }
        }
    }

    // ---- functions and blocks

    // After `def @name` or `fn`: params, return type, body.
    Ref<Function> function_rest() {
        scopes_.push_back({{}, false});  // functions are closed
        expect("(", "to open the parameter list");
        std::vector<Ref<Var>> params;
        FunctionAttrs attrs;
        bool primitive = false;
        while (!accept(")")) {
            if (is_keyword("primitive") && is_punct("=", 1)) {
                next();
                next();
                primitive = integer("0 or 1 after 'primitive='") != 0;
                expect(")", "after 'primitive=...' (it comes last)");
                break;
            }
            if (peek().kind == Tok::Ident && is_punct("=", 1)) {
                // A string attribute, after the parameters: Composite="dnnl.conv2d".
                const Token& name = peek();
                if (name.text.find('.') != std::string::npos) {
                    fail(name,
                         "function attribute name '" + name.text + "': letters, digits and _ only");
                }
                next();
                next();
                if (peek().kind != Tok::String) {
                    expected("a string after '" + name.text +
                             "=' (function attributes are strings)");
                }
                if (!attrs.emplace(name.text, peek().text).second) {
                    fail(name, "function attribute '" + name.text + "' given twice");
                }
                next();
                if (!is_punct(")")) expect(",", "between function attributes");
                continue;
            }
            if (!attrs.empty())
                expected("a function attribute or primitive=1 (parameters come first)");
            const Token& at = peek();
            if (at.kind != Tok::Local) expected("a parameter such as %x: Tensor[(1,), float32]");
            next();
            expect(":", "after the parameter's name");
            Ref<Var> v = make_var(at.text, type());
            define(at, Expr(v), true);
            params.push_back(v);
            if (!is_punct(")")) expect(",", "between parameters");
        }
        std::optional<std::pair<Token, Type>> ret;
        if (accept("->")) {
            const Token& at = peek();
            ret.emplace(at, type());
        }
        expect("{", "to open the function's body");
        Expr body = block_body();
        expect("}", "to close the function's body");
        scopes_.pop_back();
        if (ret && !type_equal(ret->second, body->type)) {
            fail(ret->first, "the function is declared to return " + type_str(ret->second) +
                                 " but its body has type " + type_str(body->type));
        }
        return make_function(std::move(params), body, primitive, {}, std::move(attrs));
    }

    // Bindings and lets, then the result; the caller reads what closes the block. Each let's
    // body is the rest of the block: the lets are read in a loop and nested from the last
    // one out, so a long chain of them does not recurse.
    Expr block_body() {
        struct PendingLet {
            const Token* at;
            Ref<Var> var;
            Expr value;
        };
        std::vector<PendingLet> lets;
        Expr result;
        for (;;) {
            if (is_keyword("dataflow") && is_punct("{", 1)) {
                dataflow_block();
                continue;
            }
            if (is_keyword("let")) {
                const Token& let_at = next();
                const Token& at = peek();
                if (at.kind != Tok::Local) expected("a variable after 'let'");
                next();
                std::optional<Type> t;
                if (accept(":")) t = type();
                expect("=", "after the let variable");
                Expr value = expr();
                expect(";", "after the let's value");
                Ref<Var> v = make_var(at.text, t ? *t : value->type);
                define(at, Expr(v), true);
                lets.push_back({&let_at, v, value});
                continue;
            }
            if (peek().kind == Tok::Local && is_punct("=", 1)) {
                const Token& at = next();
                next();
                binding(at);
                continue;
            }
            result = expr();
            break;
        }
        for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
            result = build(*it->at, "let %" + it->var->name,
                           [&] { return make_let(it->var, it->value, result); });
        }
        return result;
    }

    // After `%name =`: the value and the closing ';'.
    void binding(const Token& at) {
        Expr value = expr();
        expect(";", "after the binding of %" + at.text);
        define(at, value);
    }

    // `dataflow { bindings; output %a, %b; }` (Relax's dataflow block): bindings only, which
    // the graph keeps as the pure dataflow it always is; the names listed after `output` stay
    // visible after the block, the others end with it.
    void dataflow_block() {
        next();
        next();
        scopes_.push_back({{}, true});
        while (!is_keyword("output")) {
            if (peek().kind != Tok::Local || !is_punct("=", 1)) {
                expected("a binding (%x = ...;) or 'output' in a dataflow block");
            }
            const Token& at = next();
            next();
            binding(at);
        }
        next();
        std::vector<Token> outputs;
        do {
            if (peek().kind != Tok::Local) expected("a variable of the block after 'output'");
            outputs.push_back(next());
        } while (accept(","));
        expect(";", "after the dataflow block's outputs");
        expect("}", "to close the dataflow block");
        Scope inner = std::move(scopes_.back());
        scopes_.pop_back();
        for (const Token& out : outputs) {
            auto it = inner.names.find(out.text);
            if (it == inner.names.end()) {
                fail(out, "output %" + out.text + " is not bound in this dataflow block");
            }
            define(out, it->second.value);
        }
    }

    // ---- expressions

    Expr expr() {
        Expr e = primary();
        for (;;) {
            const Token& at = peek();
            if (accept(".")) {
                int64_t index = integer("a tuple index after '.'");
                e = build(at, "tuple projection",
                          [&] { return make_tuple_get_item(e, static_cast<int>(index)); });
            } else if (is_punct("(")) {
                if (!e.is<Function>()) {
                    fail(at, std::string("only a function can be called; this is a ") +
                                 expr_kind_name(e->kind));
                }
                next();
                std::vector<Expr> args;
                while (!accept(")")) {
                    args.push_back(expr());
                    if (!is_punct(")")) expect(",", "between arguments");
                }
                e = build(at, "call of a function",
                          [&] { return make_call_function(e.cast<Function>(), args); });
            } else {
                return e;
            }
        }
    }

    Expr primary() {
        const Token& at = peek();
        NestingGuard guard = nest(at);
        if (at.kind == Tok::Local) {
            next();
            const Binding* b = lookup(at.text);
            if (!b) fail(at, "undefined variable '%" + at.text + "'");
            return b->value;
        }
        if (accept("(")) {
            auto [fields, parenthesized] = tuple_items([&] { return expr(); }, "in a tuple");
            if (parenthesized) return fields[0];
            return make_tuple(std::move(fields));
        }
        if (accept("{")) {
            scopes_.push_back({{}, true});
            Expr e = block_body();
            expect("}", "to close the block");
            // Named nodes stay visible after the block (as the printer writes shared nodes);
            // its let variables end with it.
            Scope inner = std::move(scopes_.back());
            scopes_.pop_back();
            for (auto& [name, b] : inner.names) {
                if (!b.is_var) scopes_.back().names.emplace(name, std::move(b));
            }
            return e;
        }
        if (at.kind == Tok::Number) return text::parse_scalar_literal(next(), false);
        if (at.kind == Tok::Punct && at.text == "-" && peek(1).kind == Tok::Number) {
            next();
            return text::parse_scalar_literal(next(), true);
        }
        if (at.kind != Tok::Ident) expected("an expression");
        if (at.text == "fn") {
            next();
            return Expr(function_rest());
        }
        if (at.text == "meta") return constant_ref();
        return op_call();
    }

    Expr constant_ref() {
        const Token& at = next();
        int64_t index = constant_index();
        auto it = constants_.find(index);
        if (it == constants_.end()) {
            fail(at, "meta[Constant][" + std::to_string(index) + "] is not in the metadata " +
                         "section (#[metadata] at the end of the text)");
        }
        return it->second;
    }

    Expr op_call() {
        const Token& at = next();
        const Op* op = ops_.find(at.text);
        if (!op) fail(at, "unknown op '" + at.text + "'");
        expect("(", "after the op's name");
        if ((op->name == "call_tir" && peek().kind == Tok::Global) ||
            (op->name == "call_packed" && peek().kind == Tok::String)) {
            return dps_call(at, *op);
        }
        std::vector<Expr> args;
        std::vector<AttrArg> attrs;
        while (!accept(")")) {
            if (peek().kind == Tok::Ident && is_punct("=", 1)) {
                AttrArg a;
                a.name = next();
                next();
                for (const auto& other : attrs) {
                    if (other.name.text == a.name.text) {
                        fail(a.name,
                             "attribute '" + a.name.text + "' of " + op->name + " is given twice");
                    }
                }
                a.value = attr_value();
                attrs.push_back(std::move(a));
            } else {
                if (!attrs.empty())
                    fail(peek(), "arguments of " + op->name + " come before its attributes");
                args.push_back(expr());
            }
            if (!is_punct(")")) expect(",", "between the arguments of " + op->name);
        }
        Ref<Attrs> values = op->make_default_attrs()->clone();
        write_attrs(const_cast<Attrs&>(*values), attrs, op->name);  // a fresh clone, ours
        return build(at, op->name, [&] { return make_call(*op, args, values); });
    }

    // After `call_tir(` or `call_packed(`, Relax's argument order: the callee (@kernel or
    // "registry.name"), the arguments as a tuple, the result type and, for call_tir, the
    // kernel's scalar shape arguments as a shape; then other attributes as name=value (call_tir's
    // kernel variants).
    Expr dps_call(const Token& at, const Op& op) {
        std::vector<AttrArg> attrs(1);
        attrs[0].name = peek();
        attrs[0].name.text = op.name == "call_tir" ? "kernel" : "func";
        attrs[0].value.kind = AttrValue::Kind::String;
        attrs[0].value.at = peek();
        attrs[0].value.s = next().text;
        expect(",", "after the callee of " + op.name);
        expect("(", "to open the arguments of " + op.name + ", a tuple such as (%x, %w)");
        std::vector<Expr> args =
            tuple_items([&] { return expr(); }, "in the arguments of " + op.name).first;
        expect(",", "before the result type of " + op.name);
        const Token& type_at = peek();
        Type result = type();
        if (op.name == "call_tir" && is_punct(",") &&
            !(peek(1).kind == Tok::Ident && is_punct("=", 2))) {
            next();
            attrs.emplace_back();
            attrs.back().name = peek();
            attrs.back().name.text = "shape_args";
            attrs.back().value = attr_value();
            if (attrs.back().value.kind != AttrValue::Kind::Shape) {
                fail(attrs.back().value.at, "call_tir's shape arguments are a shape such as (m,)");
            }
        }
        while (accept(",")) {
            if (!(peek().kind == Tok::Ident && is_punct("=", 1))) {
                fail(peek(), "expected an attribute (name=value) or ')' in " + op.name);
            }
            AttrArg a;
            a.name = next();
            next();
            static const char* const kCallForm[] = {"kernel",    "func",       "out_shapes",
                                                    "out_ndims", "out_dtypes", "shape_args"};
            for (const char* name : kCallForm) {
                if (a.name.text == name) {
                    fail(a.name, "'" + a.name.text + "' is written in " + op.name +
                                     "'s own syntax, not as name=value");
                }
            }
            for (const auto& other : attrs) {
                if (other.name.text == a.name.text) {
                    fail(a.name,
                         "attribute '" + a.name.text + "' of " + op.name + " is given twice");
                }
            }
            a.value = attr_value();
            attrs.push_back(std::move(a));
        }
        expect(")", "to close " + op.name);
        Ref<Attrs> values = op.make_default_attrs()->clone();
        auto& fresh = const_cast<Attrs&>(*values);  // a fresh clone, ours
        write_attrs(fresh, attrs, op.name);
        auto* outputs = dynamic_cast<DpsOutputs*>(&fresh);
        if (!outputs) fail(at, op.name + " does not take a result type");
        build(type_at, op.name + "'s result type", [&] {
            outputs->set_outputs(result);
            return 0;
        });
        return build(at, op.name, [&] { return make_call(op, args, values); });
    }

    AttrValue attr_value() {
        AttrValue v;
        v.at = peek();
        NestingGuard guard = nest(v.at);
        if (accept("(")) {
            v.kind = AttrValue::Kind::Shape;
            while (!accept(")")) {
                v.dims.push_back(dim(DataType::int64()));
                if (!is_punct(")")) expect(",", "between dimensions");
            }
            return v;
        }
        if (accept("[")) {
            v.kind = AttrValue::Kind::List;
            while (!accept("]")) {
                v.items.push_back(attr_value());
                if (!is_punct("]")) expect(",", "between list items");
            }
            return v;
        }
        bool negative = accept("-");
        const Token& t = peek();
        if (t.kind == Tok::Number) {
            // A suffix as on inline constants (TVM writes a_min=0f): checked the same way.
            if (!t.suffix.empty()) text::parse_scalar_literal(t, negative);
            next();
            if (t.text.find_first_of(".eE") != std::string::npos || t.suffix.starts_with('f')) {
                v.kind = AttrValue::Kind::Float;
                v.f = std::strtod(t.text.c_str(), nullptr);
                if (negative) v.f = -v.f;
                return v;
            }
            v.kind = AttrValue::Kind::Int;
            uint64_t magnitude = 0;
            auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), magnitude);
            uint64_t limit = uint64_t(INT64_MAX) + (negative ? 1 : 0);
            if (r.ec != std::errc() || magnitude > limit) {
                fail(t, "integer " + t.text + " is out of range");
            }
            v.i = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
            return v;
        }
        if (t.kind == Tok::Ident && (t.text == "nan" || t.text == "inf")) {
            next();
            v.kind = AttrValue::Kind::Float;
            v.f = t.text == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                  : std::numeric_limits<double>::infinity();
            if (negative) v.f = -v.f;
            return v;
        }
        if (negative) expected("a number after '-'");
        if (t.kind == Tok::String) {
            v.kind = AttrValue::Kind::String;
            v.s = next().text;
            return v;
        }
        if (t.kind == Tok::Ident) {
            next();
            if (t.text == "True" || t.text == "False") {
                v.kind = AttrValue::Kind::Bool;
                v.b = t.text == "True";
            } else {
                v.kind = AttrValue::Kind::Name;
                v.s = t.text;
            }
            return v;
        }
        expected("an attribute value");
    }

    const std::string& text_;
    const OpTable& ops_;
    std::vector<Scope> scopes_{Scope{{}, false}};
    std::unordered_map<int64_t, Expr> constants_;
};

}  // namespace

IRModule parse_module(const std::string& text, const OpTable& ops) {
    return Parser(text, ops).module();
}

Expr parse_expr(const std::string& text, const OpTable& ops,
                const std::vector<Ref<Var>>& free_vars) {
    Parser p(text, ops);
    p.declare_free_vars(free_vars);
    return p.expr_text();
}

Type parse_type(const std::string& text) {
    static const OpTable kNoOps;
    return Parser(text, kNoOps).type_text();
}

}  // namespace anvil::graph
