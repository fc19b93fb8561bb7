// anvil tune MODEL --target T -o records.json [--trials N] [--time-budget 10m]
//            [--search template|auto] [--cost-model FILE|none]
//            [--tuner xgb|ga|random|grid] [--early-stopping N] [--parallel P] [--threads T]
//            [--tuning-cache DIR | --no-tuning-cache] [--number N] [--repeat R]
//            [--min-repeat-ms MS] [--flush-cache] [--timeout S] [--build-timeout S]
//            [--input-shapes ...]
//            [--curve FILE.csv] [--tracker HOST:PORT --device-key K [--auth-key KEY]]
//
// Tunes every distinct kernel of the model (driver/tune_model.h) and appends each measurement to
// the records file; `anvil compile --tuning-records records.json` applies the best. Running
// again with the same -o resumes. Progress: one rewritten line on a terminal, a plain line at
// most every 10 seconds otherwise; at the end a table per task and the tuning curve as CSV and
// PNG (beside the records: records.curve.csv / .png, or --curve).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "driver/tune_model.h"
#include "model_file.h"
#include "runtime/rpc/auth_key.h"
#include "support/error.h"
#include "tune/program_cost_model.h"
#include "tune/tuning_cache.h"
#include "tune/tuning_curve.h"

namespace anvil::cli {

namespace {

struct TuneArgs {
    std::string model;
    std::string target = "llvm -mcpu=native";
    std::string output;
    int trials = 0;
    std::string time_budget;  // 90s, 10m, 1h, or seconds
    std::string tuner = "xgb";
    std::string search = "template";
    std::string cost_model;  // "" the shipped model, "none" no starting model
    int early_stopping = 0;
    int parallel = 1;
    int threads = 0;
    std::string cache_dir;
    bool no_cache = false;
    int number = 1;
    int repeat = 3;
    int min_repeat_ms = 10;  // a measurement of one run of a small kernel is mostly noise
    bool flush_cache = false;
    double timeout = 10;
    double build_timeout = 15;
    std::vector<std::string> input_shapes;
    std::string params;
    std::string tflite_rounding;  // as anvil compile's: the kernels tuned are the ones it builds
    std::string curve;
    std::string tracker;  // measure on remote devices: the tracker, the key, the auth key
    std::string device_key;
    std::string auth_key;
};

// "90", "90s", "10m", "1.5h" → seconds; UserError otherwise.
double parse_duration(const std::string& text, const char* option) {
    size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    std::string unit = used ? text.substr(used) : "";
    double scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : -1;
    if (used == 0 || scale < 0 || !(value > 0) || !std::isfinite(value)) {
        throw CLI::ValidationError(option, "'" + text +
                                               "' is not a duration (a positive number of "
                                               "seconds, or 90s, 10m, 1.5h)");
    }
    return value * scale;
}

std::string format_seconds(double s) {
    char buf[32];
    if (s < 60) {
        std::snprintf(buf, sizeof buf, "%.0fs", s);
    } else {
        std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s) / 60,
                      static_cast<int>(s) % 60);
    }
    return buf;
}

class ProgressPrinter {
public:
    explicit ProgressPrinter(bool terminal) : terminal_(terminal) {}

    void operator()(const driver::TuneProgress& p) {
        int done = 0, tunable = 0;
        for (const auto& t : p.tasks) {
            tunable += t.tunable;
            done += t.tunable && t.done;
        }
        std::string remaining =
            p.budget_s > 0
                ? ", " + format_seconds(std::max(0.0, p.budget_s - p.elapsed_s)) + " left"
                : "";
        // The task just measured, with its best so far.
        std::string current;
        if (p.current >= 0 && p.current < static_cast<int>(p.tasks.size())) {
            const auto& t = p.tasks[p.current];
            char buf[160];
            std::snprintf(buf, sizeof buf, "; %s: best %.4f ms after %d trials", t.name.c_str(),
                          t.best_cost * 1e3, t.trials);
            current = buf;
        }
        char line[384];
        std::snprintf(line, sizeof line,
                      "[tasks %d/%d done] trials %d, estimated latency %.3f ms, %s elapsed%s%s",
                      done, tunable, p.trials, p.estimated_latency_s * 1e3,
                      format_seconds(p.elapsed_s).c_str(), remaining.c_str(), current.c_str());
        if (terminal_) {
            std::fprintf(stderr, "\r%-160s", line);
        } else if (p.elapsed_s - last_printed_ >= 10) {
            std::fprintf(stderr, "%s\n", line);
            last_printed_ = p.elapsed_s;
        }
        std::fflush(stderr);
    }

