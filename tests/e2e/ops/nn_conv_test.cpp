// nn.conv2d and nn.conv2d_transpose against a double-precision reference at odd shapes and at
// the layer shapes of ResNet-18 and MobileNetV2, with the x86 and the generic schedule, fused
// with a bias and relu, plus the type rules' errors; nn.conv3d and nn.conv3d_transpose likewise
// (at the end).
#include "conv_reference.h"
#include "nn_op_runner.h"
#include "ops/conv.h"

namespace anvil {
namespace {

using ops::Conv2DAttrs;
using ops::Conv2DTransposeAttrs;
using runtime::NDArray;
using testing::conv2d_reference;
using testing::dims;
using testing::random_tensor;
using testing::run_op;
using testing::Shape4;

std::vector<double> conv2d_transpose_reference(const NDArray& x, const NDArray& w,
                                               const Conv2DTransposeAttrs& a) {
    Shape4 xs = dims(x), ws = dims(w);
    int64_t groups = a.groups, icg = xs.c / groups, ocg = ws.c, oc = ocg * groups;
    int64_t oh = (xs.h - 1) * a.strides[0] - a.padding[0] - a.padding[2] +
                 a.dilation[0] * (ws.h - 1) + a.output_padding[0] + 1;
    int64_t ow = (xs.w - 1) * a.strides[1] - a.padding[1] - a.padding[3] +
                 a.dilation[1] * (ws.w - 1) + a.output_padding[1] + 1;
    std::vector<double> out(xs.n * oc * oh * ow, 0.0);
    const float *px = x.data<float>(), *pw = w.data<float>();
    for (int64_t n = 0; n < xs.n; ++n)
        for (int64_t ic = 0; ic < xs.c; ++ic)
            for (int64_t iy = 0; iy < xs.h; ++iy)
                for (int64_t ix = 0; ix < xs.w; ++ix)
                    for (int64_t o = 0; o < ocg; ++o)
                        for (int64_t i = 0; i < ws.h; ++i)
                            for (int64_t j = 0; j < ws.w; ++j) {
                                int64_t y = iy * a.strides[0] - a.padding[0] + i * a.dilation[0];
                                int64_t z = ix * a.strides[1] - a.padding[1] + j * a.dilation[1];
                                if (y < 0 || y >= oh || z < 0 || z >= ow) continue;
                                int64_t oo = (ic / icg) * ocg + o;
                                out[((n * oc + oo) * oh + y) * ow + z] +=
                                    double(px[((n * xs.c + ic) * xs.h + iy) * xs.w + ix]) *
                                    pw[((ic * ws.c + o) * ws.h + i) * ws.w + j];
                            }
    return out;
}

Conv2DAttrs conv_attrs(std::vector<int64_t> strides, std::vector<int64_t> padding,
                       std::vector<int64_t> dilation, int64_t groups) {
    Conv2DAttrs a;
    a.strides = strides;
    a.padding = padding;
    a.dilation = dilation;
    a.groups = groups;
    return a;
}

struct ConvCase {
    const char* name;
    Shape4 x;
    Shape4 w;
    Conv2DAttrs attrs;
};

std::vector<ConvCase> conv_cases() {
    return {
        // 5 output channels: a padded 8-channel block; kernel 3x2, stride 2, dilation 2.
        {"odd", {1, 3, 13, 11}, {5, 3, 3, 2}, conv_attrs({2, 2}, {1, 0, 2, 1}, {2, 2}, 1)},
        {"stride1", {2, 3, 13, 11}, {5, 3, 3, 2}, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1)},
        {"block32", {1, 7, 9, 10}, {64, 7, 3, 3}, conv_attrs({1, 2}, {0, 1, 2, 0}, {1, 1}, 1)},
        {"block_tail", {1, 40, 8, 30}, {33, 40, 1, 1}, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1)},
        // A short reduction (an RGB stem, 3 x 3x3 taps <= 32): direct, tiles of output channels
        // by row vectors; 10 channels do not divide into tiles, a row of 115 into vectors.
        {"stem", {1, 3, 21, 230}, {10, 3, 3, 3}, conv_attrs({2, 2}, {1, 1, 1, 1}, {1, 1}, 1)},
        // Column stride 2 reads the padded input split into even and odd columns; an odd padded
        // width (17) leaves the last odd column out.
        {"stem_odd", {1, 3, 10, 15}, {5, 3, 3, 3}, conv_attrs({2, 2}, {1, 1, 1, 1}, {1, 1}, 1)},
        {"depthwise_s2_odd",
         {1, 4, 9, 14},
         {4, 1, 3, 3},
         conv_attrs({2, 2}, {1, 1, 1, 2}, {1, 1}, 4)},
        // Pointwise over planes of >= 256: vectorized along the plane. Tiles of 4 rows (96
        // elements in 6 vectors) by 4 output channels with a channel tail (7 = 4 + 3) and a
        // batch of 2; then 27-wide rows in vectors of 9 lanes (no tail) by 8 channels, 33 = 4 x 8
        // + 1.
        {"pointwise_plane",
         {2, 5, 20, 24},
         {7, 5, 1, 1},
         conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1)},
        {"pointwise_9_lanes",
         {1, 40, 27, 27},
         {33, 40, 1, 1},
         conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1)},
        // A padded 1x1 convolution keeps its padding stage: not the pointwise form.
        {"pointwise_padded",
         {1, 40, 16, 16},
         {8, 40, 1, 1},
         conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1)},
        // 1x1 over 3 channels on a 17 x 19 plane: no tail-free row tiling, so the direct form
        // with a 3-lane tail.
        {"pointwise_odd_plane",
         {1, 3, 17, 19},
         {33, 3, 1, 1},
         conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1)},
        {"depthwise", {1, 6, 13, 11}, {6, 1, 3, 3}, conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 6)},
        {"depthwise_s2", {2, 6, 13, 11}, {6, 1, 3, 2}, conv_attrs({2, 2}, {1, 0, 2, 1}, {2, 1}, 6)},
        {"depthwise_x2", {1, 3, 12, 17}, {6, 1, 3, 3}, conv_attrs({2, 1}, {1, 1, 1, 1}, {1, 1}, 3)},
        {"groups2", {1, 4, 9, 10}, {6, 2, 3, 3}, conv_attrs({1, 1}, {1, 2, 0, 1}, {1, 1}, 2)},
        {"groups2_blocked",
         {1, 4, 9, 10},
         {32, 2, 3, 3},
         conv_attrs({2, 1}, {1, 1, 1, 1}, {1, 2}, 2)},
    };
}

