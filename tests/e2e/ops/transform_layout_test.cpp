// layout_transform (ops/transform_layout.cpp) against a naive index mapping: NCHW to and from
// channel blocks, between block sizes, OIHW to packed OIHW<i>i<o>o weights; and the type rule's
// errors.
#include <gtest/gtest.h>

#include "op_runner.h"
#include "ops/transform.h"

namespace anvil::op_testing {
namespace {

using ops::LayoutTransformAttrs;

Ref<LayoutTransformAttrs> layouts(const std::string& src, const std::string& dst) {
    return make_attrs<LayoutTransformAttrs>([&](auto& a) {
        a.src_layout = src;
        a.dst_layout = dst;
    });
}

TEST(LayoutTransform, NCHWToBlocksAndBack) {
    // 24 channels in blocks of 8 at an odd plane; the batch of 2.
    auto x = iota_tensor({2, 24, 3, 5});
    auto r = run_op("layout_transform", {x}, layouts("NCHW", "NCHW8c"));
    ASSERT_EQ(shape_of(r.outputs[0]), (Shape{2, 3, 3, 5, 8}));
    std::vector<float> want;
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t cb = 0; cb < 3; ++cb)
            for (int64_t h = 0; h < 3; ++h)
                for (int64_t w = 0; w < 5; ++w)
                    for (int64_t c = 0; c < 8; ++c)
                        want.push_back(static_cast<float>(((n * 24 + cb * 8 + c) * 3 + h) * 5 + w));
    expect_close(r.outputs[0], want, 0, 0);
    auto back = run_op("layout_transform", {r.outputs[0]}, layouts("NCHW8c", "NCHW"));
    std::vector<float> same(x.data<float>(), x.data<float>() + x.num_elements());
    expect_close(back.outputs[0], same, 0, 0);
    // Between block sizes: 8 -> 4, then 4 -> 24 (one block holding all channels).
    auto b4 = run_op("layout_transform", {r.outputs[0]}, layouts("NCHW8c", "NCHW4c"));
    ASSERT_EQ(shape_of(b4.outputs[0]), (Shape{2, 6, 3, 5, 4}));
    auto direct = run_op("layout_transform", {x}, layouts("NCHW", "NCHW4c"));
    std::vector<float> want4(direct.outputs[0].data<float>(),
                             direct.outputs[0].data<float>() + direct.outputs[0].num_elements());
    expect_close(b4.outputs[0], want4, 0, 0);
}

TEST(LayoutTransform, PacksConvolutionWeights) {
    // OIHW [32, 8, 3, 2] -> OIHW4i16o [2, 2, 3, 2, 4, 16]: w'[a, b, y, x, i, o] = w[16a + o, 4b
    // + i, y, x].
    auto w = iota_tensor({32, 8, 3, 2});
    auto r = run_op("layout_transform", {w}, layouts("OIHW", "OIHW4i16o"));
    ASSERT_EQ(shape_of(r.outputs[0]), (Shape{2, 2, 3, 2, 4, 16}));
    const float* p = r.outputs[0].data<float>();
    auto at = [](int64_t o, int64_t i, int64_t y, int64_t x) {
        return static_cast<float>(((o * 8 + i) * 3 + y) * 2 + x);
    };
    // [1, 1, 2, 1, 3, 5] -> w[21, 7, 2, 1]
    EXPECT_EQ(p[((((1 * 2 + 1) * 3 + 2) * 2 + 1) * 4 + 3) * 16 + 5], at(21, 7, 2, 1));
    EXPECT_EQ(p[0], at(0, 0, 0, 0));
    EXPECT_EQ(p[r.outputs[0].num_elements() - 1], at(31, 7, 2, 1));
}

TEST(LayoutTransform, Errors) {
    auto x = random_tensor({1, 24, 4, 4}, 1);
    auto message = [&](const std::string& src, const std::string& dst) {
        return user_error_of([&] { infer_op_type("layout_transform", {x}, layouts(src, dst)); });
    };
    EXPECT_MESSAGE_HAS(message("NCHW", "NCHW16c"), "layout_transform", "axis C",
                       "static multiple of the block 16");
    EXPECT_MESSAGE_HAS(message("NCHW", "NHWC8"), "dst_layout 'NHWC8' is not a layout");
    EXPECT_MESSAGE_HAS(message("NCHW", "NCH8c"), "do not have the same axes");
    EXPECT_MESSAGE_HAS(message("NCHW", "NCHW0c"), "needs a size > 0");
    EXPECT_MESSAGE_HAS(message("NCCW", "NCHW"), "axis C appears twice");
    EXPECT_MESSAGE_HAS(message("NCHW8c", "NCHW"), "has 4 dimensions, the layout NCHW8c 5");
    EXPECT_MESSAGE_HAS(message("NCHW", "NCHW8h"), "axis H", "static multiple of the block 8");
    EXPECT_MESSAGE_HAS(message("NCHW", "NCHW8d"), "block of D without the axis D");
}

}  // namespace
}  // namespace anvil::op_testing
