// Training the cost model from tuning records: the rows are the records' programs replayed on
// their kernels' computations, records of other models are skipped and counted, and the saved
// model starts an auto search.
#include "driver/cost_model_training.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "driver/tune_model.h"
#include "graph/parser.h"
#include "ops/op_table.h"
#include "support/error.h"
#include "tune/program_cost_model.h"
#include "tune/program_features.h"

namespace anvil::driver {
namespace {

namespace fs = std::filesystem;

const char* kModel =
    R"(def @main(%x: Tensor[(8, 32), float32], %w: Tensor[(24, 32), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = nn.relu(%0);
  %2 = nn.softmax(%1);
  %2
}
)";

TEST(CostModelTraining, TrainsOnTheRecordsOfTheModelsKernels) {
    const fs::path dir =
        fs::temp_directory_path() / ("anvil-cost-model-training-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    graph::IRModule m = graph::parse_module(kModel, ops::op_table());
    TuneOptions o;
    o.target = "llvm";
    o.trials = 16;
    o.search = "auto";
    o.batch_size = 4;
    o.records_path = (dir / "records.json").string();
    o.measure.repeat = 1;
    tune_model(m, o);
    std::vector<std::string> warnings;
    auto records = tune::load_records(o.records_path, &warnings);
    ASSERT_EQ(records.size(), 16u);
    // A record of a kernel of no given model is skipped.
    tune::TuningRecord stranger = records[0];
    stranger.workload = "anvil-workload v1 | a kernel of another model";
    records.push_back(stranger);

    CostModelDataset d = cost_model_dataset({m}, records, "llvm");
    EXPECT_EQ(d.skipped, 1u);
    EXPECT_EQ(d.tasks.size(), 2u);
    size_t rows = 0;
    for (unsigned g : d.groups) rows += g;
    EXPECT_EQ(rows, 16u);
    EXPECT_EQ(d.costs.size(), rows);
    EXPECT_EQ(d.rows.size(), rows * tune::program_feature_width());

    const std::string path = (dir / "model.json").string();
    CostModelReport r = train_cost_model(d, path, /*holdout=*/0);
    EXPECT_EQ(r.rows, rows);
    EXPECT_EQ(r.holdout_tasks, 0u);
    tune::ProgramCostModel model(1);
    model.load_pretrained(path);
    std::vector<float> first(d.rows.begin(), d.rows.begin() + tune::program_feature_width());
    EXPECT_TRUE(model.predict({first}).has_value());
    // And it starts a search.
    o.cost_model = path;
    o.records_path = (dir / "again.json").string();
    o.trials = 6;
    EXPECT_EQ(tune_model(m, o).final.trials, 6);

    EXPECT_THROW(train_cost_model(CostModelDataset{}, path), UserError);
    fs::remove_all(dir);
}

}  // namespace
}  // namespace anvil::driver
