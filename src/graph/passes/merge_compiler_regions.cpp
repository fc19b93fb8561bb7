// TVM's MergeCompilerRegions: neighbouring regions for the same external compiler (calls of
// Compiler="<c>" functions, annotate_target.cpp) become one region, so its code generator sees
// whole subgraphs (oneDNN keeps values in its blocked layouts across a merged region instead of
// reordering at each op's boundary).
//
// Regions merge along dataflow edges, in topological order: a region joins the group of an
// operand region of the same compiler unless that would make a cycle once groups are contracted
// (a path leaving the group and coming back through a value computed outside it, or through
// another group). The merged function computes every member; its results are the members read
// outside it (a tuple when there are several), each read through a TupleGetItem of the call.
//
// A function with let bindings is left as it is (regions inside let-bound scopes would need
// scoping rules; the models BYOC targets are dataflow graphs).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "graph/expr_functor.h"
#include "graph/passes/graph_rewrite.h"
#include "graph/passes/passes.h"

namespace anvil::graph {

namespace {

const std::string* region_compiler(const Expr& e) {
    auto* call = e.as<Call>();
    if (!call || call->op.defined()) return nullptr;
    auto* f = call->callee.as<Function>();
    if (!f) return nullptr;
    auto it = f->attrs.find("Compiler");
    return it == f->attrs.end() ? nullptr : &it->second;
}

std::vector<const ExprNode*> operands(const Expr& e) {
    std::vector<const ExprNode*> out;
    if (auto* c = e.as<Call>()) {
        for (const auto& a : c->args) out.push_back(a.get());
    } else if (auto* t = e.as<Tuple>()) {
        for (const auto& f : t->fields) out.push_back(f.get());
    } else if (auto* g = e.as<TupleGetItem>()) {
        out.push_back(g->tuple.get());
    }
    return out;
}

class RegionMerger {
public:
    explicit RegionMerger(const Expr& body) : body_(body) {
        order(body);
        for (size_t i = 0; i < nodes_.size(); ++i) {
            group_.push_back(static_cast<int>(i));
            members_.push_back({static_cast<int>(i)});
        }
    }

    bool has_let() const { return has_let_; }

    Expr run() {
        for (size_t i = 0; i < nodes_.size(); ++i) {
            const std::string* c = region_compiler(nodes_[i]);
            if (!c) continue;
            for (const ExprNode* o : operands(nodes_[i])) {
                int j = index_.at(o);
                const std::string* oc = region_compiler(nodes_[j]);
                if (!oc || *oc != *c || group_[j] == group_[i]) continue;
                try_merge(group_[i], group_[j]);
            }
        }
        return rebuild();
    }

private:
    // Post-order (operands first), without entering functions; iterative, graphs are deep.
    void order(const Expr& root) {
        std::vector<std::pair<Expr, bool>> stack = {{root, false}};
        while (!stack.empty()) {
            auto [e, expanded] = stack.back();
            stack.pop_back();
            if (index_.count(e.get())) continue;
            if (expanded) {
                index_[e.get()] = static_cast<int>(nodes_.size());
                nodes_.push_back(e);
                continue;
            }
            if (e.is<Let>()) has_let_ = true;
            stack.push_back({e, true});
            if (auto* c = e.as<Call>()) {
                for (auto it = c->args.rbegin(); it != c->args.rend(); ++it)
                    stack.push_back({*it, false});
            } else if (auto* t = e.as<Tuple>()) {
                for (auto it = t->fields.rbegin(); it != t->fields.rend(); ++it)
                    stack.push_back({*it, false});
            } else if (auto* g = e.as<TupleGetItem>()) {
                stack.push_back({g->tuple, false});
            }
        }
    }

    // Merges group b into group a unless the contracted graph would have a cycle.
    void try_merge(int a, int b) {
        std::vector<int> moved = members_[b];
        for (int m : moved) group_[m] = a;
        members_[a].insert(members_[a].end(), moved.begin(), moved.end());
        if (!reenters(a)) {
            members_[b].clear();
            return;
        }
        members_[a].resize(members_[a].size() - moved.size());
        for (int m : moved) group_[m] = b;
    }

    // Whether a path leaves group g and comes back: from the values its members read outside
    // it, walking back through operands, and through every member of any group met, is g met?
    bool reenters(int g) {
        std::vector<int> stack;
        std::unordered_set<int> seen_nodes, seen_groups;
        for (int m : members_[g]) {
            for (const ExprNode* o : operands(nodes_[m])) {
                int j = index_.at(o);
                if (group_[j] != g) stack.push_back(j);
            }
        }
        while (!stack.empty()) {
            int n = stack.back();
            stack.pop_back();
            if (group_[n] == g) return true;
            if (!seen_nodes.insert(n).second) continue;
            // A member of a group stands for the whole group once it is contracted.
            if (members_[group_[n]].size() > 1 && seen_groups.insert(group_[n]).second) {
                for (int m : members_[group_[n]]) stack.push_back(m);
            }
            for (const ExprNode* o : operands(nodes_[n])) stack.push_back(index_.at(o));
        }
        return false;
    }

