// Which convolutions graph pass alter_op_layout blocks, and in which channel blocks (the
// blocks tuning records choose per channel count). Blocked are:
//   groups == 1 with a blocked output channel count: data blocked like its producer's output, or
//     NCHW when the input channels have no block (an RGB stem: the weight's input block is then
//     all of them);
//   depthwise (groups == channels == outputs) with a blocked channel count;
// float32 ones, bfloat16 ones summed in float32 (to_mixed_precision's), and quantized ones
// (uint8 data, int8 weight, int32 sums; int8 data too for depthwise): the bfloat16 and
// quantized ones of one group take their weight in words of 2 or 4 input channels (vdpbf16ps,
// vpdpbusd or AMX tile products), blocked like their output (8 or 16), and their epilogues compute
// on the blocks; other grouped convolutions, and any with symbolic shapes or other dtypes, stay
// nn.conv2d (prepack_weights then packs their weights as before).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "graph/expr.h"
#include "graph/passes/passes.h"

namespace anvil::graph::blockable {

// "NCHW<block>c", or "NCHW" for block 0.
std::string data_layout(int64_t block);

// A static 4-D tensor type, else null.
const TensorType* static_nchw(const Type& type);

// Whether the layout rules apply in `f`: not in a function an external compiler or a composite
// computes, nor in a fused kernel.
bool rewritable(const Function& f);

// The groups of `call` when it is an nn.conv2d the rewrite may block (a constant weight, static
// NCHW shapes of a blockable dtype, one group or depthwise), else 0.
int64_t blockable_conv_groups(const Call& call);

// The channel block of every channel count the blockable convolutions of `body` read or
// produce and for which ctx.layout_block chooses (a choice outside the choices it is given is
// ignored); the others take default_layout_block. The choices are layout_block_choices, less 0
// where a convolution touching the count could run as Winograd: that needs blocked data and
// output, and its gain is measured later (an algorithm task), not with the block.
std::map<int64_t, int64_t> chosen_blocks(const Expr& body, const PassContext& ctx);

}  // namespace anvil::graph::blockable
