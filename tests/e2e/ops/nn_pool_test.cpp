// The pools against a double-precision reference written from the ONNX/PyTorch definitions:
// strides, asymmetric padding, dilation, ceil_mode and count_include_pad; global pools; a fused
// tail; type errors. The 3-D pools likewise (at the end), against the same reference.
#include <functional>
#include <limits>

#include "nn_op_runner.h"
#include "ops/pool.h"

namespace anvil {
namespace {

using ops::GlobalPool2DAttrs;
using ops::Pool2DAttrs;
using runtime::NDArray;
using testing::random_tensor;
using testing::relayout;
using testing::run_op;

int64_t out_extent(int64_t in, int64_t lo, int64_t hi, int64_t k, int64_t s, int64_t d,
                   bool ceil_mode) {
    double avail = double(in + lo + hi - d * (k - 1) - 1) / double(s);
    int64_t out = int64_t(ceil_mode ? std::ceil(avail) : std::floor(avail)) + 1;
    if (ceil_mode && (out - 1) * s >= in + lo) --out;
    return out;
}

// Calls f(index) for every index below `extents`, row-major.
void for_each_index(const std::vector<int64_t>& extents,
                    const std::function<void(const std::vector<int64_t>&)>& f) {
    std::vector<int64_t> index(extents.size(), 0);
    int64_t count = 1;
    for (int64_t e : extents) count *= e;
    for (; count > 0; --count) {
        f(index);
        for (size_t d = extents.size(); d-- > 0;) {
            if (++index[d] < extents[d]) break;
            index[d] = 0;
        }
    }
}

// A windowed pool over any number of spatial axes (padding: every begin, then every end).
template <typename A>
std::vector<double> pool_reference(const NDArray& x, const A& a, bool is_max) {
    size_t nd = a.pool_size.size();
    std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end()), out;
    int64_t volume = 1;
    for (size_t d = 0; d < nd; ++d) {
        out.push_back(out_extent(in[d], a.padding[d], a.padding[d + nd], a.pool_size[d],
                                 a.strides[d], a.dilation[d], a.ceil_mode));
        volume *= in[d];
    }
    std::vector<double> result;
    const float* p = x.data<float>();
    for (int64_t b = 0; b < x.shape()[0] * x.shape()[1]; ++b) {
        for_each_index(out, [&](const std::vector<int64_t>& o) {
            double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
            int64_t inside = 0, padded = 0;
            for_each_index(a.pool_size, [&](const std::vector<int64_t>& tap) {
                bool in_pad = true, in_data = true;
                int64_t offset = 0;
                for (size_t d = 0; d < nd; ++d) {
                    int64_t pos = o[d] * a.strides[d] - a.padding[d] + tap[d] * a.dilation[d];
                    in_pad = in_pad && pos >= -a.padding[d] && pos < in[d] + a.padding[d + nd];
                    in_data = in_data && pos >= 0 && pos < in[d];
                    offset = offset * in[d] + pos;
                }
                padded += in_pad;
                if (!in_data) return;
                ++inside;
                double v = p[b * volume + offset];
                acc = is_max ? std::max(acc, v) : acc + v;
            });
            if (!is_max) acc /= double(a.count_include_pad ? padded : inside);
            result.push_back(acc);
        });
    }
    return result;
}

struct PoolCase {
    const char* name;
    std::vector<int64_t> x, pool_size, strides, padding, dilation;
    bool ceil_mode, count_include_pad;
};

template <typename A = Pool2DAttrs>
A attrs_of(const PoolCase& c) {
    A a;
    a.pool_size = c.pool_size;
    a.strides = c.strides;
    a.padding = c.padding;
    a.dilation = c.dilation;
    a.ceil_mode = c.ceil_mode;
    a.count_include_pad = c.count_include_pad;
    return a;
}

std::vector<PoolCase> pool_cases() {
    return {
        {"resnet", {1, 3, 16, 16}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, false},
        {"odd", {2, 3, 13, 11}, {3, 2}, {2, 3}, {1, 0, 2, 1}, {1, 1}, false, false},
        {"ceil", {1, 2, 13, 11}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true, false},
        {"ceil_pad", {1, 2, 12, 10}, {3, 2}, {2, 3}, {1, 1, 0, 1}, {1, 1}, true, false},
        {"include_pad", {1, 2, 13, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, true},
        {"ceil_include_pad", {1, 2, 12, 11}, {3, 3}, {2, 2}, {1, 0, 1, 2}, {1, 1}, true, true},
        {"dilated", {1, 2, 13, 17}, {2, 3}, {1, 2}, {1, 2, 0, 1}, {2, 2}, true, false},
        {"dilated_include_pad", {1, 2, 13, 17}, {2, 3}, {1, 2}, {1, 2, 1, 1}, {2, 2}, false, true},
        {"global_like", {1, 3, 7, 7}, {7, 7}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, false},
    };
}

class Pool2D : public ::testing::TestWithParam<std::tuple<int, bool, bool>> {};

TEST_P(Pool2D, MatchesReference) {
    const PoolCase c = pool_cases()[std::get<0>(GetParam())];
    bool is_max = std::get<1>(GetParam()), generic = std::get<2>(GetParam());
    auto x = random_tensor(c.x, 1);
    Pool2DAttrs a = attrs_of(c);
    NDArray y = run_op(is_max ? "nn.max_pool2d" : "nn.avg_pool2d", a, {x}, {},
                       generic ? ops::schedule_pool_generic : nullptr);
    testing::expect_close(y, pool_reference(x, a, is_max), 1e-5, c.name);
}

INSTANTIATE_TEST_SUITE_P(Cases, Pool2D,
                         ::testing::Combine(::testing::Range(0, int(pool_cases().size())),
                                            ::testing::Bool(), ::testing::Bool()),
                         [](const auto& info) {
                             return std::string(pool_cases()[std::get<0>(info.param)].name) +
                                    (std::get<1>(info.param) ? "_max" : "_avg") +
                                    (std::get<2>(info.param) ? "_generic" : "_x86");
                         });

// The same windows over channel-blocked data (layout NCHW8c; 16 channels in two blocks) equal
// the NCHW pool, taken back to NCHW.
TEST_P(Pool2D, BlockedMatchesReference) {
    PoolCase c = pool_cases()[std::get<0>(GetParam())];
    bool is_max = std::get<1>(GetParam()), generic = std::get<2>(GetParam());
    c.x[1] = 16;
    auto x = random_tensor(c.x, 4);
    Pool2DAttrs a = attrs_of(c);
    a.layout = "NCHW8c";
    NDArray yb =
        run_op(is_max ? "nn.max_pool2d" : "nn.avg_pool2d", a, {relayout(x, "NCHW", "NCHW8c")}, {},
               generic ? ops::schedule_pool_generic : nullptr);
    ASSERT_EQ(yb.shape().size(), 5u);
    a.layout = "NCHW";
    testing::expect_close(relayout(yb, "NCHW8c", "NCHW"), pool_reference(x, a, is_max), 1e-5,
                          c.name);
}

TEST(Pool2D, FusedMaxPoolRelu) {
    PoolCase c{"", {1, 4, 13, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, false};
    Pool2DAttrs a = attrs_of(c);
    auto x = random_tensor(c.x, 2);
    NDArray y = run_op("nn.max_pool2d", a, {x}, {{"nn.relu", {}}});
    auto want = pool_reference(x, a, true);
    for (auto& v : want) v = std::max(0.0, v);
    testing::expect_close(y, want, 1e-6, "max_pool2d+relu");
}

TEST(GlobalPool2D, MatchesReference) {
    auto x = random_tensor({2, 5, 7, 9}, 3);
    for (bool is_max : {true, false}) {
        for (bool generic : {false, true}) {
            NDArray y = run_op(is_max ? "nn.global_max_pool2d" : "nn.global_avg_pool2d",
                               GlobalPool2DAttrs(), {x}, {},
                               generic ? ops::schedule_pool_generic : nullptr);
            EXPECT_EQ(std::vector<int64_t>(y.shape().begin(), y.shape().end()),
                      (std::vector<int64_t>{2, 5, 1, 1}));
            std::vector<double> want;
            for (int64_t b = 0; b < 10; ++b) {
                double acc = is_max ? -1e30 : 0.0;
                for (int64_t i = 0; i < 63; ++i) {
                    double v = x.data<float>()[b * 63 + i];
                    acc = is_max ? std::max(acc, v) : acc + v / 63.0;
                }
                want.push_back(acc);
            }
            testing::expect_close(y, want, 1e-5, is_max ? "global max" : "global avg");
        }
    }
}

// Over channel-blocked data (NCHW16c: 48 channels in three blocks; NCHW8c: 8 in one) the global
// pools equal the NCHW ones, taken back to NCHW.
TEST(GlobalPool2D, BlockedMatchesNCHW) {
    for (auto [channels, layout] :
         {std::pair<int64_t, const char*>{48, "NCHW16c"}, {8, "NCHW8c"}}) {
        auto x = random_tensor({2, channels, 7, 5}, 6);
        GlobalPool2DAttrs blocked;
        blocked.layout = layout;
        for (const char* op : {"nn.global_max_pool2d", "nn.global_avg_pool2d"}) {
            for (bool generic : {false, true}) {
                NDArray want = run_op(op, GlobalPool2DAttrs(), {x});
                NDArray yb = run_op(op, blocked, {relayout(x, "NCHW", layout)}, {},
                                    generic ? ops::schedule_pool_generic : nullptr);
                ASSERT_EQ(yb.shape().size(), 5u);
                std::vector<double> expected(want.data<float>(),
                                             want.data<float>() + want.num_elements());
                testing::expect_close(relayout(yb, layout, "NCHW"), expected, 1e-5,
                                      std::string(op) + " " + layout);
            }
        }
    }
}

TEST(GlobalPool2D, FusedAvgTail) {
    auto x = random_tensor({1, 8, 7, 7}, 4);
    auto bias = random_tensor({8, 1, 1}, 5);
    NDArray y = run_op("nn.global_avg_pool2d", GlobalPool2DAttrs(), {x}, {{"add", {bias}}});
    std::vector<double> want;
    for (int64_t b = 0; b < 8; ++b) {
        double acc = 0;
        for (int64_t i = 0; i < 49; ++i) acc += x.data<float>()[b * 49 + i];
        want.push_back(acc / 49.0 + bias.data<float>()[b]);
    }
    testing::expect_close(y, want, 1e-5, "global avg + add");
}

TEST(PoolErrors, TypeRulesNameTheOpAndTheProblem) {
    Pool2DAttrs a;
    std::string e = testing::type_error("nn.max_pool2d", a, {{3, 13, 11}});
    EXPECT_NE(e.find("node 'node_7'"), std::string::npos) << e;
    EXPECT_NE(e.find("nn.max_pool2d: the data must be 4-D (NCHW)"), std::string::npos) << e;
    a.pool_size = {5, 5};
    e = testing::type_error("nn.avg_pool2d", a, {{1, 3, 4, 11}});
    EXPECT_NE(e.find("nn.avg_pool2d: the (dilated) window height 5 is larger than the padded "
                     "input height 4"),
              std::string::npos)
        << e;
    a.pool_size = {2};
    e = testing::type_error("nn.avg_pool2d", a, {{1, 3, 4, 11}});
    EXPECT_NE(e.find("nn.avg_pool2d: pool_size needs 2 values, got [2]"), std::string::npos) << e;
    a.pool_size = {2, 2};
    a.layout = "NHWC";
    e = testing::type_error("nn.max_pool2d", a, {{1, 3, 4, 11}});
    EXPECT_NE(e.find("layout 'NHWC' is neither NCHW nor NCHW<b>c"), std::string::npos) << e;
    a.layout = "NCHW8c";
    e = testing::type_error("nn.max_pool2d", a, {{1, 2, 4, 11, 16}});
    EXPECT_NE(e.find("layout NCHW8c needs data [N, C/8, H, W, 8]"), std::string::npos) << e;
    e = testing::type_error("nn.global_avg_pool2d", GlobalPool2DAttrs(), {{3, 4}});
    EXPECT_NE(e.find("nn.global_avg_pool2d: the data must be 4-D (NCHW)"), std::string::npos) << e;
    GlobalPool2DAttrs blocked;
    blocked.layout = "NCHW16c";
    e = testing::type_error("nn.global_max_pool2d", blocked, {{1, 3, 7, 7}});
    EXPECT_NE(e.find("nn.global_max_pool2d: layout NCHW16c needs data [N, C/16, H, W, 16]"),
              std::string::npos)
        << e;
    blocked.layout = "NHWC";
    e = testing::type_error("nn.global_max_pool2d", blocked, {{1, 3, 7, 7}});
    EXPECT_NE(e.find("is neither NCHW nor NCHW<b>c"), std::string::npos) << e;
}

// nn.max_pool_indices' values are checked through ONNX MaxPool's Indices output
// (tests/conformance/maxpool_indices_test.cpp); here its type rule's own errors.
TEST(MaxPoolIndicesErrors, TypeRulesNameTheOpAndTheProblem) {
    ops::MaxPoolIndicesAttrs a;
    std::string e = testing::type_error("nn.max_pool_indices", a, {{3, 13}});
    EXPECT_NE(e.find("nn.max_pool_indices: the data must be 3-D (NCW), 4-D (NCHW) or 5-D "
                     "(NCDHW), got Tensor[(3, 13), float32]"),
              std::string::npos)
        << e;
    a.storage_order = 2;
    e = testing::type_error("nn.max_pool_indices", a, {{1, 3, 4, 4}});
    EXPECT_NE(e.find("nn.max_pool_indices: storage_order must be 0 (row-major) or 1 "
                     "(column-major), got 2"),
              std::string::npos)
        << e;
    a.storage_order = 0;
    e = testing::type_error("nn.max_pool_indices", a, {{1, 3, 4}});
    EXPECT_NE(e.find("nn.max_pool_indices: pool_size needs 1 values, got [1, 1]"),
              std::string::npos)
        << e;
    a.pool_size = {2, 2};
    a.padding = {0, 2, 0, 2};
    e = testing::type_error("nn.max_pool_indices", a, {{1, 3, 4, 4}});
    EXPECT_NE(e.find("nn.max_pool_indices: the window at output width 0 lies entirely in the "
                     "padding"),
              std::string::npos)
        << e;
}

// ---- nn.max_pool3d and nn.avg_pool3d ----------------------------------------------------------

using ops::Pool3DAttrs;

TEST(Pool3D, MatchesReference) {
    std::vector<PoolCase> cases = {
        {"plain",
         {1, 2, 6, 7, 8},
         {2, 2, 2},
         {2, 2, 2},
         {0, 0, 0, 0, 0, 0},
         {1, 1, 1},
         false,
         false},
        {"odd",
         {2, 3, 7, 9, 11},
         {3, 2, 3},
         {2, 1, 3},
         {1, 0, 1, 0, 1, 2},
         {1, 1, 1},
         false,
         false},
        {"ceil", {1, 2, 7, 8, 9}, {3, 3, 2}, {2, 2, 2}, {0, 1, 0, 0, 1, 0}, {1, 1, 1}, true, false},
        {"include_pad",
         {1, 2, 5, 6, 7},
         {3, 3, 3},
         {2, 2, 2},
         {1, 1, 1, 1, 1, 1},
         {1, 1, 1},
         false,
         true},
        {"ceil_include_pad",
         {1, 2, 6, 5, 8},
         {2, 3, 3},
         {2, 2, 2},
         {1, 0, 1, 0, 1, 1},
         {1, 1, 1},
         true,
         true},
        {"dilated",
         {1, 2, 7, 8, 13},
         {2, 2, 3},
         {1, 2, 2},
         {1, 0, 1, 0, 1, 1},
         {2, 1, 2},
         true,
         false},
    };
    for (const auto& c : cases) {
        auto x = random_tensor(c.x, 31);
        Pool3DAttrs a = attrs_of<Pool3DAttrs>(c);
        for (bool is_max : {true, false}) {
            for (bool generic : {false, true}) {
                NDArray y = run_op(is_max ? "nn.max_pool3d" : "nn.avg_pool3d", a, {x}, {},
                                   generic ? ops::schedule_pool_generic : nullptr);
                testing::expect_close(y, pool_reference(x, a, is_max), 1e-5,
                                      std::string(c.name) + (is_max ? " max" : " avg") +
                                          (generic ? " generic" : " x86"));
            }
        }
    }
}

TEST(Pool3D, FusedAvgPoolRelu) {
    PoolCase c{"",   {1, 4, 5, 7, 9}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1, 1, 1, 1}, {1, 1, 1}, true,
               false};
    Pool3DAttrs a = attrs_of<Pool3DAttrs>(c);
    auto x = random_tensor(c.x, 32);
    NDArray y = run_op("nn.avg_pool3d", a, {x}, {{"nn.relu", {}}});
    auto want = pool_reference(x, a, false);
    for (auto& v : want) v = std::max(0.0, v);
    testing::expect_close(y, want, 1e-5, "avg_pool3d+relu");
}

TEST(Pool3DErrors, TypeRulesNameTheOpAndTheProblem) {
    Pool3DAttrs a;
    std::string e = testing::type_error("nn.max_pool3d", a, {{1, 3, 13, 11}});
    EXPECT_NE(e.find("node 'node_7'"), std::string::npos) << e;
    EXPECT_NE(e.find("nn.max_pool3d: the data must be 5-D (NCDHW)"), std::string::npos) << e;
    a.pool_size = {3, 2, 2};
    e = testing::type_error("nn.avg_pool3d", a, {{1, 3, 2, 4, 11}});
    EXPECT_NE(e.find("nn.avg_pool3d: the (dilated) window depth 3 is larger than the padded "
                     "input depth 2"),
              std::string::npos)
        << e;
    a.pool_size = {2, 2};
    e = testing::type_error("nn.avg_pool3d", a, {{1, 3, 4, 4, 11}});
    EXPECT_NE(e.find("nn.avg_pool3d: pool_size needs 3 values, got [2, 2]"), std::string::npos)
        << e;
    a.pool_size = {2, 2, 2};
    a.padding = {0, 0, 0, 1, 0};
    e = testing::type_error("nn.max_pool3d", a, {{1, 3, 4, 4, 11}});
    EXPECT_NE(e.find("nn.max_pool3d: padding needs 6 values, got [0, 0, 0, 1, 0]"),
              std::string::npos)
        << e;
    a.padding = {0, 0, 0, 0, 0, 0};
    a.strides = {1, 0, 1};
    e = testing::type_error("nn.max_pool3d", a, {{1, 3, 4, 4, 11}});
    EXPECT_NE(e.find("nn.max_pool3d: strides must be >= 1, got [1, 0, 1]"), std::string::npos) << e;
}

}  // namespace
}  // namespace anvil
