// Operator fusion, TVM's dominator-based algorithm (relay/transforms/fuse_ops.cc):
//  1. a forward dataflow graph in post-order; each node has a pattern (its op's OpPattern,
//     Tuple for tuples) and edges to its users, each edge with the user's pattern
//     (Broadcast on an operand of the output's shape counts as ElemWise);
//  2. the post-dominator tree: a node's parent is the least common post-dominator of its users,
//     with the strongest pattern on the way;
//  3. three phases of merging a node's group into its post-dominator's group when every path
//     between them qualifies: (0) anchors take an elementwise/broadcast tail, elementwise ops
//     join injective/reduce/anchor users; (1) injective ops and tuples join; (2) injective ops
//     join tuples already fused into injective users.
//     An anchor whose op fuses_injective_inputs (nn.attention) reads its operands like an
//     injective op: its operand edges are Injective, and in (0) and (1) elementwise and
//     injective producers join it, unless their group already holds another anchor.
// Every group then becomes a primitive Function called from the rewritten function.
#include <algorithm>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "graph/expr_functor.h"
#include "graph/passes/fusion_graph.h"
#include "graph/passes/passes.h"
#include "support/error.h"

namespace anvil::graph {

namespace {

using namespace fusion;

constexpr int kMaxFuseDepth = 256;
// The largest expression tree a group may inline into one kernel, counted in graph ops: the TE
// inliner substitutes a producer's body at every read, so a chain of producers each read several
// times (the stages of an FFT, say) grows exponentially although the group holds few ops.
constexpr int64_t kMaxInlinedSize = 1024;

struct Group {
    Group* parent = nullptr;
    int pattern = kOpaque;
    const ExprNode* root_ref = nullptr;  // the group's output
    bool has_anchor = false;
    int num_nodes = 1;
    // Filled while rewriting: the group's parameters and the outer arguments bound to them.
    std::vector<Ref<Var>> params;
    std::vector<Expr> arguments;
    std::unordered_map<const ExprNode*, Ref<Var>> param_of;

    Group* root() {
        Group* g = this;
        while (g->parent) g = g->parent;
        for (Group* p = this; p->parent;) {  // path compression
            Group* next = p->parent;
            p->parent = g;
            p = next;
        }
        return g;
    }
};

class Partitioner {
public:
    Partitioner(const std::vector<std::unique_ptr<Node>>& graph, const std::vector<DomNode>& dom)
        : graph_(graph), dom_(dom), groups_(graph.size()) {
        for (size_t i = 0; i < graph.size(); ++i) {
            groups_[i].pattern = graph[i]->pattern;
            groups_[i].root_ref = graph[i]->ref;
            groups_[i].has_anchor = graph[i]->pattern == kOutEWiseFusable;
        }
        operands_.resize(graph.size());
        for (const auto& n : graph) {
            for (const auto& e : n->outputs) operands_[e.node->index].push_back(n.get());
        }
    }

    std::vector<Group>& run(int opt_level) {
        if (opt_level > 0) {
            for (int phase = 0; phase < 3; ++phase) run_phase(phase);
        }
        return groups_;
    }

private:
    Group* group_of(const Node* n) { return &groups_[n->index]; }

    template <typename F>
    bool check_path_(Node* src, Node* sink, F cond) {
        if (!visited_.emplace(src, true).second) return true;
        if (!cond(group_of(src)->root()->pattern, src == sink)) return false;
        if (src == sink) return true;
        for (const auto& e : src->outputs) {
            if (!check_path_(e.node, sink, cond)) return false;
        }
        return true;
    }
    // Whether every node on every path from src (exclusive) to sink satisfies `cond`.
    template <typename F>
    bool check_path(Node* src, Node* sink, F cond) {
        visited_.clear();
        for (const auto& e : src->outputs) {
            if (!check_path_(e.node, sink, cond)) return false;
        }
        return true;
    }

    void merge(Group* child, Group* parent) {
        child = child->root();
        parent = parent->root();
        if (child == parent) return;
        parent->num_nodes += child->num_nodes;
        child->parent = parent;
        if (child->has_anchor) {
            parent->has_anchor = true;
            parent->pattern = std::max(child->pattern, parent->pattern);
        }
    }
    void commit_(Node* src, Node* sink, Group* target) {
        if (src == sink || !visited_.emplace(src, true).second) return;
        merge(group_of(src), target);
        for (const auto& e : src->outputs) commit_(e.node, sink, target);
    }
    void commit(Node* src, Node* sink) {
        visited_.clear();
        commit_(src, sink, group_of(sink));
    }

