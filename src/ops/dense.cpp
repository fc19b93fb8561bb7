// Dense products: nn.dense, nn.matmul, nn.batch_matmul (OutEWiseFusable anchors) and
// nn.bias_add (broadcast).
//
// All three products share one compute:
//   <name>_pack     b as panels [b-batch..., N/VB, K, VB]: VB (8, 16 or 32) columns contiguous,
//                   zero-filled past N, whatever the transposition of b.
//   <name>_blocked  the reduction into [batch..., M, N padded to VB].
//   <name>          the result, read out of the blocked one (dropping the dimension of a 1-D
//                   operand).
// which the x86 schedule turns into the micro-kernel of examples/matmul: a rows x VB tile in
// registers, k outermost, one broadcast of a and one vector of the panel per step. A 1-D b (a
// matrix-vector product) is a direct reduction instead.
#include "ops/dense.h"

#include <functional>
#include <optional>
#include <tuple>

#include "graph/op.h"
#include "ir/analyzer.h"
#include "ops/axes.h"
#include "ops/injective_schedule.h"
#include "ops/op_spec.h"
#include "ops/product_dtype.h"
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

std::vector<PrimExpr> slice(const std::vector<PrimExpr>& v, size_t from, size_t to) {
    return {v.begin() + static_cast<ptrdiff_t>(from), v.begin() + static_cast<ptrdiff_t>(to)};
}

// ---- shapes -------------------------------------------------------------------------------

// Where M, K and N sit in the operands' shapes.
struct MatmulShape {
    bool a_vec = false, b_vec = false;  // 1-D operands
    std::vector<PrimExpr> a_batch, b_batch, batch;
    PrimExpr m, k, n;
};

MatmulShape matmul_shape(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b, bool ta,
                         bool tb, const SourceLoc& loc, const std::string& op) {
    MatmulShape s;
    s.a_vec = a.size() == 1;
    s.b_vec = b.size() == 1;
    size_t ra = a.size(), rb = b.size();
    if (s.a_vec) {
        s.k = a[0];
    } else {
        s.a_batch = slice(a, 0, ra - 2);
        s.m = ta ? a[ra - 1] : a[ra - 2];
        s.k = ta ? a[ra - 2] : a[ra - 1];
    }
    PrimExpr kb;
    if (s.b_vec) {
        kb = b[0];
    } else {
        s.b_batch = slice(b, 0, rb - 2);
        kb = tb ? b[rb - 1] : b[rb - 2];
        s.n = tb ? b[rb - 2] : b[rb - 1];
    }
    auto* ka = as_const_int(s.k);
    auto* kbv = as_const_int(kb);
    if (ka && kbv && *ka != *kbv) {
        user_error(loc) << op << ": the reduction dimensions differ: " << *ka << " (of a) and "
                        << *kbv << " (of b)";
    }
    s.batch = broadcast_shape({s.a_batch, s.b_batch}, loc, op);
    return s;
}

std::vector<PrimExpr> result_shape(const MatmulShape& s) {
    std::vector<PrimExpr> out = s.batch;
    if (!s.a_vec) out.push_back(s.m);
    if (!s.b_vec) out.push_back(s.n);
    return out;
}

Type matmul_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                 const SourceLoc& loc) {
    const auto& at = static_cast<const MatmulAttrs&>(attrs);
    const auto& a = graph::expect_tensor(args[0], loc, "input 0 of " + op.name);
    const auto& b = graph::expect_tensor(args[1], loc, "input 1 of " + op.name);
    DataType dtype =
        product_dtype(op.name, a.dtype, b.dtype, at.out_dtype, loc, "operand a", "operand b");
    size_t min_rank = op.name == "nn.matmul" ? 1 : 2;
    for (const auto* t : {&a, &b}) {
        if (t->ndim() < min_rank) {
            user_error(loc) << op.name << ": operand " << (t == &a ? "a" : "b") << " is "
                            << graph::type_str(t == &a ? args[0] : args[1]) << "; it needs "
                            << (min_rank == 1 ? "at least 1 dimension" : "at least 2 dimensions");
        }
    }
    MatmulShape s = matmul_shape(a.shape, b.shape, at.transpose_a, at.transpose_b, loc, op.name);
    return graph::make_tensor_type(result_shape(s), dtype);
}

