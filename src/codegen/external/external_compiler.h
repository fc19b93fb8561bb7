// External code generators (BYOC, "bring your own codegen"): libraries such as oneDNN that
// compile graph regions themselves. One folder per compiler (codegen/external/dnnl/ is the worked
// example; docs/external_codegen.md the guide) gives the four things this table holds:
//
//   - a pattern table: composites the compiler computes as one unit (conv2d + bias + relu),
//     merged into Composite="dnnl.conv2d" functions by graph/passes/merge_composite.cpp;
//   - support checks per op: which single ops it takes (annotate_target.cpp);
//   - a code generator: the region functions partition_graph.cpp made for it, in the bytes its
//     runtime library reads (lower_graph calls it);
//   - a runtime library, libanvil_runtime_<name>.so (runtime/external_module.h), that makes a
//     module of those bytes at load time.
//
// A composite target names the compilers: "dnnl, llvm -mcpu=native" (codegen/target.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "graph/pattern/pattern.h"

namespace anvil::codegen {

// One entry of a pattern table (TVM's (name, pattern, check) tuples): a match whose root `check`
// accepts (null: every match) becomes a Composite=`name` function. Names start with the
// compiler's name and a dot ("dnnl.conv2d"): annotate_target gives a composite to the compiler
// its name starts with.
struct PatternTableEntry {
    std::string name;
    graph::DFPattern pattern;
    std::function<bool(const graph::Expr&)> check;
};
using PatternTable = std::vector<PatternTableEntry>;

// Whether a compiler takes one call of an op (TVM's "target.<compiler>" op attribute).
using SupportCheck = std::function<bool(const graph::Call&)>;

// A region partition_graph made: a function with Compiler=<name> and its global_symbol.
struct ExternalRegion {
    std::string symbol;
    Ref<graph::Function> function;
};

struct ExternalCompiler {
    std::string name;
    // The composites it takes from a graph whose kernels are compiled for `target`.
    PatternTable (*pattern_table)(const Target& target);
    // Every region of a module for this compiler, in the bytes its runtime library reads.
    // UserError at a region's location naming what the compiler cannot compute.
    std::string (*codegen)(const std::vector<ExternalRegion>& regions);
};

// The compiler `name`; null when there is none.
const ExternalCompiler* find_external_compiler(const std::string& name);
// The compiler `name`; UserError listing the compilers when there is none.
const ExternalCompiler& external_compiler(const std::string& name);
// "dnnl": the names, for messages.
std::string external_compiler_list();

// Support checks, by compiler and op name. The built-in compilers register theirs; Python adds
// its own (anvil.ir.register_op_attr(op, "target.<compiler>")), for any compiler name.
void register_support_check(const std::string& compiler, const std::string& op, SupportCheck check);
// Whether `compiler` takes `call` alone: its op has a check and the check accepts the call.
bool supports(const std::string& compiler, const graph::Call& call);
// Whether any support check or a code generator exists for `compiler`.
bool is_known_compiler(const std::string& compiler);

}  // namespace anvil::codegen
