// Building blocks of the nn families' schedules (conv, dense, pool, norm, softmax).
//
// An anchor op's group may end in an elementwise tail (conv2d → add → relu). These helpers pick
// the stage whose loops are tiled (the tail output, with the anchor inlined into it), move the
// anchor's reduction into a register-sized local accumulator computed per tile, and size the
// register tile from the target's vector width.
#pragma once

#include <vector>

#include "graph/op.h"
#include "ir/channel_block.h"
#include "ops/injective_schedule.h"
#include "te/config_space.h"
#include "te/schedule.h"

namespace anvil::ops {

// Tags (te::Operation::tag) of the helper stages an op's compute makes, by which its schedule
// finds them: the padded input, packed weights, the stride-dilated input of a transposed
// convolution, the column phases of a stride-2 convolution, and the intermediate stages of a
// row-reduction op (softmax's max, exp and sum; a norm's mean and variance).
inline constexpr const char* kPaddedInputTag = "padded_input";
inline constexpr const char* kPackedWeightTag = "packed_weight";
// The channel words of a word-packed convolution's input (ops/conv_words.cpp): computed at root
// before the reduction, with its padded input inlined into it.
inline constexpr const char* kChannelWordsTag = "channel_words";
inline constexpr const char* kDilatedInputTag = "dilated_input";
inline constexpr const char* kColumnPhasesTag = "column_phases";
inline constexpr const char* kOpStageTag = "op_stage";
// A matrix product's blocked reduction whose batch entries all read the same column panels (b
// has no batch dimensions: a dense layer over [tokens, 1, features]).
inline constexpr const char* kSharedPanelsTag = "shared_panels";
// The stages of a Winograd convolution: its input transform and its batched product.
inline constexpr const char* kWinogradInputTag = "winograd_input";
inline constexpr const char* kWinogradProductTag = "winograd_product";

// The constant value of a dimension; InternalError naming `what` when it is symbolic.
int64_t const_dim(const PrimExpr& d, const char* what);

// The value of a dimension for choosing a tile size: its constant, or for a symbolic one a large
// extent (the tile is chosen for the steady state; a guarded tail handles the remainder).
int64_t extent_hint(const PrimExpr& d);

// The product of the constant extents, a symbolic one counting as 1: the work estimate that
// decides parallelism (a symbolic batch may be 1, so the schedule must not count on it).
int64_t known_extent_product(const std::vector<PrimExpr>& extents);

// float32 lanes of one native vector register.
int vector_lanes(const te::ScheduleContext& ctx);

// The stage to tile for a group anchored at `anchor`: the group's one output when it is a
// same-shaped elementwise tail of the anchor (a non-reduction anchor is then inlined into it),
// otherwise the anchor itself (kept at root; every other output gets the injective schedule).
te::Tensor tile_target(te::Schedule& s, const te::Tensor& anchor,
                       const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);

// Moves reduction `r` into a "local" accumulator stage (cache_write) and inlines the stage that
// copied it back unless that is `out`. The caller attaches the returned stage inside `out`'s
// tile loop, so the accumulator never leaves registers.
te::Tensor local_accumulator(te::Schedule& s, const te::Tensor& r, const te::Tensor& out);

// The reduction an anchor's value comes from: the anchor itself, or the first reduction among
// its direct inputs (conv2d's blocked stage, avg_pool2d's window sum). Undefined when none.
te::Tensor reduction_of(const te::Tensor& anchor);
// The same, with an InternalError ("<op> anchor ... has no reduction") when there is none.
te::Tensor expect_reduction(const te::Tensor& anchor, const char* op);

// The schedule of an op anchored on a reduction (conv2d, dense, pools) for targets without a
// tuned one: the compute stages its reduction reads (padded input, packed weights) at root.
void schedule_reduction_inputs_at_root(te::Schedule& s, const te::Tensor& anchor, const char* op);

// Computes at root, row by row (schedule_rows), every input stage of `t` tagged as a staging
// copy: the padded, dilated or column-phase input and packed weights.
void schedule_helper_inputs(te::Schedule& s, const te::Tensor& t, const te::ScheduleContext& ctx);

// The padded, dilated or column-phase copy of the input that reduction `r` reads, or an undefined
// tensor.
te::Tensor staged_input(const te::Tensor& r);
// Rows of an h x w plane per register tile whose rows are fused into one contiguous index:
// whole rows (the bounds of an attached stage are boxes) whose elements split into at most 8
// vectors of one width (pick_vector) with no tail, which would leave the tile's loops scalar. The
// widest vectors win, then the most rows; 0 when no row count works.
int64_t plane_tile_rows(int64_t h, int64_t w, int lanes);
// Output channels of a register tile whose other side is `vectors` vectors: accumulators fill 24
// of the 32 vector registers (12 of 16 without AVX-512), leaving room for the input vectors and
// the broadcast weight; a count that divides `oc` (no tail) when one is within half of that.
int64_t pick_channel_tile(int64_t oc, int64_t vectors, int lanes);
// Rows of a register tile over an axis of `extent`: `extent` itself when it fits in `max_rows`,
// else a divisor in [max_rows/2, max_rows] (no tail), else max_rows.
int64_t pick_rows(int64_t extent, int64_t max_rows);

// A vector width for a row of `extent`: the native width when it divides the row or exceeds it
// (then the row itself), else a divisor in [lanes/2, lanes) so rows need no tail.
int64_t pick_vector(int64_t extent, int lanes);

// Rows of a register tile whose rows are `row_width` elements wide: as many as the accumulator
// registers hold (pick_rows over `extent`).
int64_t pick_register_rows(int64_t extent, int64_t row_width, int lanes);

// Fuses `axes` (adjacent leaf loops, outer to inner) and marks the result parallel when the
// iterations are worth a launch (`work` elements in all). Returns the fused loop (undefined when
// `axes` is empty).
Ref<IterVar> fuse_parallel(te::StageRef st, const std::vector<Ref<IterVar>>& axes, int64_t work,
                           const LoopChoices& choices = {});

// One output element per tile: all of `out`'s axes fused (parallel by `work`), the accumulator
// `acc` (local_accumulator) a scalar computed inside that loop. Global pooling, matrix-vector.
void schedule_scalar_accumulator(te::Schedule& s, const te::Tensor& out, const te::Tensor& acc,
                                 int64_t work, const LoopChoices& choices = {});

// An NCHW (or NCDHW) output tiled along its rows: the width split into vectors, n, c, the depth
// and the row fused and parallel (by `work`), the accumulator `acc` computed per vector with all
// its reduction loops outside the lanes. Windowed reductions over unblocked channels (pools,
// depthwise conv2d, conv3d). With `staged` (the padded input the reduction reads) only n and c
// are fused and parallel, and `staged` is computed per (n, c) plane inside that loop.
void schedule_nchw_row_vectors(te::Schedule& s, const te::Tensor& out, const te::Tensor& acc,
                               int64_t work, const te::ScheduleContext& ctx,
                               const te::Tensor& staged = te::Tensor(),
                               const LoopChoices& choices = {});

// A channel-blocked (NCHW<b>c) output of a reduction over a window of one channel (a pool, a
// depthwise nn.conv2d_nchwc): vectors along the block, tiles of output pixels of a row whose
// accumulators stay in registers with the window loops outside the pixels. With `staged` (the
// padded input) parallel over (n, block) planes, the padded input made inside that loop for the
// whole plane or per block of output rows (knob tile_oh), or, where `padding_may_inline` (zero
// padding made by pad_input, whose test partition_loops can split off), not made at all: the
// window reads the input and tests the padding (tile_oh 0, the default there). Without `staged`
// parallel over (n, block, output row). The tile's pixel count is the knob tile_ow.
void schedule_blocked_windows(te::Schedule& s, const te::Tensor& out, const te::Tensor& acc,
                              int64_t work, const te::ScheduleContext& ctx,
                              const te::Tensor& staged, bool padding_may_inline = false);

// Loops `n_outer` leading axes of `t` (fused, parallel) around the remaining axes fused and
// split into vectors: for row-wise ops whose per-row values (max, mean) are read once per row.
void schedule_rows(te::Schedule& s, const te::Tensor& t, size_t n_outer,
                   const te::ScheduleContext& ctx, const LoopChoices& choices = {});

// A reduction stage at root whose data axes are `n_outer` outer axes, then inner axes that are
// contiguous in memory: outer axes fused and parallel, reduction loops next, inner axes fused and
// vectorized innermost; when the inner extent is 1, the reduction itself is vectorized where it
// can be (rfactor_lanes).
void schedule_reduction_rows(te::Schedule& s, const te::Tensor& t, size_t n_outer,
                             const te::ScheduleContext& ctx, const LoopChoices& choices = {});

// A reduction of one axis, contiguous in memory (the last index of every load that uses it) and
// at least two vectors long (a softmax row's max and sum, a norm's mean over the last axis):
// split by the vector width and rfactored, so that a vector of partial results accumulates the
// row and `t` then adds (maxes) its lanes. Before it, one scalar accumulator per row carried a
// dependency from each element to the next. Returns the partial results' tensor, vectorized and
// with its reduction outside its lanes, to be computed inside t's row loop
// (attach_partial_results); an undefined tensor when the reduction does not qualify. Apply before
// anything else on t's stage.
te::Tensor rfactor_lanes(te::Schedule& s, const te::Tensor& t, const te::ScheduleContext& ctx);
// Computes rfactor_lanes' partial results in t's innermost data loop (per row).
void attach_partial_results(te::Schedule& s, const te::Tensor& t, const te::Tensor& partial);

// The schedule of ops built from keep-dims reductions over some axes (max, sum, mean, variance
// with those axes of extent 1) and full-shape elementwise stages: softmax, layer_norm,
// instance_norm. The op's own stages are found by tag (kOpStageTag). Reductions go to root
// as reduction rows, elementwise stages loop over rows with the contiguous axes vectorized; the
// anchor (or its elementwise tail) likewise. Knobs: LoopChoices' vector_multiple and parallel.
void schedule_row_reduction_op(te::Schedule& s, const te::Tensor& anchor,
                               const std::vector<te::Tensor>& outputs,
                               const te::ScheduleContext& ctx);

// The same ops on targets without a tuned schedule: their stages at root.
void schedule_row_reduction_op_generic(te::Schedule& s, const te::Tensor& anchor,
                                       const std::vector<te::Tensor>& outputs,
                                       const te::ScheduleContext& ctx);

// An op's schedule rule from its two schedules: `Generic` on GPUs, the tuned `X86` otherwise.
template <graph::ScheduleRule X86, graph::ScheduleRule Generic>
void schedule_by_target(te::Schedule& s, const te::Tensor& anchor,
                        const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx) {
    if (ctx.target.is_gpu) {
        Generic(s, anchor, outputs, ctx);
    } else {
        X86(s, anchor, outputs, ctx);
    }
}

}  // namespace anvil::ops
