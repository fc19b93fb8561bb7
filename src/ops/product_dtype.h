// The element types of the products (convolutions, dense, matmul): what their operands may be
// and the type their sums accumulate in. Float products take operands of one floating type and
// sum in it, or state out_dtype float32 for float16 or bfloat16 operands (to_mixed_precision:
// half-precision storage, float32 sums). Integer products state out_dtype (int32, as TVM's
// conv2d(..., out_dtype="int32")): int8, uint8, int16 or int32 operands, which may differ (u8 data
// times s8 weights), each widened to int32 before its multiply, so no product or sum overflows for
// 8- and 16-bit operands.
#pragma once

#include <string>

#include "ir/expr.h"
#include "support/source_loc.h"

namespace anvil::ops {

// The result's element type of `op` on operands of types `a` and `b` with attribute out_dtype
// (void: not stated); UserError at `loc` naming the operands `a_name` and `b_name` when they do
// not fit.
DataType product_dtype(const std::string& op, DataType a, DataType b, DataType out_dtype,
                       const SourceLoc& loc, const char* a_name = "data",
                       const char* b_name = "weight");

// `v` as `acc`: unchanged when it has that type, else cast (an integer operand widened).
PrimExpr widen(const PrimExpr& v, DataType acc);

}  // namespace anvil::ops
