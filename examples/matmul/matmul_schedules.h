// The classic walk from a naive matmul to a fast one, as tensor-expression schedules.
// Shared by the example (examples/matmul) and the benchmark (bench/).
#pragma once

#include <string>
#include <vector>

#include "te/schedule.h"

namespace anvil::examples {

struct Matmul {
    te::Tensor A, B, C;  // C[M, N] = sum_k A[M, K] * B[K, N], float32
    te::Schedule schedule;
};

// Variants in the order of the walk:
//   naive        the default loop nest (i, j, k)
//   blocking     32x32 tiles of C, k split by 4, so a tile's working set stays in cache
//   vectorize    + the innermost j loop becomes SIMD
//   permute      k outside the tile's rows, so B is read along rows (contiguous)
//   cache_write  + the C tile accumulates in a local buffer held in registers
//   pack         + the B panel a tile reads is copied (cache_read) into a contiguous buffer
//   parallel     + the outer loop runs on the thread pool: the best schedule
std::vector<std::string> matmul_variants();

// The computation for M x N x K with the named variant's schedule. UserError for an unknown name.
Matmul make_matmul(const std::string& variant, int64_t M, int64_t N, int64_t K);

}  // namespace anvil::examples