class Conv2D : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(Conv2D, MatchesReference) {
    const ConvCase c = conv_cases()[std::get<0>(GetParam())];
    bool generic = std::get<1>(GetParam());
    auto x = random_tensor({c.x.n, c.x.c, c.x.h, c.x.w}, 1);
    auto w = random_tensor({c.w.n, c.w.c, c.w.h, c.w.w}, 2);
    NDArray y =
        run_op("nn.conv2d", c.attrs, {x, w}, {}, generic ? ops::schedule_conv2d_generic : nullptr);
    testing::expect_close(y, conv2d_reference(x, w, c.attrs), 1e-4, c.name);
}

INSTANTIATE_TEST_SUITE_P(Cases, Conv2D,
                         ::testing::Combine(::testing::Range(0, int(conv_cases().size())),
                                            ::testing::Bool()),
                         [](const auto& info) {
                             return std::string(conv_cases()[std::get<0>(info.param)].name) +
                                    (std::get<1>(info.param) ? "_generic" : "_x86");
                         });

// The nn.conv2d_packed attributes of a case's convolution.
ops::Conv2DPackedAttrs packed_attrs(const ConvCase& c) {
    ops::Conv2DPackedAttrs a;
    a.strides = c.attrs.strides;
    a.padding = c.attrs.padding;
    a.dilation = c.attrs.dilation;
    a.groups = c.attrs.groups;
    a.channels = c.w.n;
    return a;
}

// nn.conv2d_pack_weight then nn.conv2d_packed (what prepack_weights makes of a conv with a
// constant weight) equals nn.conv2d; depthwise weights stay unpacked.
TEST_P(Conv2D, PrepackedMatchesReference) {
    const ConvCase c = conv_cases()[std::get<0>(GetParam())];
    bool generic = std::get<1>(GetParam());
    auto x = random_tensor({c.x.n, c.x.c, c.x.h, c.x.w}, 1);
    auto w = random_tensor({c.w.n, c.w.c, c.w.h, c.w.w}, 2);
    ops::Conv2DPackWeightAttrs pa;
    pa.groups = c.attrs.groups;
    NDArray packed = run_op("nn.conv2d_pack_weight", pa, {w});
    if (packed.shape().size() == 4) {
        EXPECT_EQ(packed.to_vector<float>(), w.to_vector<float>()) << c.name;
        return;
    }
    ASSERT_EQ(packed.shape().size(), 5u) << c.name;
    int64_t vb = packed.shape()[4];
    EXPECT_GE(packed.shape()[0] * vb, c.w.n);
    // Spot-check the layout: [o / vb, c, kh, kw, o % vb].
    const float* pw = packed.data<float>();
    const float* ww = w.data<float>();
    int64_t o = c.w.n - 1, plane = c.w.c * c.w.h * c.w.w;
    EXPECT_EQ(pw[(o / vb) * plane * vb + o % vb], ww[o * plane]) << c.name;
    ops::Conv2DPackedAttrs a = packed_attrs(c);
    NDArray y = run_op("nn.conv2d_packed", a, {x, packed}, {},
                       generic ? ops::schedule_conv2d_generic : nullptr);
    testing::expect_close(y, conv2d_reference(x, w, c.attrs), 1e-4, c.name);
}

