// Matching a dataflow pattern (pattern.h) against graph expressions.
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/pattern/pattern.h"

namespace anvil::graph {

// What a match bound: for each pattern node, the expressions it matched (one for most; a
// dominates() path matches several). TVM's node_map.
class NodeMap {
public:
    bool contains(const DFPattern& p) const { return map_.count(p.get()) != 0; }
    // The expressions `p` matched; UserError when it matched none (a pattern of the branch of an
    // alternative that did not match, or a pattern that is not part of the matched one).
    const std::vector<Expr>& operator[](const DFPattern& p) const;
    // The pattern nodes with their expressions, for iterating.
    const std::unordered_map<const PatternNode*, std::vector<Expr>>& entries() const {
        return map_;
    }

    // Every expression replaced by `f` of it (rewrite() hands callbacks the rewritten forms).
    template <typename F>
    void replace_all(F f) {
        for (auto& [p, exprs] : map_) {
            for (Expr& e : exprs) e = f(e);
        }
    }

private:
    friend class DFPatternMatcher;
    std::unordered_map<const PatternNode*, std::vector<Expr>> map_;
};

// Matches patterns against the expressions of one graph: `graph` is the expression whose
// operands (transitively) make the graph; dominates() asks which nodes use which, within it.
class DFPatternMatcher {
public:
    explicit DFPatternMatcher(const Expr& graph);

    // Whether `pattern` matches `expr` (a node of the graph); node_map() then holds the
    // bindings, region() the expressions the match is made of (see below).
    bool match(const DFPattern& pattern, const Expr& expr);
    const NodeMap& node_map() const { return node_map_; }
    // The expressions of the last match that the pattern describes as computed within it: those
    // a call, tuple, tuple item or constant pattern matched, and a dominates()'s parent and path
    // whatever their patterns; never a variable. The others it matched (a wildcard's, is_var's,
    // is_expr's) are values the region reads.
    const std::unordered_set<const ExprNode*>& region() const { return region_; }
    // The expressions that use `e` as an operand, in the graph.
    const std::vector<const ExprNode*>& users(const ExprNode* e) const;

private:
    bool visit(const DFPattern& p, const Expr& e);
    bool visit_call(const CallPattern* p, const Expr& e);
    bool visit_dominator(const DominatorPattern* p, const Expr& e);
    bool attrs_match(const AttrPattern* p, const Expr& e) const;
    // Undo log: the bindings made since `mark` are removed when a branch fails.
    size_t mark() const { return log_.size(); }
    void roll_back(size_t mark);
    void bind(const DFPattern& p, const Expr& e);

    std::unordered_map<const ExprNode*, std::vector<const ExprNode*>> users_;
    NodeMap node_map_;
    std::vector<std::pair<const PatternNode*, const ExprNode*>> log_;
    std::unordered_set<const ExprNode*> region_;
    // While matching a dominates() path: a pattern bound to one expression may bind more.
    bool multi_ = false;
};

// Whether `pattern` matches `expr`, the expression itself being the graph.
bool match(const DFPattern& pattern, const Expr& expr);

// The operands of `e` that a pattern can describe: a call's arguments, a tuple's fields, a
// tuple item's tuple (not a let's or a function's parts).
std::vector<Expr> dataflow_operands(const Expr& e);

}  // namespace anvil::graph
