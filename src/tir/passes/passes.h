// Every loop-IR pass, with what it requires of its input and ensures of its output.
// One pass per file, named like the function. driver/pipeline.cpp lists them in order.
//
// Signature: Stmt pass(const Stmt&, const LowerContext&). Passes never change a function's
// parameters; they see its body only.
#pragma once

#include <cstdint>
#include <string>

#include "tir/stmt.h"

namespace anvil::tir {

// The checked mode (instrument_bound_checkers): off; on, where the final simplify removes the
// checks it proves; or all, where every check stays (the final simplify does not run), which
// checks the simplifier's proofs too at a higher run-time cost.
enum class BoundChecks : uint8_t { off, on, all };

// What passes may know of the target and the build; filled by the driver from the Target.
struct LowerContext {
    int vector_bits = 128;       // widest native vector register (512 with AVX-512)
    int max_unroll_extent = 64;  // unroll_loops leaves larger Unrolled loops as serial loops
    bool is_gpu = false;
    // AMX tile products (Intel AMX-BF16 / AMX-INT8: tdpbf16ps / tdpbusd) for tensorize_amx.
    bool amx_bf16 = false;
    bool amx_int8 = false;
    // Set by the driver from PipelineOptions::checked.
    BoundChecks bound_checks = BoundChecks::off;
    // The function being lowered, for messages the generated code gives (set by the pipeline).
    std::string function_name;
    // Its buffer parameters (set by the pipeline): passes may assume the facts the kernel's
    // entry checks about their dimensions (Analyzer::bind_dimensions).
    std::vector<Ref<Buffer>> params;
};

// Requires: nothing.  Ensures: arithmetic simplified under the ranges of enclosing loops and
// lets, the conditions of enclosing branches and the parameters' dimension facts; branches with
// provable conditions removed; loops of extent 1 replaced by their body; empty loops and statements
// removed.
Stmt simplify(const Stmt& s, const LowerContext& ctx);

// Requires: multi-dimensional Load/Store indices.  Ensures: every Load/Store has one index into
// a one-dimensional buffer (row-major offsets); Allocate shapes are one-dimensional.
Stmt flatten_storage(const Stmt& s, const LowerContext& ctx);
// The same for a whole function. Parameter buffers keep their identity and declared shapes
// (the generated entry checks callers' tensors against them) and are indexed by one row-major
// offset like every other buffer.
Ref<PrimFunc> flatten_storage(const Ref<PrimFunc>& f, const LowerContext& ctx);

// Requires: flattened storage, simplified indices.  Ensures: where ctx has AMX, each loop nest
// of a matrix product of words (a tile's rows, its columns, the reduction loops, the words
// innermost, summing dot_bf16 or dot_u8s8 into a float32 or int32 element that the nest first
// sets to 0) whose indices a tile can read and write is replaced by AMX tile calls
// (ir/intrinsics.h): the sum accumulates in a tile register over the reduction loops.
Stmt tensorize_amx(const Stmt& s, const LowerContext& ctx);

// Requires: flattened storage.  Ensures: no Vectorized loops remain: each becomes vector
// operations (Ramp/Broadcast and vector Load/Store) of `extent` lanes, or a Serial loop when its
// body cannot be vectorized (e.g. a data-dependent branch).
Stmt vectorize_loops(const Stmt& s, const LowerContext& ctx);

// Requires: nothing.  Ensures: no Unrolled loops with constant extent <= max_unroll_extent
// remain: each is replaced by copies of its body with the loop variable substituted.
Stmt unroll_loops(const Stmt& s, const LowerContext& ctx);

// Requires: vectorized, unrolled loops (vector loads as Ramp indices).  Ensures: a serial loop
// whose straight-line body accumulates into local buffers from a contiguous stream (a vector
// load whose address advances by the loaded span each iteration: a packed weight panel) starts
// each iteration with prefetch calls for that stream's lines a few KiB ahead. CPU targets only.
Stmt prefetch_streams(const Stmt& s, const LowerContext& ctx);

// Requires: loops whose body is guarded by `if (likely(cond))` on the loop variable (from
// non-divisible splits).  Ensures: such loops are split into a main range where the guard is
// provably true (guard removed, so the body can be vectorized/unrolled) and a tail range that
// keeps the guard; a loop whose guard terms are not linear in its variable but repeated by its
// inner loops gets its body unswitched on them (a copy without the terms, chosen per iteration).
Stmt partition_loops(const Stmt& s, const LowerContext& ctx);

// Requires: flattened storage.  Ensures: Allocates of the same scope and element type whose
// lifetimes do not overlap share one allocation (the larger size).
Stmt reuse_storage(const Stmt& s, const LowerContext& ctx);

// Requires: flattened storage (several indices are checked per dimension).  Ensures: every
// Load and Store is preceded by an assert (reached exactly when the access is: under the
// conditions of enclosing if_then_else branches, per lane for masked loads) that its index lies
// in [0, buffer size); a failure names ctx.function_name, the buffer, the index and the size.
Stmt instrument_bound_checkers(const Stmt& s, const LowerContext& ctx);

// Requires: nothing.  Ensures: exp, log, tanh, erf and sigmoid on float32 (scalar or vector)
// are replaced by polynomial/rational approximations built from + - * / min max select and bit
// casts, so vector code stays vector. Accuracy is stated in tests/unit/tir.
Stmt lower_intrinsics(const Stmt& s, const LowerContext& ctx);

}  // namespace anvil::tir