// nn.dense's result for out_dtype (void: a float product).
Type dense_result(const Op& op, const std::vector<Type>& args, DataType out_dtype,
                  const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the data of nn.dense");
    const auto& w = graph::expect_tensor(args[1], loc, "the weight of nn.dense");
    DataType dtype = product_dtype(op.name, x.dtype, w.dtype, out_dtype, loc);
    if (w.ndim() != 2) {
        user_error(loc) << "nn.dense: the weight must be 2-D [units, K], got "
                        << graph::type_str(args[1]);
    }
    if (x.ndim() < 1) user_error(loc) << "nn.dense: the data is a scalar";
    MatmulShape s = matmul_shape(x.shape, w.shape, false, true, loc, op.name);
    return graph::make_tensor_type(result_shape(s), dtype);
}

Type dense_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                const SourceLoc& loc) {
    return dense_result(op, args, attrs_as<DenseAttrs>(attrs).out_dtype, loc);
}

// ---- compute ------------------------------------------------------------------------------

// The columns of `b` in panels [b-batch..., N/VB, K, VB], zero past N.
te::Tensor pack_panels(
    const std::string& name, const MatmulShape& s,
    const std::function<PrimExpr(std::vector<PrimExpr>, PrimExpr, PrimExpr)>& read_b) {
    // A symbolic column count (attention over a symbolic sequence) gets the block of a large one
    // and a guarded last panel.
    const int64_t* n = as_const_int(s.n);
    int64_t vb = padded_channel_block(extent_hint(s.n));
    PrimExpr panels = simplify(floordiv(s.n + I(vb - 1), I(vb)));
    bool padded = !n || (*n + vb - 1) / vb * vb != *n;
    std::vector<PrimExpr> pack_shape = s.b_batch;
    pack_shape.insert(pack_shape.end(), {panels, s.k, I(vb)});
    size_t nbb = s.b_batch.size();
    return te::set_tag(
        te::compute(
            pack_shape,
            [&](std::span<const PrimExpr> i) {
                PrimExpr col = i[nbb] * I(vb) + i[nbb + 2];
                std::vector<PrimExpr> idx(i.begin(), i.begin() + static_cast<ptrdiff_t>(nbb));
                PrimExpr v = read_b(idx, i[nbb + 1], col);
                return padded ? te::if_then_else(col < s.n, v, make_const(v.dtype(), 0)) : v;
            },
            name + "_pack"),
        kPackedWeightTag);
}

// `prepacked`: b already as panels [N/VB, K, VB] (nn.dense_pack_weight, folded at compile
// time), b itself unused; then no pack stage is made.
// `acc`: the result's type, which the products are summed in (integer operands widened to it).
te::Tensor matmul_core(const std::string& name, const te::Tensor& a, const te::Tensor& b, bool ta,
                       bool tb, const std::vector<PrimExpr>& out_shape, DataType acc,
                       const std::optional<te::Tensor>& prepacked = std::nullopt) {
    std::vector<PrimExpr> b_shape = b.shape();
    if (prepacked) b_shape = {out_shape.back(), prepacked->shape()[1]};
    MatmulShape s = matmul_shape(a.shape(), b_shape, ta, tb, SourceLoc{}, name);
    size_t nb = s.batch.size();
    auto k = te::reduce_axis(s.k, "k");
    // a[batch, m, kk] and b[batch, kk, n] in the operands' own layouts.
    auto read_a = [&](std::span<const PrimExpr> batch, PrimExpr m, PrimExpr kk) {
        if (s.a_vec) return a(kk);
        std::vector<PrimExpr> idx = broadcast_index(s.a_batch, batch);
        idx.push_back(ta ? kk : m);
        idx.push_back(ta ? m : kk);
        return a(idx);
    };
    auto read_b = [&](std::vector<PrimExpr> idx, PrimExpr kk, PrimExpr n) {
        if (s.b_vec) return b(kk);
        idx.push_back(tb ? n : kk);
        idx.push_back(tb ? kk : n);
        return b(idx);
    };
    if (s.b_vec) {
        return te::compute(
            out_shape,
            [&](std::span<const PrimExpr> i) {
                PrimExpr m = s.a_vec ? PrimExpr(0) : i[nb];
                return te::sum(widen(read_a(i.subspan(0, nb), m, k->var), acc) *
                                   widen(read_b({}, k->var, PrimExpr()), acc),
                               {k});
            },
            name);
    }
    te::Tensor pack = prepacked ? *prepacked : pack_panels(name, s, read_b);
    size_t pd = pack.ndim();
    int64_t vb = const_dim(pack.shape()[pd - 1], "matmul column block");
    PrimExpr panels = pack.shape()[pd - 3];
    std::vector<PrimExpr> blocked_shape = s.batch;
    blocked_shape.push_back(s.a_vec ? I(1) : s.m);
    blocked_shape.push_back(simplify(panels * I(vb)));
    te::Tensor blocked = te::compute(
        blocked_shape,
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx = broadcast_index(s.b_batch, i.subspan(0, nb));
            idx.insert(idx.end(), {floordiv(i[nb + 1], I(vb)), k->var, floormod(i[nb + 1], I(vb))});
            return te::sum(
                widen(read_a(i.subspan(0, nb), i[nb], k->var), acc) * widen(pack(idx), acc), {k});
        },
        name + "_blocked");
    if (nb > 0 && s.b_batch.empty()) blocked = te::set_tag(blocked, kSharedPanelsTag);
    return te::compute(
        out_shape,
        [&](std::span<const PrimExpr> i) {
            std::vector<PrimExpr> idx(i.begin(), i.begin() + static_cast<ptrdiff_t>(nb));
            idx.push_back(s.a_vec ? PrimExpr(0) : i[nb]);
            idx.push_back(i.back());
            return blocked(idx);
        },
        name);
}

