// A tuning session's tasks, batches and records (tune_session.h).
#include "driver/tune_session.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "driver/lower_graph.h"
#include "support/error.h"
#include "support/large_stack.h"

namespace anvil::driver {

namespace {

namespace fs = std::filesystem;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Trials after which a cached workload counts as tuned.
constexpr int64_t kTunedTrials = 16;

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TuningSession::TuningSession(std::vector<TuneTask> tasks, const TuneOptions& options,
                             const std::function<void(const TuneProgress&)>& on_progress)
    : options_(options), on_progress_(on_progress), start_(Clock::now()) {
    target_ = Target::parse(options.target);
    if (options.search != "template" && options.search != "auto") {
        user_error() << "unknown search '" << options.search << "' (use template or auto)";
    }
    if (!(options.build_timeout_s > 0)) {
        user_error() << "the build timeout (" << options.build_timeout_s << " s) must be positive";
    }
    work_dir_ = fs::temp_directory_path() / ("anvil-tune-" + std::to_string(::getpid()) + "-" +
                                             std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(work_dir_);
    // A constructor that throws (bad records, cost model or task) runs no destructor: the work
    // directory goes here then.
    try {
        if (!options.records_path.empty()) {
            prior_ = tune::load_records(options.records_path, &summary_.warnings);
            writer_ = std::make_unique<tune::RecordWriter>(options.records_path);
        }
        if (!options.cache_dir.empty()) cache_.emplace(options.cache_dir);
        history_ = std::make_shared<tune::TuningHistory>();
        if (options.search == "auto") {
            cost_model_ = std::make_shared<tune::ProgramCostModel>(options.seed);
            if (!options.cost_model.empty()) cost_model_->load_pretrained(options.cost_model);
        }
        for (auto& t : tasks) add_task(std::move(t));
        if (options.remote.enabled()) {
            if (options.measure.flush_cache) {
                user_error() << "--flush-cache: cache flushing is not available with remote "
                                "devices (--tracker)";
            }
            int n = tune::count_remote_devices(options.remote);
            for (int i = 0; i < n; ++i) {
                devices_.push_back(std::make_unique<tune::RemoteMeasurer>(options.remote));
            }
        }
    } catch (...) {
        std::error_code ec;
        fs::remove_all(work_dir_, ec);
        throw;
    }
}

TuningSession::~TuningSession() {
    std::error_code ec;
    fs::remove_all(work_dir_, ec);
}

TuneSummary TuningSession::run() {
    // One round: every task's default first (the baseline and the reference).
    for (auto& t : tasks_) {
        if (out_of_budget()) break;
        if (!t.progress.done) step(t);
    }
    warm_up();
    while (!out_of_budget()) {
        TaskState* next = pick_task();
        if (!next) break;
        step(*next);
    }
    summary_.final = progress();
    summary_.mean_trial_s = trials_ ? build_and_measure_s_ / trials_ : 0;
    summary_.search_s = search_s_;
    summary_.build_s = build_s_;
    summary_.measure_s = build_and_measure_s_ - build_s_;
    summary_.best = std::make_shared<tune::BestRecords>(best_);
    return summary_;
}

void TuningSession::add_task(TuneTask task) {
    TaskState st;
    st.progress.name = task.name;
    st.progress.workload = task.workload;
    st.progress.weight = task.weight;
    st.progress.algorithm = !task.variants.empty() && !task.layout;
    st.progress.layout = task.layout;
    // The auto-scheduler tunes every kernel of static shapes, knobs or not; graph choices keep
    // their one knob.
    const bool program_task =
        options_.search == "auto" && task.variants.empty() && task.static_shapes;
    st.progress.tunable = program_task || task.tunable();
    // Choices whose outputs are not compared need no reference: a default that fails to
    // measure is one failed trial, and a resumed task does not measure it again.
    if (!task.compare_variants) st.reference_ok = true;
    st.task = std::move(task);
    const std::string target = target_.str();
    if (program_task) {
        add_program_task(st);
        tasks_.push_back(std::move(st));
        return;
    }
    if (!st.progress.tunable) {
        // A choice not tuned now (a layout task past its extraction's time limit, say): what
        // an earlier run chose still holds for the phases after this one. (Tasks without
        // knobs have nothing to look up.)
        if (!st.task.space.knobs.empty()) {
            for (const auto& r : prior_) {
                if (r.workload == st.task.workload && r.target == target) best_.add(r);
            }
            if (cache_) {
                for (const auto& r :
                     cache_->records(st.task.workload, target, &summary_.warnings)) {
                    best_.add(r);
                }
            }
        }
        st.progress.done = true;
        tasks_.push_back(std::move(st));
        return;
    }
    // What earlier runs measured of this task's space: the records file's (a resumed run),
    // then the cache's. One result per configuration, a success over a failure.
    std::vector<tune::Config> configs;
    std::vector<const tune::TuningRecord*> chosen;
    std::vector<tune::TuningRecord> cached;
    if (cache_) cached = cache_->records(st.task.workload, target, &summary_.warnings);
    std::vector<bool> in_file;
    auto consider = [&](const tune::TuningRecord& r, bool from_file) {
        if (r.workload != st.task.workload || r.target != target) return;
        if (r.search != tune::SearchKind::config) return;
        auto c = tune::config_of_values(st.task.space, r.config);
        if (!c) return;  // made for another space of this workload
        auto at = std::find(configs.begin(), configs.end(), *c);
        if (at == configs.end()) {
            configs.push_back(*c);
            chosen.push_back(&r);
            in_file.push_back(from_file);
        } else if (r.ok() && (!chosen[at - configs.begin()]->ok() ||
                              r.mean_cost() < chosen[at - configs.begin()]->mean_cost())) {
            chosen[at - configs.begin()] = &r;
        }
    };
    for (const auto& r : prior_) consider(r, true);
    for (const auto& r : cached) consider(r, false);
    // The records file gets what only the cache had, so that it applies on its own.
    for (size_t k = 0; k < chosen.size(); ++k) {
        if (!in_file[k] && writer_) writer_->append(*chosen[k]);
    }
    const tune::Config default_config = tune::default_config(st.task.space);
    std::vector<double> costs;
    for (size_t k = 0; k < chosen.size(); ++k) {
        costs.push_back(chosen[k]->ok() ? chosen[k]->mean_cost() : kInf);
        note_result(st, configs[k] == default_config, costs.back());
        best_.add(*chosen[k]);
    }
    // With the cache, a workload tuned before (kTunedTrials configurations measured, or the
    // whole space, one of them successfully) is not tuned again. (Without it, a resumed run
    // goes on tuning.)
    const auto tuned = std::min<int64_t>(kTunedTrials, st.task.space.size());
    if (cache_ && static_cast<int64_t>(configs.size()) >= tuned && st.progress.best_cost > 0) {
        st.progress.from_cache = true;
        st.progress.done = true;
        if (st.progress.default_cost == 0) st.progress.default_cost = st.progress.best_cost;
        tasks_.push_back(std::move(st));
        return;
    }
    tune::TransferOptions transfer{history_, st.task.workload, task_features(st.task)};
    st.tuner =
        tune::make_tuner(options_.tuner, st.task.space, options_.seed + tasks_.size(), transfer);
    if (!configs.empty()) {
        st.tuner->update(configs, costs);
        history_->add(st.task.workload, task_features(st.task), st.task.space, configs, costs);
    }
    tasks_.push_back(std::move(st));
}

void TuningSession::add_program_task(TaskState& st) {
    const std::string target = target_.str();
    // Building the computation recurses over the function's expressions: on a large stack.
    FunctionComputation computation =
        call_with_large_stack([&] { return function_computation(*st.task.function); });
    tune::SearchKernel kernel;
    kernel.task = st.task.workload;
    kernel.inputs = computation.inputs;
    kernel.outputs = computation.outputs;
    kernel.target.vector_lanes = std::max(1, make_lower_context(target_).vector_bits / 32);
    st.search = std::make_unique<tune::EvolutionarySearch>(kernel, cost_model_,
                                                           options_.seed + tasks_.size());
    // Earlier measurements (the records file's, then the cache's): the default configuration,
    // and programs, each once. Programs count as proposed and teach the cost model.
    std::vector<tune::TuningRecord> cached;
    if (cache_) cached = cache_->records(st.task.workload, target, &summary_.warnings);
    const tune::Config default_config = tune::default_config(st.task.space);
    // One record per program ("" for the default), a success over a failure; in the order met.
    std::map<std::string, std::pair<const tune::TuningRecord*, bool>> chosen;  // and from_file
    std::vector<std::string> order;
    auto consider = [&](const tune::TuningRecord& r, bool from_file) {
        if (r.workload != st.task.workload || r.target != target) return;
        const bool program = r.search == tune::SearchKind::program;
        if (!program && tune::config_of_values(st.task.space, r.config) != default_config) return;
        const std::string key = program ? te::print_record(r.schedule) : std::string();
        auto [at, fresh] = chosen.emplace(key, std::make_pair(&r, from_file));
        if (fresh) {
            order.push_back(key);
        } else if (r.ok() &&
                   (!at->second.first->ok() || r.mean_cost() < at->second.first->mean_cost())) {
            at->second = {&r, from_file};
        }
    };
    for (const auto& r : prior_) consider(r, true);
    for (const auto& r : cached) consider(r, false);
    int programs = 0;
    for (const auto& key : order) {
        const auto& [r, from_file] = chosen.at(key);
        const bool program = r->search == tune::SearchKind::program;
        const double cost = r->ok() ? r->mean_cost() : kInf;
        // A program of an older computation of this workload does not apply: not a result.
        if (program && !st.search->resume(r->schedule, cost)) continue;
        if (!from_file && writer_) writer_->append(*r);
        note_result(st, !program, cost);
        best_.add(*r);
        programs += program;
    }
    if (cache_ && programs >= kTunedTrials && st.progress.best_cost > 0) {
        st.progress.from_cache = true;
        st.progress.done = true;
        if (st.progress.default_cost == 0) st.progress.default_cost = st.progress.best_cost;
    }
    if (st.search->sketches().empty()) st.search_exhausted = true;
}

tune::TaskFeatures TuningSession::task_features(const TuneTask& t) {
    return {{"weight", static_cast<double>(t.weight)},
            {"knobs", static_cast<double>(t.space.knobs.size())}};
}

bool TuningSession::out_of_time() const {
    return options_.time_budget_s > 0 && seconds_since(start_) >= options_.time_budget_s;
}

bool TuningSession::out_of_budget() const {
    return (options_.trials > 0 && trials_ >= options_.trials) || out_of_time();
}

bool TuningSession::has_next(const TaskState& t) const {
    if (t.tuner) return t.tuner->has_next();
    return t.search && !t.search_exhausted;
}

// Ansor's rule, simplified: the task whose improvement would shorten the model most. Its
// expected improvement is its recent relative gain plus an exploration term that shrinks with
// the batches it already had: a large task that stopped improving (an auto-scheduler space is
// never exhausted) must not keep every later batch from the others.
// Ansor's task scheduler warms up the same way: a kernel's default schedule is mostly far from
// its best, and its first few generated programs find much of the difference (a layer norm's
// mean 2x faster, a head split's copy 6-8x). Left to pick_task's score (weight x cost x recent
// gain), the many small kernels would wait behind the few large ones until those stop
// improving, though together they hold most of what the first hundred trials can gain (an
// encoder's 13 small kernels: 0.42 of the 0.47 ms its trials 100 to 962 found).
void TuningSession::warm_up() {
    std::vector<TaskState*> order;
    for (auto& t : tasks_) {
        if (t.search && !t.progress.done && t.reference_ok) order.push_back(&t);
    }
    std::stable_sort(order.begin(), order.end(), [](const TaskState* a, const TaskState* b) {
        return a->progress.weight * a->progress.best_cost >
               b->progress.weight * b->progress.best_cost;
    });
    for (TaskState* t : order) {
        if (out_of_budget()) break;
        if (!t->progress.done) step(*t, kWarmUpBatch);
    }
}

TaskState* TuningSession::pick_task() {
    TaskState* best = nullptr;
    double best_score = -1;
    for (auto& t : tasks_) {
        if (t.progress.done || !has_next(t)) continue;
        double cost = t.progress.best_cost > 0 ? t.progress.best_cost : 1e-3;
        double gain = 0;
        const auto& h = t.best_history;
        if (h.size() >= 3 && h[h.size() - 3] > 0) {
            gain = (h[h.size() - 3] - h.back()) / h[h.size() - 3];
        } else {
            gain = 1;  // too few batches to judge: worth trying
        }
        const double exploration = 0.5 / (1.0 + static_cast<double>(h.size()));
        double score = t.progress.weight * cost * (gain + exploration);
        if (score > best_score) {
            best_score = score;
            best = &t;
        }
    }
    return best;
}

std::vector<Candidate> TuningSession::propose(TaskState& t, int n) {
    std::vector<Candidate> out;
    const tune::Config default_config = tune::default_config(t.task.space);
    if (t.search) {
        // The default schedule first: the reference and the baseline.
        if (!t.reference_ok && t.progress.trials == 0) {
            Candidate c;
            c.config = default_config;
            c.is_default = true;
            out.push_back(std::move(c));
            return out;
        }
        for (auto& p : t.search->next_batch(n)) {
            Candidate c;
            c.program = std::move(p);
            out.push_back(std::move(c));
        }
        if (out.empty()) t.search_exhausted = true;
        return out;
    }
    for (auto& config : t.tuner->next_batch(n)) {
        Candidate c;
        c.is_default = config == default_config;
        c.config = std::move(config);
        out.push_back(std::move(c));
    }
    return out;
}

// One batch of a task: propose, build, measure, record, update.
void TuningSession::step(TaskState& t, int batch) {
    if (!has_next(t)) {
        t.progress.done = true;
        return;
    }
    // A program task's batch costs a round of evolution whatever its size: measuring twice as
    // many per round halves the search's share of the time (27 % of a 10-minute encoder run
    // with 8), and the cost model is retrained more often than that anyway.
    int n = batch > 0 ? batch : std::max(1, options_.batch_size) * (t.search ? 2 : 1);
    if (options_.trials > 0) n = std::min(n, options_.trials - trials_);
    // The first batch of a fresh task is its default alone: the reference comes first. A
    // resumed task whose default was measured by the earlier run measures it again, for its
    // outputs only (not a trial, not a record).
    if (!t.reference_ok && t.progress.trials == 0) n = 1;
    if (!t.reference_ok && t.progress.trials > 0 && !measure_reference(t)) {
        t.progress.done = true;
        return;
    }
    Clock::time_point search_start = Clock::now();
    std::vector<Candidate> proposed = propose(t, n);
    search_s_ += seconds_since(search_start);
    if (proposed.empty()) {
        t.progress.done = true;
        return;
    }
    Clock::time_point batch_start = Clock::now();
    std::vector<Candidate> built = build(t, std::move(proposed));
    build_s_ += seconds_since(batch_start);
    std::vector<tune::TuningRecord> records;
    std::vector<tune::Config> configs;
    std::vector<double> config_costs, program_costs;
    std::vector<tune::Program> programs;
    // On remote devices a batch is measured on all of them at once (after the task's reference,
    // which comes alone in the first batch).
    std::vector<tune::TuningRecord> measured;
    if (devices_.size() > 1 && built.size() > 1 && t.reference_ok) {
        measured = measure_on_devices(t, built);
    }
    for (size_t i = 0; i < built.size(); ++i) {
        Candidate& c = built[i];
        // The budget ends inside a batch too (candidates may take up to the timeout each).
        if (measured.empty() && !records.empty() && out_of_time()) break;
        tune::TuningRecord r = measured.empty() ? measure(t, c) : std::move(measured[i]);
        const double cost = r.ok() ? r.mean_cost() : kInf;
        note_result(t, c.is_default, cost);
        if (!r.ok()) {
            t.progress.last_error =
                std::string(tune::measure_error_name(r.error)) + ": " + r.message.substr(0, 400);
        }
        if (c.program) {
            programs.push_back(std::move(*c.program));
            program_costs.push_back(cost);
        } else {
            configs.push_back(c.config);
            config_costs.push_back(cost);
        }
        records.push_back(std::move(r));
    }
    build_and_measure_s_ += seconds_since(batch_start);
    trials_ += static_cast<int>(records.size());
    for (const auto& r : records) {
        if (writer_) writer_->append(r);
        best_.add(r);
    }
    if (cache_) cache_->store(records);
    search_start = Clock::now();
    if (t.tuner) {
        t.tuner->update(configs, config_costs);
        history_->add(t.task.workload, task_features(t.task), t.task.space, configs, config_costs);
    }
    if (t.search && !programs.empty()) t.search->update(programs, program_costs);
    search_s_ += seconds_since(search_start);
    t.best_history.push_back(t.progress.best_cost);
    if (options_.early_stopping > 0 && t.since_improvement >= options_.early_stopping) {
        t.progress.done = true;
    }
    if (!has_next(t)) t.progress.done = true;
    // Without a working default there is no reference to check candidates against.
    if (!t.reference_ok) t.progress.done = true;
    if (t.progress.done) release_files(t);
    TuneProgress p = progress();
    p.current = static_cast<int>(&t - tasks_.data());
    bool baselines = std::all_of(tasks_.begin(), tasks_.end(), [](const TaskState& s) {
        return s.progress.done || s.progress.default_cost > 0;
    });
    if (baselines) {
        summary_.curve.push_back({p.elapsed_s, p.estimated_latency_s * 1e3, p.trials});
    }
    if (on_progress_) on_progress_(p);
}

void TuningSession::note_result(TaskState& t, bool is_default, double cost) {
    ++t.progress.trials;
    if (std::isinf(cost)) {
        ++t.progress.failures;
        ++t.since_improvement;
        return;
    }
    if (is_default) t.progress.default_cost = cost;
    if (t.progress.best_cost == 0 || cost < t.progress.best_cost) {
        t.progress.best_cost = cost;
        t.since_improvement = 0;
    } else {
        ++t.since_improvement;
    }
}

TuneProgress TuningSession::progress() const {
    TuneProgress p;
    p.trials = trials_;
    p.elapsed_s = seconds_since(start_);
    p.budget_s = options_.time_budget_s;
    for (const auto& t : tasks_) {
        p.tasks.push_back(t.progress);
        if (t.progress.graph_choice()) continue;
        double cost = t.progress.best_cost > 0 ? t.progress.best_cost : t.progress.default_cost;
        p.estimated_latency_s += t.progress.weight * cost;
    }
    return p;
}

}  // namespace anvil::driver
