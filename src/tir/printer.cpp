#include "tir/printer.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "ir/expr_printer.h"
#include "ir/intrinsics.h"
#include "ir/structural_equal.h"
#include "support/text_scanner.h"
#include "support/unique_names.h"
#include "tir/stmt_functor.h"

namespace anvil::tir {

namespace {

constexpr size_t kColumns = 100;

using anvil::text::is_digit;
using anvil::text::is_name_char;
using anvil::text::is_name_start;
using anvil::text::quote;

// True if `s` reads back as one name token.
bool is_identifier(const std::string& s) {
    return !s.empty() && is_name_start(s[0]) && std::all_of(s.begin(), s.end(), is_name_char);
}

// Scopes are usually identifiers ("local", "shared") or dotted ("shared.dyn"); anything else is
// quoted so the parser can still read it.
std::string scope_text(const std::string& scope) {
    bool bare = !scope.empty() && scope.front() != '.' && scope.back() != '.';
    for (char c : scope) bare = bare && (is_name_char(c) || c == '.');
    return bare && !is_digit(scope[0]) ? scope : quote(scope);
}

// Variables and buffers used but not bound inside a statement, in order of first use.
class FreeCollector : public StmtVisitor {
public:
    std::vector<const Object*> order;
    std::vector<std::string> hints;

    void visit_stmt(const Stmt& s) override {
        if (s.defined()) StmtVisitor::visit_stmt(s);
    }

protected:
    void visit_stmt_(const LetStmt* op) override {
        visit_expr(op->value);
        bound_.insert(op->var.get());
        visit_stmt(op->body);
    }
    void visit_stmt_(const For* op) override {
        visit_expr(op->min);
        visit_expr(op->extent);
        bound_.insert(op->var.get());
        visit_stmt(op->body);
    }
    void visit_stmt_(const Allocate* op) override {
        if (op->buffer) {
            for (const auto& e : op->buffer->shape) visit_expr(e);
        }
        bound_.insert(op->buffer.get());
        visit_stmt(op->body);
    }
    void visit_stmt_(const Store* op) override {
        use(op->buffer.get());
        visit_expr(op->value);
        for (const auto& i : op->indices) visit_expr(i);
    }
    void visit(const PrimExpr& e) override {
        if (e.defined()) StmtVisitor::visit(e);
    }
    void visit_(const Var* op) override { use(op, op->name); }
    void visit_(const Load* op) override {
        use(op->buffer.get());
        for (const auto& i : op->indices) visit(i);
    }

private:
    void use(const Buffer* b) {
        if (b) use(b, b->name);
    }
    void use(const Object* o, const std::string& name) {
        if (bound_.count(o) || !seen_.insert(o).second) return;
        order.push_back(o);
        hints.push_back(name);
    }
    std::unordered_set<const Object*> bound_, seen_;
};

class TextPrinter {
public:
    TextPrinter() {
        ep_.var_name = [this](const Var* v) { return names_.get(v, v->name); };
        ep_.buffer_name = [this](const Buffer* b) {
            return b ? names_.get(b, b->name) : std::string("<undefined>");
        };
    }

    std::string func(const PrimFunc& f) {
        std::string head =
            "prim_func " +
            (is_identifier(f.name) && !is_reserved_name(f.name) ? f.name : quote(f.name)) + "(";
        std::vector<std::string> params;
        for (const auto& b : f.params) params.push_back(buffer_decl(b));
        for (const auto& v : f.scalar_params) {
            params.push_back(var_name(v) + (v ? ": " + v->dtype.str() : ""));
        }
        for (size_t i = 0; i < params.size(); ++i) head += (i ? ", " : "") + params[i];
        block(head + ")", f.body);
        return os_.str();
    }

    std::string top(const Stmt& s) {
        FreeCollector free;
        free.visit_stmt(s);
        for (size_t i = 0; i < free.order.size(); ++i) names_.get(free.order[i], free.hints[i]);
        for (const Stmt& item : items(s)) stmt(item);
        return os_.str();
    }

private:
    std::string expr(const PrimExpr& e) const { return ep_.str(e); }

    void line(const std::string& text) { os_ << std::string(indent_ * 2, ' ') << text << '\n'; }

