#include "tune/xgb_cost_model.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <limits>
#include <string>

#include "support/error.h"

namespace anvil::tune {

namespace {

// Boosting rounds per training. TVM trains up to 8000 rounds with early stopping on the
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
    : objective_(objective), seed_(seed) {}

XgbCostModel::~XgbCostModel() {
    if (booster_) XGBoosterFree(booster_);
}

void XgbCostModel::train(std::span<const float> features, int width, std::span<const double> costs,
                         std::span<const unsigned> groups) {
    fit(nullptr, features, width, costs, groups, 0);
}

void XgbCostModel::train_from(const XgbCostModel& base, std::span<const float> features,
                              std::span<const double> costs, std::span<const unsigned> groups) {
    ANVIL_CHECK(base.trained()) << "train_from an untrained model";
    bst_ulong n = 0;
    const char* bytes = nullptr;
    check(XGBoosterSaveModelToBuffer(base.booster_, R"({"format": "json"})", &n, &bytes),
          "XGBoosterSaveModelToBuffer");
    BoosterHandle booster = nullptr;
    check(XGBoosterCreate(nullptr, 0, &booster), "XGBoosterCreate");
    if (int rc = XGBoosterLoadModelFromBuffer(booster, bytes, n); rc != 0) {
        XGBoosterFree(booster);
        check(rc, "XGBoosterLoadModelFromBuffer");
    }
    int rounds = 0;
    if (int rc = XGBoosterBoostedRounds(booster, &rounds); rc != 0) {
        XGBoosterFree(booster);
        check(rc, "XGBoosterBoostedRounds");
    }
    fit(booster, features, base.width_, costs, groups, rounds);
}

void XgbCostModel::fit(void* start, std::span<const float> features, int width,
                       std::span<const double> costs, std::span<const unsigned> groups,
                       int first_round) {
    BoosterHandle booster = start;
    auto fail = [&](int rc, const char* what) {
        if (rc == 0) return;
        if (booster) XGBoosterFree(booster);
        check(rc, what);
    };
    Matrix data(features, width);
    ANVIL_CHECK(features.size() / width == costs.size())
        << features.size() / width << " rows but " << costs.size() << " costs";
    std::vector<float> labels = labels_of(costs, groups);
    fail(XGDMatrixSetFloatInfo(data.get(), "label", labels.data(), labels.size()),
         "XGDMatrixSetFloatInfo");
    if (!groups.empty()) {
        fail(XGDMatrixSetUIntInfo(data.get(), "group", groups.data(), groups.size()),
             "XGDMatrixSetUIntInfo");
    }
    if (!booster) {
        DMatrixHandle train_set[] = {data.get()};
        check(XGBoosterCreate(train_set, 1, &booster), "XGBoosterCreate");
    }
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
    for (int round = 0; round < kRounds; ++round) {
        fail(XGBoosterUpdateOneIter(booster, first_round + round, data.get()),
             "XGBoosterUpdateOneIter");
    }
    if (booster_) XGBoosterFree(booster_);
    booster_ = booster;
    width_ = width;
}

void XgbCostModel::save(const std::string& path) const {
    ANVIL_CHECK(trained()) << "save before train";
    if (XGBoosterSaveModel(booster_, path.c_str()) != 0) {
        user_error() << "cannot write the cost model '" << path << "': " << XGBGetLastError();
    }
}

void XgbCostModel::load(const std::string& path) {
    BoosterHandle booster = nullptr;
    check(XGBoosterCreate(nullptr, 0, &booster), "XGBoosterCreate");
    if (XGBoosterLoadModel(booster, path.c_str()) != 0) {
        std::string why = XGBGetLastError();
        XGBoosterFree(booster);
        user_error() << "cannot read the cost model '" << path << "': " << why;
    }
    bst_ulong features = 0;
    if (XGBoosterGetNumFeature(booster, &features) != 0 || features == 0) {
        XGBoosterFree(booster);
        user_error() << "cannot read the cost model '" << path << "': it has no features";
    }
    if (booster_) XGBoosterFree(booster_);
    booster_ = booster;
    width_ = static_cast<int>(features);
}

std::vector<float> XgbCostModel::predict(std::span<const float> features) const {
    ANVIL_CHECK(trained()) << "predict before train";
    if (features.empty()) return {};
    Matrix data(features, width_);
    bst_ulong n = 0;
    const float* scores = nullptr;
    check(XGBoosterPredict(booster_, data.get(), /*option_mask=*/0, /*ntree_limit=*/0,
                           /*training=*/0, &n, &scores),
          "XGBoosterPredict");
    ANVIL_CHECK(n == features.size() / width_) << n << " predictions";
    return std::vector<float>(scores, scores + n);
}

}  // namespace anvil::tune
