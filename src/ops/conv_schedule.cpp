// The x86 and generic schedules of the convolutions (ops/conv.cpp holds their attributes, type
// rules and computes). Which compute form a convolution has decides its schedule:
//   nn.conv2d, blocked   [N, O/VB, OH, OW, VB] reduction: register tile of output pixels x VB
//                        channels (schedule_conv2d_x86);
//   pointwise over a plane (one reduction axis): tiles of whole rows x output channels
//                        (schedule_conv2d_pointwise_x86);
//   direct (depthwise, short reductions): row vectors, per channel plane or in tiles of output
//                        channels (schedule_conv2d_direct_x86);
//   nn.conv2d_nchwc      register tile of output pixels x channel blocks, stored as it is
//                        (schedule_conv2d_nchwc_x86; float32 FMAs, or one vpdpbusd / vdpbf16ps
//                        per word of uint8 / bfloat16 channels); on AMX targets the words form
//                        as tile products (schedule_conv2d_nchwc_amx); depthwise:
//                        schedule_blocked_windows.
#include <algorithm>

#include "ops/conv.h"
#include "ops/tile_schedule.h"
#include "support/error.h"

namespace anvil::ops {

namespace {

// Bounds of the tile knobs' choices: beyond them the accumulators cannot stay in registers.
constexpr int64_t kMaxChannelTile = 32;
constexpr int64_t kMaxTileVectors = 8;
constexpr int64_t kMaxTileRows = 32;

// Accumulators of a word-packed register tile: AVX-512's 32 registers less the operands.
constexpr int64_t kMaxWordTile = 16;

// Whether `red` is conv2d_words's reduction (it reads channel words).
bool is_word_form(const te::Tensor& red) {
    auto* c = red.op.as<te::ComputeOp>();
    if (!c) return false;
    for (const auto& in : c->inputs) {
        if (in->tag == kChannelWordsTag) return true;
    }
    return false;
}

// The loops fused into the parallel loop, outermost first: all of `axes` by default (knob
// parallel_depth = their count), or fewer, leaving the inner ones serial inside each task.
std::vector<Ref<IterVar>> parallel_axes(const te::ScheduleContext& ctx,
                                        std::vector<Ref<IterVar>> axes) {
    std::vector<int64_t> depths;
    for (int64_t d = 1; d <= static_cast<int64_t>(axes.size()); ++d) depths.push_back(d);
    int64_t depth = ctx.knob("parallel_depth", depths, static_cast<int64_t>(axes.size()));
    axes.resize(static_cast<size_t>(depth));
    return axes;
}

// Multiply-adds of a direct convolution: the work estimate that decides parallelism.
int64_t direct_work(te::Schedule& s, const te::Tensor& out, const te::Tensor& acc) {
    int64_t work = known_extent_product(out.shape());
    for (const auto& r : s[acc].op_reduce_axis()) work *= const_dim(r->dom.extent, "conv2d taps");
    return work;
}

// The direct reduction (depthwise, and groups too narrow for channel blocks): a vector along the
// output row per tap, channel plane by channel plane, each plane's padded (or dilated) input
// made inside its iteration. A padded copy of the whole input made first would leave the cache
// before the reduction read it back.
void schedule_conv2d_direct_x86(te::Schedule& s, const te::Tensor& anchor,
                                const std::vector<te::Tensor>& outputs, const te::Tensor& red,
                                const te::ScheduleContext& ctx) {
    // A padding stage under the column phases (column_phases) is computed inside them.
    if (te::Tensor phases = staged_input(red); phases.op.defined()) {
        if (te::Tensor pad = staged_input(phases); pad.op.defined()) s[pad].compute_inline();
    }
    // Output channels per group: 1 for depthwise, where an output plane reads one input plane.
    // (The data is the reduction's first input: the body reads it before the weight.) When a
    // channel count is symbolic, the form that makes the padded input once, at root.
    const auto& data_shape = red.op.as<te::ComputeOp>()->inputs[0]->buffer->shape;
    const int64_t* icg = as_const_int(red.reduce_axis()[0]->dom.extent);
    const int64_t* channels = as_const_int(data_shape[1]);
    const int64_t* oc_total = as_const_int(red.shape()[1]);
    bool depthwise = icg && channels && oc_total && *oc_total == *channels / *icg;
    if (depthwise) {
        te::Tensor staged = staged_input(red);
        te::Tensor out = tile_target(s, anchor, outputs, ctx);
        te::Tensor acc = local_accumulator(s, red, out);
        schedule_nchw_row_vectors(s, out, acc, direct_work(s, out, acc), ctx, staged);
        return;
    }
    // Several output channels read the same input planes: the padded input once, at root, and
    // a register tile of output channels x row vectors sharing each input vector.
    schedule_helper_inputs(s, red, ctx);
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    te::Tensor acc = local_accumulator(s, red, out);
    const int lanes = vector_lanes(ctx);
    const int64_t oc = const_dim(out.shape()[1], "conv2d output channels");
    const int64_t ow = const_dim(out.shape()[3], "conv2d output width");
    // Vectors of a width that divides the row where one does (a tail would leave the tile's
    // loops scalar); the whole row when it is at most 8 of them, else a divisor of it or 4.
    const int64_t width = pick_vector(ow, lanes);
    const int64_t row_vectors = (ow + width - 1) / width;
    int64_t vectors = row_vectors <= 8 ? row_vectors : 4;
    for (int64_t v = 6; row_vectors > 8 && v >= 3; --v) {
        if (row_vectors % v == 0) {
            vectors = v;
            break;
        }
    }
    // Knobs: vectors of the row per tile, output channels per tile (defaults: the above).
    const int64_t oc_tile =
        ctx.split("tile_oc", oc, kMaxChannelTile, pick_channel_tile(oc, vectors, lanes));
    vectors = ctx.split("tile_vectors", row_vectors, kMaxTileVectors, vectors);
    te::StageRef so = s[out];
    auto ax = so.op_axis();  // n, c, oh, ow
    auto [co, ci] = so.split(ax[1], oc_tile);
    auto [wo, wr] = so.split(ax[3], vectors * width);
    auto [wv, wi] = so.split(wr, width);
    so.reorder({ax[0], co, ax[2], wo, ci, wv, wi});
    so.vectorize(wi);
    fuse_parallel(so, parallel_axes(ctx, {ax[0], co, ax[2]}), direct_work(s, out, acc));
    te::StageRef sa = s[acc];
    sa.compute_at(so, wo);
    auto aa = sa.op_axis();  // n, c, oh, ow of the tile
    auto ar = sa.op_reduce_axis();
    auto [tv, tl] = sa.split(aa[3], width);
    sa.reorder({ar[0], ar[1], ar[2], aa[1], tv, tl});
    sa.unroll(aa[1]);
    sa.unroll(tv);
    sa.vectorize(tl);
}

// The pointwise form (is_pointwise_over_plane): a tile of `rows` whole rows of the plane (fused
// into one contiguous index, split into vectors) by `oc_tile` output channels, accumulated in
// registers over the input channels: per input channel, one vector load of the input per vector
// of the tile and one broadcast weight per output channel. Tiles loop plane-outer, so a tile's
// input rows stay in cache across the output channels.
void schedule_conv2d_pointwise_x86(te::Schedule& s, const te::Tensor& anchor,
                                   const std::vector<te::Tensor>& outputs, const te::Tensor& red,
                                   const te::ScheduleContext& ctx) {
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    te::Tensor acc = local_accumulator(s, red, out);
    const int lanes = vector_lanes(ctx);
    const int64_t oc = const_dim(out.shape()[1], "conv2d output channels");
    const int64_t h = const_dim(out.shape()[2], "conv2d output height");
    const int64_t w = const_dim(out.shape()[3], "conv2d output width");
    // Knobs: rows of the plane per tile, output channels per tile (defaults: whole rows in at
    // most 8 vectors, and the channels whose accumulators fill the registers).
    const int64_t default_rows = std::max<int64_t>(1, plane_tile_rows(h, w, lanes));
    const int64_t default_width = pick_vector(default_rows * w, lanes);
    const int64_t oc_tile = ctx.split(
        "tile_oc", oc, kMaxChannelTile,
        pick_channel_tile(oc, (default_rows * w + default_width - 1) / default_width, lanes));
    const int64_t rows =
        ctx.split("tile_rows", h, std::max<int64_t>(1, 16 * lanes / w), default_rows);
    const int64_t width = pick_vector(rows * w, lanes);
    te::StageRef so = s[out];
    auto ax = so.op_axis();  // n, c, h, w
    Ref<IterVar> plane = so.fuse({ax[2], ax[3]});
    auto [po, pi] = so.split(plane, rows * w);
    auto [co, ci] = so.split(ax[1], oc_tile);
    so.reorder({ax[0], po, co, ci, pi});
    auto [pv, pl] = so.split(pi, width);
    so.vectorize(pl);
    int64_t work = known_extent_product(out.shape()) *
                   const_dim(s[acc].op_reduce_axis()[0]->dom.extent, "conv2d channels");
    Ref<IterVar> tiles = fuse_parallel(so, {ax[0], po, co}, work);

    te::StageRef sa = s[acc];
    sa.compute_at(so, tiles);
    auto aa = sa.op_axis();  // n, c, h, w of the tile
    Ref<IterVar> tile = sa.fuse({aa[2], aa[3]});
    auto [tv, tl] = sa.split(tile, width);
    sa.reorder({sa.op_reduce_axis()[0], aa[1], tv, tl});
    sa.unroll(aa[1]);
    sa.unroll(tv);
    sa.vectorize(tl);
}

// The output pixels per AMX tile: the largest divisor of the row `ow` that a tile holds
// (16 rows), so that every tile is whole; 0 where that leaves fewer than 4 (a tile product of
// a few rows costs nearly as much as one of 16).
int64_t amx_rows(int64_t ow) {
    for (int64_t r = std::min<int64_t>(ow, 16); r >= 4; --r) {
        if (ow % r == 0) return r;
    }
    return 0;
}

// Words of channels per AMX tile product of nn.conv2d_nchwc's words form `red` (reduction axes
// `ar`: rc, ry, rx) on this target: the words of one data block (8 at least) up to a 64-byte
// tile row, where the target has the tile product for its type, the data is blocked (a block's
// words adjacent in memory: a tile row is one pixel's), the output block fits a tile row and
// the row has amx_rows; else 0 (the vdpbf16ps / vpdpbusd register tile).
int64_t amx_words(const te::ScheduleContext& ctx, const te::Tensor& red,
                  const std::vector<Ref<IterVar>>& ar) {
    if (ar.size() != 3 || is_word_form(red)) return 0;
    const auto& data = red.op.as<te::ComputeOp>()->inputs[0]->buffer;
    if (data->shape.size() != 5) return 0;
    const bool bf16 = data->dtype.is_bfloat();
    if (!(bf16 ? ctx.target.amx_bf16 : ctx.target.amx_int8)) return 0;
    const int64_t* block = as_const_int(data->shape[4]);
    const int64_t* ob = as_const_int(red.shape()[4]);
    const int64_t* ow = as_const_int(red.shape()[3]);
    if (!block || !ob || !ow || *ob > 16 || amx_rows(*ow) == 0) return 0;
    // Half a tile row at least: a product of 16-byte rows (uint8 in 16-channel blocks) does
    // no more than vpdpbusd does in the same time, where 32-byte rows of bfloat16 still beat
    // vdpbf16ps (measured on a Xeon with AMX, bench/README.md: MobileNetV2's int8 1x1
    // convolutions up to 2x slower on 16-byte rows; a bfloat16 one 2x faster on 32-byte rows).
    const int64_t block_words = *block / (bf16 ? 2 : 4);
    if (block_words < 8) return 0;
    int64_t k = std::min<int64_t>(block_words, 16);
    while (block_words % k != 0) --k;  // whole products per block
    return k;
}

// The words form as AMX tile products (tir's tensorize_amx makes them of this loop nest): per
// task, `rows` output pixels (amx_rows) by the output block, accumulated in a tile register
// over `k_words` words of channels per product; the local accumulator is the tile's store.
// (Without tensorize_amx, in checked builds, the nest runs as the scalar loops it is.)
void schedule_conv2d_nchwc_amx(te::Schedule& s, const te::Tensor& out, const te::Tensor& acc,
                               int64_t work, const te::ScheduleContext& ctx, int64_t k_words) {
    const int64_t rows = amx_rows(const_dim(out.shape()[3], "conv2d_nchwc output width"));
    te::StageRef so = s[out];
    auto ax = so.op_axis();  // n, channel block, oh, ow, channel
    auto [wo, wi] = so.split(ax[3], rows);
    so.reorder({ax[0], ax[1], ax[2], wo, wi, ax[4]});
    so.vectorize(ax[4]);
    fuse_parallel(so, parallel_axes(ctx, {ax[0], ax[1], ax[2]}), work);
    te::StageRef sa = s[acc];
    sa.compute_at(so, wo);
    auto aa = sa.op_axis();
    auto ar = sa.op_reduce_axis();  // rc, ry, rx
    auto [rco, rci] = sa.split(ar[0], k_words);
    // The tile's rows (M) and columns (N) outside, its words (K) innermost.
    sa.reorder({aa[3], aa[4], rco, ar[1], ar[2], rci});
}

}  // namespace

void schedule_conv2d_generic(te::Schedule& s, const te::Tensor& anchor,
                             const std::vector<te::Tensor>& outputs,
                             const te::ScheduleContext& ctx) {
    schedule_reduction_inputs_at_root(s, anchor, "conv2d");
}

void schedule_conv2d_x86(te::Schedule& s, const te::Tensor& anchor,
                         const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    te::Tensor red = expect_reduction(anchor, "conv2d");
    if (red.ndim() == 4 && red.reduce_axis().size() == 1) {
        schedule_conv2d_pointwise_x86(s, anchor, outputs, red, ctx);
        return;
    }
    if (red.ndim() != 5) {
        schedule_conv2d_direct_x86(s, anchor, outputs, red, ctx);
        return;
    }
    schedule_helper_inputs(s, red, ctx);
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    te::Tensor acc = local_accumulator(s, red, out);
    int lanes = vector_lanes(ctx);
    te::StageRef so = s[out];
    auto ax = so.op_axis();  // n, c, oh, ow
    auto aa = s[acc].op_axis();
    auto ar = s[acc].op_reduce_axis();  // rc, ry, rx
    int64_t ow = const_dim(out.shape()[3], "conv2d output width");
    int64_t work = known_extent_product(out.shape()) *
                   const_dim(ar[0]->dom.extent, "conv2d channels") *
                   const_dim(ar[1]->dom.extent, "kernel") * const_dim(ar[2]->dom.extent, "kernel");
    // Register tile: `rows` output pixels x `tile_blocks` blocks of vb channels, the reduction
    // outermost inside it. The word-packed form (conv2d_words) takes two blocks where a row is
    // short (7 pixels), so that enough independent vpdpbusd / vdpbf16ps chains hide their
    // latency.
    int64_t vb = const_dim(red.shape()[4], "conv2d channel block");
    int64_t rows = ctx.split("tile_ow", ow, kMaxTileRows, pick_register_rows(ow, vb, lanes));
    int64_t tile_blocks = 1;
    if (is_word_form(red)) {
        int64_t blocks = const_dim(red.shape()[1], "conv2d channel blocks");
        while (blocks % (tile_blocks * 2) == 0 && rows * tile_blocks * 2 <= kMaxWordTile) {
            tile_blocks *= 2;
        }
    }
    auto [co, ci] = so.split(ax[1], vb * tile_blocks);
    auto [wo, wi] = so.split(ax[3], rows);
    so.reorder({ax[0], co, ax[2], wo, ci, wi});
    so.vectorize(wi);
    fuse_parallel(so, parallel_axes(ctx, {ax[0], co, ax[2]}), work);
    s[acc].compute_at(so, wo);
    s[acc].reorder({ar[0], ar[1], ar[2], aa[1], aa[3], aa[4]});
    s[acc].unroll(aa[1]);
    s[acc].unroll(aa[3]);
    s[acc].vectorize(aa[4]);
}

void schedule_conv2d_nchwc_x86(te::Schedule& s, const te::Tensor& anchor,
                               const std::vector<te::Tensor>& outputs,
                               const te::ScheduleContext& ctx) {
    te::Tensor red = expect_reduction(anchor, "conv2d_nchwc");
    const bool depthwise = s[red].op_reduce_axis().size() == 2;  // (ry, rx)
    te::Tensor staged = depthwise ? staged_input(red) : te::Tensor();
    if (!depthwise) schedule_helper_inputs(s, red, ctx);
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    te::Tensor acc = local_accumulator(s, red, out);
    // (icb, ry, rx, ici); (rc, ry, rx) for words of uint8 or bfloat16 channels; (ry, rx) for
    // depthwise
    auto ar = s[acc].op_reduce_axis();
    int64_t work = known_extent_product(out.shape());
    for (const auto& r : ar) work *= const_dim(r->dom.extent, "conv2d_nchwc reduction");
    if (depthwise) {
        schedule_blocked_windows(s, out, acc, work, ctx, staged, true);
        return;
    }
    if (const int64_t k_words = amx_words(ctx, red, ar); k_words > 0) {
        schedule_conv2d_nchwc_amx(s, out, acc, work, ctx, k_words);
        return;
    }
    const int lanes = vector_lanes(ctx);
    const int64_t blocks = const_dim(out.shape()[1], "conv2d_nchwc channel blocks");
    const int64_t ow = const_dim(out.shape()[3], "conv2d_nchwc output width");
    const int64_t ob = const_dim(out.shape()[4], "conv2d_nchwc channel block");
    // Register tile: `rows` output pixels x `tile_blocks` channel blocks. A short row (7 pixels)
    // takes two blocks so that enough independent FMA chains hide the latency. Words (of uint8
    // or bfloat16 channels) take two blocks wherever the channels have them: each broadcast word
    // then feeds two vpdpbusd / vdpbf16ps (measured on the int8 models: 8 % faster on ResNet-18,
    // 10 % on MobileNetV2 with 2 threads).
    const int64_t per_pixel = (ob + lanes - 1) / lanes;
    const int64_t accumulators = lanes >= 16 ? 16 : 12;
    const bool words = ar.size() == 3;
    const int64_t default_rows =
        words && blocks % 2 == 0
            ? pick_rows(ow, std::max<int64_t>(1, accumulators / (2 * per_pixel)))
            : pick_register_rows(ow, ob, lanes);
    int64_t tile_blocks = 1;
    while (blocks % (tile_blocks * 2) == 0 &&
           default_rows * per_pixel * tile_blocks * 2 <= accumulators) {
        tile_blocks *= 2;
    }
    // Knobs: pixels and channel blocks per register tile, the order of the reduction loops.
    const int64_t rows = ctx.split("tile_ow", ow, kMaxTileRows, default_rows);
    tile_blocks = ctx.split("tile_oc_blocks", blocks, 4, tile_blocks);
    const bool taps_outer = ctx.flag("taps_outside_channel_blocks", false);
    te::StageRef so = s[out];
    auto ax = so.op_axis();  // n, channel block, oh, ow, channel
    auto [co, ci] = so.split(ax[1], tile_blocks);
    auto [wo, wi] = so.split(ax[3], rows);
    so.reorder({ax[0], co, ax[2], wo, ci, wi, ax[4]});
    so.vectorize(ax[4]);
    fuse_parallel(so, parallel_axes(ctx, {ax[0], co, ax[2]}), work);
    te::StageRef sa = s[acc];
    sa.compute_at(so, wo);
    auto aa = sa.op_axis();
    std::vector<Ref<IterVar>> order = ar;
    if (taps_outer) {
        order = {ar[1], ar[2], ar[0]};
        if (ar.size() == 4) order.push_back(ar[3]);
    }
    order.insert(order.end(), {aa[1], aa[3], aa[4]});
    sa.reorder(order);
    sa.unroll(aa[1]);
    sa.unroll(aa[3]);
    sa.vectorize(aa[4]);
}

void schedule_conv3d_generic(te::Schedule& s, const te::Tensor& anchor,
                             const std::vector<te::Tensor>& outputs,
                             const te::ScheduleContext& ctx) {
    schedule_reduction_inputs_at_root(s, anchor, "conv3d");
}

void schedule_conv3d_x86(te::Schedule& s, const te::Tensor& anchor,
                         const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    te::Tensor red = expect_reduction(anchor, "conv3d");
    schedule_helper_inputs(s, red, ctx);
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    te::Tensor acc = local_accumulator(s, red, out);
    int64_t work = known_extent_product(out.shape());
    for (const auto& r : s[acc].op_reduce_axis()) work *= const_dim(r->dom.extent, "conv3d taps");
    schedule_nchw_row_vectors(s, out, acc, work, ctx);
}

}  // namespace anvil::ops
