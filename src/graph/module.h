// An IRModule: the unit a compilation works on. Graph functions ("main" is the entry) and loop-IR
// kernels live side by side; after lowering, graph functions call kernels by name with
// `call_tir` (see ops/call_tir), so the printed module shows both levels.
#pragma once

#include <map>
#include <string>

#include "graph/expr.h"
#include "tir/stmt.h"

namespace anvil::graph {

struct IRModule {
    std::map<std::string, Ref<Function>> functions;
    std::map<std::string, Ref<tir::PrimFunc>> kernels;

    const Ref<Function>& main() const;  // UserError when there is no "main"
    IRModule with_main(Ref<Function> f) const;
};

}  // namespace anvil::graph
