#include "tune/program_cost_model.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "support/error.h"
#include "tune/program_features.h"

namespace anvil::tune {

namespace {

// New measurements after which the online model is trained again: each training is a few
// milliseconds for a few hundred rows, but the search predicts after every batch.
constexpr size_t kRetrainEvery = 8;

}  // namespace

std::string default_cost_model_path() {
    if (const char* env = std::getenv("ANVIL_COST_MODEL"); env && *env) return env;
    const std::string shipped = ANVIL_SHIPPED_COST_MODEL;
    return std::filesystem::exists(shipped) ? shipped : std::string();
}

ProgramCostModel::ProgramCostModel(uint64_t seed)
    : pretrained_(CostObjective::rank, seed), online_(CostObjective::rank, seed) {}

void ProgramCostModel::load_pretrained(const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    pretrained_.load(path);
    if (pretrained_.width() != program_feature_width()) {
        user_error() << "the cost model '" << path << "' was trained on " << pretrained_.width()
                     << " features; this Anvil's programs have " << program_feature_width()
                     << " (retrain it with scripts/train_cost_model.sh)";
    }
    has_pretrained_ = true;
}

void ProgramCostModel::add(const std::string& task, const std::vector<std::vector<float>>& rows,
                           const std::vector<double>& costs) {
    ANVIL_CHECK(rows.size() == costs.size())
        << rows.size() << " rows, " << costs.size() << " costs";
    if (rows.empty()) return;  // an empty group would reach XGBoost
    std::lock_guard<std::mutex> lock(mutex_);
    TaskData& t = tasks_[task];
    for (size_t i = 0; i < rows.size(); ++i) {
        ANVIL_CHECK(static_cast<int>(rows[i].size()) == program_feature_width())
            << "a feature row of " << rows[i].size() << " values";
        t.rows.insert(t.rows.end(), rows[i].begin(), rows[i].end());
        t.costs.push_back(costs[i]);
    }
    measured_ += rows.size();
}

void ProgramCostModel::retrain() {
    // Something to rank: a task with two successful, different costs.
    bool informative = false;
    for (const auto& [name, t] : tasks_) {
        int ok = 0;
        for (double c : t.costs) ok += std::isfinite(c) && c > 0;
        informative = informative || ok >= 2;
    }
    trained_on_ = measured_;
    if (!informative) return;
    std::vector<float> rows;
    std::vector<double> costs;
    std::vector<unsigned> groups;
    for (const auto& [name, t] : tasks_) {
        rows.insert(rows.end(), t.rows.begin(), t.rows.end());
        costs.insert(costs.end(), t.costs.begin(), t.costs.end());
        groups.push_back(static_cast<unsigned>(t.costs.size()));
    }
    if (has_pretrained_) {
        online_.train_from(pretrained_, rows, costs, groups);
    } else {
        online_.train(rows, program_feature_width(), costs, groups);
    }
    online_trained_ = true;
}

std::optional<std::vector<float>> ProgramCostModel::predict(
    const std::vector<std::vector<float>>& rows) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (measured_ >= trained_on_ + kRetrainEvery || (!online_trained_ && measured_ > trained_on_)) {
        retrain();
    }
    const XgbCostModel* model = online_trained_   ? &online_
                                : has_pretrained_ ? &pretrained_
                                                  : nullptr;
    if (!model) return std::nullopt;
    std::vector<float> flat;
    flat.reserve(rows.size() * program_feature_width());
    for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    return model->predict(flat);
}

}  // namespace anvil::tune
