// anvil.autotvm bindings (the _anvil.autotvm submodule): search spaces and schedule
// configurations, the tuners, measurement in a child process, tuning records, and the model
// tuning loop of driver/tune_model.h. The Python package (python/anvil/autotvm) puts TVM's names
// on them and runs the tuning loop of Python templates itself.
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cmath>
#include <sstream>

#include "bindings.h"
#include "codegen/target.h"
#include "driver/tune_model.h"
#include "driver/tune_tasks.h"
#include "driver/workload_key.h"
#include "ir/analyzer.h"
#include "runtime/npz.h"
#include "support/error.h"
#include "te/schedule.h"
#include "te/tensor.h"
#include "tune/build_in_child.h"
#include "tune/measure.h"
#include "tune/record.h"
#include "tune/tuner.h"

namespace anvil::python {

namespace {

using Choice = std::vector<int>;

// `checked` (PassContext config "tir.instrument_bound_checkers") adds to ANVIL_CHECKED.
driver::PipelineOptions pipeline_options(int opt_level, std::vector<std::string> disabled,
                                         bool checked) {
    driver::PipelineOptions o;
    o.opt_level = opt_level;
    o.disabled_passes = std::move(disabled);
    if (checked && o.checked == tir::BoundChecks::off) o.checked = tir::BoundChecks::on;
    return o;
}

std::string join(const std::vector<int64_t>& v) {
    std::ostringstream os;
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    return os.str();
}

// TVM prints a space as one line per knob; so does this.
std::string space_str(const te::ConfigSpace& s) {
    std::ostringstream os;
    os << "ConfigSpace (len=" << s.size() << ", knobs=";
    for (size_t i = 0; i < s.knobs.size(); ++i) {
        const te::Knob& k = s.knobs[i];
        os << "\n  " << i << " " << k.name << ": [" << join(k.choices)
           << "] default=" << k.default_value;
    }
    os << (s.knobs.empty() ? ")" : "\n)");
    return os.str();
}

tune::Config to_config(const te::ConfigSpace& space, const Choice& choice) {
    if (choice.size() != space.knobs.size())
        throw UserError(
            "a configuration has one choice per knob: " + std::to_string(space.knobs.size()) +
            " expected, got " + std::to_string(choice.size()));
    for (size_t i = 0; i < choice.size(); ++i) {
        if (choice[i] < 0 || static_cast<size_t>(choice[i]) >= space.knobs[i].choices.size())
            throw UserError("configuration: choice " + std::to_string(choice[i]) +
                            " is out of range for knob " + space.knobs[i].name);
    }
    return tune::Config{choice};
}

tune::MeasureError parse_error(const std::string& name) {
    auto e = tune::parse_measure_error(name);
    if (!e)
        throw UserError(
            "unknown measurement error kind '" + name +
            "'; the kinds are none, compile, runtime, timeout, wrong_answer, build_timeout");
    return *e;
}

// The kernel arguments of a tensor-expression function: placeholders are inputs, computed
// tensors are outputs (written by the kernel, allocated by the measuring process).
std::vector<tune::KernelArg> kernel_args(const std::vector<te::Tensor>& tensors) {
    std::vector<tune::KernelArg> out;
    for (const auto& t : tensors) {
        tune::KernelArg a;
        a.name = "arg" + std::to_string(out.size());
        for (const auto& d : t.shape()) {
            const int64_t* v = as_const_int(d);
            if (!v)
                throw UserError("tensor '" + t.name() +
                                "' has a symbolic dimension; a tuning task needs constant shapes");
            a.shape.push_back(*v);
        }
        a.dtype = runtime::dl_dtype_from_string(t.dtype().str());
        a.output = t.op->kind == te::OpKind::Compute;
        out.push_back(std::move(a));
    }
    return out;
}

tune::SearchKind parse_search(const std::string& name) {
    auto k = tune::parse_search_kind(name);
    if (!k) throw UserError("unknown search '" + name + "'; the searches are template and auto");
    return *k;
}

void bind_space(py::module_& am) {
    py::class_<te::Knob>(am, "Knob", "One tunable choice of a schedule: its name and values.")
        .def(py::init([](std::string name, std::vector<int64_t> choices, int64_t def) {
                 return te::Knob{std::move(name), std::move(choices), def};
             }),
             py::arg("name"), py::arg("choices"), py::arg("default"))
        .def_readonly("name", &te::Knob::name, "The knob's name (\"tile_ow\", ...).")
        .def_readonly("choices", &te::Knob::choices, "Its values, in the schedule's order.")
        .def_readonly("default", &te::Knob::default_value,
                      "The value an untuned build uses (one of choices).")
        .def("__repr__", [](const te::Knob& k) {
            return "Knob(" + k.name + ", [" + join(k.choices) +
                   "], default=" + std::to_string(k.default_value) + ")";
        });
    py::class_<te::ConfigSpace>(am, "ConfigSpace",
                                "A task's search space: its knobs, in declaration order.")
        .def(
            py::init([](std::vector<te::Knob> knobs) { return te::ConfigSpace{std::move(knobs)}; }),
            py::arg("knobs"))
        .def_readonly("knobs", &te::ConfigSpace::knobs, "The knobs, in declaration order.")
        .def("__len__", &te::ConfigSpace::size, "The number of configurations.")
        .def("__str__", &space_str)
        .def("__repr__", &space_str)
        .def("__eq__", [](const te::ConfigSpace& a, const te::ConfigSpace& b) { return a == b; });
    py::class_<te::ScheduleConfig>(
        am, "ScheduleConfig",
        "A configuration being run: knob values in, the declared space out (te/config_space.h).")
        .def(py::init<te::KnobValues>(), py::arg("values") = te::KnobValues{})
        .def("define_knob", &te::ScheduleConfig::define_knob, py::arg("name"), py::arg("choices"),
             py::arg("default"), "Declares a knob and returns its value in this configuration.")
        .def("define_split", &te::ScheduleConfig::define_split, py::arg("name"), py::arg("extent"),
             py::arg("max_factor"), py::arg("default"),
             "Declares a split's inner factor (a divisor of extent up to max_factor).")
        .def_property_readonly("space", &te::ScheduleConfig::space, "The knobs declared so far.")
        .def_property_readonly("values", &te::ScheduleConfig::values,
                               "The values the configuration was made with.")
        .def("resolved", &te::ScheduleConfig::resolved,
             "The value of every declared knob, defaults included.");
    am.def("knob_values_str", &te::knob_values_str, py::arg("values"));
}

void bind_tuners(py::module_& am) {
    py::class_<tune::Tuner>(am, "Tuner", "Proposes configurations of a space (tune/tuner.h).")
        .def("has_next", &tune::Tuner::has_next)
        .def(
            "next_batch",
            [](tune::Tuner& t, int n) {
                std::vector<Choice> out;
                for (auto& c : t.next_batch(n)) out.push_back(std::move(c.choice));
                return out;
            },
            py::arg("n"))
        .def(
            "update",
            [](tune::Tuner& t, const std::vector<Choice>& configs,
               const std::vector<double>& costs) {
                if (configs.size() != costs.size())
                    throw UserError("Tuner.update: one cost per configuration");
                std::vector<tune::Config> cs;
                for (const auto& c : configs) cs.push_back(tune::Config{c});
                t.update(cs, costs);
            },
            py::arg("configs"), py::arg("costs"));
    am.def(
        "make_tuner",
        py::overload_cast<const std::string&, const te::ConfigSpace&, uint64_t>(&tune::make_tuner),
        py::arg("kind"), py::arg("space"), py::arg("seed") = 1);
    am.def(
        "config_values",
        [](const te::ConfigSpace& space, const Choice& choice) {
            return tune::config_values(space, to_config(space, choice));
        },
        py::arg("space"), py::arg("choice"));
    am.def(
        "config_of_values",
        [](const te::ConfigSpace& space, const te::KnobValues& values) -> std::optional<Choice> {
            auto c = tune::config_of_values(space, values);
            if (!c) return std::nullopt;
            return c->choice;
        },
        py::arg("space"), py::arg("values"));
}

void bind_measure(py::module_& am) {
    py::class_<tune::MeasureOption>(am, "MeasureOption")
        .def(py::init([](int number, int repeat, int min_repeat_ms, bool flush, double timeout,
                         int threads) {
                 return tune::MeasureOption{number, repeat, min_repeat_ms, flush, timeout, threads};
             }),
             py::arg("number") = 1, py::arg("repeat") = 3, py::arg("min_repeat_ms") = 0,
             py::arg("flush_cache") = false, py::arg("timeout_s") = 10.0, py::arg("threads") = 0)
        .def_readonly("number", &tune::MeasureOption::number)
        .def_readonly("repeat", &tune::MeasureOption::repeat)
        .def_readonly("min_repeat_ms", &tune::MeasureOption::min_repeat_ms)
        .def_readonly("flush_cache", &tune::MeasureOption::flush_cache)
        .def_readonly("timeout_s", &tune::MeasureOption::timeout_s)
        .def_readonly("threads", &tune::MeasureOption::threads);
    py::class_<tune::KernelArg>(am, "KernelArg")
        .def_readonly("name", &tune::KernelArg::name)
        .def_readonly("shape", &tune::KernelArg::shape)
        .def_property_readonly(
            "dtype", [](const tune::KernelArg& a) { return runtime::dl_dtype_to_string(a.dtype); })
        .def_readonly("output", &tune::KernelArg::output);
    am.def("kernel_args", &kernel_args, py::arg("tensors"));
    am.def(
        "write_random_inputs",
        [](const std::vector<tune::KernelArg>& args, uint64_t seed, const std::string& path) {
            runtime::write_npz(path, tune::random_inputs(args, seed));
        },
        py::arg("args"), py::arg("seed"), py::arg("path"));
    py::class_<tune::MeasureResult>(am, "MeasureResult")
        .def_property_readonly("error",
                               [](const tune::MeasureResult& r) {
                                   return std::string(tune::measure_error_name(r.error));
                               })
        .def_readonly("message", &tune::MeasureResult::message)
        .def_readonly("costs", &tune::MeasureResult::costs)
        .def_readonly("elapsed_s", &tune::MeasureResult::elapsed_s);
    py::class_<tune::BuildResult>(am, "BuildResult")
        .def_property_readonly("error",
                               [](const tune::BuildResult& r) {
                                   return std::string(tune::measure_error_name(r.error));
                               })
        .def_readonly("message", &tune::BuildResult::message)
        .def_readonly("elapsed_s", &tune::BuildResult::elapsed_s);
    am.def("build_in_child", &tune::build_in_child, py::arg("kernels"), py::arg("target"),
           py::arg("library"), py::arg("timeout_s"), py::call_guard<py::gil_scoped_release>(),
           "Compiles lowered kernels (their loop IR's text) into a library in an anvil-build "
           "process killed after timeout_s (tune/build_in_child.h).");
    am.def(
        "measure_in_child",
        [](const std::string& library, const std::string& function,
           const std::vector<tune::KernelArg>& args, const std::string& inputs_npz,
           const std::string& outputs_npz, const tune::MeasureOption& option) {
            tune::MeasureRequest req{library, function, args, inputs_npz, outputs_npz};
            return tune::measure_in_child(req, option);
        },
        py::arg("library"), py::arg("function"), py::arg("args"), py::arg("inputs_npz"),
        py::arg("outputs_npz"), py::arg("option"), py::call_guard<py::gil_scoped_release>());
    am.def(
        "outputs_match",
        [](const std::string& reference_npz, const std::string& candidate_npz, double rtol,
           double atol) {
            std::string why;
            bool same = tune::outputs_match(runtime::read_npz(reference_npz),
                                            runtime::read_npz(candidate_npz), rtol, atol, &why);
            return std::make_pair(same, why);
        },
        py::arg("reference_npz"), py::arg("candidate_npz"), py::arg("rtol") = 1e-3,
        py::arg("atol") = 1e-3);
}

void bind_records(py::module_& am) {
    py::enum_<tune::SearchKind>(am, "SearchKind",
                                "Which search made a record (TuningRecord.search spells it "
                                "\"template\" or \"auto\").")
        .value("config", tune::SearchKind::config, "A template's knob configuration.")
        .value("program", tune::SearchKind::program, "An auto-scheduler program.");
    py::class_<tune::TuningRecord>(am, "TuningRecord",
                                   "One measurement: a configuration of a workload on a target "
                                   "and its cost (one line of a records file).")
        .def(py::init<>())
        .def_readwrite("workload", &tune::TuningRecord::workload,
                       "The workload key the record applies to.")
        .def_readwrite("target", &tune::TuningRecord::target,
                       "The complete target string it was measured on.")
        .def_readwrite("config", &tune::TuningRecord::config,
                       "Knob name -> value, every knob of the space.")
        .def_readwrite("costs", &tune::TuningRecord::costs,
                       "Seconds per run, one per repeat; empty on error.")
        .def_readwrite("message", &tune::TuningRecord::message, "The error's text, if any.")
        .def_readwrite("timestamp", &tune::TuningRecord::timestamp,
                       "When it was measured, seconds since the epoch.")
        .def_readonly("version", &tune::TuningRecord::version, "The record format's version.")
        .def_readonly("anvil_version", &tune::TuningRecord::anvil_version,
                      "The Anvil version that made it.")
        .def_property(
            "error",
            [](const tune::TuningRecord& r) {
                return std::string(tune::measure_error_name(r.error));
            },
            [](tune::TuningRecord& r, const std::string& e) { r.error = parse_error(e); },
            "How the measurement failed: none, compile, runtime, timeout, wrong_answer or "
            "build_timeout.")
        .def_property(
            "search",
            [](const tune::TuningRecord& r) {
                return std::string(tune::search_kind_name(r.search));
            },
            [](tune::TuningRecord& r, const std::string& name) { r.search = parse_search(name); },
            "Which search made it: \"template\" (a configuration of knobs) or \"auto\" (an "
            "auto-scheduler program, replayed as is; config is empty).")
        .def_property_readonly(
            "schedule", [](const tune::TuningRecord& r) { return te::print_record(r.schedule); },
            "The schedule primitives the configuration applied, as text.")
        .def(
            "set_schedule",
            [](tune::TuningRecord& r, const te::Schedule& s) { r.schedule = s.record(); },
            py::arg("schedule"), "Stores the primitives `schedule` applied.")
        .def("mean_cost", &tune::TuningRecord::mean_cost,
             "The mean of costs; infinity on error or without costs.")
        .def("ok", &tune::TuningRecord::ok, "Whether the measurement succeeded.")
        .def("to_line", &tune::record_to_line, "The record as one line of a records file.")
        .def("__repr__", &tune::record_to_line);
    am.def(
        "record_from_line",
        [](const std::string& line) {
            std::string why;
            auto r = tune::record_from_line(line, &why);
            return std::make_pair(r, why);
        },
        py::arg("line"));
    am.def(
        "load_records",
        [](const std::string& path) {
            std::vector<std::string> warnings;
            auto records = tune::load_records(path, &warnings);
            return std::make_pair(records, warnings);
        },
        py::arg("path"));
    py::class_<tune::RecordWriter>(am, "RecordWriter",
                                   "Appends records to a file, one flushed line each.")
        .def(py::init<std::string>(), py::arg("path"))
        .def("append", &tune::RecordWriter::append, py::arg("record"),
             "Appends one record as one line.")
        .def_property_readonly("path", &tune::RecordWriter::path, "The file written.");
    py::class_<tune::BestRecords, std::shared_ptr<tune::BestRecords>>(
        am, "BestRecords", "The best successful record per (workload, target).")
        .def("__len__", &tune::BestRecords::size)
        .def(
            "find",
            [](const tune::BestRecords& b, const std::string& workload,
               const std::string& target) -> std::optional<tune::TuningRecord> {
                const tune::TuningRecord* r = b.find(workload, target);
                if (!r) return std::nullopt;
                return *r;
            },
            py::arg("workload"), py::arg("target"),
            "The best record of a workload on a target (complete spelling), or None.")
        .def_property_readonly(
            "records",
            [](const tune::BestRecords& b) {
                std::vector<tune::TuningRecord> out;
                for (const auto& [key, r] : b.all()) out.push_back(r);
                return out;
            },
            "Every best record.");
    am.def(
        "load_best_records",
        [](const std::vector<std::string>& paths) {
            std::vector<std::string> warnings;
            auto best = driver::load_best_records(paths, &warnings);
            return std::make_pair(best, warnings);
        },
        py::arg("paths"));
}

void bind_model_tuning(py::module_& am) {
    py::class_<driver::TuneTask>(am, "TuneTask",
                                 "One task of a model: a distinct fused kernel, or a choice that "
                                 "changes the graph (a layout block, a convolution's algorithm).")
        .def_readonly("workload", &driver::TuneTask::workload)
        .def_readonly("name", &driver::TuneTask::name)
        .def_readonly("weight", &driver::TuneTask::weight)
        .def_readonly("static_shapes", &driver::TuneTask::static_shapes)
        .def_readonly("space", &driver::TuneTask::space)
        .def_property_readonly("tunable", &driver::TuneTask::tunable)
        .def_property_readonly(
            "algorithm", [](const driver::TuneTask& t) { return !t.variants.empty() && !t.layout; },
            "Whether it chooses a convolution's algorithm (direct or Winograd, or the weight "
            "block or direct form of one left unblocked) rather than a kernel's schedule.")
        .def_readonly("layout", &driver::TuneTask::layout,
                      "Whether it chooses the channel block of a channel count's blocked layout "
                      "rather than a kernel's schedule.");
    // All under the best records in force (apply_history_best), so that the tasks are those of
    // the layouts and algorithms the records chose.
    using Extract = std::vector<driver::TuneTask> (*)(const graph::IRModule&, const std::string&,
                                                      const driver::PipelineOptions&);
    auto bind_extract = [&](const char* name, Extract extract) {
        am.def(
            name,
            [extract](const graph::IRModule& mod, const std::string& target, int opt_level,
                      std::vector<std::string> disabled, bool checked,
                      std::shared_ptr<tune::BestRecords> records) {
                auto o = pipeline_options(opt_level, std::move(disabled), checked);
                o.tuning_records = std::move(records);
                return extract(mod, target, o);
            },
            py::arg("mod"), py::arg("target"), py::arg("opt_level") = 3,
            py::arg("disabled_passes") = std::vector<std::string>{}, py::arg("checked") = false,
            py::arg("records") = py::none(), py::call_guard<py::gil_scoped_release>());
    };
    bind_extract("extract_tasks", driver::extract_tasks);
    bind_extract("extract_algorithm_tasks", [](const graph::IRModule& m, const std::string& t,
                                               const driver::PipelineOptions& o) {
        return driver::extract_algorithm_tasks(m, t, o);
    });
    bind_extract("extract_layout_tasks", [](const graph::IRModule& m, const std::string& t,
                                            const driver::PipelineOptions& o) {
        return driver::extract_layout_tasks(m, t, o);
    });

    py::class_<driver::TaskProgress>(am, "TaskProgress")
        .def_readonly("name", &driver::TaskProgress::name)
        .def_readonly("workload", &driver::TaskProgress::workload)
        .def_readonly("weight", &driver::TaskProgress::weight)
        .def_readonly("tunable", &driver::TaskProgress::tunable)
        .def_readonly("from_cache", &driver::TaskProgress::from_cache)
        .def_readonly("trials", &driver::TaskProgress::trials)
        .def_readonly("failures", &driver::TaskProgress::failures)
        .def_readonly("default_cost", &driver::TaskProgress::default_cost)
        .def_readonly("best_cost", &driver::TaskProgress::best_cost)
        .def_readonly("done", &driver::TaskProgress::done)
        .def_readonly("algorithm", &driver::TaskProgress::algorithm)
        .def_readonly("layout", &driver::TaskProgress::layout);
    py::class_<driver::TuneProgress>(am, "TuneProgress")
        .def_readonly("tasks", &driver::TuneProgress::tasks)
        .def_readonly("current", &driver::TuneProgress::current)
        .def_readonly("trials", &driver::TuneProgress::trials)
        .def_readonly("elapsed_s", &driver::TuneProgress::elapsed_s)
        .def_readonly("estimated_latency_s", &driver::TuneProgress::estimated_latency_s);
    py::class_<driver::TuneSummary>(am, "TuneSummary")
        .def_readonly("final", &driver::TuneSummary::final)
        .def_readonly("mean_trial_s", &driver::TuneSummary::mean_trial_s)
        .def_readonly("warnings", &driver::TuneSummary::warnings);
    am.def(
        "tune_tasks",
        [](std::vector<driver::TuneTask> tasks, const std::string& target, const std::string& tuner,
           int trials, int early_stopping, int parallel, int batch_size,
           const tune::MeasureOption& measure, const std::string& records_path,
           const std::string& cache_dir, uint64_t seed, int opt_level,
           std::vector<std::string> disabled, bool checked, const py::object& on_progress,
           const std::string& search, const std::string& cost_model, double build_timeout) {
            driver::TuneOptions o;
            o.target = target;
            o.trials = trials;
            o.tuner = tuner;
            o.search = search;
            o.cost_model = cost_model;
            o.early_stopping = early_stopping;
            o.parallel = parallel;
            o.build_timeout_s = build_timeout;
            o.batch_size = batch_size;
            o.measure = measure;
            o.records_path = records_path;
            o.cache_dir = cache_dir;
            o.seed = seed;
            o.pipeline = pipeline_options(opt_level, std::move(disabled), checked);
            // The session runs without the GIL; each progress report takes it back to call
            // Python (an exception there ends the session and reaches the caller).
            std::function<void(const driver::TuneProgress&)> report;
            if (!on_progress.is_none()) {
                report = [&on_progress](const driver::TuneProgress& p) {
                    py::gil_scoped_acquire gil;
                    on_progress(driver::TuneProgress(p));  // a copy Python may keep
                };
            }
            py::gil_scoped_release release;
            return driver::tune_tasks(std::move(tasks), o, report);
        },
        py::arg("tasks"), py::arg("target"), py::arg("tuner"), py::arg("trials"),
        py::arg("early_stopping"), py::arg("parallel"), py::arg("batch_size"), py::arg("measure"),
        py::arg("records_path"), py::arg("cache_dir"), py::arg("seed"), py::arg("opt_level"),
        py::arg("disabled_passes"), py::arg("checked"), py::arg("on_progress"),
        py::arg("search") = "template", py::arg("cost_model") = "", py::arg("build_timeout") = 15.0,
        "Tunes model tasks (driver::tune_tasks): search \"template\" (the knobs, by `tuner`) or "
        "\"auto\" (the auto-scheduler, every kernel of static shapes, from the cost model "
        "saved in `cost_model`, \"\" for none).");
}

}  // namespace

void init_autotvm(py::module_& m) {
    py::module_ am = m.def_submodule("autotvm", "Tuning (wrapped by anvil.autotvm)");
    bind_space(am);
    bind_tuners(am);
    bind_measure(am);
    bind_records(am);
    bind_model_tuning(am);
    am.attr("WORKLOAD_KEY_VERSION") = driver::kWorkloadKeyVersion;
    am.def(
        "const_int",
        [](const PrimExpr& e) -> std::optional<int64_t> {
            const int64_t* v = as_const_int(simplify(e));
            if (!v) return std::nullopt;
            return *v;
        },
        py::arg("expr"), "The value of a constant integer expression, or None.");
    m.def(
        "canonical_target", [](const std::string& text) { return Target::parse(text).str(); },
        py::arg("target"), "The complete spelling of a target (Target::parse(text).str()).");
}

}  // namespace anvil::python