TEST(Conv2DErrors, PackedChannelsMustFitTheWeight) {
    ops::Conv2DPackedAttrs a;
    a.channels = 40;
    std::string e = testing::type_error("nn.conv2d_packed", a, {{1, 3, 8, 8}, {1, 3, 3, 3, 32}});
    EXPECT_NE(e.find("nn.conv2d_packed: channels=40 does not fit"), std::string::npos) << e;
    // An unpacked weight is the direct form, with all `channels` of it.
    e = testing::type_error("nn.conv2d_packed", a, {{1, 3, 8, 8}, {32, 3, 3, 3}});
    EXPECT_NE(e.find("the weight must be packed"), std::string::npos) << e;
    EXPECT_NE(e.find("(the direct form; channels=40)"), std::string::npos) << e;
    // With groups, a block must stay inside one group's outputs.
    a.channels = 16;
    a.groups = 2;
    e = testing::type_error("nn.conv2d_packed", a, {{1, 8, 8, 8}, {1, 4, 3, 3, 16}});
    EXPECT_NE(e.find("block 16 does not divide the output channels of a group"), std::string::npos)
        << e;
}

TEST(Conv2DErrors, PackWeightBlockMustBeAChoice) {
    ops::Conv2DPackWeightAttrs a;
    a.groups = 2;
    for (int64_t bad : {-8, 4, 12, 16, 64}) {  // 16 does not divide the 8 outputs of a group
        a.block = bad;
        std::string e = testing::type_error("nn.conv2d_pack_weight", a, {{16, 4, 3, 3}});
        EXPECT_NE(e.find("block=" + std::to_string(bad) + " is not a block"), std::string::npos)
            << e;
    }
}

// Every block tuning may choose for the packed weight (0: the direct form, the weight as it is)
// computes the same convolution.
TEST(Conv2D, EveryWeightBlockMatchesReference) {
    for (const ConvCase& c : conv_cases()) {
        auto x = random_tensor({c.x.n, c.x.c, c.x.h, c.x.w}, 1);
        auto w = random_tensor({c.w.n, c.w.c, c.w.h, c.w.w}, 2);
        std::vector<double> want = conv2d_reference(x, w, c.attrs);
        ops::Conv2DPackedAttrs a = packed_attrs(c);
        for (int64_t block : ops::conv2d_weight_block_choices(c.attrs.groups, c.w.n)) {
            NDArray packed = w;
            if (block > 0) {
                ops::Conv2DPackWeightAttrs pa;
                pa.groups = c.attrs.groups;
                pa.block = block;
                packed = run_op("nn.conv2d_pack_weight", pa, {w});
                ASSERT_EQ(packed.shape().size(), 5u);
                EXPECT_EQ(packed.shape()[4], block);
            }
            NDArray y = run_op("nn.conv2d_packed", a, {x, packed});
            testing::expect_close(y, want, 1e-4,
                                  std::string(c.name) + " block " + std::to_string(block));
        }
    }
}

TEST(Conv2D, FusedBiasRelu) {
    auto attrs = conv_attrs({2, 1}, {1, 1, 0, 2}, {1, 1}, 1);
    auto x = random_tensor({1, 3, 13, 11}, 3), w = random_tensor({40, 3, 3, 2}, 4);
    auto bias = random_tensor({40, 1, 1}, 5);
    NDArray y = run_op("nn.conv2d", attrs, {x, w}, {{"add", {bias}}, {"nn.relu", {}}});
    std::vector<double> want = conv2d_reference(x, w, attrs);
    int64_t plane = static_cast<int64_t>(want.size()) / 40;
    for (size_t i = 0; i < want.size(); ++i) {
        want[i] = std::max(0.0, want[i] + bias.data<float>()[i / plane]);
    }
    testing::expect_close(y, want, 1e-4, "conv2d+add+relu");
}