    void finish() {
        if (terminal_) std::fprintf(stderr, "\n");
    }

private:
    bool terminal_;
    double last_printed_ = -1e9;
};

void print_table(const driver::TuneSummary& s) {
    std::printf("%-40s %6s %11s %11s %8s %7s\n", "task", "weight", "default ms", "best ms",
                "speedup", "trials");
    for (const auto& t : s.final.tasks) {
        if (!t.tunable) continue;
        std::string name = t.name + (t.from_cache ? " (cache)" : "");
        if (t.default_cost > 0 && t.best_cost > 0) {
            std::printf("%-40s %6d %11.4f %11.4f %7.2fx %7d\n", name.c_str(), t.weight,
                        t.default_cost * 1e3, t.best_cost * 1e3, t.default_cost / t.best_cost,
                        t.trials);
        } else {
            std::printf("%-40s %6d %11s %11s %8s %7d\n", name.c_str(), t.weight, "-", "-", "-",
                        t.trials);
        }
    }
    double untuned = 0;
    for (const auto& t : s.final.tasks) {
        if (t.graph_choice()) continue;  // costs counted again in the kernels they choose
        untuned += t.weight * (t.default_cost > 0 ? t.default_cost : t.best_cost);
    }
    auto share = [&](double seconds) {
        return s.final.elapsed_s > 0 ? 100 * seconds / s.final.elapsed_s : 0.0;
    };
    std::printf(
        "estimated kernel time: %.3f ms untuned, %.3f ms tuned; %d trials in %s "
        "(%.3f s per trial; search %.0f%% of the time, building %.0f%%, measuring %.0f%%)\n",
        untuned * 1e3, s.final.estimated_latency_s * 1e3, s.final.trials,
        format_seconds(s.final.elapsed_s).c_str(), s.mean_trial_s, share(s.search_s),
        share(s.build_s), share(s.measure_s));
}

int run_tune(const TuneArgs& a) {
    driver::TuneOptions o;
    o.target = a.target;
    o.trials = a.trials;
    o.time_budget_s = a.time_budget.empty() ? 0 : parse_duration(a.time_budget, "--time-budget");
    if (o.trials == 0 && o.time_budget_s == 0) {
        throw CLI::ValidationError("--trials/--time-budget",
                                   "anvil tune needs a budget: --trials N, --time-budget "
                                   "DURATION, or both");
    }
    o.tuner = a.tuner;
    o.search = a.search;
    if (a.search == "auto") {
        o.cost_model = a.cost_model.empty()     ? tune::default_cost_model_path()
                       : a.cost_model == "none" ? std::string()
                                                : a.cost_model;
    } else if (!a.cost_model.empty()) {
        throw CLI::ValidationError("--cost-model", "only the auto search (--search auto) has one");
    }
    o.early_stopping = a.early_stopping;
    o.parallel = a.parallel;
    o.records_path = a.output;
    o.cache_dir =
        a.no_cache ? "" : (a.cache_dir.empty() ? tune::default_tuning_cache_dir() : a.cache_dir);
    o.measure.number = a.number;
    o.measure.repeat = a.repeat;
    o.measure.min_repeat_ms = a.min_repeat_ms;
    o.measure.flush_cache = a.flush_cache;
    o.measure.timeout_s = a.timeout;
    o.build_timeout_s = a.build_timeout;
    o.measure.threads = a.threads;
    if (a.tracker.empty() != a.device_key.empty()) {
        user_error() << "--tracker and --device-key go together";
    }
    if (!a.tracker.empty()) {
        o.remote = {.tracker = a.tracker,
                    .device_key = a.device_key,
                    .auth_key = rpc::resolve_auth_key(a.auth_key)};
    }
    graph::IRModule m = load_model(a.model, a.input_shapes, a.params, a.tflite_rounding);
    ProgressPrinter printer(isatty(STDERR_FILENO));
    driver::TuneSummary s =
        driver::tune_model(m, o, [&](const driver::TuneProgress& p) { printer(p); });
    printer.finish();
    for (const auto& w : s.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    print_table(s);
    // Tunable tasks of which nothing could be measured: the environment is broken (no C
    // compiler to link candidates, a temporary directory that cannot hold libraries, ...).
    const driver::TaskProgress* broken = nullptr;
    bool any_measured = false;
    for (const auto& t : s.final.tasks) {
        if (!t.tunable) continue;
        any_measured |= t.best_cost > 0;
        if (t.best_cost == 0 && t.trials > 0 && !broken) broken = &t;
    }
    if (broken && !any_measured) {
        user_error() << "no candidate of any task could be measured; the first task, "
                     << broken->name << ", failed with " << broken->last_error;
    }
    const std::vector<tune::CurvePoint>& curve = s.curve;
    std::string base = a.curve.empty() ? a.output + ".curve.csv" : a.curve;
    std::string stem = std::filesystem::path(base).replace_extension().string();
    tune::write_curve_csv(stem + ".csv", curve);
    tune::write_curve_png(stem + ".png", curve, std::filesystem::path(a.model).filename().string());
    std::printf("records: %s; tuning curve: %s.csv, %s.png\n", a.output.c_str(), stem.c_str(),
                stem.c_str());
    return 0;
}

}  // namespace

