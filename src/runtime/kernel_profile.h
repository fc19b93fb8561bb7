// Per-kernel time of a model's runs (`anvil run --profile`, GraphExecutor::run_profiled), and
// its table:
//
//   profile: 20 runs, 53 kernel calls per run
//   kernel                                 calls   total_ms    mean_ms   share   GFLOP/s     MFLOP
//   fused_conv2d_packed_add_clip_3            80     41.207      0.515   16.9%      81.0     41.75
//   ...
//   total                                   1060    243.511     12.176  100.0%      73.8    898.73
//
// One line per kernel (a kernel called by several nodes adds up their calls), longest total
// first: calls over all runs, total and mean time per call, share of the kernels' total time,
// achieved GFLOP/s (the compiler's count of its floating-point operations per call, see
// driver/count_flops.h, times calls, over its total time; "-" when the count is unknown) and
// MFLOP per call. The total line sums every kernel; its mean_ms is per run and its MFLOP per run,
// and its GFLOP/s counts the kernels whose operations are known (the others add only time).
// Time between kernels (the executor's own loop) is not in the table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace anvil::runtime {

struct KernelProfile {
    std::string kernel;
    int64_t calls = 0;
    double total_ms = 0;
    int64_t flops = -1;  // per call; -1 when unknown
};

struct Profile {
    int64_t runs = 0;
    std::vector<KernelProfile> kernels;  // longest total time first

    double total_ms() const;
    int64_t calls() const;
};

// The table above; "profile: no profiled runs" when there were none.
std::string format_profile(const Profile& p);

}  // namespace anvil::runtime
