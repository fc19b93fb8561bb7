// Arithmetic on numbers known at import time, with Python's semantics (internal to
// frontend/pytorch).
//
// TorchScript computes sizes with the same aten ops as tensors: a scripted `x.size(2) // 2` or
// `math.ceil(h / 7)` is aten::floordiv / aten::div / aten::ceil on ints and floats, and a traced
// one the same ops on 0-d tensors (prim::NumToTensor of the sizes). Sizes must stay known at
// import time to shape the graph, so these ops are evaluated here: constants fold to constants,
// and a symbolic size (a dimension of a symbolic input) stays an int64 expression as far as
// integer arithmetic goes. What cannot be evaluated (math.sqrt of a symbolic size) is left to
// the graph, as a number known only at run time.
#pragma once

#include <optional>

#include "frontend/pytorch/converter.h"

namespace anvil::frontend::pytorch {

// Binary ops: arithmetic; comparisons (giving bools); And, Or, Xor (logic on bools, bitwise on
// ints); shifts of ints.
enum class NumOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Fmod,
    Pow,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
    LeftShift,
    RightShift
};

// Unary functions: Floor, Ceil and Trunc give ints (Python's math.floor), the math functions
// floats.
enum class NumFn {
    Neg,
    Abs,
    Floor,
    Ceil,
    Round,
    Trunc,
    Sign,
    Not,
    Sqrt,
    Exp,
    Expm1,
    Log,
    Log2,
    Log10,
    Log1p,
    Erf,
    Erfc,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh
};

// A value of kind `kind` (Int, Float, Bool) holding the scalar expression `e` (converted to
// int64, float64 or bool as the kind says).
PtValue make_number(PtValue::Kind kind, PrimExpr e);

// The number `v` holds at import time: `v` itself when it is an import-time number; for a 0-d
// tensor that is a constant or a one-value shape_tensor (traced size arithmetic), its value as
// a number of the tensor's category. nullopt otherwise.
std::optional<PtValue> known_number(const PtContext& ctx, const PtValue& v);

// a op b, or fn(a), on import-time numbers, as Python computes them (// and % floor, / is true
// division, ints compare with floats exactly). nullopt when the result cannot be known at
// import time: a symbolic size under float math or pow. A division by a zero constant is a
// UserError, as it is in Python.
std::optional<PtValue> number_binary(const PtContext& ctx, NumOp op, const PtValue& a,
                                     const PtValue& b);
std::optional<PtValue> number_unary(const PtContext& ctx, NumFn fn, const PtValue& a);

// `v` converted to `kind` as int(), float(), bool() do.
PtValue number_as(const PtValue& v, PtValue::Kind kind);

// The kind of number output 0 of the node is (its TorchScript type: int, float, bool), or
// `fallback` when the type does not say (Scalar, a tensor).
PtValue::Kind output_number_kind(const PtContext& ctx, PtValue::Kind fallback);

// A 0-d tensor of `dtype` holding the import-time number `v`: a constant, or a shape_tensor
// when `v` is a symbolic int or bool. Undefined for a symbolic float.
graph::Expr number_tensor_of(const PtContext& ctx, const PtValue& v, DataType dtype);

// A 0-d constant of any element type (NodeBuilder::constant_scalar makes the common ones; the
// others are cast from float32 or int64).
graph::Expr scalar_constant(const PtContext& ctx, DataType dtype, double value);

}  // namespace anvil::frontend::pytorch
