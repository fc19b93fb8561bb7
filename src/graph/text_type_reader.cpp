#include "graph/text_type_reader.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>

#include "support/error.h"

namespace anvil::graph::text {

int64_t TypeReader::integer(const std::string& what) {
    const Token& t = peek();
    if (t.kind != Tok::Number || !t.suffix.empty() ||
        t.text.find_first_not_of("0123456789") != std::string::npos) {
        expected(what);
    }
    int64_t v = 0;
    auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (r.ec != std::errc()) fail(t, "integer " + t.text + " is out of range");
    next();
    return v;
}

Type TypeReader::type() {
    const Token& at = peek();
    NestingGuard guard = nest(at);
    if (is_keyword("Tensor")) {
        next();
        expect("[", "after 'Tensor'");
        expect("(", "to open the tensor's shape");
        std::vector<PrimExpr> shape;
        while (!accept(")")) {
            const Token& d = peek();
            shape.push_back(dim(DataType::int64()));
            const int64_t* v = as_const_int(shape.back());
            if (v && *v < 0) fail(d, "a tensor's dimension cannot be negative");
            if (!is_punct(")")) expect(",", "between dimensions");
        }
        expect(",", "before the tensor's element type");
        DataType t = dtype();
        expect("]", "to close the tensor type");
        // Every size downstream is a signed 64-bit byte count (a symbolic dimension counts 1).
        int64_t bytes = std::max(t.bytes(), 1) * std::max(t.lanes(), 1);
        for (const auto& d : shape) {
            const int64_t* v = as_const_int(d);
            if (v && __builtin_mul_overflow(bytes, *v, &bytes)) {
                fail(at, "the tensor type's size overflows 64 bits");
            }
        }
        return build(at, "tensor type", [&] { return make_tensor_type(shape, t); });
    }
    if (is_keyword("Sequence")) return sequence_type();
    if (is_keyword("Optional")) {
        next();
        expect("[", "after 'Optional'");
        const Token& elem_at = peek();
        Type elem = type();
        if (!elem.is<TensorType>() && !elem.is<SequenceType>()) {
            fail(elem_at, "an Optional holds a tensor or a sequence");
        }
        expect("]", "to close the optional type");
        return make_optional_type(elem);
    }
    if (accept("(")) {
        auto [fields, parenthesized] = tuple_items([&] { return type(); }, "in a tuple type");
        if (parenthesized) return fields[0];
        return make_tuple_type(std::move(fields));
    }
    if (is_keyword("fn")) {
        next();
        expect("(", "to open the parameter types");
        std::vector<Type> params;
        while (!accept(")")) {
            params.push_back(type());
            if (!is_punct(")")) expect(",", "between parameter types");
        }
        expect("->", "before the result type");
        Type ret = type();
        return make_func_type(std::move(params), ret);
    }
    expected("a type such as Tensor[(1, 3), float32]");
}

Type TypeReader::sequence_type() {
    next();
    expect("[", "after 'Sequence'");
    bool empty = false;
    std::optional<std::vector<int64_t>> dims;
    if (is_keyword("empty")) {
        next();
        empty = true;
    } else if (!accept("?")) {
        expect("(", "to open the elements' shape (or '?' for any rank)");
        dims.emplace();
        while (!accept(")")) {
            if (accept("?")) {
                dims->push_back(SequenceType::kAnyDim);
            } else {
                const Token& t = peek();
                PrimExpr d = dim_atom(DataType::int64());
                const int64_t* v = as_const_int(d);
                if (!v || *v < 0) fail(t, "a sequence's dimension is an integer or '?'");
                dims->push_back(*v);
            }
            if (!is_punct(")")) expect(",", "between dimensions");
        }
    }
    expect(",", "before the sequence's element type");
    DataType t = dtype();
    expect("]", "to close the sequence type");
    return empty ? make_empty_sequence_type(t) : make_sequence_type(t, std::move(dims));
}

DataType TypeReader::dtype() {
    const Token& t = peek();
    if (t.kind != Tok::Ident) expected("an element type such as float32");
    DataType out;
    if (!DataType::parse(t.text, &out)) fail(t, "unknown element type '" + t.text + "'");
    next();
    return out;
}

PrimExpr TypeReader::dim(DataType t) {
    PrimExpr lhs = dim_and(t);
    while (is_punct("||")) {
        const Token& op = next();
        PrimExpr rhs = dim_and(t);
        lhs = build(op, "condition", [&] { return make_binary(anvil::ExprKind::Or, lhs, rhs); });
    }
    return lhs;
}
PrimExpr TypeReader::dim_and(DataType t) {
    PrimExpr lhs = dim_compare(t);
    while (is_punct("&&")) {
        const Token& op = next();
        PrimExpr rhs = dim_compare(t);
        lhs = build(op, "condition", [&] { return make_binary(anvil::ExprKind::And, lhs, rhs); });
    }
    return lhs;
}
PrimExpr TypeReader::dim_compare(DataType t) {
    static const std::pair<const char*, anvil::ExprKind> kCompare[] = {
        {"==", anvil::ExprKind::EQ}, {"!=", anvil::ExprKind::NE}, {"<", anvil::ExprKind::LT},
        {"<=", anvil::ExprKind::LE}, {">", anvil::ExprKind::GT},  {">=", anvil::ExprKind::GE}};
    PrimExpr lhs = dim_sum(t);
    for (const auto& [text, kind] : kCompare) {
        if (!is_punct(text)) continue;
        const Token& op = next();
        PrimExpr rhs = dim_sum(t);
        return build(op, "condition", [&] { return make_binary(kind, lhs, rhs); });
    }
    return lhs;
}
PrimExpr TypeReader::dim_sum(DataType t) {
    PrimExpr lhs = dim_term(t);
    while (is_punct("+") || is_punct("-")) {
        const Token& op = next();
        PrimExpr rhs = dim_term(t);
        anvil::ExprKind k = op.text == "+" ? anvil::ExprKind::Add : anvil::ExprKind::Sub;
        lhs = arith(op, k, lhs, rhs);
    }
    return lhs;
}
PrimExpr TypeReader::dim_term(DataType t) {
    PrimExpr lhs = dim_atom(t);
    while (is_punct("*") || is_punct("/") || is_punct("%")) {
        const Token& op = next();
        PrimExpr rhs = dim_atom(t);
        anvil::ExprKind k = op.text == "*"   ? anvil::ExprKind::Mul
                            : op.text == "/" ? anvil::ExprKind::Div
                                             : anvil::ExprKind::Mod;
        lhs = arith(op, k, lhs, rhs);
    }
    return lhs;
}
PrimExpr TypeReader::arith(const Token& op, anvil::ExprKind kind, const PrimExpr& a,
                           const PrimExpr& b) {
    const int64_t *x = as_const_int(a), *y = as_const_int(b);
    int64_t r = 0;
    bool overflow = x && y &&
                    ((kind == anvil::ExprKind::Add && __builtin_add_overflow(*x, *y, &r)) ||
                     (kind == anvil::ExprKind::Sub && __builtin_sub_overflow(*x, *y, &r)) ||
                     (kind == anvil::ExprKind::Mul && __builtin_mul_overflow(*x, *y, &r)) ||
                     ((kind == anvil::ExprKind::Div || kind == anvil::ExprKind::Mod) && *y == -1 &&
                      *x == INT64_MIN));
    if (overflow) fail(op, "dimension arithmetic overflows 64 bits");
    return build(op, "dimension", [&] { return make_binary(kind, a, b); });
}

PrimExpr TypeReader::dim_atom(DataType t) {
    const Token& at = peek();
    NestingGuard guard = nest(at);
    // A negative literal: result types kept as attributes spell a sequence's dimension that
    // its elements need not share as -1 (graph/dps_outputs.h).
    bool negative = is_punct("-") && peek(1).kind == Tok::Number;
    if (negative) next();
    if (const Token& num = peek(); num.kind == Tok::Number) {
        DataType lt = num.suffix == "i64"   ? DataType::int64()
                      : num.suffix == "i32" ? DataType::int32()
                                            : t;
        int64_t v = 0;
        auto r = std::from_chars(num.text.data(), num.text.data() + num.text.size(), v);
        if ((!num.suffix.empty() && num.suffix != "i64" && num.suffix != "i32") ||
            r.ptr != num.text.data() + num.text.size()) {
            fail(num, "a dimension must be an integer, found " + describe(num));
        }
        if (r.ec != std::errc()) fail(num, "dimension " + num.text + " is out of range");
        next();
        return make_int(lt, negative ? -v : v);
    }
    if (accept("(")) {
        PrimExpr e = dim(t);
        expect(")", "to close the dimension");
        return e;
    }
    if (accept("!")) {
        PrimExpr a = dim_atom(t);
        return build(at, "condition", [&] { return make_not(a); });
    }
    if (at.kind == Tok::Ident && (at.text == "true" || at.text == "false")) {
        next();
        return make_bool(at.text == "true");
    }
    if (at.kind != Tok::Ident) expected("a dimension (an integer or a name)");
    if (at.text == "select" && is_punct("(", 1)) {
        next();
        next();
        PrimExpr c = dim(t);
        expect(",", "after select's condition");
        PrimExpr a = dim(t);
        expect(",", "between select's values");
        PrimExpr b = dim(t);
        expect(")", "to close select");
        return build(at, "dimension", [&] { return select(c, a, b); });
    }
    static const std::pair<const char*, anvil::ExprKind> kCalls[] = {
        {"floordiv", anvil::ExprKind::FloorDiv},
        {"floormod", anvil::ExprKind::FloorMod},
        {"min", anvil::ExprKind::Min},
        {"max", anvil::ExprKind::Max}};
    for (const auto& [name, kind] : kCalls) {
        if (at.text != name || !is_punct("(", 1)) continue;
        next();
        next();
        PrimExpr a = dim(t);
        expect(",", std::string("between the operands of ") + name);
        PrimExpr b = dim(t);
        expect(")", std::string("to close ") + name);
        return build(at, "dimension", [&] { return make_binary(kind, a, b); });
    }
    if (at.text == "cast" && is_punct("<", 1)) {
        next();
        next();
        DataType to = dtype();
        expect(">", "after the cast's type");
        expect("(", "to open the cast");
        PrimExpr v = dim(DataType::int32());
        expect(")", "to close the cast");
        return build(at, "dimension", [&] { return make_cast(to, v); });
    }
    next();
    auto [it, added] = dim_vars_.emplace(at.text, Ref<anvil::Var>());
    if (added) it->second = anvil::make_var(at.text, t);
    if (it->second->dtype != t) {
        fail(at, "dimension '" + at.text + "' is used as " + t.str() + " here and as " +
                     it->second->dtype.str() + " before");
    }
    return PrimExpr(it->second);
}

}  // namespace anvil::graph::text
