// Converters of PyTorch's fused attention ops, composed from graph ops (nn.dense,
// nn.batch_matmul, nn.softmax, nn.layer_norm, ...):
//   aten::_native_multi_head_attention   nn.MultiheadAttention's fast path (eval, batch_first,
//                                         self-attention; the key padding mask)
//   aten::_transformer_encoder_layer_fwd nn.TransformerEncoderLayer's fast path
//   aten::scaled_dot_product_attention   F.scaled_dot_product_attention (torch 2.x saves)
// The composed paths (F.multi_head_attention_forward, the layers' slow paths) are ordinary ops
// (linear, bmm, softmax, ...) converted by their own converters.
#include <cmath>

#include "frontend/pytorch/convert_ops.h"
#include "ops/activation.h"
#include "ops/dense.h"
#include "ops/norm.h"
#include "ops/softmax.h"
#include "ops/transform.h"

namespace anvil::frontend::pytorch {

using graph::Expr;

namespace {

Expr transpose(const PtContext& ctx, const Expr& x, std::vector<int64_t> axes) {
    auto [attrs, a] = new_attrs<ops::TransposeAttrs>();
    a->axes = std::move(axes);
    return ctx.call("transpose", {x}, attrs);
}

Expr matmul(const PtContext& ctx, const Expr& a, const Expr& b, bool transpose_b) {
    auto [attrs, m] = new_attrs<ops::MatmulAttrs>();
    m->transpose_b = transpose_b;
    return ctx.call("nn.batch_matmul", {a, b}, attrs);
}

Expr softmax(const PtContext& ctx, const Expr& x) {
    auto [attrs, a] = new_attrs<ops::SoftmaxAttrs>();
    a->axis = -1;
    return ctx.call("nn.softmax", {x}, attrs);
}

Expr slice0(const PtContext& ctx, const Expr& x, int64_t begin, int64_t end) {
    auto [attrs, a] = new_attrs<ops::StridedSliceAttrs>();
    a->begin = {begin};
    a->end = {end};
    a->strides = {1};
    a->axes = {0};
    return ctx.call("strided_slice", {x}, attrs);
}

Expr dense(const PtContext& ctx, const Expr& x, const Expr& w, const Expr& b) {
    Expr y = ctx.call("nn.dense", {x, w});
    return b.defined() ? ctx.call("add", {y, b}) : y;
}

// A mask as an additive float mask of `dt`: a bool mask is -inf where `masked_when` (and 0
// elsewhere), a float mask is added as it is.
Expr additive_mask(const PtContext& ctx, const Expr& mask, DataType dt, bool masked_when) {
    DataType md = ctx.tensor_type(mask, "the mask").dtype;
    if (md.is_floating()) return cast_to(ctx, mask, dt);
    if (!md.is_bool()) ctx.error() << "the mask must be bool or floating-point, got " << md.str();
    Expr inf = ctx.constant_scalar(dt, -INFINITY), zero = ctx.constant_scalar(dt, 0.0);
    return masked_when ? ctx.call("where", {mask, inf, zero})
                       : ctx.call("where", {mask, zero, inf});
}

// softmax(q k^T * scale + mask) v over the last two axes of q [..., L, E], k [..., S, E],
// v [..., S, Ev] (the batch axes broadcast); `mask` an additive mask broadcasting to
// [..., L, S] or undefined. The probabilities go to *probs when it is given.
Expr attention(const PtContext& ctx, const Expr& q, const Expr& k, const Expr& v, const Expr& mask,
               double scale, Expr* probs = nullptr) {
    DataType dt = ctx.tensor_type(q, "the query").dtype;
    Expr scores = matmul(ctx, q, k, true);
    if (scale != 1.0) scores = ctx.call("multiply", {scores, ctx.constant_scalar(dt, scale)});
    if (mask.defined()) scores = ctx.call("add", {scores, mask});
    Expr p = softmax(ctx, scores);
    if (probs) *probs = p;
    return matmul(ctx, p, v, false);
}

// [B, T, D] → [B, heads, T, D / heads].
Expr split_heads(const PtContext& ctx, const Expr& x, int64_t heads) {
    std::vector<int64_t> s = ctx.static_shape(x, "a projection");
    Expr r = reshape_to(ctx, x, {s[0], s[1], heads, s[2] / heads});
    return transpose(ctx, r, {0, 2, 1, 3});
}

// nn.MultiheadAttention's computation (_native_multi_head_attention): query [B, T, D], key and
// value [B, S, D] in the batch-first layout, the packed in-projection qkv_weight [3D, D] and
// its bias, the out-projection. `mask` is true where a key is left out (`mask_type` 1: a key
// padding mask [B, S]; 0: an attention mask [T, S]); a float mask counts where it is non-zero,
// as PyTorch's fast path converts it to bool.
struct MhaResult {
    Expr out;
    Expr probs;  // [B, heads, T, S]
};
MhaResult multi_head_attention(const PtContext& ctx, const Expr& query, const Expr& key,
                               const Expr& value, int64_t embed_dim, int64_t heads,
                               const Expr& qkv_weight, const Expr& qkv_bias,
                               const Expr& proj_weight, const Expr& proj_bias, Expr mask,
                               std::optional<int64_t> mask_type) {
    std::vector<int64_t> qs = ctx.static_shape(query, "the query");
    std::vector<int64_t> ks = ctx.static_shape(key, "the key");
    if (qs.size() != 3 || ks.size() != 3 || qs[2] != embed_dim || ks[2] != embed_dim) {
        ctx.error() << "query " << ints_str(qs) << " and key " << ints_str(ks)
                    << " must be [batch, length, " << embed_dim << "]";
    }
    if (heads <= 0 || embed_dim % heads != 0) {
        ctx.error() << "embed_dim " << embed_dim << " is not divisible by num_heads " << heads;
    }
    std::vector<int64_t> ws = ctx.static_shape(qkv_weight, "qkv_weight");
    if (ws != std::vector<int64_t>{3 * embed_dim, embed_dim}) {
        ctx.error() << "qkv_weight has shape " << ints_str(ws) << ", expected "
                    << ints_str({3 * embed_dim, embed_dim});
    }
    const int64_t d = embed_dim;
    DataType dt = ctx.tensor_type(query, "the query").dtype;
    auto bias = [&](int64_t k) {
        return qkv_bias.defined() ? slice0(ctx, qkv_bias, k * d, (k + 1) * d) : Expr();
    };
    Expr q = dense(ctx, query, slice0(ctx, qkv_weight, 0, d), bias(0));
    Expr k = dense(ctx, key, slice0(ctx, qkv_weight, d, 2 * d), bias(1));
    Expr v = dense(ctx, value, slice0(ctx, qkv_weight, 2 * d, 3 * d), bias(2));
    Expr additive;
    if (mask.defined()) {
        if (!ctx.tensor_type(mask, "the mask").dtype.is_bool()) {
            mask =
                ctx.call("not_equal",
                         {mask, ctx.constant_scalar(ctx.tensor_type(mask, "the mask").dtype, 0)});
        }
        std::vector<int64_t> ms = ctx.static_shape(mask, "the mask");
        int64_t type = mask_type.value_or(ms.size() == 2 && ms[0] == qs[0] ? 1 : 0);
        if (type == 1) {
            if (ms != std::vector<int64_t>{qs[0], ks[1]}) {
                ctx.error() << "the key padding mask has shape " << ints_str(ms) << ", expected "
                            << ints_str({qs[0], ks[1]});
            }
            mask = reshape_to(ctx, mask, {qs[0], 1, 1, ks[1]});
        } else if (type != 0 && type != 2) {
            ctx.error() << "mask_type " << type << " is not supported (0, 1 or 2)";
        }
        additive = additive_mask(ctx, mask, dt, true);
    }
    Expr probs;
    double scale = 1.0 / std::sqrt(static_cast<double>(d / heads));
    Expr y = attention(ctx, split_heads(ctx, q, heads), split_heads(ctx, k, heads),
                       split_heads(ctx, v, heads), additive, scale, &probs);
    y = reshape_to(ctx, transpose(ctx, y, {0, 2, 1, 3}), {qs[0], qs[1], d});
    return {dense(ctx, y, proj_weight, proj_bias), probs};
}

std::optional<int64_t> optional_int(const PtContext& ctx, size_t i) {
    if (ctx.is_none(i)) return std::nullopt;
    return ctx.int_arg(i);
}

Expr optional_tensor(const PtContext& ctx, size_t i) {
    return ctx.is_none(i) ? Expr() : ctx.tensor(i);
}

Expr layer_norm(const PtContext& ctx, const Expr& x, const Expr& weight, const Expr& bias,
                double eps) {
    auto [attrs, a] = new_attrs<ops::LayerNormAttrs>();
    a->axis = -1;
    a->epsilon = eps;
    return ctx.call("nn.layer_norm", {x, weight, bias}, attrs);
}

}  // namespace

// aten::_native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight,
// qkv_bias, proj_weight, proj_bias, mask=None, need_weights=True, average_attn_weights=True,
// mask_type=None) -> (out [B, T, D], weights: [B, T, S] averaged over heads, [B, heads, T, S],
// or None without need_weights).
PtValues convert_native_multi_head_attention(PtContext& ctx) {
    int64_t heads = ctx.int_arg(4);
    bool need_weights = ctx.num_inputs() > 10 ? ctx.bool_arg(10) : true;
    bool average = ctx.num_inputs() > 11 ? ctx.bool_arg(11) : true;
    MhaResult r = multi_head_attention(
        ctx, ctx.tensor(0), ctx.tensor(1), ctx.tensor(2), ctx.int_arg(3), heads, ctx.tensor(5),
        optional_tensor(ctx, 6), ctx.tensor(7), optional_tensor(ctx, 8), optional_tensor(ctx, 9),
        optional_int(ctx, 12));
    if (!need_weights) return {PtValue::of_tensor(r.out), PtValue::none()};
    Expr w = r.probs;
    if (average) {
        DataType dt = ctx.tensor_type(w, "the weights").dtype;
        w = ctx.call("multiply", {reduce_over(ctx, "sum", w, 1),
                                  ctx.constant_scalar(dt, 1.0 / static_cast<double>(heads))});
    }
    return {PtValue::of_tensor(r.out), PtValue::of_tensor(w)};
}

// aten::_transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias,
// proj_weight, proj_bias, use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2,
// norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None):
// self-attention and the feed-forward block, each with its residual, normalized before
// (norm_first) or after.
PtValues convert_transformer_encoder_layer(PtContext& ctx) {
    Expr src = ctx.tensor(0);
    if (ctx.rank(src) != 3) ctx.error() << "src must be [batch, length, embed_dim]";
    int64_t embed_dim = ctx.int_arg(1), heads = ctx.int_arg(2);
    bool use_gelu = ctx.bool_arg(7), norm_first = ctx.bool_arg(8);
    double eps = ctx.float_arg(9);
    auto norm = [&](const Expr& x, size_t wi) {
        return layer_norm(ctx, x, ctx.tensor(wi), ctx.tensor(wi + 1), eps);
    };
    Expr x = norm_first ? norm(src, 10) : src;
    x = multi_head_attention(ctx, x, x, x, embed_dim, heads, ctx.tensor(3), optional_tensor(ctx, 4),
                             ctx.tensor(5), optional_tensor(ctx, 6), optional_tensor(ctx, 18),
                             optional_int(ctx, 19))
            .out;
    x = ctx.call("add", {x, src});
    if (!norm_first) x = norm(x, 10);
    Expr residual = x;
    if (norm_first) x = norm(x, 12);
    Expr h = dense(ctx, x, ctx.tensor(14), optional_tensor(ctx, 15));
    if (use_gelu) {
        auto [attrs, a] = new_attrs<ops::GeluAttrs>();
        a->approximate = "none";
        h = ctx.call("nn.gelu", {h}, attrs);
    } else {
        h = ctx.call("nn.relu", {h});
    }
    x = ctx.call("add", {dense(ctx, h, ctx.tensor(16), optional_tensor(ctx, 17)), residual});
    if (!norm_first) x = norm(x, 12);
    return {PtValue::of_tensor(x)};
}

// aten::scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
// is_causal=False, *, scale=None, enable_gqa=False): softmax(q k^T * scale + mask) v, a bool
// mask keeping where it is true, is_causal keeping the lower triangle; with enable_gqa, key and
// value heads are shared by groups of query heads.
PtValues convert_scaled_dot_product_attention(PtContext& ctx) {
    Expr q = ctx.tensor(0), k = ctx.tensor(1), v = ctx.tensor(2);
    DataType dt = ctx.tensor_type(q, "the query").dtype;
    if (!dt.is_floating()) ctx.error() << "the query must be floating-point, got " << dt.str();
    if (ctx.num_inputs() > 4 && !ctx.is_none(4) && ctx.float_arg(4) != 0.0) {
        ctx.error() << "dropout_p " << ctx.float_arg(4) << " is not supported at inference";
    }
    bool causal = ctx.num_inputs() > 5 && !ctx.is_none(5) && ctx.bool_arg(5);
    std::vector<int64_t> qs = ctx.static_shape(q, "the query");
    std::vector<int64_t> ks = ctx.static_shape(k, "the key");
    if (qs.size() < 2 || ks.size() < 2) ctx.error() << "query and key need at least 2 dimensions";
    int64_t len = qs[qs.size() - 2], src_len = ks[ks.size() - 2];
    double scale = ctx.num_inputs() > 6 && !ctx.is_none(6)
                       ? ctx.float_arg(6)
                       : 1.0 / std::sqrt(static_cast<double>(qs.back()));
    if (ctx.num_inputs() > 7 && !ctx.is_none(7) && ctx.bool_arg(7) && qs.size() >= 3 &&
        ks.size() >= 3) {
        // Grouped-query attention: each key/value head serves heads_q / heads_kv query heads.
        int64_t hq = qs[qs.size() - 3], hk = ks[ks.size() - 3];
        if (hk <= 0 || hq % hk != 0) {
            ctx.error() << hq << " query heads cannot share " << hk << " key/value heads";
        }
        auto repeat = [&](const Expr& t) {
            if (hq == hk) return t;
            std::vector<int64_t> s = ctx.static_shape(t, "key/value");
            std::vector<int64_t> e(s.begin(), s.end());
            e.insert(e.end() - 2, 1);
            std::vector<int64_t> b = e;
            b[b.size() - 3] = hq / hk;
            auto [attrs, a] = new_attrs<ops::BroadcastToAttrs>();
            a->shape = b;
            Expr t5 = ctx.call("broadcast_to", {reshape_to(ctx, t, e)}, attrs);
            s[s.size() - 3] = hq;
            return reshape_to(ctx, t5, s);
        };
        k = repeat(k);
        v = repeat(v);
    }
    Expr mask;
    if (!ctx.is_none(3)) mask = additive_mask(ctx, ctx.tensor(3), dt, false);
    if (causal) {
        // Row i keeps keys 0..i: the lower triangle of [L, S].
        std::vector<float> tri(static_cast<size_t>(len * src_len));
        for (int64_t i = 0; i < len; ++i) {
            for (int64_t j = 0; j < src_len; ++j) {
                tri[static_cast<size_t>(i * src_len + j)] = j <= i ? 0.0f : -INFINITY;
            }
        }
        runtime::NDArray a =
            runtime::NDArray::empty({len, src_len}, graph::dl_dtype_of(DataType::float32()));
        a.copy_from(tri);
        Expr c = cast_to(ctx, ctx.constant(a), dt);
        mask = mask.defined() ? ctx.call("add", {mask, c}) : c;
    }
    return {PtValue::of_tensor(attention(ctx, q, k, v, mask, scale))};
}

// Nested tensors (aten::_nested_tensor_from_mask, its left-aligned check, to_padded_tensor):
// nn.TransformerEncoder's fast path packs a batch_first input with src_key_padding_mask into
// one in eval mode. Refused with the way around it: the layers' own masking gives the same
// values at the positions that are not padding.
PtValues convert_nested_tensor(PtContext& ctx) {
    ctx.error() << "nested tensors are not supported (nn.TransformerEncoder makes them for a "
                   "batch_first input with src_key_padding_mask in eval mode): construct the "
                   "encoder with enable_nested_tensor=False";
    ANVIL_UNREACHABLE();
}

}  // namespace anvil::frontend::pytorch
