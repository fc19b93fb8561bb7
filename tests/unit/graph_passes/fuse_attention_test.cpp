#include <algorithm>

#include "graph/attr_fields.h"
#include "graph/printer.h"
#include "ops/dense.h"
#include "pass_test_graphs.h"

namespace anvil::graph::testing {
namespace {

Ref<Attrs> axes(const std::string& op, std::vector<int64_t> v) {
    return attr_with(*ops::get_op(op).make_default_attrs(), "axes", std::move(v));
}
Ref<Attrs> newshape(std::vector<int64_t> v) {
    return attr_with(*ops::get_op("reshape").make_default_attrs(), "newshape", std::move(v));
}

// PyTorch's sequence-first multi-head attention as its ONNX export writes it: the projection
// [S, B, 3d] sliced into q, k, v, each [S, B*N, H] transposed to [B*N, S, H], q divided by
// sqrt(H), k transposed to [B*N, H, S], softmax, the product with v and the merge of the heads.
struct TorchAttention {
    int64_t s = 7, b = 2, n = 2, h = 4;
    Ref<Var> qkv = tensor_var("qkv", {7, 2, 24});
    Expr src = qkv;  // the projection the heads are sliced from
    Expr head(int64_t part, std::vector<int64_t> perm) {
        Ref<Attrs> sa = ops::get_op("strided_slice").make_default_attrs();
        sa = attr_with(*sa, "begin", std::vector<int64_t>{part * 8});
        sa = attr_with(*sa, "end", std::vector<int64_t>{part * 8 + 8});
        sa = attr_with(*sa, "axes", std::vector<int64_t>{2});
        Expr x = call("strided_slice", {src}, sa);
        x = call("reshape", {x}, newshape({7, 4, 4}));
        return call("transpose", {x}, axes("transpose", std::move(perm)));
    }
    Expr scores() {
        Expr q = call("divide", {head(0, {1, 0, 2}), constant({}, {2.0f})});
        return call("nn.matmul", {q, head(1, {1, 2, 0})});
    }
    Expr output(const Expr& scores) {
        Expr p = call("nn.softmax", {scores});
        Expr o = call("nn.matmul", {p, head(2, {1, 0, 2})});
        o = call("transpose", {o}, axes("transpose", {1, 0, 2}));
        return call("reshape", {o}, newshape({14, 8}));
    }
};

const Call* find_call(const Expr& e, const std::string& op) {
    for (const Call* c : op_calls(e)) {
        if (c->op->name == op) return c;
    }
    return nullptr;
}

TEST(FuseAttention, TorchExportBecomesOneOpWithTheScaleOfQ) {
    TorchAttention g;
    Expr body = g.output(g.scores());
    IRModule m = fuse_attention(module_of(make_function({g.qkv}, body)), test_context());
    const Expr& out = m.main()->body;
    EXPECT_TRUE(type_equal(out->type, body->type));
    const Call* att = find_call(out, "nn.attention");
    ASSERT_NE(att, nullptr);
    EXPECT_EQ(find_call(out, "nn.softmax"), nullptr);
    EXPECT_EQ(find_call(out, "nn.matmul"), nullptr);
    EXPECT_EQ(att->args.size(), 3u);
    EXPECT_DOUBLE_EQ(*attr_float(*att->attrs, "scale"), 0.5);
    // q without its division; k [B*N, H, S] swapped back to [B*N, S, H].
    EXPECT_EQ(att->args[0].as<Call>()->op->name, "transpose");
    auto kt = att->args[1]->type.as<TensorType>()->static_shape();
    EXPECT_EQ(kt, (std::vector<int64_t>{4, 7, 4}));
    // The head merge [B*N, S, H] -> [S, B*N, H] -> [S*B, N*H] is the kernel's: it writes
    // [S, B*N*H], reshaped (the same elements) to [S*B, N*H].
    EXPECT_EQ(attr_bool(*att->attrs, "merge_heads"), true);
    EXPECT_EQ(find_call(out, "transpose"), att->args[0].get());
    const Call* reshape = out.as<Call>();
    ASSERT_TRUE(reshape && reshape->op->name == "reshape");
    EXPECT_EQ(reshape->args[0].get(), att);
    EXPECT_EQ(att->type.as<TensorType>()->static_shape(), (std::vector<int64_t>{7, 16}));
}

// BERT's layout: [B, N, S, H] heads and a [B, 1, 1, S] padding mask; the scores q · kᵀ as its
// export writes them (batch_matmul with transpose_b).
struct BertHeads {
    Ref<Var> q = tensor_var("q", {2, 3, 5, 8}), k = tensor_var("k", {2, 3, 5, 8});
    Ref<Var> v = tensor_var("v", {2, 3, 5, 6}), mask = tensor_var("mask", {2, 1, 1, 5});
    Expr scores() const {
        ops::MatmulAttrs ma;
        ma.transpose_b = true;
        return call("nn.batch_matmul", {q, k}, Ref<Attrs>(new ops::MatmulAttrs(ma)));
    }
    Expr fused(const Expr& body) const {
        return fuse_attention(module_of(make_function({q, k, v, mask}, body)), test_context())
            .main()
            ->body;
    }
};

// BERT's [B, N, S, H] heads merged by transpose(0, 2, 1, 3) and a reshape to [B, S, N*H]: the
// attention with merged heads is the whole result.
TEST(FuseAttention, HeadMergeIsWrittenByTheKernel) {
    BertHeads g;
    const auto& q = g.q;
    const auto& mask = g.mask;
    auto product = [&](bool masked = false) {
        Expr s = call("multiply", {g.scores(), constant({}, {0.25f})});
        if (masked) s = call("add", {s, mask});
        return call("nn.batch_matmul", {call("nn.softmax", {s}), g.v});
    };
    auto merge = [&](const Expr& o, std::vector<int64_t> perm, std::vector<int64_t> shape) {
        return call("reshape", {call("transpose", {o}, axes("transpose", std::move(perm)))},
                    newshape(std::move(shape)));
    };
    Expr out = g.fused(merge(product(), {0, 2, 1, 3}, {2, 5, 18}));
    const Call* att = out.as<Call>();
    ASSERT_TRUE(att && att->op->name == "nn.attention") << print(out);
    EXPECT_EQ(attr_bool(*att->attrs, "merge_heads"), true);
    EXPECT_EQ(att->type.as<TensorType>()->static_shape(), (std::vector<int64_t>{2, 5, 18}));
    EXPECT_TRUE(att->args[0].same_as(q));
    // With a mask: the same, the mask the fourth operand.
    out = g.fused(merge(product(true), {0, 2, 1, 3}, {2, 5, 18}));
    att = out.as<Call>();
    ASSERT_TRUE(att && att->op->name == "nn.attention") << print(out);
    EXPECT_EQ(attr_bool(*att->attrs, "merge_heads"), true);
    ASSERT_EQ(att->args.size(), 4u);
    EXPECT_TRUE(att->args[3].same_as(mask));
    // Negative axes mean the same; another reshape of the same elements stays after it, its
    // sizes exact (allowzero).
    out = g.fused(merge(product(), {0, -2, -3, -1}, {10, 18}));
    ASSERT_TRUE(out.as<Call>() && out.as<Call>()->op->name == "reshape") << print(out);
    EXPECT_EQ(attr_bool(*out.as<Call>()->attrs, "allowzero"), true);
    att = out.as<Call>()->args[0].as<Call>();
    ASSERT_TRUE(att && att->op->name == "nn.attention");
    EXPECT_EQ(attr_bool(*att->attrs, "merge_heads"), true);
    // Not the head merge: the batch moved instead of the heads; or the transposed attention is
    // also a result of its own.
    out = g.fused(merge(product(), {1, 0, 2, 3}, {3, 2, 30}));
    EXPECT_NE(find_call(out, "transpose"), nullptr);
    EXPECT_EQ(attr_bool(*find_call(out, "nn.attention")->attrs, "merge_heads"), false);
    Expr t = call("transpose", {product()}, axes("transpose", {0, 2, 1, 3}));
    out = g.fused(make_tuple({call("reshape", {t}, newshape({2, 5, 18})), t}));
    EXPECT_EQ(attr_bool(*find_call(out, "nn.attention")->attrs, "merge_heads"), false);
}

TEST(FuseAttention, HeadSplitFusesIntoTheAttentionKernel) {
    TorchAttention g;
    Expr body = g.output(g.scores());
    PassContext ctx = test_context();
    IRModule m = fuse_ops(fuse_attention(module_of(make_function({g.qkv}, body)), ctx), ctx);
    // One kernel for the slices, reshapes, transposes, the division and the attention (which
    // writes the heads merged); one for the reshape of its [S, B*N*H] to [S*B, N*H] (B = 2).
    std::vector<std::vector<std::string>> groups;
    post_order_visit(m.main()->body, [&](const Expr& e) {
        auto* c = e.as<Call>();
        if (c && c->callee.defined()) groups.push_back(op_names(c->callee.as<Function>()->body));
    });
    ASSERT_EQ(groups.size(), 2u);
    const auto& first = groups[0];
    EXPECT_EQ(first.back(), "nn.attention");
    EXPECT_EQ(std::count(first.begin(), first.end(), "strided_slice"), 3);
    EXPECT_EQ(std::count(first.begin(), first.end(), "transpose"), 4);  // and k's swap
    EXPECT_EQ(groups[1], (std::vector<std::string>{"reshape"}));
}

TEST(FuseAttention, TheProjectionStaysInItsOwnKernel) {
    // qkv = dense(x) + bias: the bias add is the dense layer's tail, and neither joins the
    // attention kernel (one anchor per kernel).
    TorchAttention g;
    auto x = tensor_var("x", {7, 2, 16});
    g.src =
        call("add", {call("nn.dense", {x, constant({24, 16}, {0.1f})}), constant({24}, {1.0f})});
    Expr body = g.output(g.scores());
    PassContext ctx = test_context();
    IRModule m = fuse_ops(fuse_attention(module_of(make_function({x}, body)), ctx), ctx);
    std::vector<std::vector<std::string>> groups;
    post_order_visit(m.main()->body, [&](const Expr& e) {
        auto* c = e.as<Call>();
        if (c && c->callee.defined()) groups.push_back(op_names(c->callee.as<Function>()->body));
    });
    ASSERT_EQ(groups.size(), 3u);
    EXPECT_EQ(groups[0], (std::vector<std::string>{"nn.dense", "add"}));
    EXPECT_EQ(groups[1].back(), "nn.attention");
    EXPECT_EQ(std::count(groups[1].begin(), groups[1].end(), "nn.dense"), 0);
}

TEST(FuseAttention, BertScoresScaledThenMasked) {
    // [B, N, S, H] heads, scores divided by sqrt(H) after the product, plus a [B, 1, 1, S] mask.
    BertHeads g;
    Expr s = call("add", {g.mask, call("multiply", {g.scores(), constant({}, {0.25f})})});
    Expr out = g.fused(call("nn.batch_matmul", {call("nn.softmax", {s}), g.v}));
    const Call* att = out.as<Call>();
    ASSERT_TRUE(att && att->op->name == "nn.attention");
    ASSERT_EQ(att->args.size(), 4u);
    EXPECT_TRUE(att->args[0].same_as(g.q));
    EXPECT_TRUE(att->args[1].same_as(g.k));  // transpose_b: k is already [.., S, H]
    EXPECT_TRUE(att->args[3].same_as(g.mask));
    EXPECT_DOUBLE_EQ(*attr_float(*att->attrs, "scale"), 0.25);
}

TEST(FuseAttention, LeavesOtherGraphsAlone) {
    auto q = tensor_var("q", {3, 5, 8}), k = tensor_var("k", {3, 8, 5});
    auto v = tensor_var("v", {3, 5, 8});
    auto unchanged = [](const Ref<Function>& f) {
        return fuse_attention(module_of(f), test_context()).main().same_as(f);
    };
    // The probabilities are also a result.
    Expr p = call("nn.softmax", {call("nn.matmul", {q, k})});
    EXPECT_TRUE(unchanged(make_function({q, k, v}, make_tuple({call("nn.matmul", {p, v}), p}))));
    // Softmax over another axis.
    Ref<Attrs> sa = attr_with(*ops::get_op("nn.softmax").make_default_attrs(), "axis", int64_t{1});
    Expr p1 = call("nn.softmax", {call("nn.matmul", {q, k})}, sa);
    EXPECT_TRUE(unchanged(make_function({q, k, v}, call("nn.matmul", {p1, v}))));
    // A product that broadcasts v over the batch.
    auto v2 = tensor_var("v2", {5, 8});
    Expr p2 = call("nn.softmax", {call("nn.matmul", {q, k})});
    EXPECT_TRUE(unchanged(make_function({q, k, v2}, call("nn.matmul", {p2, v2}))));
    // A mask that widens the scores (a batch of masks for one batch of scores).
    auto wide = tensor_var("wide", {2, 3, 5, 5});
    Expr p4 = call("nn.softmax", {call("add", {call("nn.matmul", {q, k}), wide})});
    EXPECT_TRUE(unchanged(make_function({q, k, v, wide}, call("nn.matmul", {p4, v}))));
    // A negative scale.
    Expr p5 =
        call("nn.softmax", {call("multiply", {call("nn.matmul", {q, k}), constant({}, {-0.5f})})});
    EXPECT_TRUE(unchanged(make_function({q, k, v}, call("nn.matmul", {p5, v}))));
    // Matrix-vector products: q [S, D] · k [D], then p [S] · v [S, D].
    auto q1 = tensor_var("q1", {5, 8}), k1 = tensor_var("k1", {8}), v1 = tensor_var("v1", {5, 8});
    Expr p6 = call("nn.softmax", {call("nn.matmul", {q1, k1})});
    EXPECT_TRUE(unchanged(make_function({q1, k1, v1}, call("nn.matmul", {p6, v1}))));
    // A scale that is a tensor, not a scalar.
    Expr p3 = call("nn.softmax",
                   {call("multiply", {call("nn.matmul", {q, k}), constant({5}, {1, 2, 3, 4, 5})})});
    EXPECT_TRUE(unchanged(make_function({q, k, v}, call("nn.matmul", {p3, v}))));
}

}  // namespace
}  // namespace anvil::graph::testing
