// A gradient-boosted tree ensemble as data: what a cost model file holds, and how Anvil
// predicts with a model it did not train in this process.
//
// XGBoost trains the models (xgb_cost_model.h), but its own model reader trusts the structure of
// its input — a mutated model file corrupts its heap (found by the cost_model fuzz harness) — so
// a model is saved in this format instead and read back by a reader that checks every index:
//
//   {"format": "anvil-cost-model", "version": 1, "num_features": 318,
//    "trees": [{"nodes": [{"feature": 3, "threshold": 0.5, "yes": 1, "no": 2, "missing": 1},
//                         {"leaf": 0.25}, {"leaf": -0.1}]}, ...]}
//
// A tree's root is its node 0; a split sends a row to `yes` when row[feature] < threshold, to
// `missing` when the value is NaN, else to `no`; the prediction is the sum of the leaves reached
// (a ranking score: a constant offset does not change the order, so none is stored).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <vector>

namespace anvil::tune {

struct TreeNode {
    int feature = -1;  // -1: a leaf
    float threshold = 0;
    int yes = -1, no = -1, missing = -1;
    float leaf = 0;
};

struct TreeEnsemble {
    int num_features = 0;
    std::vector<std::vector<TreeNode>> trees;

    // The sum of the leaves `row` (num_features values) reaches.
    float predict(std::span<const float> row) const;
    nlohmann::json to_json() const;
    // UserError naming `source` for anything but a well-formed ensemble: an unknown format or
    // version, a feature index out of range, a child that is no node of its tree or not below
    // its parent (a cycle), a value that is not finite or is out of range (leaves within 1e6, so
    // that every prediction is finite).
    static TreeEnsemble from_json(const nlohmann::json& j, const std::string& source);
    // The trees of XGBoost's JSON dump (XGBoosterDumpModelEx, one JSON text per tree).
    static TreeEnsemble from_xgboost_dump(const std::vector<std::string>& trees, int num_features);
    // Appends the trees of `other` (same num_features): the sum of both models.
    void add(const TreeEnsemble& other);
};

}  // namespace anvil::tune
