// nn.attention: softmax(q · kᵀ · scale + bias) · v in one kernel (OutEWiseFusable; the injective
// ops that make q, k, v — head split, transposes, the scaling of q — fuse into it, see
// graph::Op::fuses_injective_inputs).
//
// Stages (B = the batch dimensions, VB the column block of the scores):
//   attention_keys      k transposed: [B..., D, S_kv padded to VB], zero past S_kv
//   attention_qk        the reduction q · kᵀ over D: [B..., S, S_kv padded]
//   attention_scores    qk · scale + bias, -inf past S_kv (exp gives 0 there)
//   attention_max_lanes, attention_max   the row maximum as VB partial maxima, then their max
//   attention_exp       exp(scores - max)
//   attention_sum_lanes, attention_sum   the row sum the same way
//   attention_pv        the reduction exp · v over S_kv: [B..., S, Dv]
//   attention           pv / sum
// The partial maxima and sums are written out (rather than rfactored by the schedule) because
// the padded row is a whole number of VB-wide blocks by construction: each lane reduces one
// column of the blocks, a vector operation per block.
#include "ops/attention.h"

#include <cmath>
#include <limits>

#include "graph/op.h"
#include "ir/analyzer.h"
#include "ir/channel_block.h"
#include "ir/structural_equal.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/tensor_shape.h"
#include "ops/tile_schedule.h"
#include "support/error.h"
#include "te/math.h"
#include "te/reduction.h"