void add_tune_command(CLI::App& app, int* status) {
    auto args = std::make_shared<TuneArgs>();
    CLI::App* cmd = app.add_subcommand(
        "tune", "tune the schedules of a model's kernels and write tuning records");
    cmd->add_option("model", args->model, "the model (as anvil compile reads it)")->required();
    cmd->add_option("--target", args->target, "target, e.g. \"llvm -mcpu=native\"");
    cmd->add_option("-o,--output", args->output,
                    "the records file (JSON lines; appended, and resumed from when it exists)")
        ->required();
    cmd->add_option("--trials", args->trials, "measured trials in all (0: only the time budget)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--time-budget", args->time_budget,
                    "wall-clock budget of the run: seconds, or 90s, 10m, 1.5h");
    cmd->add_option("--search", args->search,
                    "template (default: the knobs of the ops' schedules) or auto (the "
                    "auto-scheduler: programs generated from each kernel's computation)")
        ->check(CLI::IsMember({"template", "auto"}));
    cmd->add_option(
        "--cost-model", args->cost_model,
        "the auto search's starting cost model: a file anvil train-cost-model saved (default: the "
        "one shipped with Anvil; none: learn from this run alone)");
    cmd->add_option("--tuner", args->tuner, "xgb (default), ga, random or grid")
        ->check(CLI::IsMember({"xgb", "ga", "random", "grid"}));
    cmd->add_option("--early-stopping", args->early_stopping,
                    "stop a task after N trials without improvement (0: off)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--parallel", args->parallel, "candidates built at once")
        ->check(CLI::Range(1, 64));
    cmd->add_option("--threads", args->threads,
                    "threads the measured kernels run with (0: all cores, as the model will)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--tuning-cache", args->cache_dir,
                    "the tuning cache directory (default: $ANVIL_TUNING_CACHE, else "
                    "$XDG_CACHE_HOME/anvil/tuning, else ~/.cache/anvil/tuning)");
    cmd->add_flag("--no-tuning-cache", args->no_cache, "neither read nor write the tuning cache");
    cmd->add_option("--number", args->number, "runs per measurement")->check(CLI::Range(1, 100000));
    cmd->add_option("--repeat", args->repeat, "measurements per candidate")
        ->check(CLI::Range(1, 1000));
    cmd->add_option("--min-repeat-ms", args->min_repeat_ms,
                    "grow --number until one measurement lasts this long")
        ->check(CLI::NonNegativeNumber);
    cmd->add_flag("--flush-cache", args->flush_cache,
                  "flush the CPU caches before each measurement");
    cmd->add_option("--timeout", args->timeout, "seconds a candidate may run before it is killed")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--build-timeout", args->build_timeout,
                    "seconds a candidate may take to compile before its build is killed")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--input-shapes", args->input_shapes,
                    "input shapes, as for anvil compile (TorchScript models need them)");
    cmd->add_option("--params", args->params, "an .npz of weights for a module's text");
    cmd->add_option("--tflite-rounding", args->tflite_rounding,
                    "a quantized TFLite model's rescaling, as for anvil compile (TFLITE or "
                    "XNNPACK): tune the kernels that compile will build");
    cmd->add_option("--tracker", args->tracker,
                    "measure on the devices of this RPC tracker (HOST:PORT; with --device-key): "
                    "a batch on all of them at once");
    cmd->add_option("--device-key", args->device_key, "the kind of device to measure on");
    cmd->add_option("--auth-key", args->auth_key,
                    "the tracker's auth key (default: $ANVIL_RPC_KEY)");
    cmd->add_option("--curve", args->curve,
                    "where the tuning curve goes (FILE.csv and FILE.png; default: beside -o)");
    cmd->callback([args, status] { *status = run_tune(*args); });
}

}  // namespace anvil::cli