    // The statements a body block lists. A one-element SeqStmt is listed as itself, so it
    // prints as a nested `seq { }` and reads back as a SeqStmt.
    static std::vector<Stmt> items(const Stmt& body) {
        auto* seq = body.as<SeqStmt>();
        if (seq && seq->seq.size() != 1) return seq->seq;
        return {body};
    }

    // The one-line text of a statement that has no body, or nullopt.
    std::optional<std::string> leaf(const Stmt& s) {
        if (!s.defined()) return "<undefined>";
        if (auto* st = s.as<Store>()) {
            std::string t = buffer_name(st->buffer) + "[";
            for (size_t i = 0; i < st->indices.size(); ++i) {
                t += (i ? ", " : "") + expr(st->indices[i]);
            }
            return t + "] = " + expr(st->value);
        }
        if (auto* ev = s.as<Evaluate>()) return "evaluate(" + expr(ev->value) + ")";
        if (auto* as = s.as<AssertStmt>(); as && !as->body.defined()) return assert_head(*as);
        if (auto* cp = s.as<CallPacked>()) return call_packed(*cp);
        return std::nullopt;
    }

    bool fits(const std::string& text) const { return indent_ * 2 + text.size() <= kColumns; }

    // Prints `head { body }` on one line when the body is a short leaf, else as a block.
    void block(const std::string& head, const Stmt& body) { block(head, items(body)); }

    void block(const std::string& head, const std::vector<Stmt>& list) {
        std::string open = head + " {";
        if (list.empty()) {
            line(open + "}");
            return;
        }
        if (list.size() == 1) {
            if (auto text = leaf(list[0]); text && fits(open + " " + *text + " }")) {
                line(open + " " + *text + " }");
                return;
            }
        }
        line(open);
        body_items(list);
        line("}");
    }

    void body_items(const std::vector<Stmt>& list) {
        ++indent_;
        for (const Stmt& s : list) stmt(s);
        --indent_;
    }

    // call_packed("name", A, B as [4, 8], n): a tensor prints as its buffer, with `as [shape]`
    // when the callee sees another shape than the buffer's (a flattened allocation).
    std::string call_packed(const CallPacked& c) {
        std::string t = "call_packed(" + quote(c.func);
        for (const auto& a : c.args) {
            t += ", ";
            if (!a.buffer) {
                t += expr(a.value);
                continue;
            }
            t += buffer_name(a.buffer);
            bool same = a.shape.size() == a.buffer->shape.size();
            for (size_t i = 0; same && i < a.shape.size(); ++i) {
                same = structural_equal(a.shape[i], a.buffer->shape[i]);
            }
            if (same) continue;
            t += " as [";
            for (size_t i = 0; i < a.shape.size(); ++i) t += (i ? ", " : "") + expr(a.shape[i]);
            t += "]";
        }
        return t + ")";
    }

    std::string assert_head(const AssertStmt& a) {
        std::string t = "assert(" + expr(a.cond) + ", " + quote(a.message);
        for (const auto& arg : a.message_args) t += ", " + expr(arg);
        return t + ")";
    }

    // Broken IR still prints (the verifier quotes it), with "<undefined>" for what is missing.
    std::string var_name(const Ref<Var>& v) {
        return v ? names_.get(v.get(), v->name) : "<undefined>";
    }
    std::string buffer_name(const Ref<Buffer>& b) {
        return b ? names_.get(b.get(), b->name) : "<undefined>";
    }

    std::string buffer_decl(const Ref<Buffer>& buffer) {
        if (!buffer) return "<undefined>";
        const Buffer& b = *buffer;
        std::string t = buffer_name(buffer) + ": " + b.dtype.str() + "[";
        for (size_t i = 0; i < b.shape.size(); ++i) t += (i ? ", " : "") + expr(b.shape[i]);
        t += "]";
        if (b.scope != "global") t += " " + scope_text(b.scope);
        return t;
    }