namespace anvil::ops {

using graph::Attrs;
using graph::Op;
using graph::OpPattern;
using graph::Type;

namespace {

PrimExpr I(int64_t v) {
    return make_int(DataType::int32(), v);
}

// Whether two dimensions are equal: the same constant or the same symbolic expression (the
// kernel indexes one operand by the other's extent, so sizes that may differ at run time are
// refused).
bool same_dim(const PrimExpr& a, const PrimExpr& b) {
    auto* x = as_const_int(a);
    auto* y = as_const_int(b);
    if (x && y) return *x == *y;
    return structural_equal(a, b);
}
// Whether a bias dimension broadcasts to a scores dimension: 1, equal, or symbolic (broadcast
// reads a symbolic size as the output's when it differs, see broadcast_index).
bool broadcasts(const PrimExpr& b, const PrimExpr& s) {
    auto* x = as_const_int(b);
    auto* y = as_const_int(s);
    return is_one(b) || !x || !y || *x == *y;
}

Type attention_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                    const SourceLoc& loc) {
    if (args.size() != 3 && args.size() != 4) {
        user_error(loc) << op.name << " takes (q, k, v) or (q, k, v, bias), got " << args.size()
                        << " inputs";
    }
    const char* names[] = {"q", "k", "v", "bias"};
    std::vector<const graph::TensorType*> t;
    for (size_t i = 0; i < args.size(); ++i) {
        t.push_back(&graph::expect_tensor(args[i], loc, std::string(names[i]) + " of " + op.name));
    }
    const auto& q = *t[0];
    if (!q.dtype.is_floating()) {
        user_error(loc) << op.name << " needs floating-point operands, got " << q.dtype.str();
    }
    for (size_t i = 1; i < t.size(); ++i) {
        if (t[i]->dtype != q.dtype) {
            user_error(loc) << op.name << ": " << names[i] << " is " << t[i]->dtype.str()
                            << " but q is " << q.dtype.str() << "; insert a cast";
        }
    }
    const size_t rank = q.ndim();
    if (rank < 2) {
        user_error(loc) << op.name << ": q must be [batch..., S, D], got "
                        << graph::type_str(args[0]);
    }
    for (size_t i = 1; i < 3; ++i) {
        if (t[i]->ndim() != rank) {
            user_error(loc) << op.name << ": " << names[i] << " " << graph::type_str(args[i])
                            << " has another rank than q " << graph::type_str(args[0]);
        }
        for (size_t d = 0; d + 2 < rank; ++d) {
            if (!same_dim(t[i]->shape[d], q.shape[d])) {
                user_error(loc) << op.name << ": the batch dimensions of " << names[i] << " "
                                << graph::type_str(args[i]) << " differ from q's "
                                << graph::type_str(args[0]);
            }
        }
    }
    const auto& k = *t[1];
    const auto& v = *t[2];
    if (!same_dim(k.shape[rank - 1], q.shape[rank - 1])) {
        user_error(loc) << op.name << ": k " << graph::type_str(args[1])
                        << " does not end in q's head size (" << graph::type_str(args[0]) << ")";
    }
    if (!same_dim(v.shape[rank - 2], k.shape[rank - 2])) {
        user_error(loc) << op.name << ": v " << graph::type_str(args[2]) << " and k "
                        << graph::type_str(args[1]) << " have different key counts";
    }
    std::vector<PrimExpr> scores(q.shape.begin(), q.shape.end());
    scores.back() = k.shape[rank - 2];
    if (t.size() == 4) {
        const auto& b = *t[3];
        bool fits = b.ndim() <= rank;
        for (size_t d = 0; fits && d < b.ndim(); ++d) {
            const PrimExpr& bd = b.shape[d];
            fits = broadcasts(bd, scores[d + rank - b.ndim()]);
        }
        if (!fits) {
            user_error(loc) << op.name << ": the bias " << graph::type_str(args[3])
                            << " does not broadcast to the scores "
                            << graph::type_str(graph::make_tensor_type(scores, q.dtype));
        }
    }
    if (static_cast<const AttentionAttrs&>(attrs).scale < 0 ||
        !std::isfinite(static_cast<const AttentionAttrs&>(attrs).scale)) {
        user_error(loc) << op.name << ": scale must be a finite value >= 0 (0: 1/sqrt(D)), got "
                        << static_cast<const AttentionAttrs&>(attrs).scale;
    }
    if (static_cast<const AttentionAttrs&>(attrs).scale == 0 && !as_const_int(q.shape.back())) {
        user_error(loc) << op.name << ": scale 0 (1/sqrt(D)) needs a static head size, got q "
                        << graph::type_str(args[0]) << "; give the scale";
    }
    std::vector<PrimExpr> out(q.shape.begin(), q.shape.end());
    out.back() = v.shape[rank - 1];
    if (static_cast<const AttentionAttrs&>(attrs).merge_heads) {
        if (rank < 3 || !as_const_int(v.shape[rank - 1])) {
            user_error(loc) << op.name << ": merge_heads needs a heads dimension before q's rows "
                            << "and a static head size of v, got q " << graph::type_str(args[0])
                            << " and v " << graph::type_str(args[2]);
        }
        // [batch..., H, S, Dv] -> [batch..., S, H * Dv].
        out.erase(out.end() - 3);
        out.back() = simplify(q.shape[rank - 3] * v.shape[rank - 1]);
    }
    return graph::make_tensor_type(out, q.dtype);
}

std::vector<te::Tensor> attention_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                          const Type& out_type) {
    const te::Tensor &q = in[0], &k = in[1], &v = in[2];
    const size_t nb = q.ndim() - 2;
    const DataType dt = q.dtype();
    const std::vector<PrimExpr> qs = q.shape();
    const PrimExpr rows = qs[nb], depth = qs[nb + 1], keys = k.shape()[nb];
    const PrimExpr dv = v.shape()[nb + 1];
    double scale = static_cast<const AttentionAttrs&>(attrs).scale;
    if (scale == 0) scale = 1.0 / std::sqrt(static_cast<double>(const_dim(depth, "head size")));
    // A symbolic key count gets the block of a large one; the padded columns are masked.
    const int64_t vb = padded_channel_block(extent_hint(keys));
    const PrimExpr padded = simplify(floordiv(keys + I(vb - 1), I(vb)) * I(vb));
    std::vector<PrimExpr> batch(qs.begin(), qs.begin() + static_cast<ptrdiff_t>(nb));
    auto shape = [&](std::initializer_list<PrimExpr> tail) {
        std::vector<PrimExpr> s = batch;
        s.insert(s.end(), tail);
        return s;
    };
    // `i`'s batch indices followed by `tail`.
    auto at = [&](std::span<const PrimExpr> i, std::initializer_list<PrimExpr> tail) {
        std::vector<PrimExpr> idx(i.begin(), i.begin() + static_cast<ptrdiff_t>(nb));
        idx.insert(idx.end(), tail);
        return idx;
    };
    auto stage = [](te::Tensor t) { return te::set_tag(std::move(t), kOpStageTag); };

    te::Tensor keys_t = te::set_tag(
        te::compute(
            shape({depth, padded}),
            [&](std::span<const PrimExpr> i) {
                PrimExpr j = i[nb + 1];
                return te::if_then_else(j < keys, k(at(i, {j, i[nb]})), make_const(dt, 0));
            },
            "attention_keys"),
        kOpStageTag);
    auto d = te::reduce_axis(depth, "d");
    te::Tensor qk = te::compute(
        shape({rows, padded}),
        [&](std::span<const PrimExpr> i) {
            return te::sum(q(at(i, {i[nb], d->var})) * keys_t(at(i, {d->var, i[nb + 1]})), {d});
        },
        "attention_qk");
    const PrimExpr scale_c = make_const(dt, scale);
    te::Tensor scores = stage(te::compute(
        shape({rows, padded}),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.begin(), i.end());
            PrimExpr s = qk(idx) * scale_c;
            if (in.size() > 3) s = s + in[3](broadcast_index(in[3].shape(), i));
            // -inf past the keys: exp gives 0 there, and a row whose keys are all masked with
            // -inf comes out NaN whatever its length, as the unfused softmax makes it.
            return te::if_then_else(i[nb + 1] < keys, s,
                                    make_const(dt, -std::numeric_limits<double>::infinity()));
        },
        "attention_scores"));
    // Row reductions over the padded row as vb lanes of partial results, then over the lanes.
    auto lanes_of = [&](const te::Tensor& x, bool is_max, const std::string& name) {
        auto blk = te::reduce_axis(floordiv(padded, I(vb)), "blk");
        te::Tensor part = stage(te::compute(
            shape({rows, I(vb)}),
            [&](std::span<const PrimExpr> i) {
                PrimExpr e = x(at(i, {i[nb], blk->var * I(vb) + i[nb + 1]}));
                return is_max ? te::max(e, {blk}) : te::sum(e, {blk});
            },
            name + "_lanes"));
        auto lane = te::reduce_axis(I(vb), "lane");
        return stage(te::compute(
            shape({rows}),
            [&](std::span<const PrimExpr> i) {
                PrimExpr e = part(at(i, {i[nb], lane->var}));
                return is_max ? te::max(e, {lane}) : te::sum(e, {lane});
            },
            name));
    };
    te::Tensor mx = lanes_of(scores, true, "attention_max");
    te::Tensor ex = stage(te::compute(
        shape({rows, padded}),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.begin(), i.end());
            return te::exp(scores(idx) - mx(at(i, {i[nb]})));
        },
        "attention_exp"));
    te::Tensor sum = lanes_of(ex, false, "attention_sum");
    auto j = te::reduce_axis(keys, "j");
    te::Tensor pv = te::compute(
        shape({rows, dv}),
        [&](std::span<const PrimExpr> i) {
            return te::sum(ex(at(i, {i[nb], j->var})) * v(at(i, {j->var, i[nb + 1]})), {j});
        },
        "attention_pv");
    if (!static_cast<const AttentionAttrs&>(attrs).merge_heads) {
        return {te::compute(
            te_shape(out_type),
            [&](std::span<const PrimExpr> i) {
                std::vector<PrimExpr> idx(i.begin(), i.end());
                return pv(idx) / sum(at(i, {i[nb]}));
            },
            "attention")};
    }
    // The heads merged: out[..., s, h * Dv + d] from [..., h, s, d].
    return {te::compute(
        te_shape(out_type),
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.begin(), i.begin() + static_cast<ptrdiff_t>(nb - 1));
            PrimExpr s = i[nb - 1], c = i[nb];
            idx.push_back(floordiv(c, dv));
            idx.push_back(s);
            PrimExpr denominator = sum(idx);
            idx.push_back(floormod(c, dv));
            return pv(idx) / denominator;
        },
        "attention")};
}

