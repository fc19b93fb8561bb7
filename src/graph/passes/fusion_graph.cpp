#include "graph/passes/fusion_graph.h"

#include <algorithm>

#include "graph/expr_functor.h"
#include "ir/structural_equal.h"

namespace anvil::graph::fusion {

namespace {

// The forward graph of a function body, nodes in post-order (operands first).
class GraphBuilder : public ExprVisitor {
public:
    FusionGraph graph;

    void build(const std::vector<Ref<Var>>& params, const Expr& body) {
        for (const auto& p : params) visit(Expr(p));
        visit(body);
        update(body, nullptr, kOpaque);
    }

protected:
    Node* add(const ExprNode* e, int pattern) {
        auto n = std::make_unique<Node>();
        n->ref = e;
        n->index = graph.nodes.size();
        n->pattern = pattern;
        graph.node_of[e] = n.get();
        graph.nodes.push_back(std::move(n));
        return graph.nodes.back().get();
    }
    void update(const Expr& e, Node* user, int pattern) {
        Node* n = graph.node_of.at(e.get());
        if (user) {
            n->outputs.push_back({user, pattern});
        } else {
            n->extern_ref = true;
        }
    }

    void visit_(const Var* op) override { add(op, kOpaque); }
    void visit_(const Constant* op) override {
        // Scalars are part of the kernel's arithmetic; tensors are parameters of the kernel.
        add(op, op->data.ndim() == 0 ? kElemWise : kOpaque);
    }
    void visit_(const Call* op) override {
        for (const auto& a : op->args) visit(a);
        if (!op->op.defined()) {  // a call of a function (an already fused group): opaque
            Node* n = add(op, kOpaque);
            for (const auto& a : op->args) update(a, n, kOpaque);
            return;
        }
        int pattern = static_cast<int>(op->op->pattern);
        Node* n = add(op, pattern);
        n->fuses_inputs = op->op->fuses_injective_inputs;
        auto* out = op->type.as<TensorType>();
        for (const auto& a : op->args) {
            // A broadcast operand of the output's shape is read elementwise; an op that reads
            // its operands through their index arithmetic reads them as an injective op would.
            int edge = n->fuses_inputs ? kInjective : pattern;
            auto* in = a->type.as<TensorType>();
            if (edge == kBroadcast && out && in && in->shape.size() == out->shape.size()) {
                bool same = true;
                for (size_t i = 0; i < in->shape.size(); ++i)
                    same &= structural_equal(in->shape[i], out->shape[i]);
                if (same) edge = kElemWise;
            }
            update(a, n, edge);
        }
    }
    void visit_(const Tuple* op) override {
        for (const auto& f : op->fields) visit(f);
        Node* n = add(op, kTuple);
        for (const auto& f : op->fields) {
            update(f, f->type.is<TensorType>() ? n : nullptr, kInjective);
        }
    }
    void visit_(const TupleGetItem* op) override {
        visit(op->tuple);
        Node* n = add(op, kInjective);
        update(op->tuple, n, kInjective);
    }
    void visit_(const Function* op) override { add(op, kOpaque); }  // not entered
    void visit_(const Let* op) override {
        visit(Expr(op->var));
        visit(op->value);
        visit(op->body);
        add(op, kOpaque);
        update(op->value, nullptr, kOpaque);
        update(op->body, nullptr, kOpaque);
    }
};

DomNode* least_common_ancestor(DomNode* a, DomNode* b, int* pattern) {
    while (a != b) {
        if (!a || !b) return nullptr;
        if (a->depth < b->depth) {
            *pattern = std::max(*pattern, b->pattern);
            b = b->parent;
        } else if (b->depth < a->depth) {
            *pattern = std::max(*pattern, a->pattern);
            a = a->parent;
        } else {
            *pattern = std::max({*pattern, a->pattern, b->pattern});
            a = a->parent;
            b = b->parent;
        }
    }
    return a;
}

}  // namespace

FusionGraph build_fusion_graph(const std::vector<Ref<Var>>& params, const Expr& body) {
    GraphBuilder builder;
    builder.build(params, body);
    return std::move(builder.graph);
}

std::vector<DomNode> post_dominators(const FusionGraph& graph) {
    std::vector<DomNode> nodes(graph.nodes.size());
    // Users come after their operands in post-order, so walking backwards finds every user's
    // parent before the node's.
    for (size_t i = graph.nodes.size(); i-- > 0;) {
        const Node& g = *graph.nodes[i];
        DomNode& d = nodes[i];
        if (g.extern_ref || g.outputs.empty()) {
            d.depth = 1;
            continue;
        }
        int pattern = std::max(kElemWise, g.outputs[0].pattern);
        DomNode* parent = &nodes[g.outputs[0].node->index];
        for (size_t k = 1; k < g.outputs.size(); ++k) {
            parent = least_common_ancestor(parent, &nodes[g.outputs[k].node->index], &pattern);
            pattern = std::max(pattern, g.outputs[k].pattern);
        }
        d.parent = parent;
        d.depth = parent ? parent->depth + 1 : 1;
        d.pattern = pattern;
    }
    return nodes;
}

}  // namespace anvil::graph::fusion