TEST(Conv2D, FusedPointwiseBiasRelu) {
    auto attrs = conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1);
    auto x = random_tensor({1, 6, 16, 28}, 8), w = random_tensor({10, 6, 1, 1}, 9);
    auto bias = random_tensor({10, 1, 1}, 10);
    NDArray y = run_op("nn.conv2d", attrs, {x, w}, {{"add", {bias}}, {"nn.relu", {}}});
    std::vector<double> want = conv2d_reference(x, w, attrs);
    int64_t plane = static_cast<int64_t>(want.size()) / 10;
    for (size_t i = 0; i < want.size(); ++i) {
        want[i] = std::max(0.0, want[i] + bias.data<float>()[i / plane]);
    }
    testing::expect_close(y, want, 1e-4, "pointwise+add+relu");
}

TEST(Conv2D, FusedDepthwiseRelu) {
    auto attrs = conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 8);
    auto x = random_tensor({1, 8, 14, 14}, 6), w = random_tensor({8, 1, 3, 3}, 7);
    NDArray y = run_op("nn.conv2d", attrs, {x, w}, {{"nn.relu", {}}});
    std::vector<double> want = conv2d_reference(x, w, attrs);
    for (auto& v : want) v = std::max(0.0, v);
    testing::expect_close(y, want, 1e-4, "depthwise+relu");
}

struct TransposeCase {
    const char* name;
    Shape4 x;
    Shape4 w;
    std::vector<int64_t> strides, padding, output_padding, dilation;
    int64_t groups;
};

