// The LLVM back end: lowered PrimFuncs to machine code for x86-64 and AArch64.
//
//   runtime::Module m = codegen::build_llvm({f, g}, Target::host());
//   m.get_function("f")(a, b, c);                       // JIT (host targets only)
//   codegen::get_source(m, "ll");                        // optimized LLVM IR
//   codegen::export_library(m, "/tmp/model.so");         // load with runtime::load_module
//   codegen::emit_object(m, "/tmp/f.o");                 // any target, e.g. AArch64
//
// Each PrimFunc `f` becomes an exported symbol `f` with the runtime's packed signature (see
// anvil/runtime.h) that checks its arguments and reports mismatches through
// anvil_set_last_error, e.g. "matmul: argument 2 'B' has shape [5, 6], expected [4, 6]".
//
// Requirements on callers of the generated functions:
// - tensors are on the CPU, compact row-major, and their data (plus byte_offset) is aligned to
//   ANVIL_TENSOR_ALIGNMENT (64) bytes — checked, since the code is compiled assuming it;
// - distinct tensor arguments do not overlap in memory (not checked; the code is compiled with
//   `noalias` so loops vectorize, and overlapping tensors give undefined results).
// The code calls anvil_set_last_error, anvil_parallel_launch, anvil_workspace_alloc/free, the
// function registry (anvil_func_get_global/call/free, for CallPacked) and snprintf plus libm; the
// JIT resolves them in the current process (which links anvil_runtime), an exported library at load
// time.
#pragma once

#include <string>
#include <vector>

#include "codegen/target.h"
#include "runtime/module.h"
#include "tir/stmt.h"

namespace anvil::codegen {

// Compiles `funcs` (after the TIR lowering passes) with LLVM's O3 pipeline for `target` (kind
// "llvm"). The result's get_function JIT-compiles on first use and works only when
// target.is_host(); sources, objects and libraries can be produced for any target.
// Throws UserError for duplicate or empty names and IR the back end cannot compile.
runtime::Module build_llvm(const std::vector<Ref<tir::PrimFunc>>& funcs, const Target& target);

// The module's text: "ll" (optimized LLVM IR) or "asm" (target assembly).
// `m` must come from build_llvm (UserError otherwise).
std::string get_source(const runtime::Module& m, const std::string& format);
// Writes a relocatable ELF object (position-independent) for the module's target.
void emit_object(const runtime::Module& m, const std::string& path);
// Writes the module's blobs (add_blob) as an object of their own; false (and no file) when it has
// none.
bool emit_blob_object(const runtime::Module& m, const std::string& path);
// Writes a shared library loadable by runtime::load_module: the object linked with `cc`
// (default: "cc" for host targets, "aarch64-linux-gnu-gcc" for AArch64 ones), plus the module's
// blobs (add_blob).
// `cc` links (default: cc for the host, aarch64-linux-gnu-gcc for AArch64); `cc_options` are
// added to its command line as they are written (tvmc's --cross-compiler-options: -L paths,
// --sysroot=..., -Wl,... flags).
void export_library(const runtime::Module& m, const std::string& path, const std::string& cc = "",
                    const std::string& cc_options = "");
// Attaches a named byte blob that export_library writes into the library as two exported read-only
// symbols: `symbol`, the bytes (64-byte aligned, followed by one NUL byte, so a text blob is a C
// string), and `symbol` ANVIL_BLOB_SIZE_SUFFIX, a uint64_t holding the byte count. This is how a
// model's plan and params travel with its kernels (ANVIL_GRAPH_PLAN_SYMBOL,
// ANVIL_GRAPH_PARAMS_SYMBOL). A blob of the same name is replaced; the JIT does not see blobs.
// UserError when the name is not a C identifier or clashes with a function or reserved symbol.
void add_blob(const runtime::Module& m, const std::string& symbol, std::string bytes);
// The target a module was built for.
Target module_target(const runtime::Module& m);

}  // namespace anvil::codegen
