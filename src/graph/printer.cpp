#include "graph/printer.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/attr_fields.h"
#include "graph/dps_outputs.h"
#include "graph/expr_functor.h"
#include "graph/text_base64.h"
#include "graph/text_scalar.h"
#include "support/error.h"
#include "support/text_scanner.h"
#include "support/unique_names.h"
#include "tir/printer.h"

namespace anvil::graph {

namespace {

constexpr const char* kIndent = "  ";  // Relay's indentation

using anvil::text::is_name_char;
using anvil::text::is_name_start;
using anvil::text::quote;

// True if `s` reads back as one identifier token: names joined by dots (`nn.conv2d`).
bool is_identifier(const std::string& s) {
    if (s.empty() || !is_name_start(s[0])) return false;
    for (size_t i = 0; i < s.size(); ++i) {
        bool dot_ok = s[i] == '.' && i + 1 < s.size() && is_name_start(s[i + 1]);
        if (!is_name_char(s[i]) && !dot_ok) return false;
    }
    return true;
}

class Printer {
public:
    explicit Printer(const PrintOptions& options) : options_(options) {}

    std::string module(const IRModule& m) {
        bool first = true;
        for (const auto& [name, f] : m.functions) {
            if (!first) out_ += "\n";
            first = false;
            begin_def();
            out_ += "def @" + (is_identifier(name) ? name : quote(name));
            function_rest(f.get(), 0);
            out_ += "\n";
        }
        for (const auto& [name, k] : m.kernels) {
            if (!first) out_ += "\n";
            first = false;
            out_ += tir::print(k);
        }
        metadata(!first);
        return std::move(out_);
    }

    std::string expr(const Expr& e) {
        begin_def();
        enter_function(e);
        block(e, 0);
        metadata(true);
        return std::move(out_);
    }

private:
    struct Scope {
        std::unordered_map<const ExprNode*, std::string> names;
        bool sees_parent;
    };

    void begin_def() {
        next_temp_ = 0;
        scopes_.clear();
        names_.clear();
        uses_.clear();
    }

    // A function body is a scope of its own: its own variable names, and uses counted within
    // it (a node shared with the outside is printed in both, and counts once in each).
    void enter_function(const Expr& body) {
        scopes_.push_back({{}, false});
        names_.emplace_back(nullptr, /*keep_dots=*/true);
        uses_.emplace_back();
        auto& uses = uses_.back();
        std::unordered_set<const ExprNode*> seen;
        std::vector<const ExprNode*> stack{body.get()};
        auto edge = [&](const Expr& c) {
            if (!c.defined()) return;
            if (++uses[c.get()] == 1 && !c.is<Function>()) stack.push_back(c.get());
        };
        while (!stack.empty()) {
            const ExprNode* e = stack.back();
            stack.pop_back();
            if (!seen.insert(e).second) continue;
            switch (e->kind) {
                case ExprKind::Call:
                    edge(static_cast<const Call*>(e)->callee);
                    for (const auto& a : static_cast<const Call*>(e)->args) edge(a);
                    break;
                case ExprKind::Tuple:
                    for (const auto& f : static_cast<const Tuple*>(e)->fields) edge(f);
                    break;
                case ExprKind::TupleGetItem:
                    edge(static_cast<const TupleGetItem*>(e)->tuple);
                    break;
                case ExprKind::Let:
                    edge(static_cast<const Let*>(e)->value);
                    edge(static_cast<const Let*>(e)->body);
                    break;
                default:
                    break;
            }
        }
    }
    void leave_function() {
        scopes_.pop_back();
        names_.pop_back();
        uses_.pop_back();
    }

    const std::string* lookup(const ExprNode* e) const {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
            auto found = it->names.find(e);
            if (found != it->names.end()) return &found->second;
            if (!it->sees_parent) break;
        }
        return nullptr;
    }

    void line(int indent, const std::string& text) {
        for (int i = 0; i < indent; ++i) out_ += kIndent;
        out_ += text;
        out_ += "\n";
    }

