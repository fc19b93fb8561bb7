// NonMaxSuppression compiled once from the suite's model and run on other boxes, scores and
// thresholds (all run-time inputs there), and compiled once with symbolic batch, class and box
// counts and run at several sizes, against a direct greedy selection.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "conformance/node_model.h"
#include "unit/frontend/onnx_test_util.h"

namespace anvil {
namespace {

using testing::array;

constexpr int64_t kBatches = 2, kBoxes = 6;  // the suite model's [2, 6, 4] boxes, 1 class

float iou(const float* a, const float* b) {
    auto lo = [](float p, float q) { return std::min(p, q); };
    auto hi = [](float p, float q) { return std::max(p, q); };
    float ay0 = lo(a[0], a[2]), ax0 = lo(a[1], a[3]), ay1 = hi(a[0], a[2]), ax1 = hi(a[1], a[3]);
    float by0 = lo(b[0], b[2]), bx0 = lo(b[1], b[3]), by1 = hi(b[0], b[2]), bx1 = hi(b[1], b[3]);
    float area_a = (ay1 - ay0) * (ax1 - ax0), area_b = (by1 - by0) * (bx1 - bx0);
    if (area_a <= 0 || area_b <= 0) return 0;
    float ih = std::max(0.0f, std::min(ay1, by1) - std::max(ay0, by0));
    float iw = std::max(0.0f, std::min(ax1, bx1) - std::max(ax0, bx0));
    float inter = ih * iw;
    return inter / (area_a + area_b - inter);
}

// (batch, class, box) triples in selection order, for boxes [batches, n, 4] and scores
// [batches, classes, n].
std::vector<int64_t> greedy(const std::vector<float>& boxes, const std::vector<float>& scores,
                            int64_t max_out, float iou_threshold, float score_threshold,
                            int64_t batches = kBatches, int64_t classes = 1, int64_t n = kBoxes) {
    std::vector<int64_t> out;
    for (int64_t b = 0; b < batches; ++b) {
        for (int64_t c = 0; c < classes; ++c) {
            const float* s = scores.data() + (b * classes + c) * n;  // n may be 0
            std::vector<int64_t> order(n);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(order.begin(), order.end(),
                             [&](int64_t i, int64_t j) { return s[i] > s[j]; });
            std::vector<int64_t> kept;
            for (int64_t i : order) {
                if (s[i] <= score_threshold || static_cast<int64_t>(kept.size()) >= max_out) {
                    continue;
                }
                bool suppressed = false;
                for (int64_t k : kept) {
                    suppressed |=
                        iou(&boxes[(b * n + i) * 4], &boxes[(b * n + k) * 4]) > iou_threshold;
                }
                if (!suppressed) kept.push_back(i);
            }
            for (int64_t k : kept) out.insert(out.end(), {b, c, k});
        }
    }
    return out;
}

// Random values in [0, 1) from a small linear congruential generator.
struct Uniform {
    uint32_t state;
    float operator()() {
        state = state * 1664525u + 1013904223u;
        return static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
    }
};

class NonMaxSuppression : public testing::NodeModelTest {};

TEST_F(NonMaxSuppression, MatchesGreedySelectionForOtherInputs) {
    testing::CompiledNodeModel m("test_nonmaxsuppression_two_batches");
    Uniform next{7};
    for (int round = 0; round < 6; ++round) {
        std::vector<float> boxes(kBatches * kBoxes * 4), scores(kBatches * kBoxes);
        for (auto& v : boxes) v = next();
        for (auto& v : scores) v = std::round(next() * 8) / 8;  // ties happen
        int64_t max_out = round % 3 + 1;
        float iou_threshold = 0.1f * static_cast<float>(round);
        float score_threshold = round % 2 ? 0.3f : -1.0f;
        auto out = m.run({array<float>({kBatches, kBoxes, 4}, boxes, "float32"),
                          array<float>({kBatches, 1, kBoxes}, scores, "float32"),
                          array<int64_t>({1}, {max_out}, "int64"),
                          array<float>({1}, {iou_threshold}, "float32"),
                          array<float>({1}, {score_threshold}, "float32")})[0];
        std::vector<int64_t> want = greedy(boxes, scores, max_out, iou_threshold, score_threshold);
        EXPECT_EQ(testing::shape_of(out),
                  (std::vector<int64_t>{static_cast<int64_t>(want.size() / 3), 3}))
            << "round " << round;
        EXPECT_EQ(out.to_vector<int64_t>(), want) << "round " << round;
    }
}

TEST_F(NonMaxSuppression, NothingSelectedGivesAnEmptyResult) {
    testing::CompiledNodeModel m("test_nonmaxsuppression_two_batches");
    std::vector<float> boxes(kBatches * kBoxes * 4, 0.5f), scores(kBatches * kBoxes, 0.1f);
    auto out = m.run({array<float>({kBatches, kBoxes, 4}, boxes, "float32"),
                      array<float>({kBatches, 1, kBoxes}, scores, "float32"),
                      array<int64_t>({1}, {3}, "int64"), array<float>({1}, {0.5f}, "float32"),
                      array<float>({1}, {0.2f}, "float32")})[0];
    EXPECT_EQ(testing::shape_of(out), (std::vector<int64_t>{0, 3}));
}

// Boxes [b, n, 4] and scores [b, c, n] with every count symbolic: one compilation, any sizes.
TEST(NonMaxSuppressionSymbolic, OneCompilationServesEveryBoxCount) {
    frontend::testing::ModelBuilder b(11);
    b.input("boxes", {1, 5, 4}, ::onnx::TensorProto::FLOAT, {"b", "n"});
    b.input("scores", {1, 1, 5}, ::onnx::TensorProto::FLOAT, {"b", "c", "n"});
    b.input("max_out", {1}, ::onnx::TensorProto::INT64);
    b.input("iou", {1}, ::onnx::TensorProto::FLOAT);
    b.input("score", {1}, ::onnx::TensorProto::FLOAT);
    b.node("NonMaxSuppression", {"boxes", "scores", "max_out", "iou", "score"}, {"selected"},
           "nms_1");
    b.output("selected");
    testing::CompiledNodeModel m(b.import());
    Uniform next{11};
    int round = 0;
    for (auto [batches, classes, n] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {1, 2, 5}, {2, 1, 9}, {3, 2, 17}, {1, 3, 40}, {2, 2, 0}}) {
        for (int variant = 0; variant < 2; ++variant, ++round) {
            std::vector<float> boxes(batches * n * 4), scores(batches * classes * n);
            for (auto& v : boxes) v = next();
            for (auto& v : scores) v = std::round(next() * 8) / 8;  // ties happen
            int64_t max_out = variant ? 3 : n;
            float iou_threshold = variant ? 0.3f : 0.6f;
            float score_threshold = variant ? 0.2f : -1.0f;
            auto out = m.run({testing::array<float>({batches, n, 4}, boxes, "float32"),
                              testing::array<float>({batches, classes, n}, scores, "float32"),
                              testing::array<int64_t>({1}, {max_out}, "int64"),
                              testing::array<float>({1}, {iou_threshold}, "float32"),
                              testing::array<float>({1}, {score_threshold}, "float32")})[0];
            std::vector<int64_t> want =
                greedy(boxes, scores, max_out, iou_threshold, score_threshold, batches, classes, n);
            EXPECT_EQ(testing::shape_of(out),
                      (std::vector<int64_t>{static_cast<int64_t>(want.size() / 3), 3}))
                << "round " << round;
            EXPECT_EQ(out.to_vector<int64_t>(), want) << "round " << round;
        }
    }
}

// Sizes that must agree have to be one dimension (the same dim_param).
TEST(NonMaxSuppressionSymbolic, BoxCountsOfDifferentNamesAreRefused) {
    frontend::testing::ModelBuilder b(11);
    b.input("boxes", {1, 5, 4}, ::onnx::TensorProto::FLOAT, {"", "n"});
    b.input("scores", {1, 1, 5}, ::onnx::TensorProto::FLOAT, {"", "", "m"});
    b.node("NonMaxSuppression", {"boxes", "scores"}, {"selected"}, "nms_2");
    b.output("selected");
    EXPECT_TRUE(testing::contains(
        testing::error_of([&] { b.import(); }),
        "node 'nms_2' (NonMaxSuppression, opset 11): boxes must be [batch, n, 4] and scores "
        "[batch, classes, n], not Tensor[(1, n, 4), float32] and Tensor[(1, 1, m), float32]"));
}

}  // namespace
}  // namespace anvil
