// MaxPool's Indices output beyond the suite's two 2-D cases: 1-D, 2-D and 3-D windows with
// strides, asymmetric pads, dilations and ceil_mode, both storage orders, ties (the first tap in
// row-major order wins, as in onnxruntime) and uint8 data, against a direct scan of each window;
// and the errors for a bad storage_order and for a window of padding only.
#include <gtest/gtest.h>

#include <functional>

#include "conformance/node_model.h"
#include "driver/evaluate.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using frontend::testing::contains;
using frontend::testing::ModelBuilder;
using frontend::testing::user_error_of;
using testing::array;

struct PoolCase {
    const char* name;
    std::vector<int64_t> shape, kernel, strides, pads, dilations;
    bool ceil_mode;
    int64_t storage_order;
};

// Calls f(index) for every index below `extents`, row-major.
void for_each_index(const std::vector<int64_t>& extents,
                    const std::function<void(const std::vector<int64_t>&)>& f) {
    int64_t count = 1;
    for (int64_t e : extents) count *= e;
    std::vector<int64_t> index(extents.size(), 0);
    for (; count > 0; --count) {
        f(index);
        for (size_t d = extents.size(); d-- > 0;) {
            if (++index[d] < extents[d]) break;
            index[d] = 0;
        }
    }
}

int64_t out_extent(const PoolCase& c, size_t d) {
    size_t nd = c.kernel.size();
    int64_t in = c.shape[2 + d], s = c.strides[d];
    int64_t avail = in + c.pads[d] + c.pads[d + nd] - c.dilations[d] * (c.kernel[d] - 1) - 1;
    int64_t out = (c.ceil_mode ? (avail + s - 1) / s : avail / s) + 1;
    if (c.ceil_mode && (out - 1) * s >= in + c.pads[d]) --out;
    return out;
}

// The values and indices of every window, scanning its in-input taps in row-major order and
// keeping the first strictly greater value.
template <typename T>
std::pair<std::vector<T>, std::vector<int64_t>> reference(const PoolCase& c,
                                                          const std::vector<T>& x) {
    size_t nd = c.kernel.size();
    std::vector<int64_t> in(c.shape.begin() + 2, c.shape.end()), out;
    int64_t volume = 1;
    for (size_t d = 0; d < nd; ++d) {
        out.push_back(out_extent(c, d));
        volume *= in[d];
    }
    std::vector<T> values;
    std::vector<int64_t> indices;
    for (int64_t b = 0; b < c.shape[0] * c.shape[1]; ++b) {
        for_each_index(out, [&](const std::vector<int64_t>& o) {
            bool found = false;
            T best{};
            std::vector<int64_t> at;
            for_each_index(c.kernel, [&](const std::vector<int64_t>& tap) {
                std::vector<int64_t> pos;
                for (size_t d = 0; d < nd; ++d) {
                    pos.push_back(o[d] * c.strides[d] - c.pads[d] + tap[d] * c.dilations[d]);
                    if (pos[d] < 0 || pos[d] >= in[d]) return;
                }
                int64_t row = 0;
                for (size_t d = 0; d < nd; ++d) row = row * in[d] + pos[d];
                T v = x[b * volume + row];
                if (!found || v > best) {
                    found = true;
                    best = v;
                    at = pos;
                }
            });
            ASSERT_TRUE(found) << c.name;
            int64_t flat = 0;
            if (c.storage_order == 0) {
                for (size_t d = 0; d < nd; ++d) flat = flat * in[d] + at[d];
            } else {
                for (size_t d = nd; d-- > 0;) flat = flat * in[d] + at[d];
            }
            values.push_back(best);
            indices.push_back(b * volume + flat);
        });
    }
    return {values, indices};
}

ModelBuilder maxpool_model(const PoolCase& c, int elem_type) {
    ModelBuilder b(12);
    b.input("x", c.shape, elem_type);
    auto* n = b.node("MaxPool", {"x"}, {"y", "z"}, "pool");
    ModelBuilder::attr_ints(n, "kernel_shape", c.kernel);
    ModelBuilder::attr_ints(n, "strides", c.strides);
    ModelBuilder::attr_ints(n, "pads", c.pads);
    ModelBuilder::attr_ints(n, "dilations", c.dilations);
    ModelBuilder::attr_int(n, "ceil_mode", c.ceil_mode);
    ModelBuilder::attr_int(n, "storage_order", c.storage_order);
    b.output("y").output("z");
    return b;
}

