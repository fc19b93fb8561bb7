// Lowering of the regions partitioned for external code generators (BYOC,
// graph/passes/partition_graph.cpp): each call of a Compiler="<c>" function becomes a call_tir
// of its global symbol, and each compiler's code generator turns its regions into the module its
// runtime library loads (runtime/external_module.h). The executors call those functions like
// kernels.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "graph/module.h"
#include "runtime/module.h"

namespace anvil::driver {

struct ExternalLowering {
    graph::IRModule module;                // regions replaced by call_tir of their symbols
    std::vector<runtime::Module> modules;  // one per compiler with regions
    std::set<std::string> symbols;         // every region's symbol
};

// UserError at a region the code generator cannot compile, or whose runtime library is missing.
ExternalLowering lower_external_regions(const graph::IRModule& m);

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
    // "dnnl: 1 region, 61 ops, 3.63 GFLOPs (99.8 % of 3.64 GFLOPs)", one line per compiler.
    std::string str() const;
};
// Of a module after the graph pipeline (regions partitioned, the rest fused).
PartitionSummary summarize_partition(const graph::IRModule& m);

}  // namespace anvil::driver
