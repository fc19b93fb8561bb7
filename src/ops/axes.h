// Axis and integer-list attributes of op type rules: numpy-style negative axes, checked against
// the rank, and per-dimension lists (strides, padding), with UserErrors that name the op, the
// attribute and the rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "support/source_loc.h"

namespace anvil::ops {

// `axis` in [-ndim, ndim) as an index in [0, ndim); UserError at `loc` otherwise. `what` names the
// attribute in the message ("axis", "axes[1]").
int64_t normalize_axis(int64_t axis, int64_t ndim, const SourceLoc& loc, const std::string& op,
                       const std::string& what = "axis");
// Each axis normalized; UserError on a repeated axis.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t ndim,
                                    const SourceLoc& loc, const std::string& op,
                                    const std::string& what = "axes");

// The same with the shorter message of the nn ops ("nn.softmax: axis 2 is out of range for a
// 2-D input").
int64_t normalize_input_axis(int64_t axis, size_t ndim, const SourceLoc& loc,
                             const std::string& op);

// A per-dimension attribute (strides, padding, ...) `name` of `op`: `n` values, each >= `min`;
// UserError at `loc` otherwise.
void check_int_list(const SourceLoc& loc, const std::string& op, const char* name,
                    const std::vector<int64_t>& values, size_t n, int64_t min);

// "depth", "height" or "width": spatial dimension `i` of `nd` (1 to 3) of window ops, for
// messages.
const char* spatial_dim_name(size_t i, size_t nd);

// The value of a static dimension; nullopt for a symbolic one.
std::optional<int64_t> static_dim(const PrimExpr& dim);

// "64" or "n * 2" for messages (constants without their type suffix).
std::string dim_str(const PrimExpr& dim);
// "(1, 3, n, 4)" for messages.
std::string shape_str(const std::vector<PrimExpr>& shape);

// "[1, -1, 0]" for messages.
std::string list_str(const std::vector<int64_t>& values);

// The product of the dimensions, simplified (a constant for static shapes).
PrimExpr shape_product(const std::vector<PrimExpr>& shape);

// Row-major flat offset of `index` in `shape`, and back. Index arithmetic is int32, as TE axes.
PrimExpr ravel_index(const std::vector<PrimExpr>& index, const std::vector<PrimExpr>& shape);
std::vector<PrimExpr> unravel_index(PrimExpr flat, const std::vector<PrimExpr>& shape);

}  // namespace anvil::ops
