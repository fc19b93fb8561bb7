#include "graph/pattern/match_groups.h"

#include <unordered_map>

namespace anvil::graph {

std::vector<Expr> dataflow_order(const Expr& graph) {
    std::vector<Expr> order;
    std::unordered_map<const ExprNode*, bool> seen;
    // Iterative (a model's graph can be thousands of nodes deep): a node is listed after its
    // operands.
    std::vector<std::pair<Expr, bool>> stack = {{graph, false}};
    while (!stack.empty()) {
        auto [e, expanded] = stack.back();
        stack.pop_back();
        if (expanded) {
            order.push_back(e);
            continue;
        }
        if (seen[e.get()]) continue;
        seen[e.get()] = true;
        stack.emplace_back(e, true);
        std::vector<Expr> operands = dataflow_operands(e);
        if (auto* l = e.as<Let>()) operands = {l->value, l->body};
        for (auto it = operands.rbegin(); it != operands.rend(); ++it) {
            if (!seen[it->get()]) stack.emplace_back(*it, false);
        }
    }
    return order;
}

std::vector<PatternMatch> match_groups(const DFPattern& pattern, const Expr& graph,
                                       const std::function<bool(const Expr&)>& check) {
    DFPatternMatcher matcher(graph);
    std::vector<Expr> order = dataflow_order(graph);
    std::unordered_set<const ExprNode*> claimed;
    std::vector<PatternMatch> groups;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const Expr& root = *it;
        if (claimed.count(root.get()) || !matcher.match(pattern, root)) continue;
        std::unordered_set<const ExprNode*> region = matcher.region();
        region.insert(root.get());
        bool valid = true;
        for (const ExprNode* n : region) {
            // A constant (a weight several layers share, one node per initializer) may be part
            // of several matches: each region keeps its own use of it.
            if (n->kind == ExprKind::Constant) continue;
            if (claimed.count(n)) valid = false;
            if (!valid || n == root.get()) continue;
            for (const ExprNode* user : matcher.users(n)) {
                if (!region.count(user)) valid = false;
            }
        }
        if (!valid || (check && !check(root))) continue;
        for (const ExprNode* n : region) {
            if (n->kind != ExprKind::Constant) claimed.insert(n);
        }
        groups.push_back({root, matcher.node_map(), std::move(region)});
    }
    return groups;
}

}  // namespace anvil::graph
