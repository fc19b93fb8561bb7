// Size checks on the shapes a model declares or its nodes compute (tensor_sizes.cpp says why).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "graph/type.h"
#include "support/source_loc.h"

namespace anvil::frontend {

// The byte size of a tensor of `shape` and `dtype`; nullopt when a dimension is negative or the
// element count or byte size overflows 64 bits (or comes within a factor 2 of it).
std::optional<int64_t> checked_byte_size(std::span<const int64_t> shape, DataType dtype);
// UserError at `loc` naming `what` and the shape when checked_byte_size refuses it.
void check_shape(std::span<const int64_t> shape, DataType dtype, const SourceLoc& loc,
                 const std::string& what);
// check_shape on every tensor `type` holds (tuple fields, optional and sequence elements); the
// symbolic dimensions of a tensor count as 1.
void check_type_sizes(const graph::Type& type, const SourceLoc& loc, const std::string& what);

}  // namespace anvil::frontend
