#include "driver/tune_model.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "driver/tune_session.h"
#include "driver/tune_tasks.h"
#include "support/error.h"

namespace anvil::driver {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

TuneSummary tune_tasks(std::vector<TuneTask> tasks, const TuneOptions& options,
                       const std::function<void(const TuneProgress&)>& on_progress) {
    TuningSession session(std::move(tasks), options, on_progress);
    return session.run();
}

namespace {

// Runs the tasks `extract` finds as one phase of tune_model, with at most `share` of what is
// left of the trial and time budgets, and records its choices in `options` for the next phases
// (whose tasks those choices define). `done` accumulates the phases run so far.
void run_phase(const std::function<std::vector<TuneTask>(const TuneOptions&, double)>& extract,
               double share, Clock::time_point start, const TuneOptions& whole,
               TuneOptions* options, const std::function<void(const TuneProgress&)>& on_progress,
               TuneSummary* done, bool* any) {
    if (whole.trials > 0 && options->trials == 0) return;
    // The phase's share of the time left, its extraction included (which may use half of it;
    // 0: no limit, without a time budget).
    const double left_s = whole.time_budget_s - seconds_since(start);
    if (whole.time_budget_s > 0 && left_s <= 0) return;
    const double phase_s = whole.time_budget_s > 0 ? left_s * share : 0;
    const Clock::time_point phase_start = Clock::now();
    std::vector<TuneTask> tasks = extract(*options, phase_s > 0 ? std::max(phase_s / 2, 1e-3) : 0);
    if (tasks.empty()) return;
    TuneOptions o = *options;
    if (share < 1 && o.trials > 0) o.trials = std::max(1, static_cast<int>(o.trials * share));
    if (o.time_budget_s > 0) o.time_budget_s = std::max(1e-3, phase_s - seconds_since(phase_start));
    const double offset = seconds_since(start);
    const int trials_before = done->final.trials;
    TuneSummary s = tune_tasks(std::move(tasks), o, [&](const TuneProgress& p) {
        if (!on_progress) return;
        TuneProgress q = p;
        q.elapsed_s += offset;
        q.trials += trials_before;
        q.budget_s = whole.time_budget_s;
        // The tasks of earlier phases stay listed (first).
        q.tasks.insert(q.tasks.begin(), done->final.tasks.begin(), done->final.tasks.end());
        if (q.current >= 0) q.current += static_cast<int>(done->final.tasks.size());
        on_progress(q);
    });
    if (options->trials > 0) options->trials = std::max(0, options->trials - s.final.trials);
    // The next phases' tasks are those of the choices made here.
    auto chosen = std::make_shared<tune::BestRecords>(*s.best);
    if (options->pipeline.tuning_records) chosen->add_all(*options->pipeline.tuning_records);
    options->pipeline.tuning_records = chosen;
    // One summary: earlier phases' tasks first, the latest phase's estimate (the kernels').
    for (auto& c : s.curve) {
        c.elapsed_s += offset;
        c.trials += trials_before;
    }
    const int trials = trials_before + s.final.trials;
    const double mean =
        trials ? (done->mean_trial_s * trials_before + s.mean_trial_s * s.final.trials) / trials
               : 0;
    TuneSummary all = s;
    all.final.tasks.insert(all.final.tasks.begin(), done->final.tasks.begin(),
                           done->final.tasks.end());
    all.final.trials = trials;
    all.final.elapsed_s = seconds_since(start);
    all.final.budget_s = whole.time_budget_s;
    all.mean_trial_s = mean;
    all.search_s = done->search_s + s.search_s;
    all.build_s = done->build_s + s.build_s;
    all.measure_s = done->measure_s + s.measure_s;
    all.warnings.insert(all.warnings.begin(), done->warnings.begin(), done->warnings.end());
    if (done->best) all.best->add_all(*done->best);
    // The curve is the kernels' estimate: graph-choice phases estimate nothing.
    if (s.final.estimated_latency_s == 0) all.curve = done->curve;
    *done = std::move(all);
    *any = true;
}

}  // namespace

TuneSummary tune_model(const graph::IRModule& m, const TuneOptions& options,
                       const std::function<void(const TuneProgress&)>& on_progress) {
    Clock::time_point start = Clock::now();
    TuneSummary done;
    done.best = std::make_shared<tune::BestRecords>();
    bool any = false;
    TuneOptions rest = options;
    // Phase 1: the channel block of each channel count (a quarter of the budget at most: each
    // candidate compiles and measures several kernels). Phase 2, in the blocks chosen (half of
    // what is left at most): the algorithm of each convolution Winograd can compute, the form
    // of each convolution left unblocked. Phase 3: the kernels, as those choices make them.
    run_phase(
        [&](const TuneOptions& o, double limit_s) {
            return extract_layout_tasks(m, o.target, o.pipeline, limit_s);
        },
        0.25, start, options, &rest, on_progress, &done, &any);
    run_phase(
        [&](const TuneOptions& o, double limit_s) {
            return extract_algorithm_tasks(m, o.target, o.pipeline, limit_s);
        },
        0.5, start, options, &rest, on_progress, &done, &any);
    run_phase([&](const TuneOptions& o, double) { return extract_tasks(m, o.target, o.pipeline); },
              1, start, options, &rest, on_progress, &done, &any);
    if (!any) return tune_tasks({}, options, on_progress);
    return done;
}

std::shared_ptr<tune::BestRecords> load_best_records(const std::vector<std::string>& paths,
                                                     std::vector<std::string>* warnings) {
    auto best = std::make_shared<tune::BestRecords>();
    for (const auto& p : paths) {
        if (!fs::exists(p)) user_error() << "tuning records file '" << p << "' does not exist";
        best->add(tune::load_records(p, warnings));
    }
    return best;
}

}  // namespace anvil::driver
