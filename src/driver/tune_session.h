// The tuning loop over a list of tasks (tune_model.h's tune_tasks), private to the driver:
// tune_session.cpp schedules the tasks, proposes candidates and keeps the records;
// tune_candidates.cpp builds and measures them.
//
// A task is searched one of two ways. A template task's candidates are configurations of the
// knobs its op's schedule declares (tune::Tuner). A program task — a kernel under
// TuneOptions::search "auto" — is searched by the auto-scheduler (tune/sketch/): its candidates
// are programs generated from its computation, ranked by a cost model the whole session shares.
// Either way the task's first candidate is its default schedule, the reference every other
// candidate's outputs must match and the baseline its best can only improve on.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "driver/lower_graph.h"
#include "driver/tune_model.h"
#include "tune/program_cost_model.h"
#include "tune/sketch/evolutionary_search.h"
#include "tune/tuner.h"
#include "tune/tuning_cache.h"
#include "tune/tuning_history.h"

namespace anvil::driver {

// The tensor arguments of one kernel form of a task and its inputs, written once: random
// values for the function's parameters (the same for every form of the task, so their outputs
// compare), the weights' own values for its constants.
struct KernelInputs {
    std::vector<tune::KernelArg> args;
    std::string inputs_npz;
};

// A candidate, and once built, ready to measure: its library, or why it could not be built. The
// library holds one kernel ("tune_kernel_0") for a kernel or algorithm task, the kernels of its
// choice for a layout task; its cost is their weighted time.
struct Candidate {
    tune::Config config;                   // a configuration of the task's knobs, or
    std::optional<tune::Program> program;  // an auto-scheduler program
    bool is_default = false;               // the task's default configuration
    te::KnobValues values;
    te::ScheduleRecord schedule;  // of a one-kernel candidate
    std::string library;
    std::vector<const KernelInputs*> inputs;                       // per kernel
    std::vector<int> weights;                                      // per kernel: calls per run
    std::string error;                                             // why it could not be built
    tune::MeasureError build_error = tune::MeasureError::compile;  // or build_timeout
};

// One task of the run.
struct TaskState {
    TuneTask task;
    TaskProgress progress;
    std::unique_ptr<tune::Tuner> tuner;                // a template task
    std::unique_ptr<tune::EvolutionarySearch> search;  // a program task
    bool search_exhausted = false;                     // the search found no new program to propose
    // By variant (-1 for a kernel task) and kernel of the variant.
    std::map<std::pair<int, int>, KernelInputs> inputs;
    std::string reference_npz;  // the default configuration's outputs
    bool reference_ok = false;
    int since_improvement = 0;
    std::vector<double> best_history;  // best cost after each of its batches
};

class TuningSession {
public:
    TuningSession(std::vector<TuneTask> tasks, const TuneOptions& options,
                  const std::function<void(const TuneProgress&)>& on_progress);
    ~TuningSession();
    TuningSession(const TuningSession&) = delete;
    TuningSession& operator=(const TuningSession&) = delete;

    TuneSummary run();

    static std::string kernel_name(size_t k) { return "tune_kernel_" + std::to_string(k); }

private:
    using Clock = std::chrono::steady_clock;

    // ---- tune_session.cpp: tasks, batches, records ----
    void add_task(TuneTask task);
    // Earlier records of a task (the records file's, then the cache's) of the given search.
    std::vector<const tune::TuningRecord*> earlier_records(const TuneTask& task,
                                                           tune::SearchKind search,
                                                           std::vector<tune::TuningRecord>* cached);
    void add_program_task(TaskState& st);
    static tune::TaskFeatures task_features(const TuneTask& t);
    bool out_of_time() const;
    bool out_of_budget() const;
    bool has_next(const TaskState& t) const;
    // After the defaults, one small batch (kWarmUpBatch programs) of every auto-scheduler task,
    // the largest (weight x default cost) first; then pick_task decides.
    void warm_up();
    static constexpr int kWarmUpBatch = 4;
    TaskState* pick_task();
    std::vector<Candidate> propose(TaskState& t, int n);
    // One batch of the task: `batch` candidates, or the usual batch size when 0.
    void step(TaskState& t, int batch = 0);
    void note_result(TaskState& t, bool is_default, double cost);
    TuneProgress progress() const;

    // ---- tune_candidates.cpp: building and measuring ----
    std::vector<Candidate> build(TaskState& t, std::vector<Candidate> candidates);
    const KernelInputs& prepare_inputs(TaskState& t, int variant, int kernel,
                                       const graph::Function& fn,
                                       const std::vector<graph::Expr>& call_args,
                                       const LoweredFunction& lowered);
    // Measures on `remote` when given, else on the first remote device (if any), else in a
    // child process here.
    tune::TuningRecord measure(TaskState& t, const Candidate& c,
                               tune::RemoteMeasurer* remote = nullptr);
    // The candidates measured on every remote device at once, in their order.
    std::vector<tune::TuningRecord> measure_on_devices(TaskState& t,
                                                       const std::vector<Candidate>& built);
    bool measure_reference(TaskState& t);
    void release_files(TaskState& t);

    const TuneOptions& options_;
    std::function<void(const TuneProgress&)> on_progress_;
    Clock::time_point start_;
    Target target_;
    std::filesystem::path work_dir_;
    std::vector<tune::TuningRecord> prior_;
    std::unique_ptr<tune::RecordWriter> writer_;
    std::optional<tune::TuningCache> cache_;
    std::shared_ptr<tune::TuningHistory> history_;
    std::shared_ptr<tune::ProgramCostModel> cost_model_;  // program tasks' (search "auto")
    std::vector<TaskState> tasks_;
    TuneSummary summary_;
    tune::BestRecords best_;
    int trials_ = 0;
    double build_and_measure_s_ = 0;
    double build_s_ = 0;   // of build_and_measure_s_: in build()
    double search_s_ = 0;  // in propose() and the searches' updates
    std::vector<std::unique_ptr<tune::RemoteMeasurer>> devices_;  // one per remote device
    std::atomic<int> next_id_{0};
    std::mutex args_mutex_;
};

}  // namespace anvil::driver
