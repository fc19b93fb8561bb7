// Child processes of the tuner with a time limit (child_process.h).
#include "tune/child_process.h"

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
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/error.h"

extern char** environ;

namespace anvil::tune {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

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
            // ECHILD: someone else reaped it (SIGCHLD ignored); the child's files decide.
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

pid_t spawn(const std::string& program, const std::vector<std::string>& argv_strings,
            const fs::path& stderr_path) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // The parent's other descriptors (a Python caller's pipes) must not stay open in the child.
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
    // A process group of its own (0: its pid), so that a timeout kills what it started too.
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

    std::vector<char*> argv;
    for (const auto& a : argv_strings) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) user_error() << "cannot start '" << program << "': " << std::strerror(rc);
    return pid;
}

bool is_executable_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

}  // namespace

ScratchDir::ScratchDir(const std::string& prefix) {
    std::error_code ec;
    fs::path base = fs::temp_directory_path(ec);
    if (ec) base = "/tmp";
    std::string templ = (base / (prefix + "-XXXXXX")).string();
    if (mkdtemp(templ.data()) == nullptr) {
        user_error() << "cannot create a temporary directory in " << base << ": "
                     << std::strerror(errno) << " (set TMPDIR to a writable directory)";
    }
    path_ = templ;
}

ScratchDir::~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

ChildExit run_child(const std::string& program, const std::vector<std::string>& argv,
                    const fs::path& stderr_path, double timeout_s) {
    const auto start = Clock::now();
    // (A double past int64 nanoseconds, or infinity, would overflow the conversion.)
    const double limit_s = std::isnan(timeout_s) ? 0 : std::min(timeout_s, 1e9);
    const auto deadline =
        start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
    pid_t pid = spawn(program, argv, stderr_path);
    ChildExit result;
    bool ended = wait_until(pid, deadline, &result.status);
    if (!ended) {
        kill(-pid, SIGKILL);  // the group: the child and what it started
        kill(pid, SIGKILL);   // (in case it left its group)
        while (waitpid(pid, &result.status, 0) < 0 && errno == EINTR) {
        }
        result.killed = true;
    }
    const auto end = Clock::now();
    result.elapsed_s = std::chrono::duration<double>(end - start).count();
    // A child seen to end only after the deadline (this process was descheduled meanwhile)
    // counts as timed out: which came first cannot be told, and its output is not taken.
    result.timed_out = !ended || end > deadline;
    return result;
}

std::string exit_text(int status) {
    if (WIFSIGNALED(status)) return "was killed by " + signal_text(WTERMSIG(status));
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    }
    return "";
}

std::string stderr_tail(const fs::path& path, size_t max_bytes) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    if (text.size() > max_bytes) text = "..." + text.substr(text.size() - max_bytes);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    return text;
}

std::string find_helper_program(const std::string& name, const char* env_var,
                                const std::string& build_path) {
    if (const char* env = std::getenv(env_var); env && *env) {
        if (is_executable_file(env)) return env;
        user_error() << env_var << " is '" << env << "', which is not an executable file";
    }
    std::vector<fs::path> tried;
    auto consider = [&](const fs::path& p) {
        if (std::find(tried.begin(), tried.end(), p) == tried.end()) tried.push_back(p);
        return is_executable_file(p);
    };
    if (!build_path.empty() && consider(build_path)) return build_path;
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec && consider(exe.parent_path() / name)) return (exe.parent_path() / name).string();
    // Beside the shared object this code is in: the Python extension, with the helpers installed
    // next to it.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&find_helper_program), &info) != 0 && info.dli_fname) {
        fs::path self = fs::weakly_canonical(info.dli_fname, ec);
        if (!ec && consider(self.parent_path() / name)) {
            return (self.parent_path() / name).string();
        }
    }
    std::string places;
    for (const auto& p : tried) places += (places.empty() ? "" : ", ") + p.string();
    user_error() << "cannot find the tuner's helper program " << name << " (looked at " << places
                 << "); build the " << name << " target, or set " << env_var << " to its path";
    return {};
}

}  // namespace anvil::tune
