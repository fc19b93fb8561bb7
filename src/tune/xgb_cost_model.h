// A gradient-boosted cost model (Debian's libxgboost, through its C API): trained on feature rows
// and their measured costs, it predicts a score for new rows, higher for faster configurations.
//
// Costs are made comparable inside a group (one task's points) before training: a point's label
// is the group's best cost over its cost, so the best is 1, a point twice as slow 0.5, and a
// failure (+inf, NaN or a non-positive cost) 0 — slower than anything that ran. The rank
// objective (XGBoost's rank:pairwise, TVM's default) learns to order the points of each group and
// never compares groups; the regression objective fits the labels themselves. Ranking is what a
// tuner needs (which candidate to measure next), and it ignores how much faster.
//
// A model is saved and loaded as a tree ensemble (tree_ensemble.h) that Anvil predicts with
// itself: XGBoost never reads a model file. A loaded model is refined by train_from, whose new
// trees fit what the loaded ones mispredict (XGBoost trains them with the loaded model's scores
// as base margins); the scores are then the sum of both.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tune/tree_ensemble.h"

namespace anvil::tune {

enum class CostObjective { rank, regression };

class XgbCostModel {
public:
    XgbCostModel(CostObjective objective, uint64_t seed);
    ~XgbCostModel();
    XgbCostModel(const XgbCostModel&) = delete;
    XgbCostModel& operator=(const XgbCostModel&) = delete;

    // Replaces the model by one trained on `features` (row-major, `width` columns, NaN where a
    // feature is missing) and their `costs` in seconds. `groups` are the sizes of consecutive
    // groups of rows (summing to the row count); empty: one group.
    void train(std::span<const float> features, int width, std::span<const double> costs,
               std::span<const unsigned> groups = {});
    // The same, starting from `base`'s trees (trained, of the same width): the new rounds fit
    // what base mispredicts on these rows, so a model pre-trained on many programs is refined by
    // the few measured in this run instead of being forgotten.
    void train_from(const XgbCostModel& base, std::span<const float> features,
                    std::span<const double> costs, std::span<const unsigned> groups = {});
    // Writes the trained model as a tree ensemble (tree_ensemble.h).
    void save(const std::string& path) const;
    // Replaces the model by the one in `path` (a saved tree ensemble, predicted with Anvil's own
    // code; XGBoost never reads the file); UserError naming the file when it is not one.
    void load(const std::string& path);
    // The whole model as trees: the base (a loaded model, or train_from's) and the trained ones.
    TreeEnsemble ensemble() const;
    bool trained() const { return booster_ != nullptr || base_.has_value(); }
    // Boosting rounds of each training (more for a large data set trained once, fewer for one
    // retrained after every batch).
    void set_rounds(int rounds) { rounds_ = rounds; }
    // The features' width the model was trained on; predict's rows have it.
    int width() const { return width_; }
    // One score per row of `features` (width() columns); higher is faster.
    std::vector<float> predict(std::span<const float> features) const;

private:
    void fit(std::span<const float> features, int width, std::span<const double> costs,
             std::span<const unsigned> groups, std::span<const float> base_margin);
    CostObjective objective_;
    uint64_t seed_;
    void* booster_ = nullptr;  // BoosterHandle; null until trained
    // Trees this model adds the booster's to: a loaded model, or the base of train_from (the
    // booster then learned what the base mispredicts: trained with its scores as base margins).
    std::optional<TreeEnsemble> base_;
    int rounds_;
    int width_ = 0;
};

}  // namespace anvil::tune
