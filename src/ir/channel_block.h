// Channel blocks: how many channels one vector block holds, in packed weights, blocked
// convolution outputs and the channel-blocked layouts (NCHW<b>c). One rule set in one place,
// shared by the graph's layout pass (graph/passes/alter_op_layout.cpp) and the op computes and
// schedules (ops/), so that the block a layout is built with and the block a kernel expects
// cannot drift apart. Blocks are float32 vector widths: 32 (two AVX-512 vectors), 16, 8.
#pragma once

#include <cstdint>
#include <vector>

namespace anvil {

// The block for `channels` that may be padded up to: the widest of 32, 16, 8, weighing the
// padding waste against narrower vectors (packed weights of conv2d and dense).
int64_t padded_channel_block(int64_t channels);

// The widest block that divides `channels` among 32, 16 and 8 (at most `widest`), or 0: a block
// that must not pad, because a group or a layout boundary lies at every `channels`.
int64_t dividing_channel_block(int64_t channels, int64_t widest = 32);

// The channel block of the blocked layout (NCHW<b>c) for values with `channels` channels when
// tuning records choose nothing: 16 (one AVX-512 vector of float32) when it divides the
// channels, else 8, else 0 (not blocked).
int64_t default_layout_block(int64_t channels);

// What tuning may choose instead (graph/passes/alter_op_layout.cpp): 0 (such values stay NCHW:
// the convolutions producing them stay nn.conv2d, whose own form is a choice of its own, and
// those reading them read NCHW data) and every block among 8, 16, 32 that divides `channels`.
// Empty when the default is 0: nothing to choose.
std::vector<int64_t> layout_block_choices(int64_t channels);

}  // namespace anvil
