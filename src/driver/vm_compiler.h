// Compiling a lowered module to the VM's program (runtime/vm_program.h): the executor for models
// the graph executor's static plan cannot run.
//
// Each graph function becomes a VM function ("main" first; the others are the functions that
// control.if / control.loop call). Its parameters' symbolic dimensions get shape slots
// bound by match_shape (the first occurrence of `n` binds it, later ones check it); every
// call_tir / call_packed allocates its outputs with shapes computed from those slots, then calls
// the kernel (compiled once for all sizes; a call_tir's variants for shape buckets become the
// instruction's variants, chosen by comparing the bound sizes) or the registry function. Registers
// are killed after their last use, so the memory pool reuses their storage within one run.
// Constants go to the parameter blob.
#pragma once

#include <string>

#include "graph/module.h"
#include "runtime/vm_program.h"

namespace anvil::driver {

struct VMExecutable {
    runtime::VMProgram program;
    std::string params;  // the parameter blob the program's params point into
};

// `m` must be lowered (lower_fused_functions): its graph functions call kernels with call_tir.
// UserError naming the model node when a shape cannot be computed at run time.
VMExecutable compile_vm(const graph::IRModule& m);

// Whether `m`'s main needs the VM: a symbolic dimension anywhere in its types, a value that is
// not a tensor or a tuple of tensors, control flow (control.if / control.loop), a call of
// another graph function or of a registry function (call_packed).
bool needs_vm(const graph::IRModule& m);

}  // namespace anvil::driver
