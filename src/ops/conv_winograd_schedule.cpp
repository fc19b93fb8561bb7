// The schedules of the Winograd convolution (ops/conv_winograd.cpp holds the attributes, type
// rules and computes). Its stages are found by tag: the padded input (kPaddedInputTag), the
// input transform V (kWinogradInputTag), the batched product M (kWinogradProductTag); the output
// transform is the op's anchor. The transforms' select chains on their alpha x alpha (or m x m)
// indices fold only where those loops are unrolled, so every x86 loop over them is.
#include <algorithm>

#include "ops/conv.h"
#include "ops/tile_schedule.h"
#include "support/error.h"

namespace anvil::ops {

namespace {

// Bounds of the tile knobs' choices: beyond them the accumulators cannot stay in registers.
constexpr int64_t kMaxTileTiles = 16;
constexpr int64_t kMaxTileBlocks = 8;

te::Tensor tagged_input(const te::Tensor& t, const char* tag) {
    auto* c = t.op.as<te::ComputeOp>();
    if (c) {
        for (const auto& in : c->inputs) {
            if (in->kind == te::OpKind::Compute && in->tag == tag) return te::Tensor(in);
        }
    }
    ANVIL_CHECK(false) << "conv2d_winograd_nchwc: stage " << t.name() << " reads no stage tagged "
                       << tag;
    return {};
}

struct WinogradStages {
    te::Tensor product, input;  // M and V
    te::Tensor padded;          // undefined when the data needs no padding
};

WinogradStages winograd_stages(const te::Tensor& anchor) {
    WinogradStages st;
    st.product = tagged_input(anchor, kWinogradProductTag);
    st.input = tagged_input(st.product, kWinogradInputTag);
    st.padded = staged_input(st.input);
    return st;
}

// The default register tile of the product: up to 4 channel blocks (dividing their count) by
// the tiles whose accumulators fill 24 of the 32 vector registers (12 of 16 without AVX-512).
std::pair<int64_t, int64_t> default_product_tile(int64_t blocks, int64_t tiles, int64_t ob,
                                                 int lanes) {
    int64_t tile_kb = 1;
    for (int64_t b = std::min<int64_t>(blocks, 4); b >= 1; --b) {
        if (blocks % b == 0) {
            tile_kb = b;
            break;
        }
    }
    const int64_t per_tile = tile_kb * ((ob + lanes - 1) / lanes);
    const int64_t registers = lanes >= 16 ? 24 : 12;
    const int64_t tile_p = pick_rows(tiles, std::max<int64_t>(1, registers / per_tile));
    return {tile_kb, tile_p};
}

}  // namespace

void schedule_winograd_weight_x86(te::Schedule& s, const te::Tensor& anchor,
                                  const std::vector<te::Tensor>& outputs,
                                  const te::ScheduleContext& ctx) {
    te::StageRef su = s[anchor];
    auto ax = su.op_axis();  // xi, nu, kb, c, ki
    su.reorder({ax[2], ax[3], ax[4], ax[0], ax[1]});
    su.unroll(ax[0]);
    su.unroll(ax[1]);
    fuse_parallel(su, {ax[2], ax[3]}, known_extent_product(anchor.shape()) * 9);
}

void schedule_winograd_weight_generic(te::Schedule& s, const te::Tensor& anchor,
                                      const std::vector<te::Tensor>& outputs,
                                      const te::ScheduleContext& ctx) {
    s[anchor].compute_root();
}

void schedule_conv2d_winograd_generic(te::Schedule& s, const te::Tensor& anchor,
                                      const std::vector<te::Tensor>& outputs,
                                      const te::ScheduleContext& ctx) {
    WinogradStages st = winograd_stages(anchor);
    if (st.padded.op.defined()) s[st.padded].compute_root();
    s[st.input].compute_root();
    s[st.product].compute_root();
}

void schedule_conv2d_winograd_x86(te::Schedule& s, const te::Tensor& anchor,
                                  const std::vector<te::Tensor>& outputs,
                                  const te::ScheduleContext& ctx) {
    WinogradStages st = winograd_stages(anchor);
    const int lanes = vector_lanes(ctx);
    const int64_t alpha = const_dim(st.product.shape()[0], "winograd alpha");
    const int64_t m = alpha - 2;
    const int64_t blocks = const_dim(st.product.shape()[2], "winograd output blocks");
    const int64_t tiles = extent_hint(st.product.shape()[3]);
    const int64_t ob = const_dim(st.product.shape()[4], "winograd output block");
    const int64_t channels = const_dim(st.input.shape()[3], "winograd input channels");

    // The padded input at root, row by row.
    schedule_helper_inputs(s, st.input, ctx);

    // The input transform at root: per (tile, vector of channels) the alpha x alpha outputs,
    // unrolled, vectors along the channels (contiguous within an input block).
    const te::Tensor& data =
        st.padded.op.defined() ? st.padded : te::Tensor(st.input.op.as<te::ComputeOp>()->inputs[0]);
    const int64_t ib = const_dim(data.shape()[4], "winograd input block");
    te::StageRef sv = s[st.input];
    sv.compute_root();
    auto va = sv.op_axis();  // xi, nu, p, c
    auto [vco, vci] = sv.split(va[3], pick_vector(ib, lanes));
    sv.reorder({va[2], vco, va[0], va[1], vci});
    sv.unroll(va[0]);
    sv.unroll(va[1]);
    sv.vectorize(vci);
    fuse_parallel(sv, {va[2], vco}, alpha * alpha * tiles * channels);

    // The batched product: a register tile of tile_p tiles x tile_kb channel blocks of one
    // (xi, nu), vectors along the block, the channel reduction outermost inside it.
    auto [default_kb, default_p] = default_product_tile(blocks, tiles, ob, lanes);
    const int64_t tile_kb = ctx.split("tile_kb", blocks, kMaxTileBlocks, default_kb);
    const int64_t tile_p = ctx.split("tile_p", tiles, kMaxTileTiles, default_p);
    te::Tensor acc = s.cache_write(st.product, "local");
    te::StageRef sm = s[st.product];
    auto ma = sm.op_axis();  // xi, nu, kb, p, ki
    auto [kbo, kbi] = sm.split(ma[2], tile_kb);
    auto [po, pi] = sm.split(ma[3], tile_p);
    sm.reorder({ma[0], ma[1], kbo, po, kbi, pi, ma[4]});
    sm.vectorize(ma[4]);
    fuse_parallel(sm, {ma[0], ma[1], kbo}, alpha * alpha * blocks * tiles * ob * channels);
    te::StageRef sa = s[acc];
    sa.compute_at(sm, po);
    auto aa = sa.op_axis();
    auto ar = sa.op_reduce_axis();
    sa.reorder({ar[0], aa[2], aa[3], aa[4]});
    sa.unroll(aa[2]);
    sa.unroll(aa[3]);
    sa.vectorize(aa[4]);

    // The output transform, with the fused epilogue: per tile its m x m pixels unrolled,
    // vectors along the block, parallel over (n, block, tile row).
    te::Tensor out = tile_target(s, anchor, outputs, ctx);
    te::StageRef so = s[out];
    auto ax = so.op_axis();  // n, kb, h, w, ki
    auto [ho, hr] = so.split(ax[2], m);
    auto [wo, wr] = so.split(ax[3], m);
    so.reorder({ax[0], ax[1], ho, wo, hr, wr, ax[4]});
    so.unroll(hr);
    so.unroll(wr);
    so.vectorize(ax[4]);
    fuse_parallel(so, {ax[0], ax[1], ho}, known_extent_product(out.shape()) * alpha * alpha);
}

}  // namespace anvil::ops
