// The algorithm of a convolution as a tuning choice: the direct blocked form or Winograd
// F(2, 3) / F(4, 3) (graph pass alter_op_layout asks PassContext::conv2d_algorithm).
//
// The choice changes the graph — Winograd needs its weight transformed at compile time — so it
// cannot be a knob of one kernel's schedule. It is a task of its own, keyed like a workload:
//
//   anvil-workload v1 | conv2d algorithm | <conv2d attributes> <data type> <weight type>
//                       blocks <in>/<out>
//
// with one knob, "algorithm" (0, 2 or 4). Its candidates are the convolution's kernel in each
// form (driver/tune_tasks.h: extract_algorithm_tasks), measured like any kernel. anvil compile
// applies the best record of each convolution's key.
//
// A convolution the layout pass leaves unblocked (grouped, channels without a block, or a
// layout choice of 0) has a choice of form too: the direct form or output-channel blocks of 8,
// 16 or 32 in its packed weight (ops::conv2d_weight_block_choices; graph pass prepack_weights
// asks PassContext::conv2d_weight_block). Its task:
//
//   anvil-workload v1 | conv2d weight block | <conv2d attributes> <data type> <weight type>
//
// with one knob, "weight_block"; its candidates are the convolution's kernel in each form.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/expr.h"
#include "tune/record.h"

namespace anvil::driver {

inline constexpr const char* kAlgorithmKnob = "algorithm";
inline constexpr const char* kWeightBlockKnob = "weight_block";

std::string conv2d_algorithm_key(const graph::Call& conv, int64_t in_block, int64_t out_block);

// The PassContext::conv2d_algorithm that applies `records` on `target` (a Target::str()):
// each convolution's best record, or 0 without one. Null when `records` is null.
std::function<int(const graph::Call&, int64_t, int64_t)> conv2d_algorithm_from_records(
    std::shared_ptr<const tune::BestRecords> records, const std::string& target);

std::string conv2d_weight_block_key(const graph::Call& conv);

// The blocks a record may choose for `conv` (an nn.conv2d with a static weight), in the order
// of the knob's choices, and the default (nn.conv2d's rule).
std::vector<int64_t> conv2d_weight_block_choices(const graph::Call& conv);
int64_t default_conv2d_weight_block(const graph::Call& conv);

// The PassContext::conv2d_weight_block that applies `records` on `target`: each convolution's
// best record when its block is one of the choices, else -1. Null when `records` is null.
std::function<int64_t(const graph::Call&)> conv2d_weight_block_from_records(
    std::shared_ptr<const tune::BestRecords> records, const std::string& target);

}  // namespace anvil::driver