    // The size of the group that fusing `child` into `parent`'s group would make (TVM's
    // CountFusedNodesWithNewChild).
    int count_up_to(Node* src, Node* sink) {
        if (src == sink || !visited_.emplace(src, true).second) return 0;
        int n = group_of(src)->num_nodes;
        for (const auto& e : src->outputs) n += count_up_to(e.node, sink);
        return n;
    }
    int count_fused(Node* child, Node* parent) {
        visited_.clear();
        return group_of(parent)->root()->num_nodes + count_up_to(child, parent);
    }

    // The size of the expression tree that the group of `sink` would inline into its kernel if
    // the groups on the paths from `child` joined it: each op counts once per read of its value
    // inside the group (at most kMaxInlinedSize + 1).
    void collect_up_to(Node* src, Node* sink, std::unordered_set<Group*>& members) {
        if (src == sink || !visited_.emplace(src, true).second) return;
        members.insert(group_of(src)->root());
        for (const auto& e : src->outputs) collect_up_to(e.node, sink, members);
    }
    int64_t tree_size(const Node* n, const std::unordered_set<Group*>& members,
                      std::unordered_map<const Node*, int64_t>& memo) {
        if (auto it = memo.find(n); it != memo.end()) return it->second;
        int64_t size = 1;
        for (Node* operand : operands_[n->index]) {
            bool inside = members.count(group_of(operand)->root()) != 0;
            size = std::min(kMaxInlinedSize + 1,
                            size + (inside ? tree_size(operand, members, memo) : 1));
        }
        memo.emplace(n, size);
        return size;
    }
    int64_t inlined_size(Node* child, Node* sink) {
        std::unordered_set<Group*> members = {group_of(sink)->root()};
        visited_.clear();
        collect_up_to(child, sink, members);
        std::unordered_map<const Node*, int64_t> memo;
        const Node* output = graph_[size_t(group_of(sink)->root() - groups_.data())].get();
        return tree_size(output, members, memo);
    }

    // Commits the fusion of `node` into `sink`'s group unless the kernel would inline too large
    // an expression (checked last: it walks the group).
    void fuse(Node* node, Node* sink) {
        if (inlined_size(node, sink) <= kMaxInlinedSize) commit(node, sink);
    }

    void run_phase(int phase) {
        for (size_t i = 0; i < graph_.size(); ++i) {
            Node* node = graph_[i].get();
            const DomNode& dom = dom_[i];
            Group* group = group_of(node);  // the node's own, which keeps its pattern
            if (group->pattern == kOpaque || !dom.parent || node->extern_ref) continue;
            Node* sink = graph_[static_cast<size_t>(dom.parent - dom_.data())].get();
            Group* sink_group = group_of(sink);
            if (count_fused(node, sink) > kMaxFuseDepth) continue;
            int pattern = group->pattern;
            if (phase == 2) {
                // Injective ops join a tuple that has joined injective users.
                if (pattern > kInjective) continue;
                Group* sink_root = sink_group->root();
                if (sink_root->pattern == kTuple) continue;
                if (sink_group->pattern == kTuple && sink_root->pattern <= kInjective &&
                    check_path(node, sink, [](int k, bool) { return k <= kInjective; })) {
                    fuse(node, sink);
                }
                continue;
            }
            if (group->root() == sink_group->root()) continue;
            if (sink_group->pattern == kTuple) continue;  // do not fuse into tuples
            if (pattern == kOutEWiseFusable) {
                if (phase != 0 || dom.pattern != kElemWise) continue;
                if (check_path(node, sink, [](int k, bool) { return k <= kBroadcast; }))
                    fuse(node, sink);
            } else if (pattern <= kBroadcast) {
                if (dom.pattern > kInjective && dom.pattern != kCommReduce) continue;
                // An anchor's tail stays with it rather than taking the anchor into another.
                if (sink->fuses_inputs && group->root()->has_anchor) continue;
                auto cond = [](int k, bool is_sink) {
                    return is_sink ? (k <= kOutEWiseFusable) : k <= kInjective;
                };
                if (check_path(node, sink, cond)) fuse(node, sink);
            } else if (pattern == kInjective || pattern == kTuple) {
                if (phase != 1) continue;
                // Into an injective sink, or an anchor that reads its inputs by their indices.
                const bool into_anchor = sink->fuses_inputs && pattern == kInjective;
                if (into_anchor && group->root()->has_anchor) continue;
                auto cond = [into_anchor](int k, bool is_sink) {
                    return k <= kInjective || (is_sink && into_anchor);
                };
                if (check_path(node, sink, cond)) fuse(node, sink);
            }
        }
    }

