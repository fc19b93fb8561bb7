// What partitioning for external code generators offloaded (anvil compile's summary line).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/module.h"

namespace anvil::driver {

// What partitioning offloaded, for `anvil compile`'s summary: per compiler, its regions, the op
// calls in them and their estimated FLOPs (convolutions, dense layers and matrix products count
// 2 per multiply-add, other ops one per output element), and the FLOPs of the whole graph.
struct PartitionSummary {
    struct Compiler {
        std::string name;
        int regions = 0;
        int64_t ops = 0;
        double flops = 0;
    };
    std::vector<Compiler> compilers;
    int64_t total_ops = 0;
    double total_flops = 0;
    // "dnnl: 1 region, 70 of 70 ops, 3.63 GFLOPs (100.0 % of 3.63 GFLOPs)", one line per compiler.
    std::string str() const;
};
// Of a module after the graph pipeline (regions partitioned, the rest fused).
PartitionSummary summarize_partition(const graph::IRModule& m);

}  // namespace anvil::driver
