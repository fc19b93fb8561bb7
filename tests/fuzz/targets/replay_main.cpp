// The driver of a fuzz harness when libFuzzer is not linked in (g++ builds, the test command):
//
//   fuzz_<name> [--mutations N] [--seconds S] [--seed K] [--timeout S] [--max-len BYTES]
//               [--match SUFFIX] [--max-seeds M] [--regressions DIR] [--artifacts DIR] PATH...
//
// It runs every file under the PATHs (directories recursively; --match keeps files whose name
// ends with SUFFIX; --max-seeds keeps M of them, evenly spread), every file under the
// regressions directory when it exists (inputs that once failed) and the harness's built-in
// seeds, then N random mutations of them (bit flips, interesting bytes and integers, erased,
// inserted and duplicated ranges, truncation, splices of two inputs, numbers in text replaced by
// extreme ones), stopping early after S seconds. The mutations are a pure function of --seed, so
// a failure reproduces. An input that crashes, aborts
// or runs past --timeout is written to DIR/crash-<seed>-<n> (default: the current directory)
// before the process dies; add it under tests/fuzz/regressions/<name>/ to keep it fixed.
//
// libFuzzer explores far better (coverage feedback, sanitizers): this driver is the quick check
// that every harness still runs clean on its seeds and their near neighbours.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "fuzz_target.h"

namespace fs = std::filesystem;

