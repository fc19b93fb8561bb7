// Converters of PyTorch's linear algebra: aten::linear (input of any rank),
// aten::matmul (every rank combination, batch dimensions broadcast), aten::mm, aten::bmm,
// aten::mv, aten::dot, aten::addmm, aten::baddbmm, aten::addmv (beta * self + alpha * product),
// aten::einsum and aten::t. Integer operands (which PyTorch multiplies exactly on the CPU) take
// a composition of their own: the graph's matmul is floating-point only.
#include <map>

#include "frontend/pytorch/convert_ops.h"
#include "frontend/pytorch/shape_ops.h"
#include "ops/dense.h"
#include "ops/reduce.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

// Operands i and j as tensors of one dtype, which PyTorch's products require.
std::pair<Expr, Expr> same_dtype_operands(const PtContext& ctx, size_t i, size_t j) {
    Expr a = ctx.tensor(i), b = ctx.tensor(j);
    DataType ta = ctx.tensor_type(a, "operand").dtype, tb = ctx.tensor_type(b, "operand").dtype;
    if (ta != tb) {
        ctx.error() << "expects operands of one dtype, got " << ta.str() << " and " << tb.str();
    }
    return {a, b};
}

// UserError unless operand `i` has rank `rank` (`what` names the op's expectation).
void check_rank(const PtContext& ctx, const Expr& e, int64_t rank, size_t i, const char* what) {
    if (ctx.rank(e) != rank) {
        ctx.error() << "operand " << i << " must be " << what << ", got a " << ctx.rank(e)
                    << "-D tensor";
    }
}

// Integer a @ b, which nn.matmul does not take: products broadcast over [..., M, K, N] and summed
// over K, exact (wrapping as PyTorch's integer arithmetic does). 1-D operands as nn.matmul's.
Expr integer_matmul(const PtContext& ctx, Expr a, Expr b) {
    bool vector_a = ctx.rank(a) == 1, vector_b = ctx.rank(b) == 1;
    if (vector_a) a = expand_dims(ctx, a, 0);                                      // [K] → [1, K]
    if (vector_b) b = expand_dims(ctx, b, 1);                                      // [K] → [K, 1]
    Expr products = ctx.call("multiply", {expand_dims(ctx, a, ctx.rank(a)),        // [..., M, K, 1]
                                          expand_dims(ctx, b, ctx.rank(b) - 2)});  // [..., 1, K, N]
    int64_t rank = ctx.rank(products);
    Expr y = reduce_over(ctx, "sum", products, rank - 2);
    auto drop = [&](Expr e, int64_t axis) {
        auto [attrs, s] = new_attrs<ops::SqueezeAttrs>();
        s->axes = {axis};
        return ctx.call("squeeze", {e}, attrs);
    };
    if (vector_b) y = drop(y, ctx.rank(y) - 1);
    if (vector_a) y = drop(y, ctx.rank(y) - (vector_b ? 1 : 2));
    return y;
}

// a @ b with numpy's (torch.matmul's) semantics: 1-D operands, broadcast batch dimensions.
Expr matmul(const PtContext& ctx, const Expr& a, const Expr& b) {
    if (ctx.rank(a) == 0 || ctx.rank(b) == 0) {
        ctx.error() << "both operands of matmul must be at least 1-D, got " << ctx.rank(a)
                    << "-D and " << ctx.rank(b) << "-D";
    }
    if (!ctx.tensor_type(a, "operand").dtype.is_floating()) return integer_matmul(ctx, a, b);
    return ctx.call("nn.matmul", {a, b}, make_ref<ops::MatmulAttrs>());
}

// bmm's operands: [B, N, K] and [B, K, M] with the same (unbroadcast) batch.
void check_bmm(const PtContext& ctx, const Expr& a, const Expr& b, size_t first) {
    check_rank(ctx, a, 3, first, "a 3-D batch of matrices");
    check_rank(ctx, b, 3, first + 1, "a 3-D batch of matrices");
    const int64_t* na = as_const_int(ctx.tensor_type(a, "operand").shape[0]);
    const int64_t* nb = as_const_int(ctx.tensor_type(b, "operand").shape[0]);
    if (na && nb && *na != *nb) {
        ctx.error() << "the batches have different sizes, " << *na << " and " << *nb;
    }
}