TEST(Conv2DTranspose, MatchesReference) {
    std::vector<TransposeCase> cases = {
        {"plain", {1, 4, 5, 6}, {4, 3, 3, 3}, {1, 1}, {0, 0, 0, 0}, {0, 0}, {1, 1}, 1},
        {"strided", {1, 4, 5, 6}, {4, 3, 3, 2}, {2, 3}, {1, 0, 0, 1}, {1, 0}, {1, 2}, 1},
        {"grouped", {2, 4, 5, 4}, {4, 3, 2, 3}, {2, 2}, {1, 1, 0, 0}, {0, 1}, {1, 1}, 2},
        {"blocked", {1, 5, 4, 4}, {5, 16, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1},
        {"big_pad", {1, 2, 6, 6}, {2, 3, 3, 3}, {1, 1}, {3, 2, 2, 3}, {0, 0}, {1, 1}, 1},
    };
    for (const auto& c : cases) {
        Conv2DTransposeAttrs a;
        a.strides = c.strides;
        a.padding = c.padding;
        a.output_padding = c.output_padding;
        a.dilation = c.dilation;
        a.groups = c.groups;
        auto x = random_tensor({c.x.n, c.x.c, c.x.h, c.x.w}, 8);
        auto w = random_tensor({c.w.n, c.w.c, c.w.h, c.w.w}, 9);
        for (bool generic : {false, true}) {
            NDArray y = run_op("nn.conv2d_transpose", a, {x, w}, {},
                               generic ? ops::schedule_conv2d_generic : nullptr);
            testing::expect_close(y, conv2d_transpose_reference(x, w, a), 1e-4,
                                  std::string(c.name) + (generic ? " generic" : " x86"));
        }
    }
}

TEST(Conv2DErrors, TypeRulesNameTheOpAndTheProblem) {
    Conv2DAttrs plain;
    std::string e = testing::type_error("nn.conv2d", plain, {{3, 13, 11}, {5, 3, 3, 3}});
    EXPECT_NE(e.find("node 'node_7'"), std::string::npos) << e;
    EXPECT_NE(e.find("nn.conv2d: the data must be 4-D (NCHW)"), std::string::npos) << e;
    e = testing::type_error("nn.conv2d", plain, {{1, 3, 13, 11}, {5, 3, 3}});
    EXPECT_NE(e.find("nn.conv2d: the weight must be 4-D (OIHW)"), std::string::npos) << e;
    e = testing::type_error("nn.conv2d", plain, {{1, 3, 13, 11}, {5, 4, 3, 3}});
    EXPECT_NE(e.find("nn.conv2d: the weight Tensor[(5, 4, 3, 3), float32] has 4 input channels "
                     "per group, but the data has 3 channels in 1 group(s)"),
              std::string::npos)
        << e;
    Conv2DAttrs g2 = conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 2);
    e = testing::type_error("nn.conv2d", g2, {{1, 3, 13, 11}, {4, 1, 3, 3}});
    EXPECT_NE(e.find("nn.conv2d: groups=2 does not divide the 3 input channels"), std::string::npos)
        << e;
    e = testing::type_error("nn.conv2d", g2, {{1, 4, 13, 11}, {5, 2, 3, 3}});
    EXPECT_NE(e.find("nn.conv2d: groups=2 does not divide the 5 output channels"),
              std::string::npos)
        << e;
    e = testing::type_error("nn.conv2d", plain, {{1, 3, 2, 11}, {5, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv2d: the dilated kernel height 3 is larger than the padded input "
                     "height 2"),
              std::string::npos)
        << e;
    Conv2DAttrs bad = conv_attrs({0, 1}, {0, 0, 0, 0}, {1, 1}, 1);
    e = testing::type_error("nn.conv2d", bad, {{1, 3, 13, 11}, {5, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv2d: strides must be >= 1, got [0, 1]"), std::string::npos) << e;
    Conv2DTransposeAttrs t;
    e = testing::type_error("nn.conv2d_transpose", t, {{1, 3, 5, 5}, {4, 2, 3, 3}});
    EXPECT_NE(e.find("nn.conv2d_transpose: the weight Tensor[(4, 2, 3, 3), float32] has "
                     "dimension 0 = 4, but the data has 3 channels"),
              std::string::npos)
        << e;
    t.output_padding = {1, 0};
    e = testing::type_error("nn.conv2d_transpose", t, {{1, 3, 5, 5}, {3, 2, 3, 3}});
    EXPECT_NE(e.find("nn.conv2d_transpose: output_padding [1, 0] must be smaller than the stride "
                     "or the dilation"),
              std::string::npos)
        << e;
}

// The convolution layers of ResNet-18 and MobileNetV2 at their real sizes, which take schedule
// paths the small shapes above do not (register tiles over 64+ channels, 224-wide stems, strided
// depthwise planes of 112), checked against the reference. bench/op_layers_bench times them.
TEST(Conv2D, NetworkLayersMatchReference) {
    struct Layer {
        const char* name;
        Shape4 x, w;
        Conv2DAttrs attrs;
    };
    std::vector<Layer> layers = {
        {"resnet conv1 7x7/2",
         {1, 3, 224, 224},
         {64, 3, 7, 7},
         conv_attrs({2, 2}, {3, 3, 3, 3}, {1, 1}, 1)},
        {"resnet 3x3 64 @56",
         {1, 64, 56, 56},
         {64, 64, 3, 3},
         conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1)},
        {"resnet 3x3/2 64->128",
         {1, 64, 56, 56},
         {128, 64, 3, 3},
         conv_attrs({2, 2}, {1, 1, 1, 1}, {1, 1}, 1)},
        {"resnet 1x1/2 64->128",
         {1, 64, 56, 56},
         {128, 64, 1, 1},
         conv_attrs({2, 2}, {0, 0, 0, 0}, {1, 1}, 1)},
        {"resnet 3x3 128 @28",
         {1, 128, 28, 28},
         {128, 128, 3, 3},
         conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1)},
        {"resnet 3x3 256 @14",
         {1, 256, 14, 14},
         {256, 256, 3, 3},
         conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1)},
        {"resnet 3x3 512 @7",
         {1, 512, 7, 7},
         {512, 512, 3, 3},
         conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 1)},
        {"mobilenet dw 3x3 32 @112",
         {1, 32, 112, 112},
         {32, 1, 3, 3},
         conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 32)},
        {"mobilenet dw 3x3/2 96 @112",
         {1, 96, 112, 112},
         {96, 1, 3, 3},
         conv_attrs({2, 2}, {0, 0, 1, 1}, {1, 1}, 96)},
        {"mobilenet 1x1 32->16 @112",
         {1, 32, 112, 112},
         {16, 32, 1, 1},
         conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1)},
        {"mobilenet 1x1 16->96 @112",
         {1, 16, 112, 112},
         {96, 16, 1, 1},
         conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1)},
        {"mobilenet 1x1 144->24 @56",
         {1, 144, 56, 56},
         {24, 144, 1, 1},
         conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1)},
        {"mobilenet 1x1 320->1280 @7",
         {1, 320, 7, 7},
         {1280, 320, 1, 1},
         conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 1)},
    };
    for (const auto& l : layers) {
        auto x = random_tensor({l.x.n, l.x.c, l.x.h, l.x.w}, 12);
        auto w = random_tensor({l.w.n, l.w.c, l.w.h, l.w.w}, 13);
        NDArray y = run_op("nn.conv2d", l.attrs, {x, w});
        testing::expect_close(y, conv2d_reference(x, w, l.attrs), 1e-3, l.name);
    }
}

}  // namespace
}  // namespace anvil

