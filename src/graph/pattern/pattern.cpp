#include "graph/pattern/pattern.h"

#include <sstream>
#include <unordered_map>

#include "ops/op_table.h"
#include "support/error.h"
#include "support/text_scanner.h"

namespace anvil::graph {

namespace {

template <typename T, typename... Args>
DFPattern make_pattern(Args&&... args) {
    return DFPattern(Ref<PatternNode>(new T(std::forward<Args>(args)...)));
}

void check_defined(const DFPattern& p, const char* what) {
    if (!p.defined()) user_error() << "dataflow pattern: " << what << " is an empty pattern";
}

}  // namespace

DFPattern DFPattern::operator()(std::vector<DFPattern> args) const {
    const auto* call = as<CallPattern>();
    if (!call || call->args) {
        user_error() << "dataflow pattern: only is_op(name) can be called with arguments, not "
                     << (defined() ? pattern_str(*this) : std::string("an empty pattern"));
    }
    for (const auto& a : args) check_defined(a, "an argument of a call pattern");
    return make_pattern<CallPattern>(call->op, std::move(args));
}

DFPattern DFPattern::optional(const std::function<DFPattern(const DFPattern&)>& wrap) const {
    check_defined(*this, "the pattern made optional");
    return *this | wrap(*this);
}

DFPattern DFPattern::has_attr(std::vector<std::pair<std::string, AttrValue>> attrs) const {
    check_defined(*this, "the pattern of has_attr");
    return make_pattern<AttrPattern>(*this, std::move(attrs));
}

DFPattern DFPattern::has_type(Type type) const {
    check_defined(*this, "the pattern of has_type");
    return make_pattern<TypePattern>(*this, std::move(type));
}

DFPattern DFPattern::has_dtype(DataType dtype) const {
    check_defined(*this, "the pattern of has_dtype");
    return make_pattern<DataTypePattern>(*this, dtype);
}

DFPattern DFPattern::has_shape(std::vector<PrimExpr> shape) const {
    check_defined(*this, "the pattern of has_shape");
    return make_pattern<ShapePattern>(*this, std::move(shape));
}

DFPattern DFPattern::has_shape(const std::vector<int64_t>& shape) const {
    std::vector<PrimExpr> dims;
    for (int64_t d : shape) dims.push_back(make_const(DataType::int64(), d));
    return has_shape(std::move(dims));
}

DFPattern operator|(const DFPattern& a, const DFPattern& b) {
    check_defined(a, "the left side of |");
    check_defined(b, "the right side of |");
    return make_pattern<AltPattern>(a, b);
}

DFPattern wildcard() {
    return make_pattern<WildcardPattern>();
}

DFPattern is_expr(Expr e) {
    if (!e.defined()) user_error() << "dataflow pattern: is_expr of an empty expression";
    return make_pattern<ExprPattern>(std::move(e));
}

DFPattern is_var(std::string name) {
    return make_pattern<VarPattern>(std::move(name));
}

DFPattern is_constant() {
    return make_pattern<ConstantPattern>();
}

DFPattern is_op(const std::string& name) {
    const Op* op = ops::op_table().find(name);
    if (!op)
        user_error() << "dataflow pattern: is_op(\"" << name << "\"): there is no op of that name";
    return make_pattern<CallPattern>(Ref<Op>(op), std::nullopt);
}

DFPattern is_tuple(std::vector<DFPattern> fields) {
    for (const auto& f : fields) check_defined(f, "a field of is_tuple");
    return make_pattern<TuplePattern>(std::move(fields));
}

DFPattern is_tuple_get_item(DFPattern tuple, int index) {
    check_defined(tuple, "the tuple of is_tuple_get_item");
    if (index < -1)
        user_error() << "dataflow pattern: is_tuple_get_item index " << index << " (-1: any)";
    return make_pattern<TupleGetItemPattern>(std::move(tuple), index);
}

DFPattern dominates(DFPattern parent, DFPattern path, DFPattern child) {
    check_defined(parent, "the parent of dominates");
    check_defined(path, "the path of dominates");
    check_defined(child, "the child of dominates");
    return make_pattern<DominatorPattern>(std::move(parent), std::move(path), std::move(child));
}

namespace {

std::string attr_value_str(const DFPattern::AttrValue& v) {
    struct Visitor {
        std::string operator()(int64_t i) const { return std::to_string(i); }
        std::string operator()(double d) const {
            std::ostringstream s;
            s << d;
            return s.str();
        }
        std::string operator()(bool b) const { return b ? "True" : "False"; }
        std::string operator()(const std::string& s) const { return text::quote(s); }
        std::string operator()(const std::vector<int64_t>& list) const {
            std::string out = "[";
            for (size_t i = 0; i < list.size(); ++i)
                out += (i ? ", " : "") + std::to_string(list[i]);
            return out + "]";
        }
    };
    return std::visit(Visitor{}, v);
}

class PatternPrinter {
public:
    std::string print(const DFPattern& root) {
        count(root);
        return node(root);
    }

private:
    // How often each node is an operand (a node used more than once gets a name).
    void count(const DFPattern& p) {
        if (uses_[p.get()]++ > 0) return;
        for (const DFPattern* c : children(p)) count(*c);
    }

