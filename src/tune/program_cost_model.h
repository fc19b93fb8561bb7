// The auto-scheduler's learned cost model: gradient-boosted trees (xgb_cost_model.h) over the
// features of lowered programs (program_features.h), trained online on what a tuning run
// measures and, when given one, starting from a model pre-trained on many measured programs.
//
// The model ranks the programs of one task (XGBoost's pairwise ranking within each task's
// group), which is what the search needs: which candidates to measure next. Until it has
// something to learn from — no pre-trained model and fewer than two successful measurements of
// any task — it has no opinion (predict returns nullopt) and the search samples at random.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tune/xgb_cost_model.h"

namespace anvil::tune {

// The pre-trained model shipped with Anvil: $ANVIL_COST_MODEL when set, else the one in the
// source tree (data/cost_model/model.json) when it exists, else "" (none).
std::string default_cost_model_path();

class ProgramCostModel {
public:
    explicit ProgramCostModel(uint64_t seed);

    // Starts from the model in `path` (UserError naming it when it cannot be read or was trained
    // on features of another width).
    void load_pretrained(const std::string& path);
    bool has_pretrained() const { return has_pretrained_; }

    // Measured programs of a task: their feature rows and costs in seconds (+inf: failed).
    void add(const std::string& task, const std::vector<std::vector<float>>& rows,
             const std::vector<double>& costs);
    // Scores (higher: faster) of feature rows; nullopt while the model knows nothing.
    std::optional<std::vector<float>> predict(const std::vector<std::vector<float>>& rows);

    size_t measured() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return measured_;
    }

private:
    void retrain();

    struct TaskData {
        std::vector<float> rows;  // row-major
        std::vector<double> costs;
    };
    // Searches running on several threads may share one model (Python's tuning loops release
    // the GIL): every public call holds it.
    mutable std::mutex mutex_;
    std::map<std::string, TaskData> tasks_;
    XgbCostModel pretrained_;
    XgbCostModel online_;
    bool has_pretrained_ = false;
    bool online_trained_ = false;
    size_t measured_ = 0;
    size_t trained_on_ = 0;  // measured_ at the last training
};

}  // namespace anvil::tune