    std::string var_ref(const Var* v) { return "%" + names_.back().get(v, v->name); }

    std::string constant_ref(const Constant* c) {
        auto [it, added] = const_index_.emplace(c, static_cast<int>(constants_.size()));
        if (added) constants_.push_back(c);
        return "meta[Constant][" + std::to_string(it->second) + "]";
    }

    static std::string type_note(const Type& t) { return " /* ty=" + type_str(t) + " */"; }

    // `(%a: T, %b: T, Composite="x", primitive=1) -> R {` then the body and the closing brace
    // (no newline).
    void function_rest(const Function* f, int indent) {
        enter_function(f->body);
        out_ += "(";
        std::vector<std::string> items;
        for (const auto& p : f->params) {
            items.push_back(var_ref(p.get()) + ": " + type_str(p->type));
        }
        for (const auto& [name, value] : f->attrs) items.push_back(name + "=" + quote(value));
        if (f->primitive) items.push_back("primitive=1");
        for (size_t i = 0; i < items.size(); ++i) out_ += (i ? ", " : "") + items[i];
        out_ += ") -> " + type_str(f->body->type) + " {\n";
        block(f->body, indent + 1);
        leave_function();
        for (int i = 0; i < indent; ++i) out_ += kIndent;
        out_ += "}";
    }

    // The bindings of `e` and its let chain, then the result.
    void block(Expr e, int indent) {
        while (auto* let = e.as<Let>()) {
            const Expr& v = let->value;
            bool inlined = (v.is<Call>() || v.is<Tuple>() || v.is<TupleGetItem>()) &&
                           uses_.back()[v.get()] <= 1 && !lookup(v.get());
            std::string value = inlined ? definition(v, indent) : atom(v, indent);
            line(indent, "let " + var_ref(let->var.get()) + ": " + type_str(let->var->type) +
                             " = " + value + ";");
            e = let->body;
        }
        line(indent, atom(e, indent));
    }

    // The text of a call, tuple or projection whose operands are atoms (their bindings are
    // emitted first).
    std::string definition(const Expr& e, int indent) {
        if (auto* call = e.as<Call>()) {
            if (dynamic_cast<const DpsOutputs*>(call->attrs.get())) return dps_call(*call, indent);
            std::string head;
            if (call->op.defined()) {
                head = call->op->name;
            } else {
                head = atom(call->callee, indent);
            }
            std::string text = head + "(";
            for (size_t i = 0; i < call->args.size(); ++i) {
                text += (i ? ", " : "") + atom(call->args[i], indent);
            }
            if (call->op.defined() && call->attrs.defined()) {
                Ref<Attrs> defaults = call->op->make_default_attrs();
                std::string attrs = attrs_str(*call->attrs, defaults.get());
                if (!attrs.empty()) text += (call->args.empty() ? "" : ", ") + attrs;
            }
            return text + ")" + type_note(e->type);
        }
        if (auto* tuple = e.as<Tuple>()) {
            std::string text = "(";
            for (size_t i = 0; i < tuple->fields.size(); ++i) {
                text += (i ? ", " : "") + atom(tuple->fields[i], indent);
            }
            return text + (tuple->fields.size() == 1 ? ",)" : ")");
        }
        if (auto* get = e.as<TupleGetItem>()) {
            return atom(get->tuple, indent) + "." + std::to_string(get->index) + type_note(e->type);
        }
        internal_error() << "no inline text for a " << expr_kind_name(e->kind);
        ANVIL_UNREACHABLE();
    }