// The op's stages by name (the compute above names them).
struct AttentionStages {
    te::Tensor keys, qk, scores, max_lanes, max, exp, sum_lanes, sum, pv;
};

AttentionStages find_stages(const te::Tensor& anchor) {
    AttentionStages st;
    std::vector<te::Tensor> todo = {anchor};
    while (!todo.empty()) {
        te::Tensor t = todo.back();
        todo.pop_back();
        auto* c = t.op.as<te::ComputeOp>();
        if (!c) continue;
        const std::string& n = t.op->name;
        te::Tensor* slot = n == "attention_keys"        ? &st.keys
                           : n == "attention_qk"        ? &st.qk
                           : n == "attention_scores"    ? &st.scores
                           : n == "attention_max_lanes" ? &st.max_lanes
                           : n == "attention_max"       ? &st.max
                           : n == "attention_exp"       ? &st.exp
                           : n == "attention_sum_lanes" ? &st.sum_lanes
                           : n == "attention_sum"       ? &st.sum
                           : n == "attention_pv"        ? &st.pv
                                                        : nullptr;
        if (!slot && !t.same_as(anchor)) continue;  // an input the group computes
        if (slot) *slot = t;
        for (const auto& in : c->inputs) todo.push_back(te::Tensor(in));
    }
    for (const te::Tensor* t : {&st.keys, &st.qk, &st.scores, &st.max_lanes, &st.max, &st.exp,
                                &st.sum_lanes, &st.sum, &st.pv}) {
        ANVIL_CHECK(t->op.defined())
            << "nn.attention: a stage of " << anchor.name() << " is missing";
    }
    return st;
}

}  // namespace

