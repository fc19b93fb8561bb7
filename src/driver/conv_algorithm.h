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
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "graph/expr.h"
#include "tune/record.h"

namespace anvil::driver {

inline constexpr const char* kAlgorithmKnob = "algorithm";

std::string conv2d_algorithm_key(const graph::Call& conv, int64_t in_block, int64_t out_block);

// The PassContext::conv2d_algorithm that applies `records` on `target` (a Target::str()):
// each convolution's best record, or 0 without one. Null when `records` is null.
std::function<int(const graph::Call&, int64_t, int64_t)> conv2d_algorithm_from_records(
    std::shared_ptr<const tune::BestRecords> records, const std::string& target);

}  // namespace anvil::driver