std::vector<te::Tensor> matmul_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                       const Type& out) {
    const auto& a = static_cast<const MatmulAttrs&>(attrs);
    return {matmul_core("matmul", in[0], in[1], a.transpose_a, a.transpose_b, te_shape(out),
                        out.as<graph::TensorType>()->dtype)};
}

std::vector<te::Tensor> dense_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                      const Type& out) {
    return {matmul_core("dense", in[0], in[1], false, true, te_shape(out),
                        out.as<graph::TensorType>()->dtype)};
}

Type dense_pack_weight_type(const Op& op, const std::vector<Type>& args, const Attrs&,
                            const SourceLoc& loc) {
    const auto& w = graph::expect_tensor(args[0], loc, "the weight of " + op.name);
    if (w.ndim() != 2 || !w.is_static()) {
        user_error(loc) << op.name << ": the weight must be [units, K] with a static shape, got "
                        << graph::type_str(args[0]);
    }
    int64_t n = w.static_shape()[0];
    int64_t vb = padded_channel_block(n);
    auto D = [&](int64_t v) { return make_int(w.shape[0].dtype(), v); };
    return graph::make_tensor_type({D((n + vb - 1) / vb), w.shape[1], D(vb)}, w.dtype);
}

std::vector<te::Tensor> dense_pack_weight_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                                  const Type&) {
    const te::Tensor& w = in[0];
    MatmulShape s;
    s.k = w.shape()[1];
    s.n = w.shape()[0];
    return {pack_panels("dense_pack_weight", s,
                        [&](std::vector<PrimExpr>, PrimExpr kk, PrimExpr n) { return w(n, kk); })};
}

Type dense_packed_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                       const SourceLoc& loc) {
    const auto& a = static_cast<const DensePackedAttrs&>(attrs);
    const auto& w = graph::expect_tensor(args[1], loc, "the weight of " + op.name);
    if (w.ndim() != 3 || !w.is_static()) {
        user_error(loc) << op.name << ": the weight must be packed [units/VB, K, VB] with a "
                        << "static shape, got " << graph::type_str(args[1]);
    }
    std::vector<int64_t> s = w.static_shape();
    if (a.units <= (s[0] - 1) * s[2] || a.units > s[0] * s[2] ||
        padded_channel_block(a.units) != s[2]) {
        user_error(loc) << op.name << ": units=" << a.units << " does not fit the packed weight "
                        << graph::type_str(args[1]);
    }
    // The type of nn.dense with the unpacked weight.
    auto nk = graph::make_tensor_type({make_int(w.shape[0].dtype(), a.units), w.shape[1]}, w.dtype);
    return dense_result(op, {args[0], nk}, DataType::void_(), loc);
}

std::vector<te::Tensor> dense_packed_compute(const std::vector<te::Tensor>& in, const Attrs&,
                                             const Type& out) {
    return {matmul_core("dense", in[0], in[1], false, true, te_shape(out),
                        out.as<graph::TensorType>()->dtype, in[1])};
}

// ---- bias_add -----------------------------------------------------------------------------