// ---- nn.conv3d and nn.conv3d_transpose --------------------------------------------------------

namespace anvil {
namespace {

using ops::Conv3DAttrs;
using ops::Conv3DTransposeAttrs;
using runtime::NDArray;
using testing::random_tensor;
using testing::run_op;

// Extents of an NCDHW tensor (or OIDHW / IODHW weight): [n, c, d, h, w].
std::vector<int64_t> dims5(const NDArray& a) {
    return {a.shape().begin(), a.shape().end()};
}

// Flat offset of (n, c, z, y, x) in a tensor of extents `s`.
int64_t at5(const std::vector<int64_t>& s, int64_t n, int64_t c, int64_t z, int64_t y, int64_t x) {
    return (((n * s[1] + c) * s[2] + z) * s[3] + y) * s[4] + x;
}

std::vector<double> conv3d_reference(const NDArray& x, const NDArray& w, const Conv3DAttrs& a) {
    std::vector<int64_t> xs = dims5(x), ws = dims5(w), os{xs[0], ws[0], 0, 0, 0};
    for (int d = 0; d < 3; ++d) {
        os[2 + d] =
            (xs[2 + d] + a.padding[d] + a.padding[d + 3] - a.dilation[d] * (ws[2 + d] - 1) - 1) /
                a.strides[d] +
            1;
    }
    int64_t icg = xs[1] / a.groups, ocg = ws[0] / a.groups;
    std::vector<double> out(os[0] * os[1] * os[2] * os[3] * os[4], 0.0);
    const float *px = x.data<float>(), *pw = w.data<float>();
    for (int64_t n = 0; n < os[0]; ++n)
        for (int64_t o = 0; o < os[1]; ++o)
            for (int64_t z = 0; z < os[2]; ++z)
                for (int64_t y = 0; y < os[3]; ++y)
                    for (int64_t v = 0; v < os[4]; ++v) {
                        double acc = 0;
                        for (int64_t c = 0; c < icg; ++c)
                            for (int64_t i = 0; i < ws[2]; ++i)
                                for (int64_t j = 0; j < ws[3]; ++j)
                                    for (int64_t k = 0; k < ws[4]; ++k) {
                                        int64_t iz =
                                            z * a.strides[0] + i * a.dilation[0] - a.padding[0];
                                        int64_t iy =
                                            y * a.strides[1] + j * a.dilation[1] - a.padding[1];
                                        int64_t ix =
                                            v * a.strides[2] + k * a.dilation[2] - a.padding[2];
                                        if (iz < 0 || iz >= xs[2] || iy < 0 || iy >= xs[3] ||
                                            ix < 0 || ix >= xs[4]) {
                                            continue;
                                        }
                                        int64_t ic = (o / ocg) * icg + c;
                                        acc += double(px[at5(xs, n, ic, iz, iy, ix)]) *
                                               pw[at5(ws, o, c, i, j, k)];
                                    }
                        out[at5(os, n, o, z, y, v)] = acc;
                    }
    return out;
}

std::vector<double> conv3d_transpose_reference(const NDArray& x, const NDArray& w,
                                               const Conv3DTransposeAttrs& a) {
    std::vector<int64_t> xs = dims5(x), ws = dims5(w), os{xs[0], ws[1] * a.groups, 0, 0, 0};
    for (int d = 0; d < 3; ++d) {
        os[2 + d] = (xs[2 + d] - 1) * a.strides[d] - a.padding[d] - a.padding[d + 3] +
                    a.dilation[d] * (ws[2 + d] - 1) + a.output_padding[d] + 1;
    }
    int64_t icg = xs[1] / a.groups, ocg = ws[1];
    std::vector<double> out(os[0] * os[1] * os[2] * os[3] * os[4], 0.0);
    const float *px = x.data<float>(), *pw = w.data<float>();
    for (int64_t n = 0; n < xs[0]; ++n)
        for (int64_t ic = 0; ic < xs[1]; ++ic)
            for (int64_t iz = 0; iz < xs[2]; ++iz)
                for (int64_t iy = 0; iy < xs[3]; ++iy)
                    for (int64_t ix = 0; ix < xs[4]; ++ix)
                        for (int64_t o = 0; o < ocg; ++o)
                            for (int64_t i = 0; i < ws[2]; ++i)
                                for (int64_t j = 0; j < ws[3]; ++j)
                                    for (int64_t k = 0; k < ws[4]; ++k) {
                                        int64_t z =
                                            iz * a.strides[0] - a.padding[0] + i * a.dilation[0];
                                        int64_t y =
                                            iy * a.strides[1] - a.padding[1] + j * a.dilation[1];
                                        int64_t v =
                                            ix * a.strides[2] - a.padding[2] + k * a.dilation[2];
                                        if (z < 0 || z >= os[2] || y < 0 || y >= os[3] || v < 0 ||
                                            v >= os[4]) {
                                            continue;
                                        }
                                        int64_t oo = (ic / icg) * ocg + o;
                                        out[at5(os, n, oo, z, y, v)] +=
                                            double(px[at5(xs, n, ic, iz, iy, ix)]) *
                                            pw[at5(ws, ic, o, i, j, k)];
                                    }
    return out;
}

Conv3DAttrs conv3d_attrs(std::vector<int64_t> strides, std::vector<int64_t> padding,
                         std::vector<int64_t> dilation, int64_t groups) {
    Conv3DAttrs a;
    a.strides = strides;
    a.padding = padding;
    a.dilation = dilation;
    a.groups = groups;
    return a;
}

TEST(Conv3D, MatchesReference) {
    struct Case {
        const char* name;
        std::vector<int64_t> x, w;
        Conv3DAttrs attrs;
    };
    std::vector<Case> cases = {
        {"plain",
         {1, 3, 5, 6, 7},
         {4, 3, 3, 3, 3},
         conv3d_attrs({1, 1, 1}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}, 1)},
        {"padded",
         {2, 2, 4, 5, 9},
         {5, 2, 3, 2, 3},
         conv3d_attrs({1, 1, 1}, {1, 0, 1, 1, 1, 2}, {1, 1, 1}, 1)},
        {"strided_dilated",
         {1, 3, 9, 8, 11},
         {4, 3, 2, 3, 2},
         conv3d_attrs({2, 1, 3}, {0, 1, 2, 1, 0, 1}, {2, 2, 1}, 1)},
        {"groups",
         {1, 4, 4, 5, 6},
         {6, 2, 3, 1, 2},
         conv3d_attrs({1, 2, 1}, {1, 1, 0, 0, 1, 1}, {1, 1, 2}, 2)},
        {"depthwise",
         {1, 3, 5, 5, 5},
         {3, 1, 3, 3, 3},
         conv3d_attrs({1, 1, 1}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}, 3)},
    };
    for (const auto& c : cases) {
        auto x = random_tensor(c.x, 21), w = random_tensor(c.w, 22);
        for (bool generic : {false, true}) {
            NDArray y = run_op("nn.conv3d", c.attrs, {x, w}, {},
                               generic ? ops::schedule_conv3d_generic : nullptr);
            testing::expect_close(y, conv3d_reference(x, w, c.attrs), 1e-4,
                                  std::string(c.name) + (generic ? " generic" : " x86"));
        }
    }
}

