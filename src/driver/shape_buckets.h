// Shape buckets: kernels specialized for chosen sizes of symbolic dimensions, beside the generic
// kernels that run at every size (PipelineOptions::shape_buckets; `anvil compile
// --shape-buckets n=1,8,32`).
//
// A bucket list names a symbolic dimension of the model (`n`) and the sizes worth kernels of
// their own. lower_fused_functions compiles every fused group that uses bucketed dimensions once
// more per combination of their sizes: with n=1,8 and seq=64,128, a kernel over (n, seq, 32) gets
// four variants, one over (n, 32) two, one using neither none. In a variant the dimensions are
// constants before the group is scheduled, so its loops have constant extents (no tails, whole
// vectors). A variant takes exactly the arguments of its generic kernel; the call_tir names the
// variants (ops/call_tir.h: bucket_dims, bucket_kernels, bucket_values) and the VM calls the
// variant whose sizes equal the bound dimensions, the generic kernel otherwise.
//
// The count is bounded: the product of the lists' lengths may be at most kMaxBucketCombinations,
// so no kernel has more variants than that (and the module at most that many times more kernels).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/module.h"

namespace anvil::driver {

using ShapeBuckets = std::map<std::string, std::vector<int64_t>>;

inline constexpr int64_t kMaxBucketCombinations = 64;

// Reads "n=1,8,32" (several may share one argument, separated by spaces, as --input-shapes'
// do). UserError naming --shape-buckets for malformed text, a size that is not a positive
// integer, and a size or a dimension given twice.
ShapeBuckets parse_shape_buckets(const std::vector<std::string>& args);

// Checks `buckets` against the model: every name is a symbolic dimension of its graph functions'
// types, each list is non-empty with positive, distinct sizes, and there are at most
// kMaxBucketCombinations combinations. UserError naming --shape-buckets otherwise.
void check_shape_buckets(const graph::IRModule& m, const ShapeBuckets& buckets);

// The variants of one fused function: its bucketed dimension variables (ordered by name) and one
// row of sizes per variant (every combination, the last dimension varying fastest).
struct BucketVariants {
    std::vector<Ref<Var>> dims;
    std::vector<std::vector<int64_t>> sizes;
};
BucketVariants bucket_variants(const graph::Function& f, const ShapeBuckets& buckets);

// `f` with each of `dims` replaced by the size of the same index, in its parameters' types and
// its calls' shape attributes, every type derived again. UserError (from an op's type rule) when
// the sizes do not fit the function.
Ref<graph::Function> specialize_dims(const graph::Function& f, const std::vector<Ref<Var>>& dims,
                                     const std::vector<int64_t>& sizes);

// "n8_seq128": what a variant's kernel name adds to its generic kernel's.
std::string bucket_suffix(const std::vector<Ref<Var>>& dims, const std::vector<int64_t>& sizes);

}  // namespace anvil::driver