// beta * self + alpha * product (operands `self`, `beta`, `alpha`): as PyTorch, self is ignored
// (even its NaNs) when beta is 0.
Expr scaled_sum(const PtContext& ctx, Expr product, size_t self, size_t beta_i, size_t alpha_i) {
    DataType dt = ctx.tensor_type(product, "the product").dtype;
    double alpha = ctx.is_none(alpha_i) ? 1.0 : ctx.float_arg(alpha_i);
    double beta = ctx.is_none(beta_i) ? 1.0 : ctx.float_arg(beta_i);
    if (!dt.is_floating() &&
        (alpha != static_cast<int64_t>(alpha) || beta != static_cast<int64_t>(beta))) {
        ctx.error() << "alpha and beta must be integers for " << dt.str() << " operands, got "
                    << alpha << " and " << beta;
    }
    if (alpha != 1.0) product = ctx.call("multiply", {product, ctx.constant_scalar(dt, alpha)});
    if (beta == 0.0) return product;
    Expr s = ctx.tensor_like(self, product);
    if (ctx.tensor_type(s, "self").dtype != dt) {
        ctx.error() << "self has dtype " << ctx.tensor_type(s, "self").dtype.str()
                    << ", the product " << dt.str();
    }
    if (beta != 1.0) s = ctx.call("multiply", {s, ctx.constant_scalar(dt, beta)});
    return ctx.call("add", {s, product});
}

// The axis labels of each einsum operand: a letter's code, or for the axes "..." stands for
// kEllipsisLabel + their position counted from the right (ellipsis axes align on the right).
// Empty for an operand whose term does not fit its rank (the einsum op reports it).
constexpr int kEllipsisLabel = 256;

std::vector<std::vector<int>> einsum_labels(const std::string& equation,
                                            const std::vector<int64_t>& ranks) {
    std::string lhs;
    for (char c : equation.substr(0, equation.find("->"))) {
        if (c != ' ') lhs += c;
    }
    std::vector<std::vector<int>> out;
    size_t start = 0;
    for (int64_t rank : ranks) {
        size_t comma = lhs.find(',', start);
        std::string term = lhs.substr(start, comma == std::string::npos ? comma : comma - start);
        start = comma == std::string::npos ? lhs.size() : comma + 1;
        size_t ellipsis = term.find("...");
        int64_t letters =
            static_cast<int64_t>(term.size()) - (ellipsis == std::string::npos ? 0 : 3);
        int64_t k = rank - letters;  // the axes "..." stands for
        std::vector<int> labels;
        if (k < 0 || (ellipsis == std::string::npos && k != 0)) {
            out.emplace_back();
            continue;
        }
        for (size_t i = 0; i < term.size();) {
            if (i == ellipsis) {
                for (int64_t j = 0; j < k; ++j) labels.push_back(kEllipsisLabel + int(k - 1 - j));
                i += 3;
            } else {
                labels.push_back(static_cast<unsigned char>(term[i++]));
            }
        }
        out.push_back(labels);
    }
    return out;
}

// PyTorch broadcasts an einsum axis of size 1 against the other operands' axes of the same
// label; the einsum op wants equal sizes, so such operands are broadcast here first (static
// sizes; a symbolic one is left to the op to check).
void broadcast_einsum_operands(const PtContext& ctx, const std::string& equation,
                               std::vector<Expr>& xs) {
    std::vector<int64_t> ranks;
    for (const auto& x : xs) ranks.push_back(ctx.rank(x));
    std::vector<std::vector<int>> labels = einsum_labels(equation, ranks);
    std::map<int, int64_t> size;  // per label: a static size other than 1
    for (size_t t = 0; t < xs.size(); ++t) {
        const auto& shape = ctx.tensor_type(xs[t], "operand").shape;
        for (size_t d = 0; d < labels[t].size(); ++d) {
            if (const int64_t* n = as_const_int(shape[d]); n && *n != 1) size[labels[t][d]] = *n;
        }
    }
    for (size_t t = 0; t < xs.size(); ++t) {
        std::vector<PrimExpr> dims = dims_of(ctx, xs[t]);
        bool changed = false;
        for (size_t d = 0; d < labels[t].size(); ++d) {
            const int64_t* n = as_const_int(dims[d]);
            auto it = size.find(labels[t][d]);
            if (n && *n == 1 && it != size.end()) {
                dims[d] = make_int(DataType::int64(), it->second);
                changed = true;
            }
        }
        if (changed) xs[t] = broadcast_dims(ctx, xs[t], dims);
    }
}

}  // namespace