TEST(Conv3D, FusedBiasRelu) {
    auto attrs = conv3d_attrs({1, 2, 1}, {1, 1, 1, 0, 1, 1}, {1, 1, 1}, 1);
    auto x = random_tensor({1, 3, 4, 7, 9}, 23), w = random_tensor({6, 3, 2, 3, 3}, 24);
    auto bias = random_tensor({6, 1, 1, 1}, 25);
    NDArray y = run_op("nn.conv3d", attrs, {x, w}, {{"add", {bias}}, {"nn.relu", {}}});
    std::vector<double> want = conv3d_reference(x, w, attrs);
    int64_t volume = static_cast<int64_t>(want.size()) / 6;
    for (size_t i = 0; i < want.size(); ++i) {
        want[i] = std::max(0.0, want[i] + bias.data<float>()[i / volume]);
    }
    testing::expect_close(y, want, 1e-4, "conv3d+add+relu");
}

TEST(Conv3DTranspose, MatchesReference) {
    struct Case {
        const char* name;
        std::vector<int64_t> x, w;
        std::vector<int64_t> strides, padding, output_padding, dilation;
        int64_t groups;
    };
    std::vector<Case> cases = {
        {"plain",
         {1, 2, 3, 4, 5},
         {2, 3, 3, 3, 3},
         {1, 1, 1},
         {0, 0, 0, 0, 0, 0},
         {0, 0, 0},
         {1, 1, 1},
         1},
        {"strided",
         {1, 3, 3, 4, 3},
         {3, 2, 2, 3, 2},
         {2, 3, 1},
         {1, 0, 0, 0, 1, 0},
         {1, 0, 0},
         {1, 2, 1},
         1},
        {"grouped",
         {2, 4, 3, 3, 4},
         {4, 2, 2, 2, 3},
         {2, 2, 2},
         {0, 1, 1, 1, 0, 0},
         {0, 1, 1},
         {1, 1, 1},
         2},
    };
    for (const auto& c : cases) {
        Conv3DTransposeAttrs a;
        a.strides = c.strides;
        a.padding = c.padding;
        a.output_padding = c.output_padding;
        a.dilation = c.dilation;
        a.groups = c.groups;
        auto x = random_tensor(c.x, 26), w = random_tensor(c.w, 27);
        for (bool generic : {false, true}) {
            NDArray y = run_op("nn.conv3d_transpose", a, {x, w}, {},
                               generic ? ops::schedule_conv3d_generic : nullptr);
            testing::expect_close(y, conv3d_transpose_reference(x, w, a), 1e-4,
                                  std::string(c.name) + (generic ? " generic" : " x86"));
        }
    }
}

