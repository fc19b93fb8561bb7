// The auto-scheduler's cost model: no opinion until it has something to rank, then a ranking of
// the measured task's programs; a pre-trained model of another feature width is refused.
#include "tune/program_cost_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "support/error.h"
#include "tune/program_features.h"
#include "tune/xgb_cost_model.h"
#include "tune_test_util.h"

namespace anvil::tune {
namespace {

// A feature row whose first column is `speed` (the rest 0).
std::vector<float> row(float speed) {
    std::vector<float> r(program_feature_width(), 0.0f);
    r[0] = speed;
    return r;
}

TEST(ProgramCostModel, HasNoOpinionUntilItCanRank) {
    ProgramCostModel model(1);
    EXPECT_FALSE(model.predict({row(1)}).has_value());
    model.add("task", {row(1)}, {1e-3});
    EXPECT_FALSE(model.predict({row(1)}).has_value());  // one point ranks nothing
    std::vector<std::vector<float>> rows;
    std::vector<double> costs;
    for (int i = 1; i <= 16; ++i) {
        rows.push_back(row(static_cast<float>(i)));
        costs.push_back(1e-3 / i);
    }
    model.add("task", rows, costs);
    auto scores = model.predict({row(2), row(15)});
    ASSERT_TRUE(scores.has_value());
    EXPECT_GT((*scores)[1], (*scores)[0]);
    EXPECT_EQ(model.measured(), 17u);
}

TEST(ProgramCostModel, APretrainedModelIsUsedFromTheStart) {
    testing::TempDir dir;
    std::vector<float> rows;
    std::vector<double> costs;
    for (int i = 1; i <= 40; ++i) {
        auto r = row(static_cast<float>(i));
        rows.insert(rows.end(), r.begin(), r.end());
        costs.push_back(1e-3 / i);
    }
    XgbCostModel trained(CostObjective::rank, 1);
    trained.train(rows, program_feature_width(), costs);
    trained.save(dir / "pretrained.json");
    ProgramCostModel model(1);
    model.load_pretrained(dir / "pretrained.json");
    EXPECT_TRUE(model.has_pretrained());
    auto scores = model.predict({row(3), row(30)});
    ASSERT_TRUE(scores.has_value());
    EXPECT_GT((*scores)[1], (*scores)[0]);
}

TEST(ProgramCostModel, APretrainedModelOfAnotherWidthIsRefused) {
    testing::TempDir dir;
    XgbCostModel narrow(CostObjective::rank, 1);
    narrow.train(std::vector<float>{0, 1, 1, 0, 2, 2}, 2, std::vector<double>{3, 2, 1});
    narrow.save(dir / "narrow.json");
    ProgramCostModel model(1);
    try {
        model.load_pretrained(dir / "narrow.json");
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("2 features"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace anvil::tune
