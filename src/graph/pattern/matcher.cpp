#include "graph/pattern/matcher.h"

#include "graph/attr_fields.h"
#include "graph/expr_functor.h"
#include "graph/structural_equal.h"
#include "ir/structural_equal.h"
#include "support/error.h"

namespace anvil::graph {

namespace {

// Every operand of `e`, the parts of lets and functions too (for users: a value a let binds is
// used by the let).
std::vector<Expr> all_operands(const Expr& e) {
    std::vector<Expr> out = dataflow_operands(e);
    if (auto* c = e.as<Call>(); c && c->callee.defined()) out.push_back(c->callee);
    if (auto* l = e.as<Let>()) out = {l->value, l->body};
    if (auto* f = e.as<Function>()) out = {f->body};
    return out;
}

bool is_commutative(const Op& op) {
    return op.name == "add" || op.name == "multiply";
}

// Whether the field `name` of `attrs` has the value `v` (integers and floats compare as
// numbers, so has_attr({"epsilon": 1}) matches 1.0).
bool attr_has_value(const Attrs& attrs, const std::string& name, const DFPattern::AttrValue& v) {
    if (auto* i = std::get_if<int64_t>(&v)) {
        if (auto x = attr_int(attrs, name)) return *x == *i;
        if (auto x = attr_float(attrs, name)) return *x == static_cast<double>(*i);
        if (auto x = attr_bool(attrs, name)) return (*i == 0 || *i == 1) && *x == (*i == 1);
        return false;
    }
    if (auto* d = std::get_if<double>(&v)) {
        if (auto x = attr_float(attrs, name)) return *x == *d;
        if (auto x = attr_int(attrs, name)) return static_cast<double>(*x) == *d;
        return false;
    }
    if (auto* b = std::get_if<bool>(&v)) {
        auto x = attr_bool(attrs, name);
        return x && *x == *b;
    }
    if (auto* s = std::get_if<std::string>(&v)) {
        auto x = attr_string(attrs, name);
        return x && *x == *s;
    }
    auto x = attr_ints(attrs, name);
    return x && *x == std::get<std::vector<int64_t>>(v);
}

bool dims_equal(const PrimExpr& a, const PrimExpr& b) {
    const int64_t *x = as_const_int(a), *y = as_const_int(b);
    if (x && y) return *x == *y;
    return structural_equal(a, b);
}

}  // namespace

std::vector<Expr> dataflow_operands(const Expr& e) {
    if (auto* c = e.as<Call>()) return c->args;
    if (auto* t = e.as<Tuple>()) return t->fields;
    if (auto* g = e.as<TupleGetItem>()) return {g->tuple};
    return {};
}

const std::vector<Expr>& NodeMap::operator[](const DFPattern& p) const {
    auto it = map_.find(p.get());
    if (it == map_.end()) {
        user_error() << "node_map: the pattern " << pattern_str(p)
                     << " matched nothing in this match (a pattern of an alternative that did "
                        "not match, or one that is not part of the matched pattern)";
    }
    return it->second;
}

DFPatternMatcher::DFPatternMatcher(const Expr& graph) {
    post_order_visit(graph, [&](const Expr& e) {
        for (const Expr& operand : all_operands(e)) users_[operand.get()].push_back(e.get());
    });
}

const std::vector<const ExprNode*>& DFPatternMatcher::users(const ExprNode* e) const {
    static const std::vector<const ExprNode*> kNone;
    auto it = users_.find(e);
    return it == users_.end() ? kNone : it->second;
}

bool DFPatternMatcher::match(const DFPattern& pattern, const Expr& expr) {
    if (!pattern.defined()) user_error() << "match: an empty pattern";
    node_map_.map_.clear();
    log_.clear();
    region_.clear();
    multi_ = false;
    if (!visit(pattern, expr)) return false;
    auto add = [&](const std::vector<Expr>& exprs) {
        // A variable is always read, never computed (a wildcard path may reach one).
        for (const Expr& e : exprs) {
            if (!e.is<Var>()) region_.insert(e.get());
        }
    };
    for (const auto& [p, exprs] : node_map_.map_) {
        switch (p->kind) {
            case PatternKind::CallPattern:
            case PatternKind::TuplePattern:
            case PatternKind::TupleGetItemPattern:
            case PatternKind::ConstantPattern:
                add(exprs);
                break;
            case PatternKind::DominatorPattern: {
                // The parent and everything along the path are inside, whatever their patterns.
                const auto* d = static_cast<const DominatorPattern*>(p);
                for (const PatternNode* part : {d->parent.get(), d->path.get()}) {
                    auto it = node_map_.map_.find(part);  // no path when the parent is adjacent
                    if (it != node_map_.map_.end()) add(it->second);
                }
                break;
            }
            default:
                break;
        }
    }
    return true;
}

void DFPatternMatcher::bind(const DFPattern& p, const Expr& e) {
    node_map_.map_[p.get()].push_back(e);
    log_.emplace_back(p.get(), e.get());
}

void DFPatternMatcher::roll_back(size_t to) {
    while (log_.size() > to) {
        auto it = node_map_.map_.find(log_.back().first);
        it->second.pop_back();
        if (it->second.empty()) node_map_.map_.erase(it);
        log_.pop_back();
    }
}

bool DFPatternMatcher::visit(const DFPattern& p, const Expr& e) {
    if (auto it = node_map_.map_.find(p.get()); it != node_map_.map_.end()) {
        // A node used twice matches one expression (several only along a dominates() path).
        for (const Expr& bound : it->second) {
            if (bound.same_as(e)) return true;
        }
        if (!multi_) return false;
    }
    const size_t start = mark();
    bool ok = false;
    switch (p.get()->kind) {
        case PatternKind::WildcardPattern:
            ok = true;
            break;
        case PatternKind::ExprPattern:
            ok = structural_equal(p.as<ExprPattern>()->expr, e);
            break;
        case PatternKind::VarPattern: {
            const std::string& name = p.as<VarPattern>()->name;
            auto* v = e.as<Var>();
            ok = v && (name.empty() || v->name == name);
            break;
        }
        case PatternKind::ConstantPattern:
            ok = e.is<Constant>();
            break;
        case PatternKind::CallPattern:
            ok = visit_call(p.as<CallPattern>(), e);
            break;
        case PatternKind::TuplePattern: {
            const auto& fields = p.as<TuplePattern>()->fields;
            auto* t = e.as<Tuple>();
            ok = t && t->fields.size() == fields.size();
            for (size_t i = 0; ok && i < fields.size(); ++i) ok = visit(fields[i], t->fields[i]);
            break;
        }
        case PatternKind::TupleGetItemPattern: {
            const auto* tp = p.as<TupleGetItemPattern>();
            auto* g = e.as<TupleGetItem>();
            ok = g && (tp->index < 0 || tp->index == g->index) && visit(tp->tuple, g->tuple);
            break;
        }
        case PatternKind::AltPattern: {
            const auto* a = p.as<AltPattern>();
            ok = visit(a->left, e);
            if (!ok) {
                roll_back(start);
                ok = visit(a->right, e);
            }
            break;
        }
        case PatternKind::AttrPattern: {
            const auto* a = p.as<AttrPattern>();
            ok = visit(a->pattern, e) && attrs_match(a, e);
            break;
        }
        case PatternKind::TypePattern: {
            const auto* t = p.as<TypePattern>();
            ok = visit(t->pattern, e) && type_equal(e->type, t->type);
            break;
        }
        case PatternKind::DataTypePattern: {
            const auto* t = p.as<DataTypePattern>();
            auto* tt = e->type.as<TensorType>();
            ok = tt && tt->dtype == t->dtype && visit(t->pattern, e);
            break;
        }
        case PatternKind::ShapePattern: {
            const auto* s = p.as<ShapePattern>();
            auto* tt = e->type.as<TensorType>();
            ok = tt && tt->shape.size() == s->shape.size();
            for (size_t i = 0; ok && i < s->shape.size(); ++i) {
                ok = dims_equal(tt->shape[i], s->shape[i]);
            }
            ok = ok && visit(s->pattern, e);
            break;
        }
        case PatternKind::DominatorPattern:
            ok = visit_dominator(p.as<DominatorPattern>(), e);
            break;
    }
    if (!ok) {
        roll_back(start);
        return false;
    }
    bind(p, e);
    return true;
}

bool DFPatternMatcher::visit_call(const CallPattern* p, const Expr& e) {
    auto* call = e.as<Call>();
    if (!call || !call->op.defined() || call->op->name != p->op->name) return false;
    if (!p->args) return true;
    const auto& args = *p->args;
    if (args.size() != call->args.size()) return false;
    const size_t start = mark();
    bool ok = true;
    for (size_t i = 0; ok && i < args.size(); ++i) ok = visit(args[i], call->args[i]);
    if (ok || args.size() != 2 || !is_commutative(*call->op)) return ok;
    roll_back(start);
    return visit(args[0], call->args[1]) && visit(args[1], call->args[0]);
}

// From the operands of what `child` matched, backwards: an operand `parent` matches ends the
// walk there; one `path` matches is part of the region and its operands are walked too; any
// other operand fails the match (so every value the child reads comes from the parent through
// path expressions, or is one such expression: constants and inputs need a path alternative,
// e.g. path = is_op("add") | is_constant()). Matches when the parent was reached and no path
// expression but constants is used outside the child and the path.
bool DFPatternMatcher::visit_dominator(const DominatorPattern* p, const Expr& e) {
    if (!visit(p->child, e)) return false;
    std::vector<Expr> frontier = dataflow_operands(e);
    std::unordered_set<const ExprNode*> seen, path_nodes;
    bool reached_parent = false;
    while (!frontier.empty()) {
        Expr n = frontier.back();
        frontier.pop_back();
        if (!seen.insert(n.get()).second) continue;
        size_t before = mark();
        if (visit(p->parent, n)) {
            reached_parent = true;
            continue;
        }
        roll_back(before);
        const bool outer = multi_;
        multi_ = true;  // the path pattern matches every expression along the way
        const bool on_path = visit(p->path, n);
        multi_ = outer;
        if (!on_path) return false;
        path_nodes.insert(n.get());
        for (const Expr& operand : dataflow_operands(n)) frontier.push_back(operand);
    }
    if (!reached_parent) return false;
    for (const ExprNode* n : path_nodes) {
        // Constants and variables are read, not computed: others may read them too.
        if (n->kind == ExprKind::Constant || n->kind == ExprKind::Var) continue;
        for (const ExprNode* u : users(n)) {
            if (u != e.get() && !path_nodes.count(u)) return false;
        }
    }
    return true;
}

bool DFPatternMatcher::attrs_match(const AttrPattern* p, const Expr& e) const {
    if (auto* f = e.as<Function>()) {
        // A function's attributes are strings (Composite="...").
        for (const auto& [name, value] : p->attrs) {
            auto* s = std::get_if<std::string>(&value);
            auto it = f->attrs.find(name);
            if (!s || it == f->attrs.end() || it->second != *s) return false;
        }
        return true;
    }
    auto* call = e.as<Call>();
    if (!call || !call->attrs.defined()) return false;
    for (const auto& [name, value] : p->attrs) {
        if (!attr_has_value(*call->attrs, name, value)) return false;
    }
    return true;
}

bool match(const DFPattern& pattern, const Expr& expr) {
    return DFPatternMatcher(expr).match(pattern, expr);
}

}  // namespace anvil::graph
