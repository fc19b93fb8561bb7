// THE table of graph passes, by name: the pipeline (driver/pipeline.cpp) picks its entries from
// it, and the golden tests, `--disable-pass` / `--print-after` and Python's
// anvil.transform.<name>() find a pass here, so that one pass can run alone.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "graph/passes/passes.h"

namespace anvil::graph {

using GraphPass = IRModule (*)(const IRModule&, const PassContext&);

struct GraphPassInfo {
    const char* name;  // the pass's file and function name
    GraphPass run;
};

// Every pass that takes a module and a context, once each, in the recommended order
// (passes.h). (bind_params takes values instead of a context: it is not a table entry.)
std::span<const GraphPassInfo> graph_passes();

// The pass named `name`; null when there is none.
const GraphPassInfo* find_graph_pass(std::string_view name);

// "infer_types, simplify_inference, ...": the names, for messages that list what exists.
std::string graph_pass_list();

}  // namespace anvil::graph