void schedule_attention_generic(te::Schedule&, const te::Tensor&, const std::vector<te::Tensor>&,
                                const te::ScheduleContext&) {
    // Every stage at root. (The group's head split and other injective inputs are inlined by
    // the group lowering, driver/lower_graph.cpp, as for every anchor.)
}

void schedule_attention_x86(te::Schedule& s, const te::Tensor& anchor,
                            const std::vector<te::Tensor>& outputs,
                            const te::ScheduleContext& ctx) {
    AttentionStages st = find_stages(anchor);
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    // Sizes from the product with v, [batch..., S, Dv], whatever the output's layout.
    const size_t nb = st.pv.ndim() - 2;
    const bool merged_heads = anchor.ndim() == nb + 1;
    const int lanes = vector_lanes(ctx);
    // The scores' column block (the compute's VB): the partial results' lane count.
    const int64_t block = const_dim(st.max_lanes.shape().back(), "attention block");
    const int64_t row_vector = std::min<int64_t>(block, lanes);
    const int64_t rows = extent_hint(st.pv.shape()[nb]);
    const int64_t dv = extent_hint(st.pv.shape()[nb + 1]);
    const int64_t batch = known_extent_product(
        std::vector<PrimExpr>(st.pv.shape().begin(), st.pv.shape().begin() + nb));

    // Accumulator registers of a tile: 24 of AVX-512's 32 (the rest hold the panel vectors and
    // the broadcast), 12 of 16 below it.
    const int64_t registers = lanes >= 16 ? 24 : 12;
    auto tile_rows = [&](int64_t extent, int64_t width) {
        return pick_rows(extent, std::max<int64_t>(1, registers / ((width + lanes - 1) / lanes)));
    };
    // Query rows per strip: as many as the scores' register tile holds (rows x block).
    const int64_t strip = ctx.split("tile_rows", rows, 32, tile_rows(rows, block));
    // Rows of the product with v per register tile (rows x Dv).
    const int64_t pv_rows = tile_rows(strip, dv);

    te::StageRef so = s[out];
    auto ax = so.op_axis();
    // The output's batch, row and feature axes; merged heads split off the features, so that
    // the loops are those of the unmerged layout.
    std::vector<Ref<IterVar>> batch_axes;
    Ref<IterVar> row_axis, feature_axis;
    if (merged_heads) {
        batch_axes.assign(ax.begin(), ax.begin() + static_cast<ptrdiff_t>(nb - 1));
        auto [head, feature] = so.split(ax[nb], dv);
        batch_axes.push_back(head);
        row_axis = ax[nb - 1];
        feature_axis = feature;
    } else {
        batch_axes.assign(ax.begin(), ax.begin() + static_cast<ptrdiff_t>(nb));
        row_axis = ax[nb];
        feature_axis = ax[nb + 1];
    }
    auto [io, ii] = so.split(row_axis, strip);
    auto [po, pi] = so.split(ii, pv_rows);
    std::vector<Ref<IterVar>> order = batch_axes;
    order.insert(order.end(), {io, po, pi, feature_axis});
    so.reorder(order);
    so.vectorize(feature_axis);
    // Parallel over the batch entries (heads) when there are enough of them for the threads;
    // otherwise over strips too, the keys then transposed per strip.
    const int64_t depth = extent_hint(st.qk.op.as<te::ComputeOp>()->reduce_axis[0]->dom.extent);
    // A symbolic token count is taken as enough work for the threads (a sequence, not one token).
    const int64_t scores = static_extent_product(st.qk.shape());
    const int64_t work = scores > 0 ? scores * (depth + dv) : kMinParallelWork;
    // A symbolic key count (a dynamic sequence) has no strip of constant size: the keys, scores
    // and softmax stages are then computed at root, each over all rows, in the same loops.
    const bool strips = st.keys.shape().back().is<IntImm>();
    Ref<IterVar> keys_at, strip_at;
    if (nb > 0 && batch >= 4) {
        keys_at = fuse_parallel(so, batch_axes, work);
        strip_at = io;
    } else {
        std::vector<Ref<IterVar>> outer = batch_axes;
        outer.push_back(io);
        keys_at = strip_at = fuse_parallel(so, outer, work);
    }
    // Where a stage of the softmax goes: into the strip, or at root with its batch loops
    // parallel (its leaf loops begin with them).
    auto place = [&](te::StageRef stage, const Ref<IterVar>& at) {
        if (strips) {
            stage.compute_at(so, at);
            return;
        }
        auto leaves = stage.leaf_axes();
        fuse_parallel(stage, {leaves.begin(), leaves.begin() + static_cast<ptrdiff_t>(nb)}, work);
    };

    // The keys, transposed once per batch entry (or strip).
    te::StageRef sk = s[st.keys];
    {
        auto ka = sk.op_axis();
        sk.vectorize(sk.split(ka[nb + 1], row_vector).second);
    }
    place(sk, keys_at);

    // Scores: a register tile of rows x block per column block, the reduction over D outermost.
    te::Tensor acc = local_accumulator(s, st.qk, st.scores);
    te::StageRef ss = s[st.scores];
    {
        auto sa = ss.op_axis();
        auto [jo, ji] = ss.split(sa[nb + 1], block);
        std::vector<Ref<IterVar>> o(sa.begin(), sa.begin() + static_cast<ptrdiff_t>(nb));
        Ref<IterVar> tile_rows = sa[nb];
        if (!strips) {
            // At root: the rows in strips too, so that the accumulator tile stays constant.
            auto [ro, ri] = ss.split(sa[nb], strip);
            o.push_back(ro);
            tile_rows = ri;
        }
        o.insert(o.end(), {jo, tile_rows, ji});
        ss.reorder(o);
        ss.vectorize(ji);
        place(ss, strip_at);
        te::StageRef sa_ = s[acc];
        sa_.compute_at(ss, jo);
        auto aa = sa_.op_axis();
        auto dd = sa_.op_reduce_axis()[0];
        sa_.reorder({dd, aa[nb], aa[nb + 1]});
        sa_.unroll(aa[nb]);
        sa_.vectorize(aa[nb + 1]);
    }
    // Partial maxima and sums: vectors of `block` lanes, the blocks of the row outside.
    for (const te::Tensor& part : {st.max_lanes, st.sum_lanes}) {
        te::StageRef sp = s[part];
        auto pa = sp.op_axis();
        auto blk = sp.op_reduce_axis()[0];
        std::vector<Ref<IterVar>> o(pa.begin(), pa.begin() + static_cast<ptrdiff_t>(nb));
        o.insert(o.end(), {pa[nb], blk, pa[nb + 1]});
        sp.reorder(o);
        sp.vectorize(pa[nb + 1]);
        place(sp, strip_at);
    }
    for (const te::Tensor& r : {st.max, st.sum}) place(s[r], strip_at);
    te::StageRef se = s[st.exp];
    {
        auto ea = se.op_axis();
        se.vectorize(se.split(ea[nb + 1], row_vector).second);
    }
    place(se, strip_at);
    // The product with v: pv_rows x Dv accumulators, the keys outermost.
    te::Tensor pacc = local_accumulator(s, st.pv, out);
    te::StageRef sp = s[pacc];
    sp.compute_at(so, po);
    auto pa = sp.op_axis();
    auto jj = sp.op_reduce_axis()[0];
    sp.reorder({jj, pa[nb], pa[nb + 1]});
    sp.unroll(pa[nb]);
    sp.vectorize(pa[nb + 1]);
}

Ref<Op> make_attention_op() {
    return make_op(
        {.name = "nn.attention",
         .num_inputs = -1,
         .make_default_attrs = default_attrs<AttentionAttrs>,
         .infer_type = attention_type,
         .compute = attention_compute,
         .schedule = schedule_by_target<schedule_attention_x86, schedule_attention_generic>,
         .pattern = OpPattern::OutEWiseFusable,
         .fuses_injective_inputs = true,
         .description = "softmax(q · kᵀ · scale + bias) · v, one kernel"});
}

}  // namespace anvil::ops
