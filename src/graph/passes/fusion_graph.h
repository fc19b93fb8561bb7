// The dataflow graph fusion works on (fuse_ops.cpp), after TVM's IndexedForwardGraph and
// DominatorTree (relay/transforms/fuse_ops.cc):
//   FusionGraph    the nodes of a function body in post-order (operands first); each node has a
//                  pattern (its op's OpPattern; kTuple for tuples) and edges to its users, each
//                  edge with the user's pattern (Broadcast on an operand of the output's shape
//                  counts as ElemWise). Nested functions are not entered; lets are barriers.
//   PostDominators a node's parent is the least common post-dominator of its users, with the
//                  strongest pattern on the paths to it.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "graph/expr.h"

namespace anvil::graph::fusion {

// OpPattern values, plus Tuple between CommReduce and Opaque as in TVM.
constexpr int kElemWise = 0, kBroadcast = 1, kInjective = 2, kCommReduce = 3, kOutEWiseFusable = 4,
              kTuple = 7, kOpaque = 8;

struct Node;
struct Edge {
    Node* node;
    int pattern;
};
struct Node {
    const ExprNode* ref = nullptr;
    size_t index = 0;
    bool extern_ref = false;  // used outside any fusible user (the function's result, a let)
    int pattern = kOpaque;
    // An op with fuses_injective_inputs: its operand edges are Injective.
    bool fuses_inputs = false;
    std::vector<Edge> outputs;
};

struct FusionGraph {
    std::vector<std::unique_ptr<Node>> nodes;  // post-order
    std::unordered_map<const ExprNode*, Node*> node_of;
};
// The graph of `params` and `body`.
FusionGraph build_fusion_graph(const std::vector<Ref<Var>>& params, const Expr& body);

struct DomNode {
    DomNode* parent = nullptr;  // null: no post-dominator (the result, a barrier)
    int depth = 0;
    int pattern = kOpaque;  // the strongest pattern between the node and its parent
};
// One DomNode per graph node, same indices.
std::vector<DomNode> post_dominators(const FusionGraph& graph);

}  // namespace anvil::graph::fusion