    const std::vector<std::unique_ptr<Node>>& graph_;
    const std::vector<DomNode>& dom_;
    std::vector<Group> groups_;
    std::vector<std::vector<Node*>> operands_;  // per node, one entry per read
    std::unordered_map<const Node*, bool> visited_;
};

// Rebuilds the body with every group as a call of a primitive function.
class FuseMutator : public ExprMutator {
public:
    FuseMutator(const std::unordered_map<const ExprNode*, Node*>& node_of,
                std::vector<Group>& groups)
        : node_of_(node_of), groups_(groups) {}

protected:
    Group* group_of(const ExprNode* e) {
        auto it = node_of_.find(e);
        ANVIL_CHECK(it != node_of_.end()) << "fuse_ops: a node outside the dataflow graph";
        return groups_[it->second->index].root();
    }

    // The parameter of `group` bound to `outer` (computed outside the group), made on first use.
    Expr param_for(Group* group, const ExprNode* key, const std::function<Expr()>& outer) {
        auto it = group->param_of.find(key);
        if (it == group->param_of.end()) {
            Expr value = outer();
            std::string name = "p";  // appended, not "p" + ...: GCC 12 warns falsely on that
            name += std::to_string(group->params.size());
            Ref<Var> p = make_var(name, value->type);
            group->params.push_back(p);
            group->arguments.push_back(value);
            it = group->param_of.emplace(key, p).first;
        }
        return Expr(it->second);
    }

    // Operands of a node in `group`: those of another group become the group's parameters.
    std::vector<Expr> arguments(const std::vector<Expr>& args, Group* group) {
        std::vector<Expr> out;
        for (const auto& a : args) {
            if (group_of(a.get()) == group) {
                out.push_back(mutate(a));
            } else {
                out.push_back(param_for(group, a.get(), [&] { return mutate(a); }));
            }
        }
        return out;
    }

    Expr make_group_call(Group* group, const Expr& body, const SourceLoc& loc) {
        Ref<Function> fn = make_function(group->params, body, /*primitive=*/true, loc);
        return make_call_function(fn, group->arguments, loc);
    }

    Expr mutate_(const Call* op, const Expr& self) override {
        if (!op->op.defined()) return ExprMutator::mutate_(op, self);
        if (op->op->executor_op) {
            // Carried out by the executor (call_tir, shape_tensor): stays a plain call.
            std::vector<Expr> args;
            for (const auto& a : op->args) args.push_back(mutate(a));
            return make_call(op->op, std::move(args), op->attrs, op->loc);
        }
        Group* group = group_of(op);
        Expr call = make_call(op->op, arguments(op->args, group), op->attrs, op->loc);
        if (group->root_ref == op) return make_group_call(group, call, op->loc);
        return call;
    }
    Expr mutate_(const Tuple* op, const Expr& self) override {
        Group* group = group_of(op);
        if (group->root_ref == op) return ExprMutator::mutate_(op, self);
        return make_tuple(arguments(op->fields, group), op->loc);
    }
    Expr mutate_(const TupleGetItem* op, const Expr& self) override {
        Group* group = group_of(op);
        if (group_of(op->tuple.get()) != group) {
            // An item of another group's tuple (a multi-output kernel): taken outside, so the
            // group's parameter is a tensor, never a tuple.
            auto outer = [&] { return make_tuple_get_item(mutate(op->tuple), op->index, op->loc); };
            return group->root_ref == op ? outer() : param_for(group, op, outer);
        }
        Expr item = make_tuple_get_item(mutate(op->tuple), op->index, op->loc);
        if (group->root_ref == op) return make_group_call(group, item, op->loc);
        return item;
    }
    Expr mutate_(const Function* op, const Expr& self) override { return self; }

private:
    const std::unordered_map<const ExprNode*, Node*>& node_of_;
    std::vector<Group>& groups_;
};

Ref<Function> fuse_function(const Ref<Function>& f, int opt_level) {
    FusionGraph graph = build_fusion_graph(f->params, f->body);
    std::vector<DomNode> dom = post_dominators(graph);
    Partitioner partitioner(graph.nodes, dom);
    std::vector<Group>& groups = partitioner.run(opt_level);
    FuseMutator mutator(graph.node_of, groups);
    Expr body = mutator.mutate(f->body);
    if (body.same_as(f->body)) return f;
    return with_body(*f, body);
}

}  // namespace

IRModule fuse_ops(const IRModule& m, const PassContext& ctx) {
    IRModule out = m;
    for (auto& [name, f] : out.functions) {
        if (!f->primitive) f = fuse_function(f, ctx.opt_level);
    }
    return out;
}

}  // namespace anvil::graph