    static std::vector<const DFPattern*> children(const DFPattern& p) {
        std::vector<const DFPattern*> out;
        switch (p.get()->kind) {
            case PatternKind::CallPattern:
                if (const auto& args = p.as<CallPattern>()->args) {
                    for (const auto& a : *args) out.push_back(&a);
                }
                break;
            case PatternKind::TuplePattern:
                for (const auto& f : p.as<TuplePattern>()->fields) out.push_back(&f);
                break;
            case PatternKind::TupleGetItemPattern:
                out.push_back(&p.as<TupleGetItemPattern>()->tuple);
                break;
            case PatternKind::AltPattern:
                out = {&p.as<AltPattern>()->left, &p.as<AltPattern>()->right};
                break;
            case PatternKind::AttrPattern:
                out.push_back(&p.as<AttrPattern>()->pattern);
                break;
            case PatternKind::TypePattern:
                out.push_back(&p.as<TypePattern>()->pattern);
                break;
            case PatternKind::DataTypePattern:
                out.push_back(&p.as<DataTypePattern>()->pattern);
                break;
            case PatternKind::ShapePattern:
                out.push_back(&p.as<ShapePattern>()->pattern);
                break;
            case PatternKind::DominatorPattern: {
                const auto* d = p.as<DominatorPattern>();
                out = {&d->parent, &d->path, &d->child};
                break;
            }
            default:
                break;
        }
        return out;
    }

    std::string node(const DFPattern& p) {
        if (auto it = names_.find(p.get()); it != names_.end()) return it->second;
        std::string prefix;
        if (uses_[p.get()] > 1) {
            std::string name = "%" + std::to_string(names_.size());
            names_[p.get()] = name;
            prefix = name + "=";
        }
        return prefix + body(p);
    }

    std::string list(const std::vector<DFPattern>& items) {
        std::string out;
        for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + node(items[i]);
        return out;
    }

    std::string body(const DFPattern& p) {
        switch (p.get()->kind) {
            case PatternKind::WildcardPattern:
                return "*";
            case PatternKind::ExprPattern: {
                const Expr& e = p.as<ExprPattern>()->expr;
                if (auto* v = e.as<Var>()) return "expr(%" + v->name + ")";
                return "expr(" + std::string(expr_kind_name(e->kind)) + " of type " +
                       type_str(e->type) + ")";
            }
            case PatternKind::VarPattern: {
                const std::string& name = p.as<VarPattern>()->name;
                return name.empty() ? "var" : "var(%" + name + ")";
            }
            case PatternKind::ConstantPattern:
                return "const";
            case PatternKind::CallPattern: {
                const auto* c = p.as<CallPattern>();
                return c->op->name + "(" + (c->args ? list(*c->args) : std::string("...")) + ")";
            }
            case PatternKind::TuplePattern:
                return "(" + list(p.as<TuplePattern>()->fields) + ")";
            case PatternKind::TupleGetItemPattern: {
                const auto* t = p.as<TupleGetItemPattern>();
                return node(t->tuple) + "." + (t->index < 0 ? "*" : std::to_string(t->index));
            }
            case PatternKind::AltPattern: {
                const auto* a = p.as<AltPattern>();
                // (Named nodes are named where first printed: left before right.)
                std::string left = node(a->left);
                std::string right = node(a->right);
                return "(" + left + " | " + right + ")";
            }
            case PatternKind::AttrPattern: {
                const auto* a = p.as<AttrPattern>();
                std::string out = node(a->pattern) + ".has_attr(";
                for (size_t i = 0; i < a->attrs.size(); ++i) {
                    out += (i ? ", " : "") + a->attrs[i].first + "=" +
                           attr_value_str(a->attrs[i].second);
                }
                return out + ")";
            }
            case PatternKind::TypePattern: {
                const auto* t = p.as<TypePattern>();
                return node(t->pattern) + ".has_type(" + type_str(t->type) + ")";
            }
            case PatternKind::DataTypePattern: {
                const auto* t = p.as<DataTypePattern>();
                return node(t->pattern) + ".has_dtype(" + t->dtype.str() + ")";
            }
            case PatternKind::ShapePattern: {
                const auto* s = p.as<ShapePattern>();
                std::string out = node(s->pattern) + ".has_shape((";
                for (size_t i = 0; i < s->shape.size(); ++i) {
                    const int64_t* c = as_const_int(s->shape[i]);
                    out += (i ? ", " : "") + (c ? std::to_string(*c) : to_string(s->shape[i]));
                }
                return out + (s->shape.size() == 1 ? ",))" : "))");
            }
            case PatternKind::DominatorPattern: {
                const auto* d = p.as<DominatorPattern>();
                std::string parent = node(d->parent);
                std::string path = node(d->path);
                return "dominates(" + parent + ", " + path + ", " + node(d->child) + ")";
            }
        }
        return "?";
    }

    std::unordered_map<const PatternNode*, int> uses_;
    std::unordered_map<const PatternNode*, std::string> names_;
};

}  // namespace

std::string pattern_str(const DFPattern& p) {
    if (!p.defined()) return "<empty pattern>";
    return PatternPrinter().print(p);
}

}  // namespace anvil::graph
