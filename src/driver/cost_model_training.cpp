#include "driver/cost_model_training.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

#include "codegen/target.h"
#include "driver/lower_graph.h"
#include "driver/tune_tasks.h"
#include "support/error.h"
#include "support/large_stack.h"
#include "tune/program_features.h"
#include "tune/sketch/evolutionary_search.h"
#include "tune/xgb_cost_model.h"

namespace anvil::driver {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The features of `schedule` replayed on a fresh schedule of `fn`'s computation (on a large
// stack: lowering recurses over nested expressions).
std::vector<float> replayed_features(const graph::Function& fn,
                                     const te::ScheduleRecord& schedule) {
    return call_with_large_stack([&] {
        FunctionComputation c = function_computation(fn);
        return tune::program_features(*tune::replay_program(c.inputs, c.outputs, schedule));
    });
}

}  // namespace

CostModelDataset cost_model_dataset(const std::vector<graph::IRModule>& models,
                                    const std::vector<tune::TuningRecord>& records,
                                    const std::string& target, const PipelineOptions& options) {
    const std::string canonical = Target::parse(target).str();
    // The kernels as the records' tuning made them: the layouts and algorithms the records
    // chose change the kernels, and so their workloads.
    PipelineOptions tuned = options;
    auto chosen_records = std::make_shared<tune::BestRecords>();
    if (options.tuning_records) chosen_records->add_all(*options.tuning_records);
    chosen_records->add(records);
    tuned.tuning_records = chosen_records;
    std::map<std::string, Ref<graph::Function>> kernels;
    for (const auto& m : models) {
        for (const auto& t : extract_tasks(m, target, tuned)) {
            if (t.static_shapes && t.variants.empty()) kernels.emplace(t.workload, t.function);
        }
    }
    // The best measurement of each program (its schedule's text), per task.
    std::map<std::string, std::map<std::string, const tune::TuningRecord*>> chosen;
    CostModelDataset d;
    for (const auto& r : records) {
        if (r.target != canonical || !kernels.count(r.workload)) {
            ++d.skipped;
            continue;
        }
        const tune::TuningRecord*& at = chosen[r.workload][te::print_record(r.schedule)];
        if (!at || r.mean_cost() < at->mean_cost()) at = &r;
    }
    for (const auto& [workload, programs] : chosen) {
        unsigned n = 0;
        for (const auto& [text, r] : programs) {
            std::vector<float> f;
            try {
                f = replayed_features(*kernels.at(workload), r->schedule);
            } catch (const std::exception&) {
                ++d.skipped;  // a schedule of an older computation of this workload
                continue;
            }
            d.rows.insert(d.rows.end(), f.begin(), f.end());
            d.costs.push_back(r->ok() ? r->mean_cost() : kInf);
            ++n;
        }
        if (n == 0) continue;
        d.tasks.push_back(workload);
        d.groups.push_back(n);
    }
    return d;
}

namespace {

// The rows of the tasks `keep` selects.
CostModelDataset subset(const CostModelDataset& d, const std::function<bool(size_t)>& keep) {
    CostModelDataset out;
    const size_t width = tune::program_feature_width();
    size_t row = 0;
    for (size_t t = 0; t < d.tasks.size(); ++t) {
        if (keep(t)) {
            out.tasks.push_back(d.tasks[t]);
            out.groups.push_back(d.groups[t]);
            out.rows.insert(out.rows.end(), d.rows.begin() + row * width,
                            d.rows.begin() + (row + d.groups[t]) * width);
            out.costs.insert(out.costs.end(), d.costs.begin() + row,
                             d.costs.begin() + row + d.groups[t]);
        }
        row += d.groups[t];
    }
    return out;
}

// Trained once on thousands of programs: more rounds than the online model's.
constexpr int kPretrainRounds = 300;

// How well `scores` rank each task's programs of `d` (CostModelReport).
RankingQuality ranking_quality(const CostModelDataset& d, const std::vector<float>& scores) {
    RankingQuality q;
    size_t row = 0, pairs = 0, ordered = 0, ranked = 0;
    for (size_t t = 0; t < d.tasks.size(); ++t) {
        const size_t n = d.groups[t];
        double best = kInf, favourite = kInf;
        float favourite_score = -std::numeric_limits<float>::infinity();
        for (size_t i = row; i < row + n; ++i) {
            const double ci = d.costs[i];
            best = std::min(best, ci);
            if (scores[i] > favourite_score) {
                favourite_score = scores[i];
                favourite = ci;
            }
            for (size_t j = i + 1; j < row + n; ++j) {
                const double cj = d.costs[j];
                // Pairs within 10 % of each other are measurement noise as often as not.
                if (std::isinf(ci) || std::isinf(cj) || std::max(ci, cj) < 1.1 * std::min(ci, cj)) {
                    continue;
                }
                ++pairs;
                ordered += (ci < cj) == (scores[i] > scores[j]);
            }
        }
        if (std::isfinite(best) && n >= 2) {
            q.top1 += std::isfinite(favourite) ? best / favourite : 0;
            double mean = 0;
            for (size_t i = row; i < row + n; ++i) {
                mean += std::isfinite(d.costs[i]) ? best / d.costs[i] : 0;
            }
            q.random_top1 += mean / n;
            ++ranked;
        }
        row += n;
    }
    q.pair_accuracy = pairs ? static_cast<double>(ordered) / pairs : 0;
    q.pairs = pairs;
    if (ranked) {
        q.top1 /= ranked;
        q.random_top1 /= ranked;
    }
    return q;
}

void train(tune::XgbCostModel& model, const CostModelDataset& d) {
    model.set_rounds(kPretrainRounds);
    model.train(d.rows, tune::program_feature_width(), d.costs, d.groups);
}

}  // namespace

CostModelReport train_cost_model(const CostModelDataset& data, const std::string& path,
                                 double holdout, uint64_t seed) {
    if (data.tasks.empty()) {
        user_error() << "no record of the given models' kernels to train the cost model on";
    }
    CostModelReport report;
    report.rows = data.costs.size();
    report.tasks = data.tasks.size();
    auto held_out = [&](size_t t) {
        return holdout > 0 && data.tasks.size() > 1 &&
               static_cast<double>(std::hash<std::string>{}(data.tasks[t]) % 1000) < holdout * 1000;
    };
    CostModelDataset train_set = subset(data, [&](size_t t) { return !held_out(t); });
    CostModelDataset test_set = subset(data, held_out);
    if (!train_set.tasks.empty() && !test_set.tasks.empty()) {
        tune::XgbCostModel model(tune::CostObjective::rank, seed);
        train(model, train_set);
        report.holdout_tasks = test_set.tasks.size();
        report.holdout = ranking_quality(test_set, model.predict(test_set.rows));
        report.training = ranking_quality(train_set, model.predict(train_set.rows));
    }
    tune::XgbCostModel model(tune::CostObjective::rank, seed);
    train(model, data);
    model.save(path);
    return report;
}

}  // namespace anvil::driver
