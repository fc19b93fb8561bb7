// The parent side of measuring a candidate: starts anvil-measure (measure_worker_main.cpp, which
// documents the request and result files) as a child process (child_process.h) and turns how it
// ended into a MeasureResult.
#include "tune/measure.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "support/error.h"
#include "tune/child_process.h"

namespace anvil::tune {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

nlohmann::json request_json(const MeasureRequest& request, const MeasureOption& option) {
    nlohmann::json args = nlohmann::json::array();
    for (const KernelArg& a : request.args) {
        args.push_back({{"name", a.name},
                        {"shape", a.shape},
                        {"dtype", runtime::dl_dtype_to_string(a.dtype)},
                        {"output", a.output}});
    }
    auto absolute = [](const std::string& p) { return p.empty() ? p : fs::absolute(p).string(); };
    return {{"library", absolute(request.library)},
            {"function", request.function},
            {"args", args},
            {"inputs_npz", absolute(request.inputs_npz)},
            {"outputs_npz", absolute(request.outputs_npz)},
            {"number", option.number},
            {"repeat", option.repeat},
            {"min_repeat_ms", option.min_repeat_ms},
            {"flush_cache", option.flush_cache},
            {"threads", option.threads}};
}

// What the worker's result file says; a runtime error when it is not a result.
MeasureResult parse_result(const std::string& text) {
    MeasureResult r;
    try {
        nlohmann::json j = nlohmann::json::parse(text);
        std::string error = j.at("error").get<std::string>();
        if (error == "none") {
            r.costs = j.at("costs").get<std::vector<double>>();
            return r;
        }
        r.error = MeasureError::runtime;
        r.message = j.value("message", error);
    } catch (const nlohmann::json::exception& e) {
        r.error = MeasureError::runtime;
        r.message = std::string("anvil-measure wrote an unreadable result: ") + e.what();
    }
    return r;
}

void check_option(const MeasureOption& o) {
    if (o.number < 1 || o.repeat < 1) {
        user_error() << "measure option: number (" << o.number << ") and repeat (" << o.repeat
                     << ") must be at least 1";
    }
    if (o.min_repeat_ms < 0 || o.threads < 0) {
        user_error() << "measure option: min_repeat_ms (" << o.min_repeat_ms << ") and threads ("
                     << o.threads << ") must not be negative";
    }
    if (!(o.timeout_s > 0)) {
        user_error() << "measure option: timeout_s (" << o.timeout_s << ") must be positive";
    }
}

}  // namespace

MeasureResult measure_in_child(const MeasureRequest& request, const MeasureOption& option) {
    check_option(option);
    const std::string worker = measure_worker_path();
    ScratchDir dir("anvil-measure");
    const fs::path request_path = dir.path() / "request.json";
    const fs::path result_path = dir.path() / "result.json";
    const fs::path stderr_path = dir.path() / "stderr.txt";
    {
        std::ofstream out(request_path);
        out << request_json(request, option).dump() << "\n";
        if (!out) user_error() << "cannot write the measuring request " << request_path;
    }
    ChildExit exit = run_child(worker, {worker, request_path.string(), result_path.string()},
                               stderr_path, option.timeout_s);
    MeasureResult result;
    result.elapsed_s = exit.elapsed_s;
    if (exit.timed_out) {
        result.error = MeasureError::timeout;
        std::ostringstream msg;
        msg << "the measurement took longer than " << option.timeout_s << " s"
            << (exit.killed ? " and was killed" : "");
        result.message = msg.str();
        return result;
    }
    std::error_code ec;
    if (fs::exists(result_path, ec)) {
        MeasureResult parsed = parse_result(read_file(result_path));
        parsed.elapsed_s = result.elapsed_s;
        return parsed;
    }
    result.error = MeasureError::runtime;
    std::string how = exit_text(exit.status);
    result.message = how.empty() ? "anvil-measure ended without writing a result"
                                 : "anvil-measure " + how + " while loading or running the kernel";
    std::string err = stderr_tail(stderr_path);
    if (!err.empty()) result.message += ": " + err;
    return result;
}

std::string measure_worker_path() {
#ifdef ANVIL_MEASURE_WORKER_BUILD_PATH
    const std::string build_path = ANVIL_MEASURE_WORKER_BUILD_PATH;
#else
    const std::string build_path;
#endif
    return find_helper_program("anvil-measure", "ANVIL_MEASURE_WORKER", build_path);
}

}  // namespace anvil::tune
