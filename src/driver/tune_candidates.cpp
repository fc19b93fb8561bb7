// Building and measuring a tuning session's candidates (tune_session.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <future>
#include <thread>

#include "driver/lower_graph.h"
#include "driver/tune_session.h"
#include "runtime/npz.h"
#include "support/error.h"
#include "support/large_stack.h"
#include "tir/printer.h"
#include "tune/build_in_child.h"

namespace anvil::driver {

namespace {

namespace fs = std::filesystem;

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
        for (int64_t i = 0; i < static_cast<int64_t>(a.nbytes() / 4); ++i) {
            if (std::isfinite(p[i])) m = std::max(m, static_cast<double>(std::fabs(p[i])));
        }
    }
    return m;
}

double now_epoch() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace

// A finished task's inputs and reference (weights included: they can be large).
void TuningSession::release_files(TaskState& t) {
    std::error_code ec;
    for (const auto& [variant, in] : t.inputs) fs::remove(in.inputs_npz, ec);
    if (!t.reference_npz.empty()) fs::remove(t.reference_npz, ec);
    t.inputs.clear();
}

// The default configuration's outputs, the reference of a resumed task; false when the
// default does not build or run (the task cannot check candidates). Its time counts as building
// and measuring (no trial).
bool TuningSession::measure_reference(TaskState& t) {
    auto seconds_since = [](Clock::time_point start) {
        return std::chrono::duration<double>(Clock::now() - start).count();
    };
    const Clock::time_point start = Clock::now();
    Candidate c;
    c.config = tune::default_config(t.task.space);
    c.is_default = true;
    std::vector<Candidate> built = build(t, {c});
    build_s_ += seconds_since(start);
    const bool ok = measure(t, built.at(0)).ok() && t.reference_ok;
    build_and_measure_s_ += seconds_since(start);
    return ok;
}

std::vector<Candidate> TuningSession::build(TaskState& t, std::vector<Candidate> out) {
    auto build_one = [&](size_t i) {
        Candidate& c = out[i];
        if (!c.program) c.values = tune::config_values(t.task.space, c.config);
        // A graph-choice task's choice picks the kernels, which take their default schedules.
        const int variant = t.task.variants.empty() ? -1 : c.config.choice.at(0);
        if (variant >= 0 && !t.task.variant_errors.at(variant).empty()) {
            c.error = t.task.variant_errors[variant];
            return;
        }
        const std::vector<VariantKernel> kernels =
            variant < 0 ? std::vector<VariantKernel>{{t.task.function, t.task.args, 1}}
                        : t.task.variants.at(variant);
        try {
            // Each kernel's loop IR as text, which anvil-build compiles (tune/build_in_child.h).
            std::vector<std::string> lowered_kernels;
            for (size_t k = 0; k < kernels.size(); ++k) {
                // Lowering and printing recurse over nested expressions: on a large stack, as
                // compile does.
                LoweredFunction lowered = call_with_large_stack([&] {
                    if (c.program) {
                        return lower_primitive_function_with_program(
                            *kernels[k].function, kernel_name(k), target_, options_.pipeline,
                            c.program->record);
                    }
                    return lower_primitive_function(*kernels[k].function, kernel_name(k), target_,
                                                    options_.pipeline,
                                                    variant < 0 ? c.values : te::KnobValues{});
                });
                if (!t.task.layout) c.schedule = lowered.schedule;  // of its one kernel
                c.inputs.push_back(&prepare_inputs(t, variant, static_cast<int>(k),
                                                   *kernels[k].function, kernels[k].args, lowered));
                c.weights.push_back(kernels[k].weight);
                lowered_kernels.push_back(
                    call_with_large_stack([&] { return tir::print(lowered.kernel); }));
            }
            if (lowered_kernels.empty()) return;  // nothing differs: costs nothing
            c.library = (work_dir_ / ("candidate_" + std::to_string(next_id_++) + ".so"));
            tune::BuildResult built = tune::build_in_child(lowered_kernels, target_.str(),
                                                           c.library, options_.build_timeout_s);
            if (!built.ok()) {
                c.error = built.message;
                c.build_error = built.error;
            }
        } catch (const std::exception& e) {
            c.error = e.what();
        }
    };
    int threads = std::max(1, options_.parallel);
    if (threads == 1 || out.size() == 1) {
        for (size_t i = 0; i < out.size(); ++i) build_one(i);
    } else {
        // The first lowering describes the arguments; the rest only read them.
        build_one(0);
        std::vector<std::future<void>> running;
        for (size_t i = 1; i < out.size(); ++i) {
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
const KernelInputs& TuningSession::prepare_inputs(TaskState& t, int variant, int kernel,
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
        t.reference_npz = (work_dir_ / ("task_" + std::to_string(id) + "_reference.npz")).string();
    }
    return t.inputs.emplace(std::make_pair(variant, kernel), std::move(in)).first->second;
}

std::vector<tune::TuningRecord> TuningSession::measure_on_devices(
    TaskState& t, const std::vector<Candidate>& built) {
    std::vector<tune::TuningRecord> records(built.size());
    std::atomic<size_t> next{0};
    std::vector<std::exception_ptr> failures(devices_.size());
    std::vector<std::thread> workers;
    for (size_t d = 0; d < devices_.size(); ++d) {
        workers.emplace_back([&, d] {
            try {
                for (size_t i; (i = next++) < built.size();) {
                    records[i] = measure(t, built[i], devices_[d].get());
                }
            } catch (...) {
                failures[d] = std::current_exception();
            }
        });
    }
    for (auto& w : workers) w.join();
    for (const auto& f : failures) {
        if (f) std::rethrow_exception(f);
    }
    return records;
}

tune::TuningRecord TuningSession::measure(TaskState& t, const Candidate& c,
                                          tune::RemoteMeasurer* remote) {
    if (remote == nullptr && !devices_.empty()) remote = devices_.front().get();
    tune::TuningRecord r;
    r.workload = t.task.workload;
    r.target = target_.str();
    r.config = c.values;
    r.schedule = c.schedule;
    if (c.program) r.search = tune::SearchKind::program;
    r.timestamp = now_epoch();
    if (!c.error.empty()) {
        r.error = c.build_error;
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
        tune::MeasureResult m = remote ? remote->measure(req, options_.measure)
                                       : tune::measure_in_child(req, options_.measure);
        r.error = m.error;
        r.message = m.message;
        if (m.error == tune::MeasureError::none && compare && !is_reference) {
            std::string why;
            auto reference = runtime::read_npz(t.reference_npz);
            bool same = tune::outputs_match(reference, runtime::read_npz(req.outputs_npz), kRtol,
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

}  // namespace anvil::driver
