// Compilation targets, written as TVM-style strings:
//
//   llvm                                        the host CPU (same as llvm -mcpu=native)
//   llvm -mcpu=sapphirerapids                   an x86 CPU by LLVM name, host triple
//   llvm -mtriple=aarch64-linux-gnu -mattr=+neon
//   llvm -mattr=+avx2,+fma
//   c                                           C source (host)
//   cuda -arch=sm_80                            NVPTX
//   dnnl, llvm -mcpu=native                     a composite target: external code generators
//                                               first (graph regions they take, BYOC), then the
//                                               target of everything else
//
// parse() resolves everything up front: the triple is always filled in (the host's when not
// given), "native" becomes the host CPU's LLVM name plus the features in which the host differs
// from that CPU's defaults (e.g. AVX-512 disabled by the hypervisor), and the CPU and each
// feature are checked against what LLVM knows for the triple. A Target is therefore a complete,
// printable description: parse(t.str()) == t.
#pragma once

#include <string>
#include <vector>

#include "tir/passes/passes.h"

namespace anvil {

struct Target {
    std::string kind;                 // "llvm", "c" or "cuda"
    std::string mtriple;              // normalized LLVM triple, never empty after parse()
    std::string mcpu;                 // LLVM CPU name ("generic" when none); cuda: "sm_XX"
    std::vector<std::string> mattrs;  // "+feature" / "-feature", in the order given
    // External code generators of a composite target ("dnnl" in "dnnl, llvm"), in the order
    // given: the graph regions they support are partitioned off for them. Parsing checks only
    // their spelling; the compiler checks that each exists (codegen/external).
    std::vector<std::string> external_compilers;

    // Widest native SIMD register in bits: 512 with AVX-512F, 256 with AVX/AVX2, 128 for
    // SSE/NEON and anything else; 32 for cuda (one lane per thread).
    int vector_bits() const;
    // True when code for this target runs in this process (LLVM kind, host architecture/OS),
    // i.e. when the JIT can be used.
    bool is_host() const;
    // Canonical spelling; round-trips through parse().
    std::string str() const;
    // This target without its external code generators: what the kernels are compiled for.
    Target without_externals() const;
    // The -mattr list joined with commas, as LLVM's TargetMachine expects it.
    std::string feature_string() const;
    // True when the CPU/feature combination enables `feature` (LLVM name, without '+').
    bool has_feature(const std::string& feature) const;

    // Throws UserError naming the offending part and what is accepted.
    static Target parse(const std::string& text);
    // `llvm -mcpu=native`.
    static Target host();

    bool operator==(const Target&) const = default;
};

// What the loop-IR passes may know of the target.
tir::LowerContext make_lower_context(const Target& target);

// Registers the LLVM back ends Anvil uses (X86, AArch64, NVPTX); idempotent and thread-safe.
void initialize_llvm_targets();

}  // namespace anvil
