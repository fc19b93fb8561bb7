#include "ops/tile_schedule.h"

#include <algorithm>

#include "ir/analyzer.h"
#include "ir/expr_functor.h"
#include "ir/structural_equal.h"
#include "ops/injective_schedule.h"
#include "support/error.h"

namespace anvil::ops {

namespace {

bool contains(const std::vector<te::Tensor>& ts, const te::Tensor& t) {
    return std::any_of(ts.begin(), ts.end(), [&](const te::Tensor& x) { return x.same_as(t); });
}

bool same_shape(const te::Tensor& a, const te::Tensor& b) {
    if (a.ndim() != b.ndim()) return false;
    for (size_t d = 0; d < a.ndim(); ++d) {
        if (!structural_equal(simplify(a.shape()[d]), simplify(b.shape()[d]))) return false;
    }
    return true;
}

bool is_staged_input(const te::Operation& op) {
    return op.tag == kPaddedInputTag || op.tag == kDilatedInputTag || op.tag == kColumnPhasesTag;
}

int64_t product(const std::vector<PrimExpr>& shape, size_t from, size_t to, bool* known) {
    int64_t n = 1;
    for (size_t d = from; d < to; ++d) {
        if (auto* v = as_const_int(shape[d])) {
            n *= *v;
        } else {
            *known = false;
        }
    }
    return n;
}

}  // namespace

int64_t const_dim(const PrimExpr& d, const char* what) {
    const int64_t* v = as_const_int(d);
    ANVIL_CHECK(v) << what << " must be a constant, got " << d;
    return *v;
}

int64_t extent_hint(const PrimExpr& d) {
    const int64_t* v = as_const_int(d);
    return v ? *v : 1024;
}

int64_t known_extent_product(const std::vector<PrimExpr>& extents) {
    int64_t n = 1;
    for (const auto& d : extents) {
        if (auto* v = as_const_int(d)) n *= *v;
    }
    return n;
}

int vector_lanes(const te::ScheduleContext& ctx) {
    return std::max(1, ctx.target.vector_bits / 32);
}

te::Tensor tile_target(te::Schedule& s, const te::Tensor& anchor,
                       const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    bool tail = !contains(outputs, anchor) && outputs.size() == 1 && same_shape(anchor, outputs[0]);
    if (tail) {
        if (!anchor.op.as<te::ComputeOp>()->is_reduction()) s[anchor].compute_inline();
        return outputs[0];
    }
    for (const auto& out : outputs) {
        if (!out.same_as(anchor)) schedule_injective_stage(s, out, ctx);
    }
    return anchor;
}

te::Tensor local_accumulator(te::Schedule& s, const te::Tensor& r, const te::Tensor& out) {
    te::Tensor acc = s.cache_write(r, "local");
    if (!r.same_as(out)) s[r].compute_inline();
    return acc;
}

te::Tensor expect_reduction(const te::Tensor& anchor, const char* op) {
    te::Tensor red = reduction_of(anchor);
    ANVIL_CHECK(red.op.defined()) << op << " anchor " << anchor.name() << " has no reduction";
    return red;
}

void schedule_reduction_inputs_at_root(te::Schedule& s, const te::Tensor& anchor, const char* op) {
    te::Tensor red = expect_reduction(anchor, op);
    for (const auto& in : red.op.as<te::ComputeOp>()->inputs) {
        if (in->kind == te::OpKind::Compute) s[te::Tensor(in)].compute_root();
    }
}

te::Tensor reduction_of(const te::Tensor& anchor) {
    auto* c = anchor.op.as<te::ComputeOp>();
    if (!c) return {};
    if (c->is_reduction()) return anchor;
    for (const auto& in : c->inputs) {
        auto* ic = in.as<te::ComputeOp>();
        if (ic && ic->is_reduction()) return te::Tensor(in);
    }
    return {};
}

void schedule_helper_inputs(te::Schedule& s, const te::Tensor& t, const te::ScheduleContext& ctx) {
    auto* c = t.op.as<te::ComputeOp>();
    if (!c) return;
    for (const auto& in : c->inputs) {
        auto* ic = in.as<te::ComputeOp>();
        if (!ic || ic->is_reduction()) continue;
        if (is_staged_input(*in) || in->tag == kPackedWeightTag || in->tag == kChannelWordsTag) {
            te::Tensor h(in);
            if (in->tag == kChannelWordsTag) {
                for (const auto& padded : ic->inputs) {
                    if (padded->tag == kPaddedInputTag) s[te::Tensor(padded)].compute_inline();
                }
            }
            s[h].compute_root();
            schedule_rows(s, h, h.ndim() - 1, ctx);
        }
    }
}

te::Tensor staged_input(const te::Tensor& r) {
    auto* c = r.op.as<te::ComputeOp>();
    if (!c) return {};
    for (const auto& in : c->inputs) {
        if (in->kind != te::OpKind::Compute) continue;
        if (is_staged_input(*in)) return te::Tensor(in);
    }
    return {};
}

int64_t pick_rows(int64_t extent, int64_t max_rows) {
    max_rows = std::max<int64_t>(1, max_rows);
    if (extent <= max_rows) return std::max<int64_t>(1, extent);
    for (int64_t r = max_rows; r * 2 >= max_rows; --r) {
        if (extent % r == 0) return r;
    }
    return max_rows;
}

int64_t pick_vector(int64_t extent, int lanes) {
    if (extent <= lanes || extent % lanes == 0) return std::min<int64_t>(extent, lanes);
    for (int64_t v = lanes - 1; 2 * v >= lanes; --v) {
        if (extent % v == 0) return v;
    }
    return lanes;
}

Ref<IterVar> fuse_parallel(te::StageRef st, const std::vector<Ref<IterVar>>& axes, int64_t work,
                           const LoopChoices& choices) {
    if (axes.empty()) return {};
    Ref<IterVar> f = axes.size() == 1 ? axes[0] : st.fuse(axes);
    if (choices.run_parallel(work)) st.parallel(f);
    return f;
}

int64_t pick_register_rows(int64_t extent, int64_t row_width, int lanes) {
    int64_t vectors_per_row = (row_width + lanes - 1) / lanes;
    int64_t registers = lanes >= 16 ? 16 : 12;  // accumulators, leaving room for operands
    return pick_rows(extent, std::max<int64_t>(1, registers / vectors_per_row));
}

void schedule_scalar_accumulator(te::Schedule& s, const te::Tensor& out, const te::Tensor& acc,
                                 int64_t work, const LoopChoices& choices) {
    te::StageRef so = s[out];
    s[acc].compute_at(so, fuse_parallel(so, so.op_axis(), work, choices));
}

void schedule_nchw_row_vectors(te::Schedule& s, const te::Tensor& out, const te::Tensor& acc,
                               int64_t work, const te::ScheduleContext& ctx,
                               const te::Tensor& staged, const LoopChoices& choices) {
    te::StageRef so = s[out];
    auto ax = so.op_axis();  // n, c, (od,) oh, ow
    int lanes = vector_lanes(ctx);
    int64_t v = pick_vector(const_dim(out.shape().back(), "output width"), lanes);
    auto [wo, wi] = so.split(ax.back(), v);
    so.vectorize(wi);
    if (staged.op.defined()) {
        // One (n, c) plane per iteration, its staged input made inside it: a plane is small
        // enough to stay in cache between being written and read.
        Ref<IterVar> plane = fuse_parallel(so, {ax[0], ax[1]}, work, choices);
        te::StageRef sp = s[staged];
        sp.compute_at(so, plane);
        // Its rows are short (a 7x7 plane pads to rows of 9): a vector width that divides them
        // where one does, so that no row ends in a scalar tail loop.
        const int64_t* row = as_const_int(staged.shape().back());
        auto [po, pi] = sp.split(sp.op_axis().back(), row ? pick_vector(*row, lanes) : lanes);
        sp.vectorize(pi);
    } else {
        fuse_parallel(so, {ax.begin(), ax.end() - 1}, work, choices);
    }
    te::StageRef sa = s[acc];
    sa.compute_at(so, wo);
    std::vector<Ref<IterVar>> order = sa.op_reduce_axis();
    Ref<IterVar> lane = sa.op_axis().back();
    order.push_back(lane);
    sa.reorder(order);
    sa.vectorize(lane);
}

namespace {

// The default output rows per staged block of schedule_blocked_windows: the whole plane when its
// padded input fits in L1 and is read with stride 1 (each padded row is then read by up to three
// output rows soon after it is written), else the most rows whose padded input fits in half of
// L1. Measured on MobileNetV2's depthwise layers (which now read in place by default, tile_oh
// 0; this stays the default of pools): blocks of rows win on every strided layer and on planes
// past L1 (56x56 and larger), the whole plane on small stride-1 ones.
int64_t default_staged_rows(const te::Tensor& staged, int64_t oh, int64_t window_rows) {
    constexpr int64_t kL1Bytes = 32 * 1024;
    bool known = true;
    const int64_t in_rows = const_dim(staged.shape()[2], "padded input height");
    const int64_t row_bytes = product(staged.shape(), 3, staged.ndim(), &known) *
                              static_cast<int64_t>(staged.dtype().bytes());
    const int64_t stride = oh > 1 ? std::max<int64_t>(1, (in_rows - window_rows) / (oh - 1)) : 1;
    if (!known || (stride == 1 && in_rows * row_bytes <= kL1Bytes)) return oh;
    int64_t best = 1;
    for (int64_t d = 2; d <= oh; ++d) {
        const int64_t rows = (d - 1) * stride + window_rows;
        if (oh % d == 0 && rows * row_bytes <= kL1Bytes / 2) best = d;
    }
    return best;
}

}  // namespace

void schedule_blocked_windows(te::Schedule& s, const te::Tensor& out, const te::Tensor& acc,
                              int64_t work, const te::ScheduleContext& ctx,
                              const te::Tensor& staged, bool padding_may_inline) {
    const int64_t ow = const_dim(out.shape()[3], "output width");
    const int64_t block = const_dim(out.shape()[4], "channel block");
    // Knob: output pixels per register tile (default: as many as the accumulators hold).
    const int64_t rows =
        ctx.split("tile_ow", ow, 32, pick_register_rows(ow, block, vector_lanes(ctx)));
    te::StageRef so = s[out];
    auto ax = so.op_axis();  // n, channel block, oh, ow, channel
    auto [wo, wi] = so.split(ax[3], rows);
    so.reorder({ax[0], ax[1], ax[2], wo, wi, ax[4]});
    so.vectorize(ax[4]);
    if (staged.op.defined()) {
        Ref<IterVar> plane = fuse_parallel(so, {ax[0], ax[1]}, work);
        te::StageRef sp = s[staged];
        const int64_t oh = const_dim(out.shape()[2], "output height");
        const auto taps = s[acc].op_reduce_axis();  // the window's rows first
        const int64_t window_rows = taps.empty() ? 1 : const_dim(taps[0]->dom.extent, "window");
        // Knob: output rows per block of the padded input. The whole plane pads every input row
        // once; a block of rows keeps the rows it pads in L1 until they are read, and pads the
        // rows two blocks share twice. 0 (where the padding may be inlined, the default there):
        // no padded copy, the window loops read the input and test the padding, and
        // partition_loops leaves the tests to the border rows and tiles.
        std::vector<int64_t> choices;
        if (padding_may_inline) choices.push_back(0);
        for (int64_t d = 1; d <= oh; ++d) {
            if (oh % d == 0) choices.push_back(d);
        }
        const int64_t rows_per_block =
            ctx.knob("tile_oh", choices,
                     padding_may_inline ? 0 : default_staged_rows(staged, oh, window_rows));
        if (rows_per_block == 0) {
            sp.compute_inline();
        } else {
            if (rows_per_block < oh) {
                auto [ho, hi] = so.split(ax[2], rows_per_block);
                so.reorder({ho, hi, wo, wi, ax[4]});
                sp.compute_at(so, ho);
            } else {
                sp.compute_at(so, plane);
            }
            sp.vectorize(sp.op_axis().back());
        }
    } else {
        fuse_parallel(so, {ax[0], ax[1], ax[2]}, work);
    }
    te::StageRef sa = s[acc];
    sa.compute_at(so, wo);
    auto aa = sa.op_axis();
    std::vector<Ref<IterVar>> order = sa.op_reduce_axis();
    order.insert(order.end(), {aa[3], aa[4]});
    sa.reorder(order);
    sa.unroll(aa[3]);
    sa.vectorize(aa[4]);
}

namespace {

// A stage's data-parallel axes cut after the first `n_outer`: the row loops and the rest.
struct RowAxes {
    std::vector<Ref<IterVar>> outer, rest;
    int64_t inner = 1;  // elements per row (the product of the rest's extents)
    int64_t total = 1;  // elements in all
    // Whether the products are exact: false when an extent is symbolic (they then skip it). A
    // symbolic row count (a sequence length) still leaves rows of a known size.
    bool inner_known = true, known = true;
};

RowAxes row_axes(te::StageRef st, const te::Tensor& t, size_t n_outer) {
    RowAxes r;
    auto ax = st.op_axis();
    n_outer = std::min(n_outer, ax.size());
    r.inner = product(t.shape(), n_outer, ax.size(), &r.inner_known);
    r.total = product(t.shape(), 0, ax.size(), &r.known);
    r.outer.assign(ax.begin(), ax.begin() + static_cast<ptrdiff_t>(n_outer));
    r.rest.assign(ax.begin() + static_cast<ptrdiff_t>(n_outer), ax.end());
    return r;
}

// Fuses the rest of each row into one loop and splits vectors off it.
void vectorize_rows(te::StageRef st, const RowAxes& r, const te::ScheduleContext& ctx,
                    const LoopChoices& choices) {
    Ref<IterVar> f = r.rest.size() == 1 ? r.rest[0] : st.fuse(r.rest);
    int lanes = vector_lanes(ctx);
    if (r.inner >= lanes && lanes > 1) {
        auto [o, i] = st.split(f, choices.vector_width(r.inner, lanes));
        st.vectorize(i);
    }
}

}  // namespace

void schedule_rows(te::Schedule& s, const te::Tensor& t, size_t n_outer,
                   const te::ScheduleContext& ctx, const LoopChoices& choices) {
    te::StageRef st = s[t];
    RowAxes r = row_axes(st, t, n_outer);
    if (!r.rest.empty() && r.inner_known && !ctx.target.is_gpu) {
        vectorize_rows(st, r, ctx, choices);
    }
    fuse_parallel(st, r.outer, r.known ? r.total : kMinParallelWork, choices);
}

namespace {

// Whether every load of `op`'s body that uses reduce axis `k` has it in its last index only, as
// k itself or k plus terms free of it (a stride-1 walk along the row).
bool reduces_contiguously(const te::ComputeOp& op, const Var* k) {
    bool ok = true, any = false;
    pre_order_visit(op.body.as<Reduce>()->source, [&](const PrimExpr& e) {
        auto* load = e.as<Load>();
        if (!load || load->indices.empty()) return;
        for (size_t d = 0; d + 1 < load->indices.size(); ++d) {
            if (uses_var(load->indices[d], k)) ok = false;
        }
        const PrimExpr& last = load->indices.back();
        if (!uses_var(last, k)) return;
        any = true;
        auto* add = last.as<Add>();
        const bool plain =
            last.get() == k || (add && ((add->a.get() == k && !uses_var(add->b, k)) ||
                                        (add->b.get() == k && !uses_var(add->a, k))));
        ok = ok && plain;
    });
    return ok && any;
}

}  // namespace

te::Tensor rfactor_lanes(te::Schedule& s, const te::Tensor& t, const te::ScheduleContext& ctx) {
    if (ctx.target.is_gpu) return {};
    auto* op = t.op.as<te::ComputeOp>();
    te::StageRef st = s[t];
    auto red = st.op_reduce_axis();
    if (!op || !op->is_reduction() || red.size() != 1 || st.op_axis().empty()) return {};
    const int lanes = std::max(1, ctx.target.vector_bits / std::max(8, t.dtype().bits()));
    const int64_t* extent = as_const_int(red[0]->dom.extent);
    if (lanes < 2 || !extent || *extent < 2 * lanes) return {};
    if (!reduces_contiguously(*op, red[0]->var.get())) return {};
    auto [ko, ki] = st.split(red[0], lanes);
    te::Tensor partial = s.rfactor(t, ki, static_cast<int>(st.op_axis().size()));
    te::StageRef sp = s[partial];
    auto data = sp.op_axis();
    std::vector<Ref<IterVar>> order(data.begin(), data.end() - 1);
    for (const auto& iv : sp.op_reduce_axis()) order.push_back(iv);
    order.push_back(data.back());
    sp.reorder(order);
    sp.vectorize(data.back());
    return partial;
}

void attach_partial_results(te::Schedule& s, const te::Tensor& t, const te::Tensor& partial) {
    te::StageRef st = s[t];
    Ref<IterVar> row;
    for (const auto& leaf : st.leaf_axes()) {
        if (leaf->kind != IterKind::Reduce) row = leaf;
    }
    if (row.defined()) s[partial].compute_at(st, row);
}

void schedule_reduction_rows(te::Schedule& s, const te::Tensor& t, size_t n_outer,
                             const te::ScheduleContext& ctx, const LoopChoices& choices) {
    te::StageRef st = s[t];
    // The whole reduction's work decides the parallel loop (the partial results below, computed
    // per row, do most of it).
    bool known = true;
    int64_t work = product(t.shape(), 0, t.ndim(), &known);
    for (const auto& iv : st.op_reduce_axis()) {
        if (auto* e = as_const_int(iv->dom.extent)) work *= *e;
    }
    // Reduced innermost (no contiguous inner axes after the reduced ones): vector partial
    // results along the row.
    te::Tensor partial;
    bool rows_known = true;
    if (product(t.shape(), std::min(n_outer, t.ndim()), t.ndim(), &rows_known) == 1 && rows_known) {
        partial = rfactor_lanes(s, t, ctx);
    }
    st.compute_root();
    RowAxes r = row_axes(st, t, n_outer);
    auto red = st.op_reduce_axis();
    if (!r.rest.empty() && r.inner_known && r.inner > 1 && !ctx.target.is_gpu) {
        // Reduction loops outside the contiguous inner axes: each reduction step updates a
        // vector of independent accumulators.
        std::vector<Ref<IterVar>> order = red;
        order.insert(order.end(), r.rest.begin(), r.rest.end());
        st.reorder(order);
        vectorize_rows(st, r, ctx, choices);
    }
    fuse_parallel(st, r.outer, r.known ? work : kMinParallelWork, choices);
    if (partial.op.defined()) attach_partial_results(s, t, partial);
}

namespace {

// The stages an op's compute created for `anchor`: compute ops it reads, directly or through
// each other, tagged kOpStageTag.
std::vector<te::Tensor> op_stages(const te::Tensor& anchor) {
    std::vector<te::Tensor> found;
    std::vector<Ref<te::Operation>> work{anchor.op};
    while (!work.empty()) {
        Ref<te::Operation> op = work.back();
        work.pop_back();
        auto* c = op.as<te::ComputeOp>();
        if (!c) continue;
        for (const auto& in : c->inputs) {
            if (in->kind != te::OpKind::Compute || in->tag != kOpStageTag) continue;
            te::Tensor t(in);
            if (contains(found, t)) continue;
            found.push_back(t);
            work.push_back(in);
        }
    }
    return found;
}

}  // namespace

void schedule_row_reduction_op(te::Schedule& s, const te::Tensor& anchor,
                               const std::vector<te::Tensor>& outputs,
                               const te::ScheduleContext& ctx) {
    std::vector<te::Tensor> stages = op_stages(anchor);
    // The reduced axes: extent 1 in a reduction, not in the result.
    size_t nd = anchor.ndim(), first = nd, last = 0;
    for (const auto& t : stages) {
        if (!t.op.as<te::ComputeOp>()->is_reduction() || t.ndim() != nd) continue;
        for (size_t d = 0; d < nd; ++d) {
            if (is_one(t.shape()[d]) && !is_one(anchor.shape()[d])) {
                first = std::min(first, d);
                last = std::max(last, d);
            }
        }
    }
    // Elementwise stages loop over rows up to the reduced axes and vectorize what follows them
    // (the contiguous inner axes when there are any, else the reduced axes themselves).
    size_t rows = first == nd ? 0 : (last + 1 < nd ? last + 1 : first);
    RowAxes shape = row_axes(s[anchor], anchor, rows);
    const LoopChoices choices = declare_loop_choices(ctx, shape.known ? shape.total : 0,
                                                     shape.inner_known ? shape.inner : 0);
    for (const auto& t : stages) {
        s[t].compute_root();
        if (t.op.as<te::ComputeOp>()->is_reduction()) {
            schedule_reduction_rows(s, t, first == nd ? 0 : first, ctx, choices);
        } else {
            schedule_rows(s, t, rows, ctx, choices);
        }
    }
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    schedule_rows(s, out, rows, ctx, choices);
}

void schedule_row_reduction_op_generic(te::Schedule& s, const te::Tensor& anchor,
                                       const std::vector<te::Tensor>& outputs,
                                       const te::ScheduleContext& ctx) {
    for (const auto& t : op_stages(anchor)) s[t].compute_root();
}

int64_t plane_tile_rows(int64_t h, int64_t w, int lanes) {
    int64_t best = 0, best_width = 0;
    for (int64_t r = 1; r <= h && r * w <= 8 * lanes; ++r) {
        if (h % r != 0) continue;
        int64_t v = pick_vector(r * w, lanes);
        if ((r * w) % v != 0 || r * w / v > 8 || v < best_width) continue;
        best = r;
        best_width = v;
    }
    return best;
}

int64_t pick_channel_tile(int64_t oc, int64_t vectors, int lanes) {
    int64_t tile = std::max<int64_t>(1, (lanes >= 16 ? 24 : 12) / vectors);
    for (int64_t t = tile; t * 2 > tile; --t) {
        if (oc % t == 0) return t;
    }
    return std::min(tile, oc);
}

}  // namespace anvil::ops
