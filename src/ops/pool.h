// Attributes and schedules of the pooling family (ops/pool.cpp): nn.max_pool2d, nn.avg_pool2d,
// nn.global_max_pool2d, nn.global_avg_pool2d (NCHW); nn.max_pool3d, nn.avg_pool3d (NCDHW).
#pragma once

#include <vector>

#include "graph/attrs.h"
#include "te/schedule.h"
#include "tir/passes/passes.h"

namespace anvil::ops {

// nn.max_pool2d / nn.avg_pool2d(data[N, C, H, W]) -> [N, C, OH, OW]
//   OH = (H + pad_top + pad_bottom - dilation_h * (pool_h - 1) - 1) / stride_h + 1, rounded down,
//   or up with ceil_mode (then a window must start inside the input or the top/left padding).
// Max pooling ignores padded positions. Average pooling divides by the number of window
// positions inside the input, or (count_include_pad) inside the padded input; positions a
// ceil_mode window has past the bottom/right padding never count (ONNX, PyTorch).
// The global pools take no attributes (graph::NoAttrs) and return [N, C, 1, 1].
struct Pool2DAttrs : graph::AttrsBase<Pool2DAttrs> {
    static constexpr const char* kTypeName = "Pool2DAttrs";
    std::vector<int64_t> pool_size{1, 1};      // [h, w]
    std::vector<int64_t> strides{1, 1};        // [h, w]
    std::vector<int64_t> padding{0, 0, 0, 0};  // [top, left, bottom, right]
    std::vector<int64_t> dilation{1, 1};       // [h, w]
    bool ceil_mode = false;
    bool count_include_pad = false;  // avg_pool2d only
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("pool_size", &pool_size);
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("dilation", &dilation);
        v.visit("ceil_mode", &ceil_mode);
        v.visit("count_include_pad", &count_include_pad);
    }
};

// nn.max_pool3d / nn.avg_pool3d(data[N, C, D, H, W]) -> [N, C, OD, OH, OW], each output extent
// and the counting of average pooling as the 2-D pools'.
struct Pool3DAttrs : graph::AttrsBase<Pool3DAttrs> {
    static constexpr const char* kTypeName = "Pool3DAttrs";
    std::vector<int64_t> pool_size{1, 1, 1};         // [d, h, w]
    std::vector<int64_t> strides{1, 1, 1};           // [d, h, w]
    std::vector<int64_t> padding{0, 0, 0, 0, 0, 0};  // [front, top, left, back, bottom, right]
    std::vector<int64_t> dilation{1, 1, 1};          // [d, h, w]
    bool ceil_mode = false;
    bool count_include_pad = false;  // avg_pool3d only
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("pool_size", &pool_size);
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("dilation", &dilation);
        v.visit("ceil_mode", &ceil_mode);
        v.visit("count_include_pad", &count_include_pad);
    }
};

// Schedules of all the pools.
//   x86: the window reduction in a vector accumulator along the output row, computed per row
//        segment of the output (or its elementwise tail), parallel over (n, c, output depth and
//        row).
//   generic: every stage at root.
void schedule_pool_x86(te::Schedule& s, const te::Tensor& anchor,
                       const std::vector<te::Tensor>& outputs, const tir::LowerContext& target);
void schedule_pool_generic(te::Schedule& s, const te::Tensor& anchor,
                           const std::vector<te::Tensor>& outputs, const tir::LowerContext& target);

}  // namespace anvil::ops
