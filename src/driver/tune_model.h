// Tuning a model: `anvil tune`, anvil.autotvm's tune loop.
//
//   TuneOptions o;  o.target = "llvm";  o.time_budget_s = 600;  o.records_path = "r.json";
//   TuneSummary s = tune_model(module, o);
//   // then: PipelineOptions::tuning_records = load_best_records({"r.json"}, &warnings)
//
// The tasks are the model's distinct fused kernels (driver/tune_tasks.h). First come the
// layout-block tasks (the channel block of each channel count; at most a quarter of the
// budget), then the algorithm tasks (which convolutions run as Winograd, and the form of those
// left unblocked, in the layout chosen; at most half of what is left), then the kernels of the
// model as those choices make it. Each
// task's first candidate is its default configuration, whose outputs become the reference every
// other candidate must reproduce (a wrong answer is a failed trial) and whose cost is the baseline,
// so a task's best is never slower than untuned. Candidates are built on `parallel` threads and
// each is measured in a child process (tune/measure.h). Every measurement is appended to the
// records file as it is made; a run started again with the same file resumes: its tasks count the
// measured configurations as done and never measure them again. With a tuning cache, a workload
// with 16 cached measurements (or its whole space), made by any model, is not tuned again and its
// best is copied to the records file; one with fewer goes on from them. Every new record goes
// into the cache too.
//
// The task scheduler spends the budget where the model's time is: after one round over every
// task, the next batch goes to the task with the largest weight x best cost x (recent relative
// improvement + an exploration term shrinking with the batches it had) — Ansor's gradient rule in
// one line. A task stops after
// `early_stopping` trials without improvement, or when its space is exhausted.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/pipeline.h"
#include "driver/tune_tasks.h"
#include "graph/module.h"
#include "tune/measure.h"
#include "tune/record.h"
#include "tune/remote_measure.h"
#include "tune/tuning_curve.h"

namespace anvil::driver {

struct TuneOptions {
    std::string target = "llvm";
    int trials = 0;             // measured trials in all (0: no limit but the time budget)
    double time_budget_s = 0;   // wall-clock budget of the whole run (0: none)
    std::string tuner = "xgb";  // xgb | ga | random | grid (the template search's tuner)
    // How kernels are searched: "template" (the knobs their ops' schedules declare, by `tuner`)
    // or "auto" (the auto-scheduler: programs generated from each kernel's computation, every
    // kernel of static shapes, knobs or not; tune/sketch/). Graph choices (layouts,
    // algorithms) are template tasks either way.
    std::string search = "template";
    // The auto-scheduler's starting cost model (a file anvil train-cost-model saved); "" for
    // none, the model then learns from this run's measurements alone.
    std::string cost_model;
    int early_stopping = 0;  // per task: trials without improvement before it stops (0: off)
    int parallel = 1;        // candidates built at once
    int batch_size = 8;      // candidates per scheduling step (twice that for the auto search)
    // Seconds a candidate's compilation may take before its build is killed (TVM's
    // LocalBuilder timeout): candidates compile in child processes (tune/build_in_child.h).
    double build_timeout_s = 15;
    tune::MeasureOption measure;
    // Measure on remote devices instead of in child processes here (tune/remote_measure.h): a
    // batch's candidates are measured on every device of the key at once.
    tune::RemoteDevices remote;
    std::string records_path;  // appended as measured; resumed from ("" none)
    std::string cache_dir;     // the tuning cache ("" none)
    uint64_t seed = 1;
    PipelineOptions pipeline;  // how tasks are extracted and candidates lowered
};

// One task's state, reported in progress and in the summary.
struct TaskProgress {
    std::string name;
    std::string workload;
    int weight = 0;
    bool tunable = false;
    bool from_cache = false;  // the tuning cache had it: no trials spent
    int trials = 0;           // measured in this run and resumed ones
    int failures = 0;
    double default_cost = 0;  // seconds (0 when not measured)
    double best_cost = 0;     // seconds (0 when not measured)
    bool done = false;        // exhausted, early-stopped or from the cache
    std::string last_error;   // the kind and message of its last failed trial
    // An algorithm task (driver/conv_algorithm.h): its costs are of the convolution alone and
    // do not add to the model's estimated latency.
    bool algorithm = false;
    // A layout-block task (driver/layout_block.h): its costs are of the kernels its choices
    // change (weighted sums) and do not add to the estimated latency either.
    bool layout = false;
    bool graph_choice() const { return algorithm || layout; }
};

struct TuneProgress {
    std::vector<TaskProgress> tasks;
    int current = -1;  // the task the last batch measured (an index into tasks)
    int trials = 0;    // measured in this run
    double elapsed_s = 0;
    double budget_s = 0;  // the time budget (0: none)
    // Sum over tasks of weight x best cost (default cost where not tuned): the model's kernel
    // time as the measurements estimate it.
    double estimated_latency_s = 0;
};

struct TuneSummary {
    TuneProgress final;
    // The estimated latency after every batch once every task has its baseline (the first
    // round): the tuning curve.
    std::vector<tune::CurvePoint> curve;
    // Wall time per measured trial, building included (and the re-measured references of
    // resumed tasks, which are no trials).
    double mean_trial_s = 0;
    // Wall time the searches spent choosing candidates and learning from their costs (the
    // auto-scheduler's sketches, evolution and cost model; the template tuners'), that is
    // everything but building and measuring.
    double search_s = 0;
    // Of the rest: building candidates (lowering, LLVM) and measuring them (child processes).
    double build_s = 0;
    double measure_s = 0;
    std::vector<std::string> warnings;  // unreadable record lines
    // The best successful record of every task (measured now, resumed or cached).
    std::shared_ptr<tune::BestRecords> best;
};

TuneSummary tune_model(const graph::IRModule& m, const TuneOptions& options,
                       const std::function<void(const TuneProgress&)>& on_progress = {});
// The same for tasks already extracted (some of a model's, or one: anvil.autotvm's
// tuner.tune(task)).
TuneSummary tune_tasks(std::vector<TuneTask> tasks, const TuneOptions& options,
                       const std::function<void(const TuneProgress&)>& on_progress = {});

// The best record per workload of the given records files: what anvil compile --tuning-records
// applies. Unreadable lines go to `warnings`.
std::shared_ptr<tune::BestRecords> load_best_records(const std::vector<std::string>& paths,
                                                     std::vector<std::string>* warnings);

}  // namespace anvil::driver
