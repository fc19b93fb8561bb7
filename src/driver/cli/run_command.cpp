// anvil run model.so [--inputs DIR_OR_NPZ] [--outputs out.npz] [--compare DIR] [--repeat N]
//           [--number K] [--threads T] [--print-time] [--print-top K]
//
// Inputs come from an ONNX test_data_set directory (input_K.pb, by position) or an .npz (by
// input name, else by position). --compare checks every output against the directory's
// output_K.pb with rtol 1e-3, atol 1e-4 and fails (exit 1) on a mismatch.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "commands.h"
#include "driver/compare.h"
#include "frontend/onnx/from_onnx.h"
#include "runtime/graph_executor.h"
#include "runtime/npz.h"
#include "support/error.h"

namespace anvil::cli {

namespace {

struct RunArgs {
    std::string model;
    std::string inputs;
    std::string outputs;
    std::string compare;
    int repeat = 1;
    int number = 1;
    int threads = 0;
    bool print_time = false;
    int print_top = 0;
    std::string labels;  // one class name per line, for --print-top
};

std::vector<runtime::NDArray> read_inputs(const std::string& source,
                                          const runtime::GraphExecutor& ex) {
    std::vector<runtime::NDArray> values(ex.num_inputs());
    if (source.empty()) {
        std::fprintf(stderr, "note: no --inputs; running on zeros\n");
        for (int i = 0; i < ex.num_inputs(); ++i) {
            const auto& info = ex.input_info(i);
            values[i] = runtime::NDArray::empty(info.shape, info.dtype);
            std::memset(values[i].raw_data(), 0, values[i].nbytes());
        }
    } else if (std::filesystem::is_directory(source)) {
        for (int i = 0; i < ex.num_inputs(); ++i) {
            std::string path = source + "/input_" + std::to_string(i) + ".pb";
            if (!std::filesystem::exists(path)) {
                user_error() << "--inputs: " << path << " is missing (the model has "
                             << ex.num_inputs() << " input(s))";
            }
            values[i] = driver::as_declared(frontend::read_tensor_pb(path), ex.input_info(i).dtype);
        }
    } else {
        auto arrays = runtime::read_npz(source);
        for (int i = 0; i < ex.num_inputs(); ++i) {
            const std::string& name = ex.input_info(i).name;
            auto it = std::find_if(arrays.begin(), arrays.end(),
                                   [&](const auto& a) { return a.first == name; });
            if (it != arrays.end()) {
                values[i] = driver::as_declared(it->second, ex.input_info(i).dtype);
            } else if (static_cast<size_t>(i) < arrays.size()) {
                values[i] = driver::as_declared(arrays[i].second, ex.input_info(i).dtype);
            } else {
                user_error() << "--inputs: " << source << " has no array for input '" << name
                             << "'";
            }
        }
    }
    return values;
}

// Prints max errors per output; returns false on a mismatch (numpy.allclose's rule).
bool compare_outputs(const std::string& dir, const std::vector<runtime::NDArray>& outputs) {
    constexpr double rtol = 1e-3, atol = 1e-4;
    bool ok = true;
    for (size_t k = 0; k < outputs.size(); ++k) {
        std::string path = dir + "/output_" + std::to_string(k) + ".pb";
        if (!std::filesystem::exists(path)) user_error() << "--compare: " << path << " is missing";
        runtime::NDArray ref = frontend::read_tensor_pb(path);
        driver::Comparison c = driver::compare_tensors(outputs[k], ref, rtol, atol);
        if (!c.same_type) {
            std::printf("output %zu: got %s, expected %s: MISMATCH\n", k, outputs[k].str().c_str(),
                        ref.str().c_str());
            ok = false;
            continue;
        }
        std::printf("output %zu: max abs error %.3g, max rel error %.3g: %s\n", k, c.max_abs_error,
                    c.max_rel_error, c.ok() ? "ok" : "MISMATCH");
        if (!c.ok()) {
            std::printf("  %zu of %zu elements differ (rtol %g, atol %g)\n", c.mismatches,
                        c.elements, rtol, atol);
            ok = false;
        }
    }
    return ok;
}

int run_model(const RunArgs& a) {
    if (a.threads > 0) anvil_set_num_threads(a.threads);
    runtime::GraphExecutor ex = runtime::GraphExecutor::load(a.model);
    std::vector<runtime::NDArray> inputs = read_inputs(a.inputs, ex);
    for (int i = 0; i < ex.num_inputs(); ++i) ex.set_input(i, inputs[i]);
    ex.run();
    std::vector<runtime::NDArray> outputs;
    for (int i = 0; i < ex.num_outputs(); ++i) outputs.push_back(ex.get_output(i));

    if (a.print_top > 0) {
        std::vector<double> v = driver::to_doubles(outputs[0]);
        std::vector<size_t> idx(v.size());
        std::iota(idx.begin(), idx.end(), 0);
        size_t k = std::min<size_t>(a.print_top, v.size());
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                          [&](size_t x, size_t y) { return v[x] > v[y]; });
        std::vector<std::string> names;
        if (!a.labels.empty()) {
            std::ifstream in(a.labels);
            if (!in) user_error() << "--labels: cannot open '" << a.labels << "'";
            for (std::string line; std::getline(in, line);) names.push_back(line);
        }
        std::printf("top-%zu of output 0:", k);
        if (!names.empty()) std::printf("\n");
        for (size_t i = 0; i < k; ++i) {
            if (idx[i] < names.size()) {
                std::printf("  %5zu  %-30s %.4g\n", idx[i], names[idx[i]].c_str(), v[idx[i]]);
            } else {
                std::printf(" %zu (%.4g)", idx[i], v[idx[i]]);
            }
        }
        if (names.empty()) std::printf("\n");
    }
    if (!a.outputs.empty()) {
        std::vector<std::pair<std::string, runtime::NDArray>> named;
        for (int i = 0; i < ex.num_outputs(); ++i)
            named.emplace_back(ex.output_info(i).name, outputs[i]);
        runtime::write_npz(a.outputs, named);
    }
    int status = 0;
    if (!a.compare.empty() && !compare_outputs(a.compare, outputs)) status = 1;
    if (a.print_time) {
        std::vector<double> ms;
        for (int r = 0; r < a.repeat; ++r) {
            auto start = std::chrono::steady_clock::now();
            for (int n = 0; n < a.number; ++n) ex.run();
            ms.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count() /
                a.number);
        }
        std::vector<double> sorted = ms;
        std::sort(sorted.begin(), sorted.end());
        double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / ms.size();
        double var = 0;
        for (double t : ms) var += (t - mean) * (t - mean);
        double median = sorted.size() % 2
                            ? sorted[sorted.size() / 2]
                            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
        std::printf("time_ms median=%.3f mean=%.3f min=%.3f max=%.3f std=%.3f runs=%zu\n", median,
                    mean, sorted.front(), sorted.back(), std::sqrt(var / ms.size()), ms.size());
    }
    return status;
}

}  // namespace

void add_run_command(CLI::App& app, int* status) {
    auto args = std::make_shared<RunArgs>();
    CLI::App* cmd = app.add_subcommand("run", "run a compiled model");
    cmd->add_option("model", args->model, "the compiled model (.so)")->required();
    cmd->add_option("--inputs", args->inputs, "a test_data_set directory or an .npz");
    cmd->add_option("--outputs", args->outputs, "write the outputs to this .npz");
    cmd->add_option("--compare", args->compare, "compare with DIR/output_K.pb");
    cmd->add_option("--repeat", args->repeat, "timed measurements")->check(CLI::PositiveNumber);
    cmd->add_option("--number", args->number, "runs per measurement")->check(CLI::PositiveNumber);
    cmd->add_option("--threads", args->threads,
                    "worker threads (default: ANVIL_NUM_THREADS or cores)");
    cmd->add_flag("--print-time", args->print_time, "print run-time statistics");
    cmd->add_option("--print-top", args->print_top, "print the top K entries of output 0");
    cmd->add_option("--labels", args->labels, "class names, one per line, for --print-top");
    cmd->callback([args, status] { *status = run_model(*args); });
}

}  // namespace anvil::cli
