// anvil_conformance: runs the ONNX backend test suite (Debian's libonnx-testdata) and checks the
// results against the checked-in list tests/conformance/expected_results.txt.
//
//   anvil_conformance [--data DIR] [--group NAME]... [--shard I/N] [--expected FILE]
//                     [--timeout SECONDS] [--checked] [TEST_NAME]...
//
// Prints one line per test, `test=NAME group=GROUP result=pass|mismatch|error detail=...`, a
// summary per group and the closing line `N passed, M failed`. Exits 1 when a test the list says
// passes does not (a regression) or the list names a test that does not exist; a test that
// passes without being listed is reported so the list can grow.
//
// Each test runs in a child process with a time limit, so a crash or a hang is reported as that
// test's error and the run goes on. --checked compiles every model in the checked mode (as
// ANVIL_CHECKED=1 does): a kernel that accesses memory out of bounds fails its test with a
// message naming the kernel, the buffer and the index.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "conformance/runner/suite_test.h"

namespace fs = std::filesystem;
using anvil::conformance::SuiteTestResult;

namespace {

const char* const kGroups[] = {"node", "simple", "pytorch-converted", "pytorch-operator"};

struct Options {
    fs::path data = "/usr/share/libonnx-testdata/data";
    std::vector<std::string> groups;
    std::vector<std::string> names;  // only these tests, when given
    int shard = 0;
    int num_shards = 1;
    fs::path expected = fs::path(ANVIL_SOURCE_DIR) / "tests/conformance/expected_results.txt";
    int timeout_seconds = 300;
};

// The checked-in list: `group/name` for a test that passes, `group/name excluded: reason` for a
// test left out.
struct ExpectedResults {
    std::set<std::string> passing;
    std::map<std::string, std::string> excluded;  // → reason
};

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "anvil_conformance: %s\n", message.c_str());
    std::exit(2);
}

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--data") {
            o.data = value();
        } else if (arg == "--group") {
            o.groups.push_back(value());
        } else if (arg == "--expected") {
            o.expected = value();
        } else if (arg == "--timeout") {
            o.timeout_seconds = std::stoi(value());
        } else if (arg == "--checked") {
            // Read by every compile's PipelineOptions; ANVIL_CHECKED=all stays all.
            const char* v = std::getenv("ANVIL_CHECKED");
            if (!v || !*v || std::strcmp(v, "0") == 0) setenv("ANVIL_CHECKED", "1", 1);
        } else if (arg == "--shard") {
            std::string s = value();
            if (std::sscanf(s.c_str(), "%d/%d", &o.shard, &o.num_shards) != 2 || o.num_shards < 1 ||
                o.shard < 0 || o.shard >= o.num_shards) {
                usage_error("--shard takes I/N with 0 <= I < N, not '" + s + "'");
            }
        } else if (arg.starts_with("-")) {
            usage_error("unknown option '" + arg + "'");
        } else {
            o.names.push_back(arg);
        }
    }
    if (o.groups.empty()) o.groups.assign(std::begin(kGroups), std::end(kGroups));
    return o;
}

ExpectedResults read_expected(const fs::path& path) {
    std::ifstream in(path);
    if (!in) usage_error("cannot read the expected results " + path.string());
    ExpectedResults r;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream words(line);
        std::string key, rest;
        words >> key;
        std::getline(words >> std::ws, rest);
        if (rest.empty()) {
            r.passing.insert(key);
        } else if (rest.starts_with("excluded:")) {
            r.excluded[key] = rest.substr(std::strlen("excluded:"));
        } else {
            usage_error(path.string() + ": cannot read the line '" + line + "'");
        }
    }
    return r;
}

std::string one_line(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s;
}

// Runs the test in a child process: a crash or a hang fails this test, not the run.
SuiteTestResult run_isolated(const fs::path& dir, int timeout_seconds) {
    int fds[2];
    if (pipe(fds) != 0) return {SuiteTestResult::Kind::error, "cannot create a pipe", 0};
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(static_cast<unsigned>(timeout_seconds));
        SuiteTestResult r = anvil::conformance::run_suite_test(dir);
        std::string msg = std::to_string(static_cast<int>(r.kind)) + "\n" +
                          std::to_string(r.compile_seconds) + "\n" + r.detail;
        for (size_t done = 0; done < msg.size();) {
            ssize_t n = write(fds[1], msg.data() + done, msg.size() - done);
            if (n <= 0) break;
            done += static_cast<size_t>(n);
        }
        _exit(0);
    }
    close(fds[1]);
    std::string msg;
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) msg.append(buf, n);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        std::string what = sig == SIGALRM
                               ? "timed out after " + std::to_string(timeout_seconds) + " s"
                               : std::string("crashed: ") + strsignal(sig);
        return {SuiteTestResult::Kind::error, what, 0};
    }
    std::istringstream in(msg);
    int kind = 0;
    SuiteTestResult r;
    in >> kind >> r.compile_seconds;
    r.kind = static_cast<SuiteTestResult::Kind>(kind);
    std::getline(in >> std::ws, r.detail, '\0');
    return r;
}

