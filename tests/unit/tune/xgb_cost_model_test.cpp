// The gradient-boosted cost model: saved and loaded models predict the same, a model refined
// from a base keeps what the base learned, and unreadable model files are UserErrors.
#include "tune/xgb_cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>

#include "support/error.h"
#include "tune_test_util.h"

namespace anvil::tune {
namespace {

// Rows of two features; the cost falls with the first and ignores the second.
void make_rows(int n, uint64_t seed, std::vector<float>* rows, std::vector<double>* costs) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(0, 1);
    for (int i = 0; i < n; ++i) {
        const float a = u(rng), b = u(rng);
        rows->insert(rows->end(), {a, b});
        costs->push_back(1.0 / (0.1 + a));
    }
}

// The share of pairs the scores order like the costs (faster: higher score).
double pair_accuracy(const std::vector<float>& scores, const std::vector<double>& costs) {
    int pairs = 0, ordered = 0;
    for (size_t i = 0; i < costs.size(); ++i) {
        for (size_t j = i + 1; j < costs.size(); ++j) {
            ++pairs;
            ordered += (costs[i] < costs[j]) == (scores[i] > scores[j]);
        }
    }
    return static_cast<double>(ordered) / pairs;
}

TEST(XgbCostModel, SavedAndLoadedModelsPredictTheSame) {
    testing::TempDir dir;
    std::vector<float> rows;
    std::vector<double> costs;
    make_rows(200, 1, &rows, &costs);
    XgbCostModel model(CostObjective::rank, 1);
    model.train(rows, 2, costs);
    EXPECT_GT(pair_accuracy(model.predict(rows), costs), 0.9);
    model.save(dir / "model.json");
    XgbCostModel loaded(CostObjective::rank, 2);
    loaded.load(dir / "model.json");
    EXPECT_EQ(loaded.width(), 2);
    // The same scores up to XGBoost's constant base score, which no ranking depends on.
    const auto a = loaded.predict(rows), b = model.predict(rows);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i] - b[i], a[0] - b[0], 1e-5) << i;
}

TEST(XgbCostModel, TrainingFromABaseKeepsWhatItLearned) {
    std::vector<float> rows, few_rows;
    std::vector<double> costs, few_costs;
    make_rows(300, 1, &rows, &costs);
    make_rows(6, 2, &few_rows, &few_costs);
    XgbCostModel base(CostObjective::rank, 1);
    base.train(rows, 2, costs);
    // Six points alone teach little; refined from the base, the model still ranks new points.
    XgbCostModel alone(CostObjective::rank, 1), refined(CostObjective::rank, 1);
    alone.train(few_rows, 2, few_costs);
    refined.train_from(base, few_rows, few_costs);
    std::vector<float> test_rows;
    std::vector<double> test_costs;
    make_rows(100, 3, &test_rows, &test_costs);
    const double with_base = pair_accuracy(refined.predict(test_rows), test_costs);
    EXPECT_GT(with_base, 0.85);
    EXPECT_GE(with_base, pair_accuracy(alone.predict(test_rows), test_costs));
}

TEST(XgbCostModel, AFileThatIsNoModelIsAUserError) {
    testing::TempDir dir;
    XgbCostModel model(CostObjective::rank, 1);
    try {
        model.load(dir / "missing.json");
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("missing.json"), std::string::npos) << e.what();
    }
    testing::write_file(dir / "garbage.json", "{\"learner\": 3");
    EXPECT_THROW(model.load(dir / "garbage.json"), UserError);
    // Well-formed JSON, but a child pointing back at its parent (a cycle) or a feature out of
    // range: refused before any prediction walks it.
    const std::string head = R"({"format": "anvil-cost-model", "version": 1, "num_features": 2, )";
    testing::write_file(dir / "cycle.json",
                        head + R"("trees": [{"nodes": [{"feature": 0, "threshold": 1, "yes": 0, )"
                               R"("no": 1, "missing": 1}, {"leaf": 1}]}]})");
    EXPECT_THROW(model.load(dir / "cycle.json"), UserError);
    testing::write_file(dir / "feature.json",
                        head + R"("trees": [{"nodes": [{"feature": 7, "threshold": 1, "yes": 1, )"
                               R"("no": 2, "missing": 1}, {"leaf": 1}, {"leaf": 2}]}]})");
    EXPECT_THROW(model.load(dir / "feature.json"), UserError);
    testing::write_file(dir / "binary.json", std::string("\x00\x01\x02garbage", 10));
    EXPECT_THROW(model.load(dir / "binary.json"), UserError);
    EXPECT_FALSE(model.trained());
}

}  // namespace
}  // namespace anvil::tune
