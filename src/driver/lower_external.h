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

// The region function `e` calls (a function with a Compiler attribute) and its compiler; null
// when `e` is no such call.
const graph::Function* external_region(const graph::Expr& e, std::string* compiler = nullptr);

// UserError at a region the code generator cannot compile, or whose runtime library is missing.
ExternalLowering lower_external_regions(const graph::IRModule& m);

}  // namespace anvil::driver