template <typename T>
void check(const PoolCase& c, int elem_type, const char* dtype, int levels) {
    int64_t count = 1;
    for (int64_t d : c.shape) count *= d;
    std::vector<T> x(static_cast<size_t>(count));
    uint32_t state = 11;
    for (auto& v : x) {
        state = state * 1664525u + 1013904223u;
        v = static_cast<T>((state >> 8) % static_cast<uint32_t>(levels));  // ties happen
    }
    driver::CompiledModel m = driver::compile_model(maxpool_model(c, elem_type).import(), "llvm");
    auto out = driver::run_in_process(m.module, m.kernels, {array<T>(c.shape, x, dtype)});
    auto [values, indices] = reference(c, x);
    EXPECT_EQ(out[0].template to_vector<T>(), values) << c.name;
    EXPECT_EQ(out[1].template to_vector<int64_t>(), indices) << c.name;
    std::vector<int64_t> shape = {c.shape[0], c.shape[1]};
    for (size_t d = 0; d < c.kernel.size(); ++d) shape.push_back(out_extent(c, d));
    EXPECT_EQ(testing::shape_of(out[1]), shape) << c.name;
}

std::vector<PoolCase> cases() {
    return {
        {"1d", {2, 3, 11}, {3}, {2}, {1, 1}, {1}, false, 0},
        {"1d_dilated_ceil", {1, 2, 10}, {2}, {3}, {1, 0}, {2}, true, 1},
        {"2d", {2, 2, 7, 6}, {3, 2}, {2, 1}, {1, 0, 1, 1}, {1, 2}, true, 0},
        {"2d_column_major", {2, 2, 7, 6}, {3, 2}, {2, 1}, {1, 0, 1, 1}, {1, 2}, true, 1},
        {"2d_global_like", {1, 3, 4, 5}, {4, 5}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, 1},
        // enough work for the parallel, vectorized schedule
        {"2d_large", {2, 8, 40, 41}, {3, 3}, {2, 1}, {1, 1, 1, 1}, {1, 1}, false, 1},
        {"3d", {1, 2, 5, 6, 4}, {2, 3, 2}, {2, 2, 1}, {1, 1, 0, 0, 1, 1}, {1, 1, 2}, true, 0},
        {"3d_column_major",
         {1, 2, 5, 6, 4},
         {2, 3, 2},
         {2, 2, 1},
         {1, 1, 0, 0, 1, 1},
         {1, 1, 2},
         true,
         1},
    };
}

TEST(MaxPoolIndices, FloatWindowsOfEveryRankAndStorageOrder) {
    for (const PoolCase& c : cases()) {
        check<float>(c, ::onnx::TensorProto::FLOAT, "float32", 7);
        check<float>(c, ::onnx::TensorProto::FLOAT, "float32", 1 << 20);  // hardly any ties
    }
}

TEST(MaxPoolIndices, Uint8WithTies) {
    for (const PoolCase& c : cases()) check<uint8_t>(c, ::onnx::TensorProto::UINT8, "uint8", 3);
}

TEST(MaxPoolIndices, ErrorsNameTheNode) {
    PoolCase c{"", {1, 1, 5, 5}, {2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, 2};
    std::string e = user_error_of([&] { maxpool_model(c, ::onnx::TensorProto::FLOAT).import(); });
    EXPECT_TRUE(contains(e, "node 'pool' (MaxPool, opset 12)")) << e;
    EXPECT_TRUE(contains(e, "storage_order must be 0 (row-major) or 1 (column-major), got 2"));
    c.storage_order = 0;
    c.pads = {2, 0, 0, 0};  // the first window in height holds only padding
    e = user_error_of([&] { maxpool_model(c, ::onnx::TensorProto::FLOAT).import(); });
    EXPECT_TRUE(contains(e, "node 'pool' (MaxPool, opset 12)")) << e;
    EXPECT_TRUE(contains(e, "the window at output height 0 lies entirely in the padding")) << e;
}

}  // namespace
}  // namespace anvil