namespace {

struct Options {
    long mutations = 0;
    double seconds = 1e9;
    uint64_t seed = 1;
    unsigned timeout = 60;
    size_t max_len = 1 << 20;
    size_t max_seeds = SIZE_MAX;
    std::string match;
    std::string regressions;
    std::string artifacts = ".";
    std::vector<std::string> paths;
};

// What the signal handlers write out: the input being run.
std::string g_current;
std::string g_crash_path;

void save_current_input() {
    int fd = ::open(g_crash_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    size_t done = 0;
    while (done < g_current.size()) {
        ssize_t n = ::write(fd, g_current.data() + done, g_current.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
    }
    ::close(fd);
    const char msg[] = "fuzz: the failing input is saved as ";
    (void)!::write(2, msg, sizeof(msg) - 1);
    (void)!::write(2, g_crash_path.c_str(), g_crash_path.size());
    (void)!::write(2, "\n", 1);
}

void on_fatal_signal(int sig) {
    if (sig == SIGALRM) {
        const char msg[] = "fuzz: an input ran past the time limit (a hang)\n";
        (void)!::write(2, msg, sizeof(msg) - 1);
    }
    save_current_input();
    ::signal(sig == SIGALRM ? SIGABRT : sig, SIG_DFL);
    ::raise(sig == SIGALRM ? SIGABRT : sig);
}

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "fuzz: " << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--mutations")
            o.mutations = std::stol(value());
        else if (a == "--seconds")
            o.seconds = std::stod(value());
        else if (a == "--seed")
            o.seed = std::stoull(value());
        else if (a == "--timeout")
            o.timeout = static_cast<unsigned>(std::stoul(value()));
        else if (a == "--max-len")
            o.max_len = std::stoull(value());
        else if (a == "--match")
            o.match = value();
        else if (a == "--max-seeds")
            o.max_seeds = std::stoull(value());
        else if (a == "--regressions")
            o.regressions = value();
        else if (a == "--artifacts")
            o.artifacts = value();
        else if (a.rfind("--", 0) == 0) {
            std::cerr << "fuzz: unknown option " << a << "\n";
            std::exit(2);
        } else {
            o.paths.push_back(a);
        }
    }
    return o;
}

std::string read_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Every file under the paths, in a stable order; a missing path is an error (a seed directory
// that moved must not turn the run into a run on nothing).
std::vector<std::pair<std::string, std::string>> load_inputs(const Options& o) {
    std::vector<fs::path> files;
    for (const std::string& p : o.paths) {
        if (!fs::exists(p)) {
            std::cerr << "fuzz: no such seed path " << p << "\n";
            std::exit(2);
        }
        if (fs::is_regular_file(p)) {
            files.push_back(p);
            continue;
        }
        for (const auto& e : fs::recursive_directory_iterator(p)) {
            std::string name = e.path().filename().string();
            bool matches = o.match.empty() || (name.size() >= o.match.size() &&
                                               name.compare(name.size() - o.match.size(),
                                                            o.match.size(), o.match) == 0);
            if (e.is_regular_file() && matches) files.push_back(e.path());
        }
    }
    std::sort(files.begin(), files.end());
    if (files.size() > o.max_seeds) {
        std::vector<fs::path> spread;
        for (size_t i = 0; i < o.max_seeds; ++i)
            spread.push_back(files[i * files.size() / o.max_seeds]);
        files = std::move(spread);
    }
    if (!o.regressions.empty() && fs::is_directory(o.regressions)) {
        for (const auto& e : fs::recursive_directory_iterator(o.regressions)) {
            if (e.is_regular_file() && e.path().filename() != "README.md")
                files.push_back(e.path());
        }
    }
    std::vector<std::pair<std::string, std::string>> inputs;
    for (const auto& f : files) {
        if (fs::file_size(f) <= o.max_len) inputs.emplace_back(f.string(), read_bytes(f));
    }
    return inputs;
}

class Mutator {
public:
    explicit Mutator(uint64_t seed) : rng_(seed) {}

    std::string mutate(std::string s, const std::vector<std::string>& corpus) {
        int rounds = 1 + static_cast<int>(below(4));
        for (int r = 0; r < rounds; ++r) mutate_once(s, corpus);
        return s;
    }

private:
    uint64_t below(uint64_t n) { return n ? rng_() % n : 0; }

    void mutate_once(std::string& s, const std::vector<std::string>& corpus) {
        static const uint8_t kBytes[] = {0, 1, 0x7f, 0x80, 0xff, 0x40, '-', '9', '[', '"', '{'};
        static const int64_t kInts[] = {0,
                                        -1,
                                        1,
                                        0x7fffffff,
                                        -0x80000000LL,
                                        0xffffffffLL,
                                        0x7fffffffffffffffLL,
                                        INT64_MIN,
                                        1LL << 32,
                                        1LL << 40};
        static const char* kNumbers[] = {"0",
                                         "-1",
                                         "-2",
                                         "65536",
                                         "4294967296",
                                         "9223372036854775807",
                                         "-9223372036854775808",
                                         "99999999999999999999999",
                                         "1e309",
                                         "nan",
                                         "3.5"};
        switch (below(9)) {
            case 0:
                if (!s.empty()) s[below(s.size())] ^= static_cast<char>(1 << below(8));
                break;
            case 1:
                if (!s.empty())
                    s[below(s.size())] = static_cast<char>(kBytes[below(sizeof(kBytes))]);
                break;
            case 2:
                if (!s.empty()) {
                    size_t at = below(s.size());
                    s.erase(at, 1 + below(16));
                }
                break;
            case 3: {
                size_t at = below(s.size() + 1);
                if (!s.empty() && below(2)) {
                    size_t from = below(s.size());
                    s.insert(at, s.substr(from, 1 + below(32)));
                } else {
                    std::string bytes(1 + below(8), '\0');
                    for (char& c : bytes) c = static_cast<char>(below(256));
                    s.insert(at, bytes);
                }
                break;
            }
            case 4:
                if (!s.empty()) s.resize(below(s.size()));
                break;
            case 5:
                if (s.size() >= 8) {
                    int64_t v = kInts[below(std::size(kInts))];
                    size_t width = below(2) ? 4 : 8;
                    std::memcpy(s.data() + below(s.size() - width + 1), &v, width);
                }
                break;
            case 6:
                if (!corpus.empty()) {
                    const std::string& other = corpus[below(corpus.size())];
                    s = s.substr(0, below(s.size() + 1)) + other.substr(below(other.size() + 1));
                }
                break;
            case 7: {
                // A number in text (graph or loop-IR text, JSON) replaced by an extreme one.
                std::vector<size_t> starts;
                for (size_t i = 0; i < s.size(); ++i) {
                    bool digit = s[i] >= '0' && s[i] <= '9';
                    if (digit && (i == 0 || !(s[i - 1] >= '0' && s[i - 1] <= '9')))
                        starts.push_back(i);
                }
                if (starts.empty()) break;
                size_t at = starts[below(starts.size())], end = at;
                while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
                s.replace(at, end - at, kNumbers[below(std::size(kNumbers))]);
                break;
            }
            default:
                if (!corpus.empty() && !s.empty()) {
                    const std::string& other = corpus[below(corpus.size())];
                    if (other.empty()) break;
                    size_t from = below(other.size());
                    std::string piece = other.substr(from, 1 + below(64));
                    size_t at = below(s.size());
                    s.replace(at, std::min(piece.size(), s.size() - at), piece);
                }
                break;
        }
    }

    std::mt19937_64 rng_;
};

void run_one(const std::string& input, const std::string& crash_name, unsigned timeout) {
    g_current = input;
    g_crash_path = crash_name;
    ::alarm(timeout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(g_current.data()), g_current.size());
    ::alarm(0);
}

}  // namespace

int main(int argc, char** argv) {
    Options o = parse_options(argc, argv);
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM})
        ::signal(sig, on_fatal_signal);
    LLVMFuzzerInitialize(&argc, &argv);
    auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    std::vector<std::pair<std::string, std::string>> inputs = load_inputs(o);
    for (size_t i = 0; i < anvil::fuzz::built_in_seeds.size(); ++i)
        inputs.emplace_back("built-in seed " + std::to_string(i), anvil::fuzz::built_in_seeds[i]);
    std::string base = (fs::path(o.artifacts) / ("crash-" + std::to_string(o.seed) + "-")).string();
    for (size_t i = 0; i < inputs.size(); ++i)
        run_one(inputs[i].second, base + "seed" + std::to_string(i), o.timeout);
    std::vector<std::string> corpus;
    for (auto& [name, bytes] : inputs) corpus.push_back(bytes);
    if (corpus.empty() && o.mutations > 0) corpus.push_back("");
    Mutator mutator(o.seed);
    std::mt19937_64 pick(o.seed * 0x9e3779b97f4a7c15ULL + 1);
    long done = 0;
    for (; done < o.mutations && elapsed() < o.seconds; ++done) {
        std::string input = mutator.mutate(corpus[pick() % corpus.size()], corpus);
        run_one(input, base + std::to_string(done), o.timeout);
    }
    std::cout << "fuzz: " << inputs.size() << " inputs and " << done << " mutations ran clean in "
              << static_cast<int>(elapsed()) << " s (seed " << o.seed << ")\n";
    return 0;
}
