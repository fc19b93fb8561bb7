// Rewriting graphs with dataflow patterns, TVM's DFPatternRewrite (C++) / DFPatternCallback
// (Python) and rewrite():
//
//   class FoldScale : public DFPatternRewrite {
//   public:
//       FoldScale() { pattern_ = is_op("multiply")({x_, is_constant()}); }
//       Expr callback(const Expr& pre, const Expr& post, const NodeMap& node_map) const override;
//   private:
//       DFPattern x_ = wildcard();
//   };
//   Expr out = rewrite({make_ref<FoldScale>()}, body);
#pragma once

#include <functional>
#include <vector>

#include "graph/module.h"
#include "graph/pattern/matcher.h"

namespace anvil::graph {

class DFPatternRewrite : public Object {
public:
    virtual ~DFPatternRewrite() = default;
    // The replacement of one match: `pre` is the matched expression as the graph had it, `post`
    // the same with its operands already rewritten, `node_map` the expression each pattern node
    // matched, in their rewritten forms. Returning `post` keeps the match as it is.
    virtual Expr callback(const Expr& pre, const Expr& post, const NodeMap& node_map) const = 0;

    const DFPattern& pattern() const { return pattern_; }
    // Applied in one walk only, not until nothing changes.
    bool rewrite_once() const { return rewrite_once_; }

protected:
    DFPattern pattern_;
    bool rewrite_once_ = false;
};

// A rewrite from a pattern and a function (for callers that need no class of their own).
Ref<DFPatternRewrite> make_rewrite(
    DFPattern pattern,
    std::function<Expr(const Expr& pre, const Expr& post, const NodeMap& node_map)> callback,
    bool rewrite_once = false);

// Applies the callbacks in order, each to every disjoint match of its pattern
// (match_groups.h), and again while any callback changes the graph (a result structurally
// equal to `post` is no change). UserError naming the patterns when that has not settled after
// 100 rounds (a callback that keeps undoing another's work). A Function is rewritten in its body.
Expr rewrite(const std::vector<Ref<DFPatternRewrite>>& callbacks, const Expr& expr);
// The same in every non-primitive function of the module.
IRModule rewrite(const std::vector<Ref<DFPatternRewrite>>& callbacks, const IRModule& m);

}  // namespace anvil::graph