    // call_tir(@kernel, (args), Type[, (shape args)][, name=value...]) or call_packed("name",
    // (args), Type[, name=value...]): attributes beyond the callee, the result and the shape
    // arguments (call_tir's kernel variants) follow as keywords where they are not the defaults.
    std::string dps_call(const Call& call, int indent) {
        std::string text = call.op->name + "(";
        if (auto kernel = attr_string(*call.attrs, "kernel")) {
            text += "@" + (is_identifier(*kernel) ? *kernel : quote(*kernel));
        } else {
            text += quote(attr_string(*call.attrs, "func").value_or(""));
        }
        text += ", (";
        for (size_t i = 0; i < call.args.size(); ++i) {
            text += (i ? ", " : "") + atom(call.args[i], indent);
        }
        text += call.args.size() == 1 ? ",), " : "), ";
        text += type_str(call.type);
        auto shape_args = attr_shape(*call.attrs, "shape_args");
        if (shape_args && !shape_args->empty()) text += ", " + shape_str(*shape_args);
        Ref<Attrs> defaults = call.op->make_default_attrs();
        std::string more =
            attrs_str(*call.attrs, defaults.get(),
                      {"kernel", "func", "out_shapes", "out_ndims", "out_dtypes", "shape_args"});
        if (!more.empty()) text += ", " + more;
        return text + ")";
    }

    // A name for `e`, binding it to a new temporary (after its operands) the first time.
    std::string atom(const Expr& e, int indent) {
        ANVIL_CHECK(e.defined()) << "printing an undefined expression";
        if (auto* v = e.as<Var>()) return var_ref(v);
        if (auto* c = e.as<Constant>()) {
            if (auto literal = text::scalar_literal(*c)) return *literal;
            return constant_ref(c);
        }
        if (const std::string* name = lookup(e.get())) return *name;
        std::string name;
        if (auto* f = e.as<Function>()) {
            name = "%" + std::to_string(next_temp_++);
            for (int i = 0; i < indent; ++i) out_ += kIndent;
            out_ += name + " = fn ";
            function_rest(f, indent);
            out_ += ";\n";
        } else if (e.is<Let>()) {
            name = "%" + std::to_string(next_temp_++);
            line(indent, name + " = {");
            scopes_.push_back({{}, true});
            block(e, indent + 1);
            // Temporaries stay visible after the block: one used again outside does not use
            // the block's let variables (that would be IR the verifier rejects).
            auto inner = std::move(scopes_.back().names);
            scopes_.pop_back();
            scopes_.back().names.merge(inner);
            line(indent, "};");
        } else {
            std::string text = definition(e, indent);
            name = "%" + std::to_string(next_temp_++);
            line(indent, name + " = " + text + ";");
        }
        scopes_.back().names.emplace(e.get(), name);
        return name;
    }

    void metadata(bool separate) {
        if (constants_.empty()) return;
        if (separate) out_ += "\n";
        if (!options_.metadata) {
            size_t bytes = 0;
            for (const Constant* c : constants_) bytes += c->data.nbytes();
            out_ += "// metadata omitted: " + std::to_string(constants_.size()) + " constant(s), " +
                    std::to_string(bytes) + " bytes\n";
            return;
        }
        out_ += "#[metadata]\n";
        for (size_t i = 0; i < constants_.size(); ++i) {
            const Constant* c = constants_[i];
            out_ += "meta[Constant][" + std::to_string(i) + "]: " + type_str(c->type) + " = \"";
            out_ += text::base64_encode(static_cast<const uint8_t*>(c->data.raw_data()),
                                        c->data.nbytes());
            out_ += "\"\n";
        }
    }

    PrintOptions options_;
    std::string out_;
    std::vector<UniqueNames> names_;  // per function scope
    int next_temp_ = 0;
    std::vector<Scope> scopes_;
    std::vector<std::unordered_map<const ExprNode*, int>> uses_;  // per function scope
    std::unordered_map<const Constant*, int> const_index_;
    std::vector<const Constant*> constants_;
};

}  // namespace

std::string print(const IRModule& m, const PrintOptions& options) {
    return Printer(options).module(m);
}

std::string print(const Expr& e, const PrintOptions& options) {
    if (!e.defined()) return "<undefined>\n";
    return Printer(options).expr(e);
}

std::ostream& operator<<(std::ostream& os, const IRModule& m) {
    return os << print(m);
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
    return os << print(e);
}

}  // namespace anvil::graph
