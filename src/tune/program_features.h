// Features of one lowered kernel for the learned cost model of the auto-scheduler (the sketch
// search scores thousands of candidate programs with xgb_cost_model.h before it measures any):
// a fixed-width row of numbers that describe what the loop nest computes and how it walks memory.
//
// The row is made of groups, so that a column means the same thing in every program:
//   * one group per kept Store statement (the reduction init and update of a stage are separate
//     stores). The 4 heaviest stores are kept (weight: executions * (1 + float ops per
//     execution), so a copy still outweighs a store that runs once; ties keep the earlier one),
//     in their order in the program; the groups of missing stores are NaN (XGBoost's "missing").
//     A group holds the arithmetic of the stored value, the enclosing loops (count, executions,
//     innermost extent, vector lanes, unrolled and parallel extents), guards, arithmetic
//     intensity, and up to 5 access slots: the store itself, then its distinct loads by unique
//     bytes touched, descending. A slot holds the access's stride along the innermost loop (and
//     along the vectorized loop), the bytes it touches over the whole nest, its reuse, the
//     innermost loop that reuses it (how far out, and how many bytes lie between two uses), the
//     cache lines it starts per innermost iteration, and whether its buffer is allocated inside
//     the kernel. Missing slots are NaN.
//   * program-level columns: store and loop counts, total float operations, parallel loops,
//     bytes allocated inside the kernel, total bytes touched.
//   * weighted columns: every store and access column averaged over all the stores, weighted as
//     stores are ranked (an access column first averaged over the store's accesses). A store
//     group's meaning depends on where the store sits in its kernel; these do not, which is what
//     lets a model trained on other kernels rank a new kernel's programs.
// Counts, sizes and products are log2(1 + x), so every value stays in a small range. Every
// present column is finite: an extent that is not a constant (a symbolic dimension) counts as
// 1024 wherever extents multiply, and statements or expressions the analysis does not know are
// skipped, never an error.
//
// Strides come from the flattened (row-major, one index) form: the stride of an access along a
// loop is the coefficient of the loop variable in the index's linear form (ir/linear_form.h), in
// elements; the stride column holds sign(s) * log2(1 + |s|), and stride_kind says 0 broadcast
// (s = 0), 1 contiguous (|s| = 1), 2 other, 3 nonlinear: an index that depends on the variable
// other than linearly (floordiv/floormod of it, an indirect load), whose stride column is 0. A
// let-bound index is followed into its value; i * n with a symbolic n has stride n (1024).
#pragma once

#include <string>
#include <vector>

#include "tir/stmt.h"

namespace anvil::tune {

// The features of `f` as te::schedule_to_loops makes it (multi-dimensional indices, loop kinds
// set, before the lowering pipeline's passes). Runs tir::simplify (drops unit loops, folds
// constants) and tir::flatten_storage on a copy first. program_feature_width() values.
std::vector<float> program_features(const tir::PrimFunc& f);

// The width of every row program_features returns (a constant).
int program_feature_width();

// One name per column, e.g. "store1.access0.stride_kind", "program.num_loops"; for
// documentation and debugging (importance tables, dumps).
const std::vector<std::string>& program_feature_names();

}  // namespace anvil::tune