    std::string for_head(const For& f) {
        std::string t = "for " + var_name(f.var);
        if (f.var && f.min.defined() && f.var->dtype != f.min.dtype()) {
            t += ": " + f.var->dtype.str();
        }
        // The end is printed as the expression `min + extent` so the parser can take the
        // extent back out of it exactly, without simplifying.
        PrimExpr end = f.extent;
        if (f.min.defined() && f.extent.defined() && !is_zero(f.min)) {
            end = PrimExpr(new Add(f.min.dtype(), f.min, f.extent));
        }
        t += " in [" + expr(f.min) + ", " + expr(end) + ")";
        switch (f.for_kind) {
            case ForKind::Serial:
                break;
            case ForKind::ThreadBinding:
                t += " thread_binding(" + quote(f.thread_tag) + ")";
                break;
            default:
                t += std::string(" ") + for_kind_name(f.for_kind);
        }
        return t;
    }

    void stmt(const Stmt& s) {
        if (auto text = leaf(s)) {
            line(*text);
            return;
        }
        switch (s->kind) {
            case StmtKind::LetStmt: {
                auto* l = s.as<LetStmt>();
                std::string t = "let " + var_name(l->var);
                if (l->var && l->value.defined() && l->var->dtype != l->value.dtype()) {
                    t += ": " + l->var->dtype.str();
                }
                block(t + " = " + expr(l->value), l->body);
                return;
            }
            case StmtKind::For:
                block(for_head(*s.as<For>()), s.as<For>()->body);
                return;
            case StmtKind::Allocate: {
                auto* a = s.as<Allocate>();
                block("allocate " + buffer_decl(a->buffer), a->body);
                return;
            }
            case StmtKind::IfThenElse:
                if_then_else(*s.as<IfThenElse>());
                return;
            case StmtKind::SeqStmt:
                block("seq", s.as<SeqStmt>()->seq);
                return;
            case StmtKind::AssertStmt: {
                auto* a = s.as<AssertStmt>();
                block(assert_head(*a), a->body);
                return;
            }
            case StmtKind::Store:
            case StmtKind::Evaluate:
            case StmtKind::CallPacked:
                break;  // leaves, handled above
        }
    }

    void if_then_else(const IfThenElse& op) {
        std::string head = "if " + expr(op.cond);
        if (!op.else_case.defined()) {
            block(head, op.then_case);
            return;
        }
        std::vector<Stmt> then_list = items(op.then_case), else_list = items(op.else_case);
        if (then_list.size() == 1 && else_list.size() == 1) {
            auto t = leaf(then_list[0]), e = leaf(else_list[0]);
            if (t && e) {
                std::string one = head + " { " + *t + " } else { " + *e + " }";
                if (fits(one)) {
                    line(one);
                    return;
                }
            }
        }
        line(head + " {");
        body_items(then_list);
        line("} else {");
        body_items(else_list);
        line("}");
    }

    ExprPrinter ep_;
    UniqueNames names_{is_reserved_name};  // one namespace for the whole function
    std::ostringstream os_;
    int indent_ = 0;
};

bool is_nan_or_inf_literal(const std::string& s) {
    for (const char* base : {"nan", "inf"}) {
        if (s.rfind(base, 0) != 0) continue;
        std::string suffix = s.substr(3);
        if (suffix == "f" || suffix == "f16" || suffix == "f32" || suffix == "f64" ||
            suffix == "bf16") {
            return true;
        }
    }
    return false;
}

}  // namespace

bool is_reserved_name(const std::string& name) {
    static const std::unordered_set<std::string> kWords = {
        "prim_func", "for",      "in",    "let",    "allocate", "if",   "else",        "assert",
        "evaluate",  "true",     "false", "select", "cast",     "call", "ramp",        "broadcast",
        "floordiv",  "floormod", "min",   "max",    "likely",   "seq",  "call_packed",
    };
    return kWords.count(name) || intrin::arity(name) >= 0 || is_nan_or_inf_literal(name);
}

std::string print(const Ref<PrimFunc>& f) {
    if (!f.defined()) return "<undefined prim_func>\n";
    return TextPrinter().func(*f);
}

std::string print(const Stmt& s) {
    if (!s.defined()) return "<undefined>\n";
    return TextPrinter().top(s);
}

std::ostream& operator<<(std::ostream& os, const Ref<PrimFunc>& f) {
    return os << print(f);
}
std::ostream& operator<<(std::ostream& os, const Stmt& s) {
    return os << print(s);
}

}  // namespace anvil::tir
