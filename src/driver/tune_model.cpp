#include "driver/tune_model.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "codegen/llvm/llvm_module.h"
#include "driver/lower_graph.h"
#include "driver/tune_tasks.h"
#include "runtime/npz.h"
#include "support/error.h"
#include "support/large_stack.h"
#include "tune/tuner.h"
#include "tune/tuning_cache.h"
#include "tune/tuning_history.h"

namespace anvil::driver {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr double kInf = std::numeric_limits<double>::infinity();
// How close a candidate's outputs must be to the default's: reordered float32 sums (and
// Winograd's transforms, whose error grows with the sum of |x||w|) differ in the last bits, so
// the absolute tolerance scales with the outputs' largest magnitude.
constexpr double kRtol = 1e-3;
constexpr double kAtol = 1e-4;

// The largest magnitude among float32 outputs (0 when none).
double max_abs(const std::vector<std::pair<std::string, runtime::NDArray>>& arrays) {
    double m = 0;
    for (const auto& [name, a] : arrays) {
        if (a.dtype().code != kDLFloat || a.dtype().bits != 32) continue;
        const float* p = static_cast<const float*>(a.raw_data());
        for (int64_t i = 0; i < a.nbytes() / 4; ++i) {
            if (std::isfinite(p[i])) m = std::max(m, static_cast<double>(std::fabs(p[i])));
        }
    }
    return m;
}

// Trials after which a cached workload counts as tuned.
constexpr int64_t kTunedTrials = 16;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

double now_epoch() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The tensor arguments of one kernel form of a task and its inputs, written once: random
// values for the function's parameters (the same for every form of the task, so their outputs
// compare), the weights' own values for its constants.
struct KernelInputs {
    std::vector<tune::KernelArg> args;
    std::string inputs_npz;
};

// A built candidate, ready to measure: its library, or why it could not be built. The library
// holds one kernel ("tune_kernel_0") for a kernel or algorithm task, the kernels of its choice
// for a layout task; its cost is their weighted time.
struct Candidate {
    tune::Config config;
    te::KnobValues values;
    te::ScheduleRecord schedule;  // of a one-kernel candidate
    std::string library;
    std::vector<const KernelInputs*> inputs;  // per kernel
    std::vector<int> weights;                 // per kernel: calls per run
    std::string error;                        // a compile error
};

// One task of the run.
struct TaskState {
    TuneTask task;
    TaskProgress progress;
    std::unique_ptr<tune::Tuner> tuner;
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
                  const std::function<void(const TuneProgress&)>& on_progress)
        : options_(options), on_progress_(on_progress), start_(Clock::now()) {
        target_ = Target::parse(options.target);
        work_dir_ = fs::temp_directory_path() / ("anvil-tune-" + std::to_string(::getpid()) + "-" +
                                                 std::to_string(reinterpret_cast<uintptr_t>(this)));
        fs::create_directories(work_dir_);
        if (!options.records_path.empty()) {
            prior_ = tune::load_records(options.records_path, &summary_.warnings);
            writer_ = std::make_unique<tune::RecordWriter>(options.records_path);
        }
        if (!options.cache_dir.empty()) cache_.emplace(options.cache_dir);
        history_ = std::make_shared<tune::TuningHistory>();
        for (auto& t : tasks) add_task(std::move(t));
    }

    static std::string kernel_name(size_t k) { return "tune_kernel_" + std::to_string(k); }

    ~TuningSession() {
        std::error_code ec;
        fs::remove_all(work_dir_, ec);
    }

