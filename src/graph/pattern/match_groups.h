// The disjoint matches of a pattern in a graph: what rewrite() hands to its callbacks and what
// partition() turns into functions.
#pragma once

#include <functional>
#include <unordered_set>
#include <vector>

#include "graph/pattern/matcher.h"

namespace anvil::graph {

struct PatternMatch {
    Expr root;  // the expression the whole pattern matched
    NodeMap node_map;
    // What the match computes (DFPatternMatcher::region), the root included.
    std::unordered_set<const ExprNode*> region;
};

// The matches of `pattern` at the expressions of `graph` (not inside nested functions), taken
// from the graph's result towards its inputs: a match is kept when its region shares no
// expression but constants with a kept one, no expression of its region but the root (and
// constants) is used outside the region (replacing the region must not lose a value something else
// reads), and `check` (when given) accepts its root. In the order taken.
std::vector<PatternMatch> match_groups(const DFPattern& pattern, const Expr& graph,
                                       const std::function<bool(const Expr&)>& check = nullptr);

// The expressions of `graph` operands first, not entering nested functions.
std::vector<Expr> dataflow_order(const Expr& graph);

}  // namespace anvil::graph
