// Running the tuner's helper programs (anvil-build, anvil-measure) as child processes with a time
// limit: what building and measuring candidates share.
//
// Children are started with posix_spawn, never a bare fork: the tuning session may be a
// multithreaded Python process, where a forked child may only call async-signal-safe functions
// until it execs. Each child leads a process group of its own; one still running at its deadline
// is killed (SIGKILL) with everything it started (anvil-build's linker): this is how a candidate
// that compiles or runs forever costs one trial instead of the session.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace anvil::tune {

// A fresh private directory (under TMPDIR) for one child's files; removed with everything in it.
// UserError when none can be made.
class ScratchDir {
public:
    explicit ScratchDir(const std::string& prefix);
    ~ScratchDir();
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

// How a child ended.
struct ChildExit {
    bool timed_out = false;  // still running at the deadline, or seen to end after it
    bool killed = false;     // still running at the deadline: killed
    int status = 0;          // waitpid's status when it ended in time
    double elapsed_s = 0;
};

// Runs `program` with `argv` (argv[0] included), stdin and stdout on /dev/null and stderr into
// `stderr_path`, and waits at most `timeout_s` seconds (at most 10^9: larger limits, infinity
// included, are that). UserError when it cannot be started.
ChildExit run_child(const std::string& program, const std::vector<std::string>& argv,
                    const std::filesystem::path& stderr_path, double timeout_s);

// "exited with status 3" or "was killed by SIGSEGV (Segmentation fault)"; "" for status 0.
std::string exit_text(int status);

// The last `max_bytes` of a child's stderr file, trimmed, for error messages.
std::string stderr_tail(const std::filesystem::path& path, size_t max_bytes = 2000);

// A helper program `name`: $`env_var` (a UserError when it names no executable), else
// `build_path` (the one built with this library; may be empty), else `name` beside the running
// executable, else beside the shared object holding this code (the Python extension). UserError
// naming the places looked at when none exists.
std::string find_helper_program(const std::string& name, const char* env_var,
                                const std::string& build_path);

}  // namespace anvil::tune
