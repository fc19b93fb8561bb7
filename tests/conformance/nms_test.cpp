// NonMaxSuppression compiled once from the suite's model and run on other boxes, scores and
// thresholds (all run-time inputs there), against a direct greedy selection.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

#include "conformance/node_model.h"

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

// (batch, class, box) triples in selection order.
std::vector<int64_t> greedy(const std::vector<float>& boxes, const std::vector<float>& scores,
                            int64_t max_out, float iou_threshold, float score_threshold) {
    std::vector<int64_t> out;
    for (int64_t b = 0; b < kBatches; ++b) {
        const float* s = &scores[b * kBoxes];
        std::vector<int64_t> order(kBoxes);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t i, int64_t j) { return s[i] > s[j]; });
        std::vector<int64_t> kept;
        for (int64_t i : order) {
            if (s[i] <= score_threshold || static_cast<int64_t>(kept.size()) >= max_out) continue;
            bool suppressed = false;
            for (int64_t k : kept) {
                suppressed |=
                    iou(&boxes[(b * kBoxes + i) * 4], &boxes[(b * kBoxes + k) * 4]) > iou_threshold;
            }
            if (!suppressed) kept.push_back(i);
        }
        for (int64_t k : kept) out.insert(out.end(), {b, 0, k});
    }
    return out;
}

class NonMaxSuppression : public testing::NodeModelTest {};

TEST_F(NonMaxSuppression, MatchesGreedySelectionForOtherInputs) {
    testing::CompiledNodeModel m("test_nonmaxsuppression_two_batches");
    uint32_t state = 7;
    auto next = [&] {
        state = state * 1664525u + 1013904223u;
        return static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
    };
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

}  // namespace
}  // namespace anvil
