// Scalar constants written inline in the graph text, as Relay writes them: `0.0186579f` (float32),
// `114` (int32), `2.5f64`, `-3i64`, `7u8`, ... — what QNN's scales and zero points look like
// (qnn.quantize(%x, 0.0186579f, 114, out_dtype="uint8")). Other constants (tensors, bool, NaN
// and infinities, 16-bit floats) stay in the metadata section.
#pragma once

#include <optional>
#include <string>

#include "graph/expr.h"
#include "graph/text_lexer.h"

namespace anvil::graph::text {

// The inline literal of `c`, or nullopt when it is written as meta[Constant][i]. Floats are
// written in the shortest form that reads back to the same value.
std::optional<std::string> scalar_literal(const Constant& c);

// The rank-0 constant a number token denotes (`negative` when a '-' preceded it); the suffix
// names its type (none: int32 for integers, float32 for numbers with '.' or an exponent).
// UserError at the token for an unknown suffix or a value its type cannot hold.
Expr parse_scalar_literal(const Token& number, bool negative);

}  // namespace anvil::graph::text