    Expr rebuild() {
        // Who reads each node, to find each group's results.
        std::vector<std::vector<int>> users(nodes_.size());
        for (size_t i = 0; i < nodes_.size(); ++i) {
            for (const ExprNode* o : operands(nodes_[i]))
                users[index_.at(o)].push_back(static_cast<int>(i));
        }
        for (size_t g = 0; g < nodes_.size(); ++g) {
            std::vector<int> members = members_[g];
            if (members.size() < 2) continue;
            std::sort(members.begin(), members.end());  // topological
            build_group(static_cast<int>(g), members, users);
        }
        if (pending_.empty()) return body_;
        // A group's call reads values from outside it, maybe other groups' results: each call
        // is made when a result of it is first needed, its arguments rewritten first.
        class Replacer : public ExprMutator {
        public:
            explicit Replacer(RegionMerger& m) : m_(m) {}
            Expr mutate(const Expr& e) override {
                auto it = m_.output_of_.find(e.get());
                if (it == m_.output_of_.end()) return ExprMutator::mutate(e);
                PendingCall& p = m_.pending_[it->second.first];
                if (!p.call.defined()) {
                    std::vector<Expr> args;
                    for (const auto& a : p.outer_args) args.push_back(mutate(a));
                    p.call = make_call_function(p.fn, std::move(args), p.loc);
                }
                if (p.outputs.size() == 1) return p.call;
                Expr& item = items_[e.get()];
                if (!item.defined()) item = make_tuple_get_item(p.call, it->second.second, p.loc);
                return item;
            }

        private:
            RegionMerger& m_;
            std::unordered_map<const ExprNode*, Expr> items_;  // one TupleGetItem per result
        };
        return Replacer(*this).mutate(body_);
    }

    struct PendingCall {
        Ref<Function> fn;
        Expr call;  // made by rebuild()
        std::vector<Expr> outer_args;
        std::vector<const ExprNode*> outputs;
        SourceLoc loc;
    };

    void build_group(int g, const std::vector<int>& members,
                     const std::vector<std::vector<int>>& users) {
        std::unordered_map<const ExprNode*, Expr> inner;  // member -> its expression inside
        std::unordered_map<const ExprNode*, Expr> param_of;
        std::vector<Ref<Var>> params;
        PendingCall pending;
        pending.loc = nodes_[members.front()]->loc;
        std::string compiler = *region_compiler(nodes_[members.front()]);
        std::vector<Expr> results;
        for (int m : members) {
            auto* call = nodes_[m].as<Call>();
            std::vector<Expr> args;
            for (const auto& a : call->args) {
                if (auto it = inner.find(a.get()); it != inner.end()) {
                    args.push_back(it->second);
                    continue;
                }
                auto p = param_of.find(a.get());
                if (p == param_of.end()) {
                    Ref<Var> v = make_var("p" + std::to_string(params.size()), a->type, a->loc);
                    params.push_back(v);
                    pending.outer_args.push_back(a);
                    p = param_of.emplace(a.get(), Expr(v)).first;
                }
                args.push_back(p->second);
            }
            inner[nodes_[m].get()] = inline_call(*call->callee.as<Function>(), args);
            bool output = nodes_[m].same_as(body_);
            for (int u : users[m]) output |= group_[u] != g;
            if (output) {
                results.push_back(inner[nodes_[m].get()]);
                pending.outputs.push_back(nodes_[m].get());
            }
        }
        for (size_t i = 0; i < pending.outputs.size(); ++i) {
            output_of_[pending.outputs[i]] = {pending_.size(), static_cast<int>(i)};
        }
        Expr body = results.size() == 1 ? results[0] : make_tuple(results, pending.loc);
        pending.fn =
            make_function(std::move(params), body, false, pending.loc, {{"Compiler", compiler}});
        pending_.push_back(std::move(pending));
    }

    Expr body_;
    std::vector<Expr> nodes_;
    std::unordered_map<const ExprNode*, int> index_;
    std::vector<int> group_;
    std::vector<std::vector<int>> members_;
    bool has_let_ = false;
    std::vector<PendingCall> pending_;
    // A group's result: its pending_ index and its position among the results.
    std::unordered_map<const ExprNode*, std::pair<size_t, int>> output_of_;
};

}  // namespace

IRModule merge_compiler_regions(const IRModule& m, const PassContext&) {
    return rewrite_functions(m, [&](const Ref<Function>& f) {
        if (f->attrs.count("Compiler")) return f;
        RegionMerger merger(f->body);
        if (merger.has_let()) return f;
        Expr body = merger.run();
        return body.same_as(f->body) ? f : with_body(*f, body);
    });
}

}  // namespace anvil::graph
