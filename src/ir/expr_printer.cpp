#include "ir/expr_printer.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "ir/intrinsics.h"
#include "support/error.h"

namespace anvil {

namespace {

// Binding strength of infix operators; higher binds tighter.
int precedence(ExprKind k) {
    switch (k) {
        case ExprKind::Or:
            return 1;
        case ExprKind::And:
            return 2;
        case ExprKind::EQ:
        case ExprKind::NE:
            return 3;
        case ExprKind::LT:
        case ExprKind::LE:
        case ExprKind::GT:
        case ExprKind::GE:
            return 4;
        case ExprKind::Add:
        case ExprKind::Sub:
            return 5;
        case ExprKind::Mul:
        case ExprKind::Div:
        case ExprKind::Mod:
            return 6;
        case ExprKind::Not:
            return 7;
        default:
            return 8;  // atoms and call syntax
    }
}

const char* infix_symbol(ExprKind k) {
    switch (k) {
        case ExprKind::Add:
            return " + ";
        case ExprKind::Sub:
            return " - ";
        case ExprKind::Mul:
            return " * ";
        case ExprKind::Div:
            return " / ";
        case ExprKind::Mod:
            return " % ";
        case ExprKind::EQ:
            return " == ";
        case ExprKind::NE:
            return " != ";
        case ExprKind::LT:
            return " < ";
        case ExprKind::LE:
            return " <= ";
        case ExprKind::GT:
            return " > ";
        case ExprKind::GE:
            return " >= ";
        case ExprKind::And:
            return " && ";
        case ExprKind::Or:
            return " || ";
        default:
            return nullptr;
    }
}

const char* call_style_name(ExprKind k) {
    switch (k) {
        case ExprKind::FloorDiv:
            return "floordiv";
        case ExprKind::FloorMod:
            return "floormod";
        case ExprKind::Min:
            return "min";
        case ExprKind::Max:
            return "max";
        default:
            return nullptr;
    }
}

std::string float_text(double v, DataType t) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof(buf), t.bits() <= 32 ? "%.9g" : "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

}  // namespace

std::string ExprPrinter::literal(const PrimExpr& e) {
    DataType t = e.dtype();
    if (auto* i = e.as<IntImm>()) {
        if (t.is_bool()) return i->value ? "true" : "false";
        std::string s = std::to_string(i->value);
        if (t == DataType::int32()) return s;
        return s + (t.is_int() ? "i" : "u") + std::to_string(t.bits());
    }
    if (auto* f = e.as<FloatImm>()) {
        std::string s = float_text(f->value, t);
        if (t.is_bfloat()) return s + "bf16";
        if (t.bits() == 32) return s + "f";
        return s + "f" + std::to_string(t.bits());
    }
    internal_error() << "literal() of a non-constant " << expr_kind_name(e->kind);
    ANVIL_UNREACHABLE();
}

std::string ExprPrinter::str(const PrimExpr& e) const {
    std::ostringstream os;
    print(os, e);
    return os.str();
}

void ExprPrinter::print(std::ostream& os, const PrimExpr& e, int parent_prec) const {
    if (!e.defined()) {
        os << "<undefined>";
        return;
    }
    auto list = [&](const std::vector<PrimExpr>& xs) {
        for (size_t i = 0; i < xs.size(); ++i) {
            if (i) os << ", ";
            print(os, xs[i], 0);
        }
    };
    ExprKind k = e->kind;
    int prec = precedence(k);
    if (const char* sym = infix_symbol(k)) {
        auto* b = static_cast<const BinaryExpr*>(e.get());
        bool paren = prec <= parent_prec;
        if (paren) os << "(";
        print(os, b->a, prec - 1);  // left-associative: equal precedence on the left needs none
        os << sym;
        print(os, b->b, prec);
        if (paren) os << ")";
        return;
    }
    if (const char* name = call_style_name(k)) {
        auto* b = static_cast<const BinaryExpr*>(e.get());
        os << name << "(";
        print(os, b->a, 0);
        os << ", ";
        print(os, b->b, 0);
        os << ")";
        return;
    }
    switch (k) {
        case ExprKind::IntImm:
        case ExprKind::FloatImm: {
            std::string s = literal(e);
            // A negative literal on the right of an operator reads as subtraction otherwise.
            if (s[0] == '-' && parent_prec > 0) {
                os << "(" << s << ")";
            } else {
                os << s;
            }
            return;
        }
        case ExprKind::Var:
            os << var_name(e.as<Var>());
            return;
        case ExprKind::Not:
            os << "!";
            print(os, e.as<Not>()->a, prec);
            return;
        case ExprKind::Select: {
            auto* s = e.as<Select>();
            os << "select(";
            list({s->cond, s->true_value, s->false_value});
            os << ")";
            return;
        }
        case ExprKind::Cast:
            os << "cast<" << e.dtype().str() << ">(";
            print(os, e.as<Cast>()->value, 0);
            os << ")";
            return;
        case ExprKind::Call: {
            auto* c = e.as<Call>();
            bool plain =
                intrin::is_math(c->name) && !c->args.empty() && c->args[0].dtype() == e.dtype();
            if (plain) {
                os << c->name << "(";
            } else {
                os << "call<" << e.dtype().str() << ">(\"" << c->name << "\"";
                if (!c->args.empty()) os << ", ";
            }
            list(c->args);
            os << ")";
            return;
        }
        case ExprKind::Load: {
            auto* l = e.as<Load>();
            os << buffer_name(l->buffer.get()) << "[";
            list(l->indices);
            os << "]";
            return;
        }
        case ExprKind::Ramp: {
            auto* r = e.as<Ramp>();
            os << "ramp(";
            list({r->base, r->stride});
            os << ", " << r->lanes << ")";
            return;
        }
        case ExprKind::Broadcast: {
            auto* b = e.as<Broadcast>();
            os << "broadcast(";
            print(os, b->value, 0);
            os << ", " << b->lanes << ")";
            return;
        }
        case ExprKind::Reduce: {
            auto* r = e.as<Reduce>();
            os << r->combiner->name << "(";
            print(os, r->source, 0);
            os << ", axis=[";
            for (size_t i = 0; i < r->axis.size(); ++i) {
                if (i) os << ", ";
                os << var_name(r->axis[i]->var.get());
            }
            os << "]";
            if (r->condition.defined() && !is_one(r->condition)) {
                os << ", where=";
                print(os, r->condition, 0);
            }
            os << ")";
            return;
        }
        default:
            internal_error() << "unhandled expression kind " << expr_kind_name(k);
    }
}

std::ostream& operator<<(std::ostream& os, const PrimExpr& e) {
    ExprPrinter().print(os, e);
    return os;
}

std::string to_string(const PrimExpr& e) {
    return ExprPrinter().str(e);
}

}  // namespace anvil
