// Attributes and schedules of the pooling family (ops/pool.cpp): nn.max_pool2d, nn.avg_pool2d,
// nn.global_max_pool2d, nn.global_avg_pool2d (NCHW or NCHW<b>c); nn.max_pool3d, nn.avg_pool3d
// (NCDHW); nn.max_pool_indices (NCW, NCHW or NCDHW).
#pragma once

#include <string>
#include <vector>

#include "graph/attrs.h"
#include "te/config_space.h"
#include "te/schedule.h"

namespace anvil::ops {

// nn.max_pool2d / nn.avg_pool2d(data[N, C, H, W]) -> [N, C, OH, OW]
//   OH = (H + pad_top + pad_bottom - dilation_h * (pool_h - 1) - 1) / stride_h + 1, rounded down,
//   or up with ceil_mode (then a window must start inside the input or the top/left padding).
// Max pooling ignores padded positions. Average pooling divides by the number of window
// positions inside the input, or (count_include_pad) inside the padded input; positions a
// ceil_mode window has past the bottom/right padding never count (ONNX, PyTorch).
struct Pool2DAttrs : graph::AttrsBase<Pool2DAttrs> {
    static constexpr const char* kTypeName = "Pool2DAttrs";
    std::vector<int64_t> pool_size{1, 1};      // [h, w]
    std::vector<int64_t> strides{1, 1};        // [h, w]
    std::vector<int64_t> padding{0, 0, 0, 0};  // [top, left, bottom, right]
    std::vector<int64_t> dilation{1, 1};       // [h, w]
    bool ceil_mode = false;
    bool count_include_pad = false;  // avg_pool2d only
    // "NCHW", or "NCHW<b>c" for channel-blocked data [N, C/b, H, W, b] (the output likewise),
    // which graph pass alter_op_layout gives a pool reading a blocked convolution's output.
    std::string layout = "NCHW";
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("pool_size", &pool_size);
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("dilation", &dilation);
        v.visit("ceil_mode", &ceil_mode);
        v.visit("count_include_pad", &count_include_pad);
        v.visit("layout", &layout);
    }
};

// nn.global_max_pool2d / nn.global_avg_pool2d(data[N, C, H, W]) -> [N, C, 1, 1]: the max or the
// mean over H and W. With layout "NCHW<b>c" (given by alter_op_layout to a pool of a blocked
// convolution's output), data [N, C/b, H, W, b] -> [N, C/b, 1, 1, b].
struct GlobalPool2DAttrs : graph::AttrsBase<GlobalPool2DAttrs> {
    static constexpr const char* kTypeName = "GlobalPool2DAttrs";
    std::string layout = "NCHW";
    void visit_fields(graph::AttrVisitor& v) override { v.visit("layout", &layout); }
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

// nn.max_pool_indices(data[N, C, spatial...]) -> int64 [N, C, out spatial...], 1 to 3 spatial
// dimensions: where nn.max_pool2d / nn.max_pool3d with the same window find their maximum, as a
// flat index into the data (ONNX MaxPool's Indices): (n * C + c) * the spatial size plus the
// spatial position, row-major (storage_order 0) or column-major (1, the first spatial axis
// fastest). Padded positions are never chosen; ties give the first window position in row-major
// order of the taps, as onnxruntime does. Every window must reach an input position.
struct MaxPoolIndicesAttrs : graph::AttrsBase<MaxPoolIndicesAttrs> {
    static constexpr const char* kTypeName = "MaxPoolIndicesAttrs";
    std::vector<int64_t> pool_size{1, 1};      // one per spatial dimension
    std::vector<int64_t> strides{1, 1};        // one per spatial dimension
    std::vector<int64_t> padding{0, 0, 0, 0};  // every begin, then every end
    std::vector<int64_t> dilation{1, 1};       // one per spatial dimension
    bool ceil_mode = false;
    int64_t storage_order = 0;  // 0: row-major, 1: column-major
    void visit_fields(graph::AttrVisitor& v) override {
        v.visit("pool_size", &pool_size);
        v.visit("strides", &strides);
        v.visit("padding", &padding);
        v.visit("dilation", &dilation);
        v.visit("ceil_mode", &ceil_mode);
        v.visit("storage_order", &storage_order);
    }
};

// Schedules of all the pools but nn.max_pool_indices (which, two reductions like argmax, takes
// ops::schedule_reduce).
//   x86: the window reduction in a vector accumulator along the output row, computed per row
//        segment of the output (or its elementwise tail), parallel over (n, c, output depth and
//        row).
//   generic: every stage at root.
void schedule_pool_x86(te::Schedule& s, const te::Tensor& anchor,
                       const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);
void schedule_pool_generic(te::Schedule& s, const te::Tensor& anchor,
                           const std::vector<te::Tensor>& outputs, const te::ScheduleContext& ctx);

}  // namespace anvil::ops
