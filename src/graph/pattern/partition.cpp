#include "graph/pattern/partition.h"

#include <unordered_map>

#include "graph/expr_functor.h"
#include "graph/pattern/match_groups.h"
#include "support/error.h"

namespace anvil::graph {

namespace {

// The region of one match as a function of the values it reads.
class RegionExtractor : public ExprMutator {
public:
    explicit RegionExtractor(const PatternMatch& m) : match_(m) {}

    // The function and the (pre) expressions its parameters stand for.
    std::pair<Ref<Function>, std::vector<Expr>> extract(const FunctionAttrs& attrs) {
        Expr body = mutate(match_.root);
        FunctionAttrs all = attrs;
        all["PartitionedFromPattern"] = pattern_name_;
        return {make_function(params_, body, false, match_.root->loc, std::move(all)), inputs_};
    }

    Expr mutate(const Expr& e) override {
        if (match_.region.count(e.get())) return ExprMutator::mutate(e);
        // The callee of a call in the region (a fused or partitioned function) stays the callee.
        if (e.is<Function>()) return e;
        // A value the region reads: one parameter per value.
        auto it = param_of_.find(e.get());
        if (it != param_of_.end()) return it->second;
        Ref<Var> p = make_var("p" + std::to_string(params_.size()), e->type, e->loc);
        params_.push_back(p);
        inputs_.push_back(e);
        param_of_.emplace(e.get(), Expr(p));
        return Expr(p);
    }

protected:
    Expr mutate_(const Call* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        pattern_name_ += (op->op.defined() ? op->op->name : std::string("Function")) + "_";
        return e;
    }
    Expr mutate_(const Tuple* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        pattern_name_ += "Tuple_";
        return e;
    }
    Expr mutate_(const TupleGetItem* op, const Expr& self) override {
        Expr e = ExprMutator::mutate_(op, self);
        pattern_name_ += "TupleGetItem" + std::to_string(op->index) + "_";
        return e;
    }

private:
    const PatternMatch& match_;
    std::vector<Ref<Var>> params_;
    std::vector<Expr> inputs_;
    std::unordered_map<const ExprNode*, Expr> param_of_;
    std::string pattern_name_;
};

class Partitioner : public ExprMutator {
public:
    Partitioner(std::vector<PatternMatch> matches, const FunctionAttrs& attrs) : attrs_(attrs) {
        for (auto& m : matches) {
            const ExprNode* root = m.root.get();
            matches_.emplace(root, std::move(m));
        }
    }

    Expr mutate(const Expr& e) override {
        auto m = matches_.find(e.get());
        if (m == matches_.end()) return ExprMutator::mutate(e);
        if (auto done = done_.find(e.get()); done != done_.end()) return done->second;
        auto [fn, inputs] = RegionExtractor(m->second).extract(attrs_);
        std::vector<Expr> args;
        for (const Expr& in : inputs) args.push_back(mutate(in));
        Expr call = make_call_function(fn, std::move(args), e->loc);
        done_.emplace(e.get(), call);
        return call;
    }

private:
    FunctionAttrs attrs_;
    std::unordered_map<const ExprNode*, PatternMatch> matches_;
    std::unordered_map<const ExprNode*, Expr> done_;
};

}  // namespace

Expr partition(const DFPattern& pattern, const Expr& expr, const FunctionAttrs& attrs,
               const std::function<bool(const Expr&)>& check) {
    if (!pattern.defined()) user_error() << "partition: an empty pattern";
    if (auto* f = expr.as<Function>()) {
        Expr body = partition(pattern, f->body, attrs, check);
        return body.same_as(f->body) ? expr : Expr(with_body(*f, body));
    }
    // A match must compute something: a root that is a variable or a constant (a wildcard's)
    // makes no function.
    auto computes = [&](const Expr& root) {
        if (!root.is<Call>() && !root.is<Tuple>() && !root.is<TupleGetItem>()) return false;
        return !check || check(root);
    };
    std::vector<PatternMatch> matches = match_groups(pattern, expr, computes);
    if (matches.empty()) return expr;
    return Partitioner(std::move(matches), attrs).mutate(expr);
}

}  // namespace anvil::graph
