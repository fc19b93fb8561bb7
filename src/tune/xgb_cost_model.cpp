#include "tune/xgb_cost_model.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "support/error.h"

namespace anvil::tune {

namespace {

// Boosting rounds per training by default. TVM trains up to 8000 rounds with early stopping on the
// training ranking; a few hundred points of a task need far fewer, and a fixed count keeps
// retraining after every batch cheap and its result deterministic.
constexpr int kRounds = 60;

void check(int rc, const char* what) {
    if (rc != 0) internal_error() << "xgboost " << what << ": " << XGBGetLastError();
}

// Owns a DMatrix for the length of one call.
class Matrix {
public:
    Matrix(std::span<const float> features, int width) {
        ANVIL_CHECK(width > 0 && features.size() % static_cast<size_t>(width) == 0)
            << features.size() << " values in rows of " << width;
        check(XGDMatrixCreateFromMat(features.data(), features.size() / width, width,
                                     std::numeric_limits<float>::quiet_NaN(), &handle_),
              "XGDMatrixCreateFromMat");
    }
    ~Matrix() { XGDMatrixFree(handle_); }
    Matrix(const Matrix&) = delete;
    Matrix& operator=(const Matrix&) = delete;
    DMatrixHandle get() const { return handle_; }

private:
    DMatrixHandle handle_ = nullptr;
};

// Labels: the group's best cost over each cost; 0 for failures (model header).
std::vector<float> labels_of(std::span<const double> costs, std::span<const unsigned> groups) {
    std::vector<float> labels(costs.size(), 0.0f);
    auto ok = [](double c) { return std::isfinite(c) && c > 0; };
    size_t begin = 0;
    auto label_group = [&](size_t end) {
        double best = std::numeric_limits<double>::infinity();
        for (size_t i = begin; i < end; ++i) {
            if (ok(costs[i])) best = std::min(best, costs[i]);
        }
        for (size_t i = begin; i < end; ++i) {
            if (ok(costs[i])) labels[i] = static_cast<float>(best / costs[i]);
        }
        begin = end;
    };
    if (groups.empty()) {
        label_group(costs.size());
    } else {
        for (unsigned g : groups) label_group(begin + g);
    }
    ANVIL_CHECK(begin == costs.size()) << "groups cover " << begin << " of " << costs.size();
    return labels;
}

}  // namespace

XgbCostModel::XgbCostModel(CostObjective objective, uint64_t seed)
    : objective_(objective), seed_(seed), rounds_(kRounds) {}

XgbCostModel::~XgbCostModel() {
    if (booster_) XGBoosterFree(booster_);
}

void XgbCostModel::train(std::span<const float> features, int width, std::span<const double> costs,
                         std::span<const unsigned> groups) {
    base_.reset();
    fit(features, width, costs, groups, {});
}

void XgbCostModel::train_from(const XgbCostModel& base, std::span<const float> features,
                              std::span<const double> costs, std::span<const unsigned> groups) {
    ANVIL_CHECK(base.trained()) << "train_from an untrained model";
    TreeEnsemble trees = base.ensemble();
    const size_t width = static_cast<size_t>(trees.num_features);
    ANVIL_CHECK(features.size() % width == 0) << features.size() << " values in rows of " << width;
    std::vector<float> margins;
    for (size_t r = 0; r * width < features.size(); ++r) {
        margins.push_back(trees.predict(features.subspan(r * width, width)));
    }
    base_ = std::move(trees);
    fit(features, static_cast<int>(width), costs, groups, margins);
}

void XgbCostModel::fit(std::span<const float> features, int width, std::span<const double> costs,
                       std::span<const unsigned> groups, std::span<const float> base_margin) {
    Matrix data(features, width);
    ANVIL_CHECK(features.size() / width == costs.size())
        << features.size() / width << " rows but " << costs.size() << " costs";
    std::vector<float> labels = labels_of(costs, groups);
    check(XGDMatrixSetFloatInfo(data.get(), "label", labels.data(), labels.size()),
          "XGDMatrixSetFloatInfo");
    if (!groups.empty()) {
        check(XGDMatrixSetUIntInfo(data.get(), "group", groups.data(), groups.size()),
              "XGDMatrixSetUIntInfo");
    }
    if (!base_margin.empty()) {
        check(XGDMatrixSetFloatInfo(data.get(), "base_margin", base_margin.data(),
                                    base_margin.size()),
              "XGDMatrixSetFloatInfo");
    }
    BoosterHandle booster = nullptr;
    DMatrixHandle train_set[] = {data.get()};
    check(XGBoosterCreate(train_set, 1, &booster), "XGBoosterCreate");
    auto fail = [&](int rc, const char* what) {
        if (rc == 0) return;
        XGBoosterFree(booster);
        check(rc, what);
    };
    // TVM's XGBTuner parameters: shallow trees (knob interactions are few), full rows.
    const std::string seed = std::to_string(seed_ % 2147483647);
    const std::pair<const char*, std::string> params[] = {
        {"objective", objective_ == CostObjective::rank ? "rank:pairwise" : "reg:squarederror"},
        {"max_depth", "3"},
        {"eta", "0.3"},
        {"gamma", "0.0001"},
        {"min_child_weight", "1"},
        {"lambda", "1"},
        {"alpha", "0"},
        {"subsample", "1"},
        {"tree_method", "exact"},
        // One thread: the models are small, a run's measurements use the other cores, and the
        // result does not depend on the machine.
        {"nthread", "1"},
        {"seed", seed},
        {"verbosity", "0"},
    };
    for (const auto& [name, value] : params) {
        fail(XGBoosterSetParam(booster, name, value.c_str()), "XGBoosterSetParam");
    }
    for (int round = 0; round < rounds_; ++round) {
        fail(XGBoosterUpdateOneIter(booster, round, data.get()), "XGBoosterUpdateOneIter");
    }
    if (booster_) XGBoosterFree(booster_);
    booster_ = booster;
    width_ = width;
}

TreeEnsemble XgbCostModel::ensemble() const {
    ANVIL_CHECK(trained()) << "the ensemble of an untrained model";
    TreeEnsemble out = base_ ? *base_ : TreeEnsemble{.num_features = width_};
    if (!booster_) return out;
    bst_ulong n = 0;
    const char** dumps = nullptr;
    check(XGBoosterDumpModelEx(booster_, "", 0, "json", &n, &dumps), "XGBoosterDumpModelEx");
    out.add(TreeEnsemble::from_xgboost_dump(std::vector<std::string>(dumps, dumps + n), width_));
    return out;
}

void XgbCostModel::save(const std::string& path) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << ensemble().to_json().dump() << "\n";
    if (!out) user_error() << "cannot write the cost model '" << path << "'";
}