struct GroupSummary {
    int passed = 0, mismatched = 0, errors = 0, excluded = 0;
    double compile_seconds = 0;
};

}  // namespace

int main(int argc, char** argv) {
    Options options = parse_options(argc, argv);
    ExpectedResults expected = read_expected(options.expected);

    // Every test of the chosen groups, in a fixed order; this shard takes every N-th.
    std::vector<std::pair<std::string, std::string>> tests;  // group, name
    for (const auto& group : options.groups) {
        fs::path dir = options.data / group;
        if (!fs::is_directory(dir)) usage_error("no test group " + dir.string());
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(dir)) {
            if (fs::exists(entry.path() / "model.onnx"))
                names.push_back(entry.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        for (const auto& n : names) tests.emplace_back(group, n);
    }
    std::set<std::string> known;
    for (const auto& [group, name] : tests) known.insert(group + "/" + name);

    bool failed_run = false;
    if (options.names.empty()) {
        // A stale list (a renamed test) would hide nothing, but say so.
        for (const auto& key : expected.passing) {
            std::string group = key.substr(0, key.find('/'));
            bool in_groups = std::find(options.groups.begin(), options.groups.end(), group) !=
                             options.groups.end();
            if (in_groups && !known.count(key)) {
                std::printf("error: %s is listed as passing but is not in the suite\n",
                            key.c_str());
                failed_run = true;
            }
        }
    }

    std::map<std::string, GroupSummary> summaries;
    std::vector<std::string> regressions, newly_passing;
    int index = -1;
    for (const auto& [group, name] : tests) {
        if (!options.names.empty() &&
            std::find(options.names.begin(), options.names.end(), name) == options.names.end())
            continue;
        if (++index % options.num_shards != options.shard) continue;
        std::string key = group + "/" + name;
        GroupSummary& summary = summaries[group];
        if (auto it = expected.excluded.find(key); it != expected.excluded.end()) {
            std::printf("test=%s group=%s result=excluded detail=%s\n", name.c_str(), group.c_str(),
                        it->second.c_str());
            ++summary.excluded;
            continue;
        }
        SuiteTestResult r = run_isolated(options.data / group / name, options.timeout_seconds);
        std::printf("test=%s group=%s result=%s detail=%s\n", name.c_str(), group.c_str(),
                    anvil::conformance::result_name(r.kind), one_line(r.detail).c_str());
        std::fflush(stdout);
        summary.compile_seconds += r.compile_seconds;
        bool listed = expected.passing.count(key) > 0;
        if (r.kind == SuiteTestResult::Kind::pass) {
            ++summary.passed;
            if (!listed) newly_passing.push_back(key);
        } else {
            ++(r.kind == SuiteTestResult::Kind::mismatch ? summary.mismatched : summary.errors);
            if (listed) regressions.push_back(key);
        }
    }

    int passed = 0, failed = 0;
    for (const auto& [group, s] : summaries) {
        int ran = s.passed + s.mismatched + s.errors;
        std::printf(
            "group=%s: %d passed, %d failed (%d mismatch, %d error), %d excluded; compile "
            "%.3f s per test\n",
            group.c_str(), s.passed, s.mismatched + s.errors, s.mismatched, s.errors, s.excluded,
            ran ? s.compile_seconds / ran : 0.0);
        passed += s.passed;
        failed += s.mismatched + s.errors;
    }
    for (const auto& key : newly_passing) {
        std::printf("note: %s passes now; add it to %s\n", key.c_str(),
                    options.expected.filename().c_str());
    }
    for (const auto& key : regressions) {
        std::printf("REGRESSION: %s passed before and fails now\n", key.c_str());
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed_run || !regressions.empty() ? 1 : 0;
}
