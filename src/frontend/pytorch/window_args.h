// What PyTorch's window ops (convolutions, pools) share in how they take their operands: a
// per-spatial-dimension list that may be one int for all dimensions, and data that may lack the
// batch dimension ([C, *spatial], which every aten window op accepts as well as [N, C, *spatial]).
#pragma once

#include <vector>

#include "frontend/pytorch/converter.h"

namespace anvil::frontend::pytorch {

// Operand i as one int per spatial dimension (`nd` of them); a single int stands for all.
// UserError naming `what` for any other length.
std::vector<int64_t> spatial_ints(const PtContext& ctx, size_t i, size_t nd, const char* what);

// The padding attribute of the graph's window ops from PyTorch's symmetric padding:
// [p0, p1] → [p0, p1, p0, p1] (every begin, then every end).
std::vector<int64_t> symmetric_padding(const std::vector<int64_t>& p);

// Data of a window op with `nd` spatial dimensions, given a batch dimension when it has none
// (`unbatched`; undo with drop_batch). UserError unless its rank is nd + 1 or nd + 2.
struct WindowData {
    graph::Expr x;
    bool unbatched = false;
};
WindowData batched_data(const PtContext& ctx, const graph::Expr& x, int64_t nd);
// The result of the op on batched_data's data, without the batch dimension it was given.
graph::Expr drop_batch(const PtContext& ctx, const graph::Expr& y, const WindowData& d);

// The spatial extents (axes 2..) of batched data `x`, which must be static (the batch and
// channels may be symbolic); UserError naming a symbolic one.
std::vector<int64_t> spatial_shape(const PtContext& ctx, const graph::Expr& x);

}  // namespace anvil::frontend::pytorch