// aten::linear(x [..., K], w [O, K], b): x @ w^T + b.
PtValues convert_linear(PtContext& ctx) {
    auto [x, w] = same_dtype_operands(ctx, 0, 1);
    if (ctx.rank(x) == 0) ctx.error() << "the input of linear must be at least 1-D";
    if (ctx.rank(w) != 2) {
        ctx.error() << "the weight of linear must be 2-D, got " << ctx.rank(w) << "-D";
    }
    Expr y;
    if (ctx.tensor_type(x, "the input").dtype.is_floating()) {
        y = ctx.call("nn.dense", {x, w});
    } else {
        auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
        a->axes = {1, 0};
        y = integer_matmul(ctx, x, ctx.call("transpose", {w}, attrs));
    }
    if (!ctx.is_none(2)) y = ctx.call("add", {y, ctx.tensor_like(2, y)});
    return {PtValue::of_tensor(y)};
}

// aten::matmul(a, b): torch.matmul's (numpy's) rules for every rank.
PtValues convert_matmul(PtContext& ctx) {
    auto [a, b] = same_dtype_operands(ctx, 0, 1);
    return {PtValue::of_tensor(matmul(ctx, a, b))};
}

// aten::mm(a [N, K], b [K, M]), aten::bmm(a [B, N, K], b [B, K, M]), aten::mv(a [N, K], v [K]),
// aten::dot(a [K], b [K]).
PtValues convert_mm(PtContext& ctx) {
    auto [a, b] = same_dtype_operands(ctx, 0, 1);
    const std::string& k = ctx.kind();
    if (k == "aten::bmm") {
        check_bmm(ctx, a, b, 0);
    } else {
        check_rank(ctx, a, k == "aten::dot" ? 1 : 2, 0, k == "aten::dot" ? "a vector" : "a matrix");
        check_rank(ctx, b, k == "aten::mm" ? 2 : 1, 1, k == "aten::mm" ? "a matrix" : "a vector");
    }
    return {PtValue::of_tensor(matmul(ctx, a, b))};
}

// aten::addmm(self, a [N, K], b [K, M], beta, alpha), aten::baddbmm(self, a [B, N, K],
// b [B, K, M], beta, alpha), aten::addmv(self, a [N, K], v [K], beta, alpha):
// beta * self + alpha * (a @ b), self broadcast to the product.
PtValues convert_addmm(PtContext& ctx) {
    auto [a, b] = same_dtype_operands(ctx, 1, 2);
    const std::string& k = ctx.kind();
    if (k == "aten::baddbmm") {
        check_bmm(ctx, a, b, 1);
    } else {
        check_rank(ctx, a, 2, 1, "a matrix");
        check_rank(ctx, b, k == "aten::addmv" ? 1 : 2, 2,
                   k == "aten::addmv" ? "a vector" : "a matrix");
    }
    return {PtValue::of_tensor(scaled_sum(ctx, matmul(ctx, a, b), 0, 3, 4))};
}

// aten::einsum(equation, tensors, path): the graph's einsum (the path only orders the work), size-1
// axes broadcast as PyTorch does.
PtValues convert_einsum(PtContext& ctx) {
    std::string equation = ctx.str_arg(0);
    std::vector<Expr> xs = ctx.tensors(1);
    if (xs.empty()) ctx.error() << "einsum needs at least one operand";
    DataType dt = ctx.tensor_type(xs[0], "operand 0").dtype;
    for (size_t i = 1; i < xs.size(); ++i) {
        if (ctx.tensor_type(xs[i], "operand").dtype != dt) {
            ctx.error() << "einsum operands must have one dtype: operand " << i << " is "
                        << ctx.tensor_type(xs[i], "operand").dtype.str() << ", operand 0 "
                        << dt.str();
        }
    }
    broadcast_einsum_operands(ctx, equation, xs);
    auto [attrs, a] = new_attrs<ops::EinsumAttrs>();
    a->equation = equation;
    return {PtValue::of_tensor(ctx.call("einsum", xs, attrs))};
}

// aten::t(x): the transpose of a matrix; vectors and scalars as they are.
PtValues convert_t(PtContext& ctx) {
    Expr x = ctx.tensor(0);
    int64_t rank = ctx.rank(x);
    if (rank > 2)
        ctx.error() << "t() expects a tensor of at most 2 dimensions, got " << rank << "-D";
    if (rank < 2) return {PtValue::of_tensor(x)};
    auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
    a->axes = {1, 0};
    return {PtValue::of_tensor(ctx.call("transpose", {x}, attrs))};
}

}  // namespace anvil::frontend::pytorch
