// What the rewriting passes share (graph/passes/graph_rewrite.h): typed attribute access and the
// op table lookup.
#include "graph/passes/graph_rewrite.h"

#include "ops/dense.h"
#include "ops/softmax.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

TEST(GraphRewrite, AttrsOfReadsTheOpsStruct) {
    auto x = tensor_var("x", {2, 3});
    auto a = make_ref<ops::SoftmaxAttrs>();
    const_cast<ops::SoftmaxAttrs*>(a.get())->axis = 0;
    Expr e = call("nn.softmax", {x}, a);
    EXPECT_EQ(attrs_of<ops::SoftmaxAttrs>(*e.as<Call>()).axis, 0);
    EXPECT_EQ(call_attrs_of<ops::SoftmaxAttrs>(e, "nn.softmax")->axis, 0);
    EXPECT_EQ(call_attrs_of<ops::SoftmaxAttrs>(e, "nn.log_softmax"), nullptr);
}

TEST(GraphRewrite, AttrsOfAnotherStructIsOurBug) {
    auto x = tensor_var("x", {2, 3});
    Expr e = call("nn.softmax", {x});
    try {
        attrs_of<ops::MatmulAttrs>(*e.as<Call>());
        FAIL() << "no error";
    } catch (const InternalError& err) {
        const std::string message = err.what();
        EXPECT_NE(message.find("nn.softmax as MatmulAttrs"), std::string::npos) << message;
        EXPECT_NE(message.find("SoftmaxAttrs"), std::string::npos) << message;
    }
}

TEST(GraphRewrite, FindOpOfAnUnknownOpIsOurBug) {
    EXPECT_EQ(find_op("nn.dense"), ops::op_table().find("nn.dense"));
    EXPECT_THROW(find_op("nn.no_such_op"), InternalError);
}

}  // namespace
}  // namespace anvil::graph::testing
