// The parent side of measuring a candidate: starts anvil-measure (measure_worker_main.cpp, which
// documents the request and result files) and turns how it ended into a MeasureResult.
//
// The worker is started with posix_spawn, never a bare fork: the tuning session may be a
// multithreaded Python process, where a forked child may only call async-signal-safe functions
// until it execs.
#include "tune/measure.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "support/error.h"

extern char** environ;

namespace anvil::tune {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

// A fresh private directory for one trial's request, result and stderr; removed with everything
// in it.
class TempDir {
public:
    TempDir() {
        std::error_code ec;
        fs::path base = fs::temp_directory_path(ec);
        if (ec) base = "/tmp";
        std::string templ = (base / "anvil-measure-XXXXXX").string();
        if (mkdtemp(templ.data()) == nullptr) {
            user_error() << "cannot create a temporary directory for measuring in " << base << ": "
                         << std::strerror(errno) << " (set TMPDIR to a writable directory)";
        }
        path_ = templ;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The last `max_bytes` of what the worker printed to stderr, trimmed, for error messages.
std::string stderr_tail(const fs::path& path, size_t max_bytes = 2000) {
    std::string text = read_file(path);
    if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    return text;
}

std::string signal_text(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    const char* description = sigdescr_np(sig);
    std::string s = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
    if (description) s += std::string(" (") + description + ")";
    return s;
}

// Waits for `pid` until `deadline`: true with its status once it ended, false when the deadline
// passed first. A pidfd wakes exactly when the child ends; kernels older than 5.3 fall back to
// polling every millisecond.
bool wait_until(pid_t pid, Clock::time_point deadline, int* status) {
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    while (true) {
        pid_t done = waitpid(pid, status, WNOHANG);
        if (done == pid || (done < 0 && errno != EINTR)) {
            if (pidfd >= 0) close(pidfd);
            // ECHILD: someone else reaped it (SIGCHLD ignored); the result file decides.
            if (done < 0) *status = 0;
            return true;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            if (pidfd >= 0) close(pidfd);
            return false;
        }
        if (pidfd >= 0) {
            pollfd p{pidfd, POLLIN, 0};
            poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count() + 1, 1000)));
        } else {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
}

pid_t spawn_worker(const std::string& worker, const std::vector<std::string>& argv_strings,
                   const fs::path& stderr_path) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // The parent's other descriptors (a Python caller's pipes) must not stay open in the worker.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    // Ignored signals stay ignored across exec (Python ignores SIGPIPE).
    sigaddset(&defaults, SIGPIPE);
    sigaddset(&defaults, SIGCHLD);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    std::vector<char*> argv;
    for (const auto& a : argv_strings) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, worker.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        user_error() << "cannot start the measuring program '" << worker
                     << "': " << std::strerror(rc);
    }
    return pid;
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

bool is_executable_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

}  // namespace

MeasureResult measure_in_child(const MeasureRequest& request, const MeasureOption& option) {
    check_option(option);
    const std::string worker = measure_worker_path();
    TempDir dir;
    const fs::path request_path = dir.path() / "request.json";
    const fs::path result_path = dir.path() / "result.json";
    const fs::path stderr_path = dir.path() / "stderr.txt";
    {
        std::ofstream out(request_path);
        out << request_json(request, option).dump() << "\n";
        if (!out) user_error() << "cannot write the measuring request " << request_path;
    }

    const auto start = Clock::now();
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(option.timeout_s));
    pid_t pid =
        spawn_worker(worker, {worker, request_path.string(), result_path.string()}, stderr_path);
    int status = 0;
    bool ended = wait_until(pid, deadline, &status);
    if (!ended) {
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    MeasureResult result;
    const auto end = Clock::now();
    result.elapsed_s = std::chrono::duration<double>(end - start).count();
    // A child seen to end only after the deadline (this process was descheduled meanwhile)
    // counts as timed out: which came first cannot be told, and its result is not taken.
    if (!ended || end > deadline) {
        result.error = MeasureError::timeout;
        std::ostringstream msg;
        msg << "the measurement took longer than " << option.timeout_s << " s"
            << (ended ? "" : " and was killed");
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
    std::string err = stderr_tail(stderr_path);
    if (WIFSIGNALED(status)) {
        result.message = "anvil-measure was killed by " + signal_text(WTERMSIG(status)) +
                         " while loading or running the kernel";
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        result.message = "anvil-measure exited with status " + std::to_string(WEXITSTATUS(status));
    } else {
        result.message = "anvil-measure ended without writing a result";
    }
    if (!err.empty()) result.message += ": " + err;
    return result;
}

std::string measure_worker_path() {
    if (const char* env = std::getenv("ANVIL_MEASURE_WORKER"); env && *env) {
        if (is_executable_file(env)) return env;
        user_error() << "ANVIL_MEASURE_WORKER is '" << env << "', which is not an executable file";
    }
    std::vector<fs::path> tried;
    auto consider = [&](const fs::path& p) {
        if (std::find(tried.begin(), tried.end(), p) == tried.end()) tried.push_back(p);
        return is_executable_file(p);
    };
#ifdef ANVIL_MEASURE_WORKER_BUILD_PATH
    if (consider(ANVIL_MEASURE_WORKER_BUILD_PATH)) return ANVIL_MEASURE_WORKER_BUILD_PATH;
#endif
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && consider(exe.parent_path() / "anvil-measure")) {
        return (exe.parent_path() / "anvil-measure").string();
    }
    // Beside the shared object this code is in: the Python extension, with the worker installed
    // next to it.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&measure_worker_path), &info) != 0 && info.dli_fname) {
        fs::path self = fs::weakly_canonical(info.dli_fname, ec);
        if (!ec && consider(self.parent_path() / "anvil-measure")) {
            return (self.parent_path() / "anvil-measure").string();
        }
    }
    std::string places;
    for (const auto& p : tried) places += (places.empty() ? "" : ", ") + p.string();
    user_error() << "cannot find the measuring program anvil-measure (looked at " << places
                 << "); build the anvil-measure target, or set ANVIL_MEASURE_WORKER to its path";
    return {};
}

}  // namespace anvil::tune
