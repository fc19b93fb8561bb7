// Rewriting with dataflow patterns (graph/pattern/rewrite.h).
#include "graph/pattern/rewrite.h"

#include <cmath>

#include "graph/printer.h"
#include "pattern_test_util.h"

namespace anvil::graph::testing {
namespace {

// The float form of TVM's QnnQuantizeConstFold: a quantize-like chain of constants,
// round(c / scale) + zero_point, folded into one constant by the callback. A C++ rewrite class,
// as TVM's DFPatternRewrite subclasses are written.
class QuantizeLikeConstFold : public DFPatternRewrite {
public:
    QuantizeLikeConstFold() {
        pattern_ = is_op("add")({is_op("round")({is_op("divide")({data_, scale_})}), zero_point_});
    }
    Expr callback(const Expr&, const Expr& post, const NodeMap& node_map) const override {
        const Expr& data = node_map[data_][0];
        const Expr& scale = node_map[scale_][0];
        const Expr& zero = node_map[zero_point_][0];
        auto d = values_of(data), s = values_of(scale), z = values_of(zero);
        if (s.size() != 1 || z.size() != 1) return post;  // per-tensor only
        std::vector<float> q;
        for (float v : d) q.push_back(std::nearbyint(v / s[0]) + z[0]);
        auto shape = data->type.as<TensorType>()->static_shape();
        return constant(shape, q);
    }

private:
    DFPattern data_ = is_constant(), scale_ = is_constant(), zero_point_ = is_constant();
};

TEST(Rewrite, FoldsAQuantizeLikeConstantChain) {
    auto x = tensor_var("x", {3});
    Expr q = call(
        "add", {call("round",
                     {call("divide", {constant({3}, {1.0f, 2.6f, -3.4f}), constant({}, {0.5f})})}),
                constant({}, {10.0f})});
    Expr body = call("multiply", {x, q});
    Expr out = rewrite({make_ref<QuantizeLikeConstFold>()}, body);
    const Call* mul = out.as<Call>();
    ASSERT_NE(mul, nullptr);
    EXPECT_EQ(mul->op->name, "multiply");
    EXPECT_EQ(values_of(mul->args[1]), (std::vector<float>{12.0f, 15.0f, 3.0f}));
    // A variable in the chain: no match, nothing changes.
    Expr not_constant = call(
        "add", {call("round", {call("divide", {x, constant({}, {0.5f})})}), constant({}, {10.0f})});
    EXPECT_TRUE(rewrite({make_ref<QuantizeLikeConstFold>()}, not_constant).same_as(not_constant));
}

TEST(Rewrite, RepeatsUntilNothingChanges) {
    // relu(relu(relu(x))) -> relu(x), one relu at a time.
    auto x = tensor_var("x", {4});
    Expr e = call("nn.relu", {call("nn.relu", {call("nn.relu", {x})})});
    DFPattern inner = is_op("nn.relu")({wildcard()});
    auto r = make_rewrite(is_op("nn.relu")({inner}),
                          [&](const Expr&, const Expr&, const NodeMap& m) { return m[inner][0]; });
    Expr out = rewrite({r}, e);
    EXPECT_EQ(print(out), print(call("nn.relu", {x})));
}

TEST(Rewrite, PrePostAndTheNodeMapsRewrittenOperands) {
    // exp(exp(x)) with exp(a) -> nn.relu(a): the outer match sees its operand already rewritten.
    auto x = tensor_var("x", {4});
    Expr inner = call("exp", {x});
    Expr e = call("exp", {inner});
    DFPattern a = wildcard();
    std::vector<std::string> seen;
    auto r =
        make_rewrite(is_op("exp")({a}), [&](const Expr& pre, const Expr& post, const NodeMap& m) {
            seen.push_back(pre.as<Call>()->args[0].is<Var>() ? "pre(x)" : "pre(exp)");
            EXPECT_TRUE(post.as<Call>()->args[0].same_as(m[a][0]));
            return call("nn.relu", {m[a][0]});
        });
    Expr out = rewrite({r}, e);
    EXPECT_EQ(print(out), print(call("nn.relu", {call("nn.relu", {x})})));
    EXPECT_EQ(seen, (std::vector<std::string>{"pre(x)", "pre(exp)"}));
}

TEST(Rewrite, ACallbackThatNeverSettlesIsAnError) {
    auto x = tensor_var("x", {4});
    // exp(x) -> exp(exp(x)): the inner exp(x) matches again, one more exp each round.
    auto r = make_rewrite(
        is_op("exp")({is_var()}),
        [&](const Expr&, const Expr& post, const NodeMap&) { return call("exp", {post}); });
    try {
        rewrite({r}, call("exp", {x}));
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("still changes after 100 rounds"), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("exp(var)"), std::string::npos) << e.what();
    }
    // Once: applied in one walk only.
    auto once = make_rewrite(
        is_op("exp")({wildcard()}),
        [&](const Expr&, const Expr& post, const NodeMap&) { return call("exp", {post}); }, true);
    EXPECT_EQ(print(rewrite({once}, call("exp", {x}))), print(call("exp", {call("exp", {x})})));
}

TEST(Rewrite, AMatchWhoseInsideIsUsedElsewhereIsLeft) {
    // relu(exp(x)) where exp(x) is also an output: replacing the pair would lose exp(x).
    auto x = tensor_var("x", {4});
    Expr ex = call("exp", {x});
    Expr e = make_tuple({call("nn.relu", {ex}), ex});
    int calls = 0;
    auto r = make_rewrite(is_op("nn.relu")({is_op("exp")({wildcard()})}),
                          [&](const Expr&, const Expr& post, const NodeMap&) {
                              ++calls;
                              return post;
                          });
    EXPECT_TRUE(rewrite({r}, e).same_as(e));
    EXPECT_EQ(calls, 0);
}

TEST(Rewrite, AFunctionIsRewrittenInItsBody) {
    auto x = tensor_var("x", {4});
    Ref<Function> f = make_function({x}, call("nn.relu", {call("nn.relu", {x})}), false, {},
                                    {{"Composite", "relu_relu"}});
    DFPattern a = wildcard();
    auto r = make_rewrite(
        is_op("nn.relu")({is_op("nn.relu")({a})}),
        [&](const Expr&, const Expr&, const NodeMap& m) { return call("nn.relu", {m[a][0]}); });
    Expr out = rewrite({r}, Expr(f));
    const Function* g = out.as<Function>();
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->attrs.at("Composite"), "relu_relu");
    EXPECT_TRUE(g->params[0].same_as(x));
    EXPECT_EQ(print(g->body), print(call("nn.relu", {x})));
}

}  // namespace
}  // namespace anvil::graph::testing
