#include "graph/pattern/rewrite.h"

#include <unordered_map>

#include "graph/expr_functor.h"
#include "graph/pattern/match_groups.h"
#include "graph/structural_equal.h"
#include "support/error.h"

namespace anvil::graph {

namespace {

class FunctionRewrite : public DFPatternRewrite {
public:
    using Fn = std::function<Expr(const Expr&, const Expr&, const NodeMap&)>;
    FunctionRewrite(DFPattern pattern, Fn fn, bool once) : fn_(std::move(fn)) {
        pattern_ = std::move(pattern);
        rewrite_once_ = once;
    }
    Expr callback(const Expr& pre, const Expr& post, const NodeMap& node_map) const override {
        return fn_(pre, post, node_map);
    }

private:
    Fn fn_;
};

// One walk of one callback: each match's root is replaced by what the callback returns for it.
class MatchRewriter : public ExprMutator {
public:
    MatchRewriter(const DFPatternRewrite& callback, const Expr& graph) : callback_(callback) {
        for (auto& m : match_groups(callback.pattern(), graph)) {
            const ExprNode* root = m.root.get();
            matches_.emplace(root, std::move(m));
        }
    }

    Expr mutate(const Expr& e) override {
        if (auto it = post_.find(e.get()); it != post_.end()) return it->second;
        Expr post = ExprMutator::mutate(e);
        if (auto m = matches_.find(e.get()); m != matches_.end()) {
            Expr out = callback_.callback(e, post, rewritten(m->second.node_map));
            if (!out.defined()) {
                user_error(e->loc)
                    << "rewrite: the callback of " << pattern_str(callback_.pattern())
                    << " returned no expression (return post to keep the match)";
            }
            if (!out.same_as(post) && !structural_equal(out, post)) changed_ = true;
            post = out;
        }
        post_[e.get()] = post;
        return post;
    }

    bool changed() const { return changed_; }

private:
    // The node map with every expression in its rewritten form (the operands of a match are
    // rewritten before it).
    NodeMap rewritten(const NodeMap& pre) {
        NodeMap out = pre;
        out.replace_all([&](const Expr& e) {
            auto it = post_.find(e.get());
            return it == post_.end() ? e : it->second;
        });
        return out;
    }

    const DFPatternRewrite& callback_;
    std::unordered_map<const ExprNode*, PatternMatch> matches_;
    std::unordered_map<const ExprNode*, Expr> post_;
    bool changed_ = false;
};

constexpr int kMaxRounds = 100;

}  // namespace

Ref<DFPatternRewrite> make_rewrite(
    DFPattern pattern, std::function<Expr(const Expr&, const Expr&, const NodeMap&)> callback,
    bool rewrite_once) {
    if (!pattern.defined()) user_error() << "rewrite: a callback without a pattern";
    if (!callback) user_error() << "rewrite: an empty callback for " << pattern_str(pattern);
    return make_ref<FunctionRewrite>(std::move(pattern), std::move(callback), rewrite_once);
}

Expr rewrite(const std::vector<Ref<DFPatternRewrite>>& callbacks, const Expr& expr) {
    if (auto* f = expr.as<Function>()) {
        Expr body = rewrite(callbacks, f->body);
        return body.same_as(f->body) ? expr : Expr(with_body(*f, body));
    }
    for (const auto& c : callbacks) {
        if (!c.defined() || !c->pattern().defined()) {
            user_error() << "rewrite: a callback without a pattern";
        }
    }
    Expr current = expr;
    for (int round = 0;; ++round) {
        bool changed = false;
        for (const auto& c : callbacks) {
            if (round > 0 && c->rewrite_once()) continue;
            MatchRewriter r(*c, current);
            current = r.mutate(current);
            changed |= r.changed();
        }
        if (!changed) return current;
        if (round + 1 == kMaxRounds) {
            std::string patterns;
            for (const auto& c : callbacks) {
                if (!c->rewrite_once()) {
                    patterns += (patterns.empty() ? "" : "; ") + pattern_str(c->pattern());
                }
            }
            user_error() << "rewrite: the graph still changes after " << kMaxRounds
                         << " rounds of the callbacks of " << patterns
                         << " (a callback whose result its own or another's pattern matches "
                            "again; return post where nothing is to change)";
        }
    }
}

IRModule rewrite(const std::vector<Ref<DFPatternRewrite>>& callbacks, const IRModule& m) {
    IRModule out = m;
    for (auto& [name, f] : out.functions) {
        if (f->primitive) continue;
        Expr body = rewrite(callbacks, f->body);
        if (!body.same_as(f->body)) f = with_body(*f, body);
    }
    return out;
}

}  // namespace anvil::graph
