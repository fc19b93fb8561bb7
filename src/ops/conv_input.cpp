// The input stages of the convolutions' computes (ops/conv.h): zero padding, and the spreading
// out of a transposed convolution's input by its stride. Each is a stage of its own, tagged for
// the schedules (tile_schedule.h), which inline or stage it.
#include <algorithm>

#include "ir/intrinsics.h"
#include "ops/conv.h"
#include "ops/tile_schedule.h"
#include "te/math.h"

namespace anvil::ops {

namespace {

PrimExpr I(int64_t v) {
    return make_int(DataType::int32(), v);
}

}  // namespace

te::Tensor pad_input(const std::string& name, const te::Tensor& x, const std::vector<int64_t>& p) {
    if (std::all_of(p.begin(), p.end(), [](int64_t v) { return v == 0; })) return x;
    const auto& s = x.shape();
    size_t nd = p.size() / 2;
    // Constant extents stay constants: the schedule vectorizes rows of known length only.
    auto grow = [](const PrimExpr& d, int64_t by) {
        if (auto* v = as_const_int(d)) return make_int(d.dtype(), *v + by);
        return d + make_int(d.dtype(), by);
    };
    std::vector<PrimExpr> shape = s;
    for (size_t d = 0; d < nd; ++d) shape[2 + d] = grow(s[2 + d], p[d] + p[d + nd]);
    return te::set_tag(te::compute(
                           shape,
                           [&](std::span<const PrimExpr> i) {
                               std::vector<PrimExpr> at(i.begin(), i.end());
                               PrimExpr inside;
                               for (size_t d = 0; d < nd; ++d) {
                                   at[2 + d] = i[2 + d] - I(p[d]);
                                   PrimExpr lo = at[2 + d] >= I(0);
                                   inside = inside.defined() ? inside && lo : lo;
                                   inside = inside && at[2 + d] < s[2 + d];
                               }
                               // likely: partition_loops splits the interior (no test)
                               // from the border where this read is inlined or staged.
                               return te::if_then_else(
                                   make_call(DataType::bool_(), intrin::kLikely, {inside}), x(at),
                                   make_const(x.dtype(), 0));
                           },
                           name + "_pad"),
                       kPaddedInputTag);
}

// The input of a transposed convolution as that of a stride-1 one: spread out by `strides`
// (zeros between), after `lead` zeros and extended to `extents` (the spatial extents).
te::Tensor dilate_input(const std::string& name, const te::Tensor& x,
                        const std::vector<PrimExpr>& extents, const std::vector<int64_t>& lead,
                        const std::vector<int64_t>& strides) {
    const auto& s = x.shape();
    size_t nd = extents.size();
    std::vector<PrimExpr> shape{s[0], s[1]};
    shape.insert(shape.end(), extents.begin(), extents.end());
    return te::set_tag(te::compute(
                           shape,
                           [&](std::span<const PrimExpr> i) {
                               std::vector<PrimExpr> pos, at{i[0], i[1]};
                               for (size_t d = 0; d < nd; ++d) {
                                   pos.push_back(i[2 + d] - I(lead[d]));
                                   at.push_back(floordiv(pos[d], I(strides[d])));
                               }
                               PrimExpr inside = pos[0] >= I(0);
                               for (size_t d = 1; d < nd; ++d) inside = inside && pos[d] >= I(0);
                               for (size_t d = 0; d < nd; ++d)
                                   inside = inside && at[2 + d] < s[2 + d];
                               for (size_t d = 0; d < nd; ++d) {
                                   if (strides[d] > 1)
                                       inside = inside && eq(floormod(pos[d], I(strides[d])), I(0));
                               }
                               return te::if_then_else(inside, x(at), make_const(x.dtype(), 0));
                           },
                           name + "_dilate"),
                       kDilatedInputTag);
}

}  // namespace anvil::ops