Type bias_add_type(const Op& op, const std::vector<Type>& args, const Attrs& attrs,
                   const SourceLoc& loc) {
    const auto& x = graph::expect_tensor(args[0], loc, "the data of nn.bias_add");
    const auto& b = graph::expect_tensor(args[1], loc, "the bias of nn.bias_add");
    if (x.dtype != b.dtype) {
        user_error(loc) << "nn.bias_add: data and bias types " << x.dtype.str() << " and "
                        << b.dtype.str() << " differ";
    }
    int64_t axis = normalize_input_axis(static_cast<const BiasAddAttrs&>(attrs).axis, x.ndim(), loc,
                                        "nn.bias_add");
    if (b.ndim() != 1) {
        user_error(loc) << "nn.bias_add: the bias must be 1-D, got " << graph::type_str(args[1]);
    }
    auto* c = as_const_int(x.shape[axis]);
    auto* bc = as_const_int(b.shape[0]);
    if (c && bc && *c != *bc) {
        user_error(loc) << "nn.bias_add: the bias has " << *bc << " elements but axis " << axis
                        << " of " << graph::type_str(args[0]) << " has " << *c;
    }
    return args[0];
}

std::vector<te::Tensor> bias_add_compute(const std::vector<te::Tensor>& in, const Attrs& attrs,
                                         const Type& out) {
    int64_t axis = normalize_input_axis(static_cast<const BiasAddAttrs&>(attrs).axis, in[0].ndim(),
                                        SourceLoc{}, "nn.bias_add");
    te::Tensor x = in[0], b = in[1];
    return {te::compute(
        te_shape(out),
        [&](std::span<const PrimExpr> i) {
            return x(std::vector<PrimExpr>(i.begin(), i.end())) + b(i[axis]);
        },
        "bias_add")};
}

// ---- schedules ----------------------------------------------------------------------------

// Cache blocks of a matrix product's register tiles: `panels` column panels per block, looped
// inside each row tile so that the tile's rows of a stay in L1 while they meet every panel of
// the block, and `row_tiles` row tiles per block, looped inside each block of panels so that the
// block's panels stay in L2 while every row tile of the block meets them (and the block's rows
// of a stay in L2 while they meet every block of panels). 1: no blocks.
struct CacheBlocks {
    int64_t panels = 1, row_tiles = 1;
};

std::vector<int64_t> divisors(int64_t n) {
    std::vector<int64_t> d;
    for (int64_t f = 1; f <= n; ++f) {
        if (n % f == 0) d.push_back(f);
    }
    return d;
}

// The largest divisor of `n` that is at most `cap` (at least 1).
int64_t largest_divisor_at_most(int64_t n, int64_t cap) {
    int64_t best = 1;
    for (int64_t d : divisors(n)) {
        if (d <= cap) best = d;
    }
    return best;
}

// `m` rows in tiles of `rows` (by default `default_rows`), `n` columns in panels of `vb`. Knobs
// tile_n_panels (panels per block, a divisor of the panel count) and tile_m_tiles (row tiles per
// block, at most; the largest divisor of the tile count below it). Their choices depend on the
// shape alone, not on the tile_m knob, so that every configuration of the space declares the
// same knobs.
//
// The default is no blocks: the panel loop outermost, every row tile inside it. Blocks (up to
// 384 KiB of panels read from L2 by up to 96 KiB of row tiles) were the default for 768-wide
// reductions until measured again in BERT-base and a chain of its 128 x 768 x 3072 products
// with the weights in memory (Zen 5, 2026-11-27, interleaved): without them level to 4 % faster
// on 1 thread, and 5-10 % faster on 2. Likely why: the parallel loop hands each thread a
// contiguous half of its iterations, which for blocks nested inside row blocks is half of the
// rows with every panel, so each thread streamed all the weights. (Panel blocks outside the row
// blocks, which split the weights too, measured level with the old blocks on 2 threads: the
// order of the row tiles within a panel matters as well.) The knobs stay for the tuner; records
// tuned before keep the blocks they chose. A symbolic row count may be 1 at run time (one
// token), and rows that fit one default tile leave nothing to block: no knobs.
CacheBlocks pick_cache_blocks(const PrimExpr& m, int64_t default_rows, int64_t rows,
                              const PrimExpr& n, int64_t vb, const te::ScheduleContext& ctx) {
    CacheBlocks b;
    const int64_t* m_const = as_const_int(m);
    const int64_t* n_const = as_const_int(n);
    if (!m_const || !n_const) return b;
    const int64_t panels = (*n_const + vb - 1) / vb;
    const int64_t default_tiles = (*m_const + default_rows - 1) / default_rows;
    if (default_tiles <= 1) return b;  // rows of one tile by default: nothing to tune either
    if (panels > 1) b.panels = ctx.knob("tile_n_panels", divisors(panels), 1);
    const int64_t at_most = ctx.knob("tile_m_tiles", {1, 2, 3, 4, 6, 8}, 1);
    b.row_tiles = largest_divisor_at_most((*m_const + rows - 1) / rows, at_most);
    return b;
}

