// The channel block of the blocked layout as a tuning choice: which block alter_op_layout gives
// the values with C channels (graph pass option PassContext::layout_block).
//
// The block is a property of a channel count, not of one kernel: every convolution reading or
// producing C-channel values, and the elementwise ops and pools between them, compute in it, so
// that a residual add's operands agree without transforms. The choice changes the graph (the
// weights' packing, which kernels exist), so it cannot be a knob of one schedule. It is a task
// of its own, one per channel count of a model, keyed by what it is about:
//
//   anvil-workload v1 | layout block | channels 64 | <n> x <conv> ; <n> x <conv> ; ...
//
// each <conv> the attributes, data type and weight type of one distinct convolution touching C
// (sorted) and <n> how many of them the model has, so that the same layers in another model
// share the record. One knob, "block": the choices alter_op_layout offers (layout_block_choices(C),
// less 0 where a convolution touching C could run as Winograd; 0: values with C channels stay NCHW,
// the convolutions producing them stay nn.conv2d — whose own form is then a choice,
// driver/conv_algorithm.h — and those reading them read NCHW data). Its candidates are the model
// compiled with each block for C (driver/tune_tasks.h: extract_layout_tasks); anvil compile applies
// the best record of each channel count's key.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/expr.h"
#include "tune/record.h"

namespace anvil::driver {

inline constexpr const char* kLayoutBlockKnob = "block";

std::string layout_block_key(int64_t channels, const std::vector<const graph::Call*>& convs);

// The PassContext::layout_block that applies `records` on `target` (a Target::str()): each
// channel count's best record, or -1 (the default) without one. Null when `records` is null.
std::function<int64_t(int64_t, const std::vector<const graph::Call*>&, const std::vector<int64_t>&)>
layout_block_from_records(std::shared_ptr<const tune::BestRecords> records,
                          const std::string& target);

}  // namespace anvil::driver
