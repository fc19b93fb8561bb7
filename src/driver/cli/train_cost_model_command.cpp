// anvil train-cost-model --models M.onnx ... --records R.json ... -o model.json
//                        [--target T] [--holdout 0.2] [--input-shapes ...]
//
// Trains the auto-scheduler's cost model (driver/cost_model_training.h) on tuning records of
// the given models' kernels and saves it; `anvil tune --search auto --cost-model model.json`
// starts from it. scripts/train_cost_model.sh makes the model Anvil ships this way.
#include <cstdio>

#include "commands.h"
#include "driver/cost_model_training.h"
#include "driver/tune_model.h"
#include "model_file.h"
#include "support/error.h"

namespace anvil::cli {

namespace {

struct TrainArgs {
    std::vector<std::string> models;
    std::vector<std::string> records;
    std::string output;
    std::string target = "llvm -mcpu=native";
    double holdout = 0.2;
    std::vector<std::string> input_shapes;
};

int run_train(const TrainArgs& a) {
    std::vector<graph::IRModule> models;
    for (const auto& path : a.models) models.push_back(load_model(path, a.input_shapes, ""));
    std::vector<tune::TuningRecord> records;
    std::vector<std::string> warnings;
    for (const auto& path : a.records) {
        auto r = tune::load_records(path, &warnings);
        if (r.empty()) user_error() << "records file '" << path << "' holds no record";
        records.insert(records.end(), r.begin(), r.end());
    }
    for (const auto& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    driver::CostModelDataset data = driver::cost_model_dataset(models, records, a.target);
    driver::CostModelReport report = driver::train_cost_model(data, a.output, a.holdout);
    std::printf(
        "trained on %zu programs of %zu kernels (%zu records skipped: no kernel of the "
        "models, or not replayable)\n",
        report.rows, report.tasks, data.skipped);
    if (report.holdout_tasks > 0) {
        auto line = [](const char* what, const driver::RankingQuality& q) {
            std::printf(
                "%s: %.1f%% of %zu pairs over 10%% apart ordered; the favourite reaches "
                "%.1f%% of the best's speed (a random pick %.1f%%)\n",
                what, 100 * q.pair_accuracy, q.pairs, 100 * q.top1, 100 * q.random_top1);
        };
        std::printf("trained without %zu of the kernels:\n", report.holdout_tasks);
        line("  on those held-out kernels", report.holdout);
        line("  on the kernels it was trained on", report.training);
    }
    std::printf("cost model: %s\n", a.output.c_str());
    return 0;
}

}  // namespace

void add_train_cost_model_command(CLI::App& app, int* status) {
    auto args = std::make_shared<TrainArgs>();
    CLI::App* cmd = app.add_subcommand("train-cost-model",
                                       "train the auto-scheduler's cost model on tuning records");
    cmd->add_option("--models", args->models, "the models the records were measured on")
        ->required();
    cmd->add_option("--records", args->records, "tuning records files (anvil tune -o)")->required();
    cmd->add_option("-o,--output", args->output, "where to save the model")->required();
    cmd->add_option("--target", args->target, "the target whose records to train on");
    cmd->add_option("--holdout", args->holdout,
                    "share of the kernels held out to report the model's accuracy (0: none)")
        ->check(CLI::Range(0.0, 0.9));
    cmd->add_option("--input-shapes", args->input_shapes, "as anvil compile's");
    cmd->callback([args, status] { *status = run_train(*args); });
}

}  // namespace anvil::cli