void XgbCostModel::load(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) user_error() << "cannot read the cost model '" << path << "': no such file";
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) user_error() << "cannot read the cost model '" << path << "': not JSON";
    TreeEnsemble e = TreeEnsemble::from_json(j, path);
    if (booster_) XGBoosterFree(booster_);
    booster_ = nullptr;
    width_ = e.num_features;
    base_ = std::move(e);
}

std::vector<float> XgbCostModel::predict(std::span<const float> features) const {
    ANVIL_CHECK(trained()) << "predict before train";
    if (features.empty()) return {};
    const size_t rows = features.size() / width_;
    std::vector<float> scores(rows, 0.0f);
    if (base_) {
        for (size_t r = 0; r < rows; ++r) {
            scores[r] = base_->predict(features.subspan(r * width_, width_));
        }
    }
    if (booster_) {
        Matrix data(features, width_);
        bst_ulong n = 0;
        const float* margins = nullptr;
        check(XGBoosterPredict(booster_, data.get(), /*option_mask=output margin*/ 1,
                               /*ntree_limit=*/0, /*training=*/0, &n, &margins),
              "XGBoosterPredict");
        ANVIL_CHECK(n == rows) << n << " predictions";
        for (size_t r = 0; r < rows; ++r) scores[r] += margins[r];
    }
    return scores;
}

}  // namespace anvil::tune
