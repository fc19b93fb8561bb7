// The floating-point operations one call of a kernel performs, counted on its lowered loop IR
// (after the loop-IR pipeline, as the code generator sees it) and weighted by trip counts. The
// graph executor's plan stores the count per kernel node, so `anvil run --profile` can report
// achieved GFLOP/s from the runtime alone.
//
// The rule:
// - + - * / min max (and %, floordiv, floormod) on a floating-point type count 1 per lane; an
//   fma counts 2; any other math intrinsic call (exp, sqrt, floor, ...) counts 1 per lane.
//   A dot_u8s8 (the quantized convolutions' four int8 multiply-adds per lane) counts 8 per
//   lane, so that int8 kernels report their operations per second too; a dot_bf16 (two
//   bfloat16 multiply-adds per lane) counts 4. An AMX tile product counts as many (8 or 4) per
//   product of words: rows x columns x words, from the last amx_tile_config. Other integer and
//   index arithmetic, comparisons, selects, casts, loads and stores count nothing. So a
//   multiply-accumulate is 2, and a conv2d or dense counts 2 * MACs plus whatever its fused bias,
//   activation or residual add compute per output element.
// - It counts what the kernel executes: work on zero padding or on padded weight blocks counts;
//   exp, tanh, erf, sigmoid and log count the + - * / min max of their polynomial expansions
//   (tir's lower_intrinsics runs before), not 1.
// - Both sides of a Select count (both are evaluated); an if_then_else or IfThenElse counts the
//   branch taken. Loop bounds and branch conditions that depend on enclosing loop variables
//   (tails of non-divisible splits) are evaluated exactly, by enumerating those loops when the
//   counts of their iterations differ.
// - A count that depends on run-time values (a symbolic extent, a data-dependent branch with
//   branches of different cost), a kernel that calls out (to a registry function), or one that
//   would take more than 2 x 10^6 statement visits to enumerate is unknown: -1.
#pragma once

#include <cstdint>

#include "tir/stmt.h"

namespace anvil::driver {

// Floating-point operations of one call of `f`, or -1 when unknown (see above).
int64_t count_flops(const tir::PrimFunc& f);
// The same for a statement whose free variables are all unknown.
int64_t count_flops(const tir::Stmt& s);

}  // namespace anvil::driver