int64_t work_of(const te::Tensor& t, const te::Tensor& red) {
    int64_t w = known_extent_product(t.shape());
    for (const auto& r : red.reduce_axis()) {
        if (auto* v = as_const_int(r->dom.extent)) w *= *v;
    }
    return w;
}

}  // namespace

void schedule_matmul_generic(te::Schedule& s, const te::Tensor& anchor,
                             const std::vector<te::Tensor>& outputs,
                             const te::ScheduleContext& ctx) {
    schedule_reduction_inputs_at_root(s, anchor, "matmul");
}

void schedule_matmul_x86(te::Schedule& s, const te::Tensor& anchor,
                         const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    te::Tensor red = expect_reduction(anchor, "matmul");
    const bool shared_panels = red.op->tag == kSharedPanelsTag;
    schedule_helper_inputs(s, red, ctx);
    int64_t work = work_of(anchor, red);
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    if (out.ndim() == 0) return;  // a dot product: one scalar loop
    bool packed = !red.same_as(anchor);
    te::Tensor acc = local_accumulator(s, red, out);
    if (!packed) {
        // Matrix-vector: one scalar accumulator per output element.
        schedule_scalar_accumulator(s, out, acc, work);
        return;
    }
    te::StageRef so = s[out];
    auto ax = so.op_axis();
    auto aa = s[acc].op_axis();
    auto k = s[acc].op_reduce_axis()[0];
    int lanes = vector_lanes(ctx);
    // The compute chose the block from the column count the same way.
    int64_t vb = padded_channel_block(extent_hint(out.shape().back()));
    size_t nd = ax.size();
    bool has_rows = out.ndim() == red.ndim();  // a 1-D a drops the rows
    size_t batch_dims = nd - (has_rows ? 2 : 1);
    std::vector<Ref<IterVar>> outer(ax.begin(), ax.begin() + static_cast<ptrdiff_t>(batch_dims));
    auto [no, ni] = so.split(ax.back(), vb);
    outer.push_back(no);
    // Rows of the last batch dimension stacked into the register tile (a tile of `stacked`
    // batch entries x all M rows), or 1: the tile's rows are M's alone.
    int64_t stacked = 1;
    if (has_rows) {
        int64_t m = extent_hint(out.shape()[nd - 2]);
        const int64_t last_batch = batch_dims > 0 ? extent_hint(out.shape()[batch_dims - 1]) : 1;
        // A product of few rows per batch entry whose entries share the column panels (a dense
        // layer over [tokens, 1, features], the sequence-first layout of attention's
        // projections) tiles rows of several entries together: M alone (1 there) leaves a tile
        // of one row, each panel vector loaded for one multiply-add (2.3x slower).
        const int64_t capacity = pick_register_rows(m * last_batch, vb, lanes);
        int64_t rows_of_m = 0;     // M's split when no entries are stacked
        int64_t default_rows = 0;  // 0 where entries may stack
        if (shared_panels && last_batch > 1 && 2 * m <= capacity) {
            // Knob: the tile's rows, all M rows of `stacked` entries (fewer than 2 entries'
            // worth: rows of one entry).
            int64_t rows = ctx.split("tile_m", m * last_batch, 32, capacity);
            stacked = std::max<int64_t>(1, rows / m);
            rows_of_m = std::min(rows, m);
        } else {
            default_rows = pick_register_rows(m, vb, lanes);
            rows_of_m = ctx.split("tile_m", m, 32, default_rows);
        }
        if (stacked == 1) {
            auto [mo, mi] = so.split(ax[nd - 2], rows_of_m);
            outer.pop_back();  // the panel loop, placed by the cache blocks
            // Rows of one entry in a tile where entries could stack (a tuned tile_m): no blocks
            // (and no block knobs, which the default configuration, stacked, does not declare).
            const CacheBlocks blocks =
                default_rows == 0 ? CacheBlocks{}
                                  : pick_cache_blocks(out.shape()[nd - 2], default_rows, rows_of_m,
                                                      out.shape().back(), vb, ctx);
            std::vector<Ref<IterVar>> order = outer;
            Ref<IterVar> panel_block = no, row_tile = mo, panel;
            if (blocks.row_tiles > 1) {
                auto [bo, bi] = so.split(mo, blocks.row_tiles);
                order.push_back(bo);
                row_tile = bi;
            }
            if (blocks.panels > 1) std::tie(panel_block, panel) = so.split(no, blocks.panels);
            order.insert(order.end(), {panel_block, row_tile});
            outer = order;
            if (panel.defined()) order.push_back(panel);
            order.insert(order.end(), {mi, ni});
            so.reorder(order);
        }
    }
    if (stacked > 1) {
        // for batch..., column panel, batch entry tile: for entries, m, columns.
        outer.pop_back();  // the panel goes after the other batch dimensions
        Ref<IterVar> last = outer.back();
        outer.pop_back();
        auto [bo, bi] = so.split(last, stacked);
        outer.insert(outer.end(), {no, bo});
        std::vector<Ref<IterVar>> order = outer;
        order.insert(order.end(), {bi, ax[nd - 2], ni});
        so.reorder(order);
    }
    so.vectorize(ni);
    fuse_parallel(so, outer, work);
    // The accumulator lives in the innermost loop outside the tile (fusing may have replaced it).
    auto leaves = so.leaf_axes();
    te::StageRef sa = s[acc];
    const size_t tile_loops = stacked > 1 ? 3 : (has_rows ? 2 : 1);
    sa.compute_at(so, leaves[leaves.size() - 1 - tile_loops]);
    size_t na = aa.size();
    if (stacked > 1) {
        sa.reorder({k, aa[na - 3], aa[na - 2], aa[na - 1]});
        sa.unroll(aa[na - 3]);
    } else {
        sa.reorder({k, aa[na - 2], aa[na - 1]});
    }
    sa.unroll(aa[na - 2]);
    sa.vectorize(aa[na - 1]);
}