TEST(Conv3DErrors, TypeRulesNameTheOpAndTheProblem) {
    Conv3DAttrs plain;
    std::string e = testing::type_error("nn.conv3d", plain, {{1, 3, 13, 11}, {5, 3, 3, 3, 3}});
    EXPECT_NE(e.find("node 'node_7'"), std::string::npos) << e;
    EXPECT_NE(e.find("nn.conv3d: the data must be 5-D (NCDHW)"), std::string::npos) << e;
    e = testing::type_error("nn.conv3d", plain, {{1, 3, 5, 13, 11}, {5, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv3d: the weight must be 5-D (OIDHW)"), std::string::npos) << e;
    e = testing::type_error("nn.conv3d", plain, {{1, 3, 2, 13, 11}, {5, 3, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv3d: the dilated kernel depth 3 is larger than the padded input "
                     "depth 2"),
              std::string::npos)
        << e;
    Conv3DAttrs bad = conv3d_attrs({1, 1}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}, 1);
    e = testing::type_error("nn.conv3d", bad, {{1, 3, 5, 13, 11}, {5, 3, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv3d: strides needs 3 values, got [1, 1]"), std::string::npos) << e;
    bad = conv3d_attrs({1, 1, 1}, {0, 0, 0, 0}, {1, 1, 1}, 1);
    e = testing::type_error("nn.conv3d", bad, {{1, 3, 5, 13, 11}, {5, 3, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv3d: padding needs 6 values, got [0, 0, 0, 0]"), std::string::npos)
        << e;
    bad = conv3d_attrs({1, 1, 1}, {0, 0, 0, 0, 0, 0}, {1, 0, 1}, 1);
    e = testing::type_error("nn.conv3d", bad, {{1, 3, 5, 13, 11}, {5, 3, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv3d: dilation must be >= 1, got [1, 0, 1]"), std::string::npos) << e;
    bad = conv3d_attrs({1, 1, 1}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}, 2);
    e = testing::type_error("nn.conv3d", bad, {{1, 3, 5, 13, 11}, {4, 1, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv3d: groups=2 does not divide the 3 input channels"), std::string::npos)
        << e;
    Conv3DTransposeAttrs t;
    e = testing::type_error("nn.conv3d_transpose", t, {{1, 3, 5, 5, 5}, {4, 2, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv3d_transpose: the weight Tensor[(4, 2, 3, 3, 3), float32] has "
                     "dimension 0 = 4, but the data has 3 channels (the weight is [C, O/groups, "
                     "KD, KH, KW])"),
              std::string::npos)
        << e;
    t.output_padding = {0, 0, 1};
    e = testing::type_error("nn.conv3d_transpose", t, {{1, 3, 5, 5, 5}, {3, 2, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv3d_transpose: output_padding [0, 0, 1] must be smaller than the "
                     "stride or the dilation"),
              std::string::npos)
        << e;
    t.output_padding = {0, 0, 0};
    t.padding = {2, 0, 0, 2, 0, 0};
    e = testing::type_error("nn.conv3d_transpose", t, {{1, 3, 1, 5, 5}, {3, 2, 3, 3, 3}});
    EXPECT_NE(e.find("nn.conv3d_transpose: the padding [2, 0, 0, 2, 0, 0] removes the whole "
                     "output depth"),
              std::string::npos)
        << e;
}

}  // namespace
}  // namespace anvil