    TuneSummary run() {
        // One round: every task's default first (the baseline and the reference).
        for (auto& t : tasks_) {
            if (out_of_budget()) break;
            if (!t.progress.done) step(t);
        }
        while (!out_of_budget()) {
            TaskState* next = pick_task();
            if (!next) break;
            step(*next);
        }
        summary_.final = progress();
        summary_.mean_trial_s = trials_ ? build_and_measure_s_ / trials_ : 0;
        summary_.best = std::make_shared<tune::BestRecords>(best_);
        return summary_;
    }

private:
    void add_task(TuneTask task) {
        TaskState st;
        st.progress.name = task.name;
        st.progress.workload = task.workload;
        st.progress.weight = task.weight;
        st.progress.tunable = task.tunable();
        st.progress.algorithm = !task.variants.empty() && !task.layout;
        st.progress.layout = task.layout;
        // Choices whose outputs are not compared need no reference: a default that fails to
        // measure is one failed trial, and a resumed task does not measure it again.
        if (!task.compare_variants) st.reference_ok = true;
        st.task = std::move(task);
        const std::string target = target_.str();
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
        std::vector<double> costs;
        for (size_t k = 0; k < chosen.size(); ++k) {
            costs.push_back(chosen[k]->ok() ? chosen[k]->mean_cost() : kInf);
            note_result(st, configs[k], costs.back());
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
        st.tuner = tune::make_tuner(options_.tuner, st.task.space, options_.seed + tasks_.size(),
                                    transfer);
        if (!configs.empty()) {
            st.tuner->update(configs, costs);
            history_->add(st.task.workload, task_features(st.task), st.task.space, configs, costs);
        }
        tasks_.push_back(std::move(st));
    }

    static tune::TaskFeatures task_features(const TuneTask& t) {
        return {{"weight", static_cast<double>(t.weight)},
                {"knobs", static_cast<double>(t.space.knobs.size())}};
    }

    bool out_of_time() const {
        return options_.time_budget_s > 0 && seconds_since(start_) >= options_.time_budget_s;
    }

    bool out_of_budget() const {
        return (options_.trials > 0 && trials_ >= options_.trials) || out_of_time();
    }

    // Ansor's rule, simplified: the task whose improvement would shorten the model most.
    TaskState* pick_task() {
        TaskState* best = nullptr;
        double best_score = -1;
        for (auto& t : tasks_) {
            if (t.progress.done || !t.tuner || !t.tuner->has_next()) continue;
            double cost = t.progress.best_cost > 0 ? t.progress.best_cost : 1e-3;
            double gain = 0;
            const auto& h = t.best_history;
            if (h.size() >= 3 && h[h.size() - 3] > 0) {
                gain = (h[h.size() - 3] - h.back()) / h[h.size() - 3];
            } else {
                gain = 1;  // too few batches to judge: worth trying
            }
            double score = t.progress.weight * cost * (gain + 0.05);
            if (score > best_score) {
                best_score = score;
                best = &t;
            }
        }
        return best;
    }

    // One batch of a task: propose, build, measure, record, update.
    void step(TaskState& t) {
        if (!t.tuner->has_next()) {
            t.progress.done = true;
            return;
        }
        int n = std::max(1, options_.batch_size);
        if (options_.trials > 0) n = std::min(n, options_.trials - trials_);
        // The first batch of a fresh task is its default alone: the reference comes first. A
        // resumed task whose default was measured by the earlier run measures it again, for its
        // outputs only (not a trial, not a record).
        if (!t.reference_ok && t.progress.trials == 0) n = 1;
        if (!t.reference_ok && t.progress.trials > 0 && !measure_reference(t)) {
            t.progress.done = true;
            return;
        }
        std::vector<tune::Config> configs = t.tuner->next_batch(n);
        if (configs.empty()) {
            t.progress.done = true;
            return;
        }
        Clock::time_point batch_start = Clock::now();
        std::vector<Candidate> built = build(t, configs);
        std::vector<double> costs;
        std::vector<tune::TuningRecord> records;
        std::vector<tune::Config> measured;
        for (auto& c : built) {
            // The budget ends inside a batch too (candidates may take up to the timeout each).
            if (!measured.empty() && out_of_time()) break;
            tune::TuningRecord r = measure(t, c);
            costs.push_back(r.ok() ? r.mean_cost() : kInf);
            note_result(t, c.config, costs.back());
            if (!r.ok()) {
                t.progress.last_error = std::string(tune::measure_error_name(r.error)) + ": " +
                                        r.message.substr(0, 400);
            }
            measured.push_back(c.config);
            records.push_back(std::move(r));
        }
        configs = measured;
        build_and_measure_s_ += seconds_since(batch_start);
        trials_ += static_cast<int>(measured.size());
        for (const auto& r : records) {
            if (writer_) writer_->append(r);
            best_.add(r);
        }
        if (cache_) cache_->store(records);
        t.tuner->update(configs, costs);
        history_->add(t.task.workload, task_features(t.task), t.task.space, configs, costs);
        t.best_history.push_back(t.progress.best_cost);
        if (options_.early_stopping > 0 && t.since_improvement >= options_.early_stopping) {
            t.progress.done = true;
        }
        if (!t.tuner->has_next()) t.progress.done = true;
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

    // A finished task's inputs and reference (weights included: they can be large).
    void release_files(TaskState& t) {
        std::error_code ec;
        for (const auto& [variant, in] : t.inputs) fs::remove(in.inputs_npz, ec);
        if (!t.reference_npz.empty()) fs::remove(t.reference_npz, ec);
        t.inputs.clear();
    }

    // The default configuration's outputs, the reference of a resumed task; false when the
    // default does not build or run (the task cannot check candidates).
    bool measure_reference(TaskState& t) {
        std::vector<Candidate> built = build(t, {tune::default_config(t.task.space)});
        return measure(t, built.at(0)).ok() && t.reference_ok;
    }

    void note_result(TaskState& t, const tune::Config& c, double cost) {
        ++t.progress.trials;
        bool is_default = c == tune::default_config(t.task.space);
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

    std::vector<Candidate> build(TaskState& t, const std::vector<tune::Config>& configs) {
        std::vector<Candidate> out(configs.size());
        auto build_one = [&](size_t i) {
            Candidate& c = out[i];
            c.config = configs[i];
            c.values = tune::config_values(t.task.space, configs[i]);
            // A graph-choice task's choice picks the kernels, which take their default schedules.
            const int variant = t.task.variants.empty() ? -1 : configs[i].choice.at(0);
            if (variant >= 0 && !t.task.variant_errors.at(variant).empty()) {
                c.error = t.task.variant_errors[variant];
                return;
            }
            const std::vector<VariantKernel> kernels =
                variant < 0 ? std::vector<VariantKernel>{{t.task.function, t.task.args, 1}}
                            : t.task.variants.at(variant);
            try {
                std::vector<Ref<tir::PrimFunc>> lowered_kernels;
                for (size_t k = 0; k < kernels.size(); ++k) {
                    // Lowering recurses over nested expressions: on a large stack, as compile
                    // does.
                    LoweredFunction lowered = call_with_large_stack([&] {
                        return lower_primitive_function(*kernels[k].function, kernel_name(k),
                                                        target_, options_.pipeline,
                                                        variant < 0 ? c.values : te::KnobValues{});
                    });
                    if (!t.task.layout) c.schedule = lowered.schedule;  // of its one kernel
                    c.inputs.push_back(&prepare_inputs(t, variant, static_cast<int>(k),
                                                       *kernels[k].function, kernels[k].args,
                                                       lowered));
                    c.weights.push_back(kernels[k].weight);
                    lowered_kernels.push_back(lowered.kernel);
                }
                if (lowered_kernels.empty()) return;  // nothing differs: costs nothing
                runtime::Module mod = codegen::build_llvm(lowered_kernels, target_);
                c.library = (work_dir_ / ("candidate_" + std::to_string(next_id_++) + ".so"));
                codegen::export_library(mod, c.library);
            } catch (const std::exception& e) {
                c.error = e.what();
            }
        };
        int threads = std::max(1, options_.parallel);
        if (threads == 1 || configs.size() == 1) {
            for (size_t i = 0; i < configs.size(); ++i) build_one(i);
        } else {
            // The first lowering describes the arguments; the rest only read them.
            build_one(0);
            std::vector<std::future<void>> running;
            for (size_t i = 1; i < configs.size(); ++i) {
                running.push_back(std::async(std::launch::async, build_one, i));
                if (static_cast<int>(running.size()) >= threads) {
                    running.front().get();
                    running.erase(running.begin());
                }
            }
            for (auto& f : running) f.get();
        }
        return out;
    }

    // The kernel's tensor arguments (the function's parameters "input<i>", its lifted
    // constants "const<i>", then its outputs "output<i>") and their values, written once per
    // kernel form: a parameter the graph passes a constant (a weight) gets that constant, the
    // others random values.
    const KernelInputs& prepare_inputs(TaskState& t, int variant, int kernel,
                                       const graph::Function& fn,
                                       const std::vector<graph::Expr>& call_args,
                                       const LoweredFunction& lowered) {
        std::lock_guard<std::mutex> lock(args_mutex_);
        auto it = t.inputs.find({variant, kernel});
        if (it != t.inputs.end()) return it->second;
        KernelInputs in;
        const size_t n_params = fn.params.size();
        const size_t n_inputs = n_params + lowered.lifted_constants.size();
        const auto& params = lowered.kernel->params;
        for (size_t i = 0; i < params.size(); ++i) {
            tune::KernelArg a;
            a.name = i < n_params   ? "input" + std::to_string(i)
                     : i < n_inputs ? "const" + std::to_string(i - n_params)
                                    : "output" + std::to_string(i - n_inputs);
            for (const auto& d : params[i]->shape) {
                const int64_t* v = as_const_int(d);
                ANVIL_CHECK(v) << "a tunable task has a symbolic dimension";
                a.shape.push_back(*v);
            }
            a.dtype = graph::dl_dtype_of(params[i]->dtype);
            a.output = i >= n_inputs;
            in.args.push_back(a);
        }
        size_t id = &t - tasks_.data();
        std::vector<tune::KernelArg> random_args(in.args.begin(), in.args.begin() + n_params);
        auto values = tune::random_inputs(random_args, options_.seed + id);
        for (size_t k = 0; k < n_params && k < call_args.size(); ++k) {
            if (auto* c = call_args[k].as<graph::Constant>()) values[k].second = c->data;
        }
        for (size_t k = 0; k < lowered.lifted_constants.size(); ++k) {
            values.emplace_back("const" + std::to_string(k),
                                lowered.lifted_constants[k].as<graph::Constant>()->data);
        }
        std::string base = "task_" + std::to_string(id) + "_" + std::to_string(variant + 1) + "_" +
                           std::to_string(kernel);
        in.inputs_npz = (work_dir_ / (base + "_inputs.npz")).string();
        runtime::write_npz(in.inputs_npz, values);
        if (t.reference_npz.empty()) {
            t.reference_npz =
                (work_dir_ / ("task_" + std::to_string(id) + "_reference.npz")).string();
        }
        return t.inputs.emplace(std::make_pair(variant, kernel), std::move(in)).first->second;
    }

    tune::TuningRecord measure(TaskState& t, const Candidate& c) {
        tune::TuningRecord r;
        r.workload = t.task.workload;
        r.target = target_.str();
        r.config = c.values;
        r.schedule = c.schedule;
        r.timestamp = now_epoch();
        if (!c.error.empty()) {
            r.error = tune::MeasureError::compile;
            r.message = c.error;
            return r;
        }
        // The default configuration comes first: its outputs are the reference (of a task whose
        // choices compute the same outputs; for the others its success only).
        const bool is_reference = !t.reference_ok;
        const bool compare = t.task.compare_variants;
        ANVIL_CHECK(!compare || c.inputs.size() <= 1)
            << "task " << t.task.name << ": compared outputs of several kernels";
        std::vector<double> costs;
        std::error_code ec;
        for (size_t k = 0; k < c.inputs.size(); ++k) {
            tune::MeasureRequest req;
            req.library = c.library;
            req.function = kernel_name(k);
            req.args = c.inputs[k]->args;
            req.inputs_npz = c.inputs[k]->inputs_npz;
            req.outputs_npz = is_reference && compare
                                  ? t.reference_npz
                                  : c.library + "." + std::to_string(k) + ".outputs.npz";
            tune::MeasureResult m = tune::measure_in_child(req, options_.measure);
            r.error = m.error;
            r.message = m.message;
            if (m.error == tune::MeasureError::none && compare && !is_reference) {
                std::string why;
                auto reference = runtime::read_npz(t.reference_npz);
                bool same =
                    tune::outputs_match(reference, runtime::read_npz(req.outputs_npz), kRtol,
                                        kAtol * std::max(1.0, max_abs(reference)), &why);
                if (!same) {
                    r.error = tune::MeasureError::wrong_answer;
                    r.message = why;
                }
            }
            if (req.outputs_npz != t.reference_npz) fs::remove(req.outputs_npz, ec);
            if (r.error != tune::MeasureError::none) break;
            costs.resize(std::max(costs.size(), m.costs.size()));
            for (size_t j = 0; j < m.costs.size(); ++j) costs[j] += c.weights[k] * m.costs[j];
        }
        if (!c.library.empty()) fs::remove(c.library, ec);
        if (r.error != tune::MeasureError::none) return r;
        if (is_reference) t.reference_ok = true;
        // A choice whose kernels all exist under every other choice too adds nothing to them;
        // a cost of 0 would read as "not measured".
        if (costs.empty()) costs.push_back(1e-9);
        r.costs = costs;
        return r;
    }

    TuneProgress progress() const {
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

    const TuneOptions& options_;
    std::function<void(const TuneProgress&)> on_progress_;
    Clock::time_point start_;
    Target target_;
    fs::path work_dir_;
    std::vector<tune::TuningRecord> prior_;
    std::unique_ptr<tune::RecordWriter> writer_;
    std::optional<tune::TuningCache> cache_;
    std::shared_ptr<tune::TuningHistory> history_;
    std::vector<TaskState> tasks_;
    TuneSummary summary_;
    tune::BestRecords best_;
    int trials_ = 0;
    double build_and_measure_s_ = 0;
    std::atomic<int> next_id_{0};
    std::mutex args_mutex_;
};

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