Ref<Op> make_dense_op() {
    return make_op({.name = "nn.dense",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<DenseAttrs>,
                    .infer_type = dense_type,
                    .compute = dense_compute,
                    .schedule = schedule_by_target<schedule_matmul_x86, schedule_matmul_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "x [..., K] times the transpose of w [N, K]"});
}

Ref<Op> make_dense_pack_weight_op() {
    return make_op({.name = "nn.dense_pack_weight",
                    .num_inputs = 1,
                    .make_default_attrs = default_attrs<graph::NoAttrs>,
                    .infer_type = dense_pack_weight_type,
                    .compute = dense_pack_weight_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Injective,
                    .description = "[units, K] dense weight to the panels of nn.dense_packed"});
}

Ref<Op> make_dense_packed_op() {
    return make_op({.name = "nn.dense_packed",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<DensePackedAttrs>,
                    .infer_type = dense_packed_type,
                    .compute = dense_packed_compute,
                    .schedule = schedule_by_target<schedule_matmul_x86, schedule_matmul_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "nn.dense with a pre-packed [units/VB, K, VB] weight"});
}

Ref<Op> make_matmul_op() {
    return make_op({.name = "nn.matmul",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<MatmulAttrs>,
                    .infer_type = matmul_type,
                    .compute = matmul_compute,
                    .schedule = schedule_by_target<schedule_matmul_x86, schedule_matmul_generic>,
                    .pattern = OpPattern::OutEWiseFusable,
                    .description = "numpy matmul: broadcast batch dimensions, 1-D operands"});
}

Ref<Op> make_batch_matmul_op() {
    return make_op(
        {.name = "nn.batch_matmul",
         .num_inputs = 2,
         .make_default_attrs = default_attrs<MatmulAttrs>,
         .infer_type = matmul_type,
         .compute = matmul_compute,
         .schedule = schedule_by_target<schedule_matmul_x86, schedule_matmul_generic>,
         .pattern = OpPattern::OutEWiseFusable,
         .description = "batched matmul of operands with at least 2 dimensions, broadcasting"});
}

Ref<Op> make_bias_add_op() {
    return make_op({.name = "nn.bias_add",
                    .num_inputs = 2,
                    .make_default_attrs = default_attrs<BiasAddAttrs>,
                    .infer_type = bias_add_type,
                    .compute = bias_add_compute,
                    .schedule = schedule_injective,
                    .pattern = OpPattern::Broadcast,
                    .description = "adds a 1-D bias along attrs.axis"});
}

}  // namespace anvil::ops
