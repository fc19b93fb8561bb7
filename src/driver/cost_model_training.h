// Training the auto-scheduler's cost model from tuning records (the pre-trained model Anvil
// ships, data/cost_model/, is made by scripts/train_cost_model.sh with this).
//
//   CostModelDataset d = cost_model_dataset(models, records, "llvm -mcpu=native");
//   CostModelReport r = train_cost_model(d, "model.json");
//
// A record's features are those of its program as the search sees them (program_features of
// the loops its schedule makes, replayed on the computation of its workload's kernel), so the
// models must be the ones the records were measured on — compiled with the layouts and
// algorithms the records themselves choose, as anvil tune's kernel phase made them: a record
// whose workload is no kernel of them, or whose schedule no longer applies, is skipped and
// counted.
#pragma once

#include <string>
#include <vector>

#include "driver/pipeline.h"
#include "graph/module.h"
#include "tune/record.h"

namespace anvil::driver {

struct CostModelDataset {
    std::vector<std::string> tasks;  // workload keys, one group of rows each
    std::vector<unsigned> groups;    // rows per task, in the order of `tasks`
    std::vector<float> rows;         // row-major, program_feature_width() columns
    std::vector<double> costs;       // seconds; +inf for a failed measurement
    size_t skipped = 0;              // records of no kernel of the models, or not replayable
};

// The rows of every record (template or program, failures included) measured on `target` for
// a kernel of `models`; several records of one program count once (their best).
CostModelDataset cost_model_dataset(const std::vector<graph::IRModule>& models,
                                    const std::vector<tune::TuningRecord>& records,
                                    const std::string& target, const PipelineOptions& options = {});

// How well a model ranks the programs of each task of a data set: the share of pairs of
// successful programs of one task, more than 10 % apart, it orders as measured (pairs closer
// than that are measurement noise as often as not); and the mean over tasks of (best measured
// cost / measured cost of the program it ranks first) — 1 when its favourite is the true best —
// next to the same mean for a favourite picked at random.
struct RankingQuality {
    double pair_accuracy = 0;
    size_t pairs = 0;
    double top1 = 0;
    double random_top1 = 0;
};

struct CostModelReport {
    size_t rows = 0, tasks = 0;
    size_t holdout_tasks = 0;
    // Of a model trained without the held-out tasks: on them, and on the tasks it was trained on.
    RankingQuality holdout, training;
};

// Trains on the dataset and saves the model to `path`. With `holdout` > 0, first trains
// without that share of the tasks (chosen by the hash of their keys) and evaluates on them;
// the saved model is always trained on everything.
CostModelReport train_cost_model(const CostModelDataset& data, const std::string& path,
                                 double holdout = 0.2, uint64_t seed = 1);

}  // namespace anvil::driver
