// anvil-measure REQUEST.json RESULT.json: measures one candidate kernel for the tuner.
//
// measure_in_child (measure.cpp) starts this program once per trial, so a kernel that crashes or
// hangs takes this process with it, never the tuning session. It links only the runtime, like a
// deployed model: what it times is what a deployment runs.
//
// REQUEST.json (written by measure_in_child):
//   {"library": "/tmp/.../cand.so", "function": "fused_conv2d",
//    "args": [{"name": "p0", "shape": [1, 3, 8, 8], "dtype": "float32", "output": false}, ...],
//    "inputs_npz": "...", "outputs_npz": "...",
//    "number": 1, "repeat": 3, "min_repeat_ms": 0, "flush_cache": false, "threads": 0}
// RESULT.json, written once everything else is done (through a rename, so the parent never reads
// half a file):
//   {"error": "none", "costs": [1.2e-5, ...], "number": 64}      seconds per run, one per repeat
//   {"error": "runtime", "message": "..."}                        the run failed (exit status 1)
// A crash or a hang leaves no RESULT.json; the parent names the signal or the timeout.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "runtime/module.h"
#include "runtime/ndarray.h"
#include "runtime/npz.h"
#include "runtime/packed_func.h"
#include "runtime/thread_pool.h"
#include "support/error.h"
#include "tune/helper_process.h"

namespace {

using anvil::user_error;
using anvil::runtime::NDArray;
using Clock = std::chrono::steady_clock;

struct Arg {
    std::string name;
    std::vector<int64_t> shape;
    DLDataType dtype{};
    bool output = false;
};

struct Request {
    std::string library, function, inputs_npz, outputs_npz;
    std::vector<Arg> args;
    int number = 1, repeat = 1, min_repeat_ms = 0, threads = 0;
    bool flush_cache = false;
};

Request read_request(const std::string& path) {
    std::ifstream in(path);
    if (!in) user_error() << "cannot read the request '" << path << "'";
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
        Request r;
        r.library = j.at("library").get<std::string>();
        r.function = j.at("function").get<std::string>();
        r.inputs_npz = j.at("inputs_npz").get<std::string>();
        r.outputs_npz = j.at("outputs_npz").get<std::string>();
        for (const auto& a : j.at("args")) {
            r.args.push_back(
                Arg{a.at("name").get<std::string>(), a.at("shape").get<std::vector<int64_t>>(),
                    anvil::runtime::dl_dtype_from_string(a.at("dtype").get<std::string>()),
                    a.at("output").get<bool>()});
        }
        r.number = j.at("number").get<int>();
        r.repeat = j.at("repeat").get<int>();
        r.min_repeat_ms = j.at("min_repeat_ms").get<int>();
        r.flush_cache = j.at("flush_cache").get<bool>();
        r.threads = j.at("threads").get<int>();
        if (r.number < 1 || r.repeat < 1 || r.min_repeat_ms < 0 || r.threads < 0) {
            user_error() << "number and repeat must be >= 1, min_repeat_ms and threads >= 0";
        }
        return r;
    } catch (const nlohmann::json::exception& e) {
        user_error() << "malformed request '" << path << "': " << e.what();
    }
    return {};
}

void write_result(const std::string& path, const nlohmann::json& result) {
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp);
        out << result.dump() << "\n";
        if (!out) {
            std::fprintf(stderr, "anvil-measure: cannot write '%s'\n", tmp.c_str());
            std::exit(2);
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::fprintf(stderr, "anvil-measure: cannot write '%s': %s\n", path.c_str(),
                     std::strerror(errno));
        std::exit(2);
    }
}

std::string shape_str(const std::vector<int64_t>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// The kernel's tensors in parameter order: inputs from the .npz (checked against the request),
// outputs freshly allocated (64-byte aligned and compact, as kernels require).
std::vector<NDArray> make_arguments(const Request& r) {
    std::vector<std::pair<std::string, NDArray>> inputs;
    bool any_input =
        std::any_of(r.args.begin(), r.args.end(), [](const Arg& a) { return !a.output; });
    if (any_input) inputs = anvil::runtime::read_npz(r.inputs_npz);
    std::vector<NDArray> tensors;
    for (const Arg& a : r.args) {
        if (a.output) {
            NDArray t = NDArray::empty(a.shape, a.dtype);
            // Not zero: a candidate that leaves part of an output unwritten must not match a
            // reference that happens to be zero there (0x7f.. is a huge float, 127 as int8).
            std::memset(t.raw_data(), 0x7f, t.nbytes());
            tensors.push_back(t);
            continue;
        }
        auto it = std::find_if(inputs.begin(), inputs.end(),
                               [&](const auto& p) { return p.first == a.name; });
        if (it == inputs.end()) {
            user_error() << "input '" << a.name << "' is not in '" << r.inputs_npz << "'";
        }
        const NDArray& t = it->second;
        std::vector<int64_t> shape(t.shape().begin(), t.shape().end());
        if (shape != a.shape || !anvil::runtime::dl_dtype_equal(t.dtype(), a.dtype)) {
            user_error() << "input '" << a.name << "' in '" << r.inputs_npz << "' is " << t.str()
                         << ", the kernel takes " << anvil::runtime::dl_dtype_to_string(a.dtype)
                         << shape_str(a.shape);
        }
        tensors.push_back(t);
    }
    return tensors;
}

// Evicts the kernel's data from every cache level by writing through a buffer larger than the
// last-level cache. Plain stores, one per line: memset of a large block uses non-temporal stores,
// which bypass the caches and would evict nothing.
class CacheFlusher {
public:
    CacheFlusher() {
        long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
        // Twice the LLC, at most 64 MiB: virtual machines report the whole socket's L3 (320 MiB
        // here) while a core sees one CCD's (32 MiB), and a larger buffer only costs time.
        size_t want = llc > 0 ? 2 * static_cast<size_t>(llc) : kMax;
        size_ = std::clamp(want, kMin, kMax);
        void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) user_error() << "cannot allocate the cache-flush buffer";
        // Huge pages: touching 64 MiB of 4 KiB pages takes 16384 page faults, most of the cost
        // of a flushed measurement.
        madvise(p, size_, MADV_HUGEPAGE);
        buffer_ = static_cast<unsigned char*>(p);
    }
    ~CacheFlusher() { munmap(buffer_, size_); }
    CacheFlusher(const CacheFlusher&) = delete;
    CacheFlusher& operator=(const CacheFlusher&) = delete;

    void flush() {
        for (size_t i = 0; i < size_; i += 64) buffer_[i] += 1;
        asm volatile("" : : "r"(buffer_) : "memory");  // the stores must happen
    }

private:
    static constexpr size_t kMin = size_t{8} << 20, kMax = size_t{64} << 20;
    size_t size_;
    unsigned char* buffer_;
};

class Runner {
public:
    Runner(anvil::runtime::PackedFunc fn, const std::vector<NDArray>& tensors)
        : fn_(std::move(fn)) {
        for (const NDArray& t : tensors) {
            AnvilValue v{};
            v.v_handle = t.tensor();
            values_.push_back(v);
            codes_.push_back(kAnvilDLTensor);
        }
    }
    // Throws UserError with the kernel's message when it reports failure.
    void run() const { fn_.call(values_.data(), codes_.data(), static_cast<int>(values_.size())); }
    // Seconds for `number` runs, back to back.
    double time(int64_t number) const {
        auto t0 = Clock::now();
        for (int64_t i = 0; i < number; ++i) run();
        return std::chrono::duration<double>(Clock::now() - t0).count();
    }

private:
    anvil::runtime::PackedFunc fn_;
    std::vector<AnvilValue> values_;
    std::vector<int> codes_;
};

nlohmann::json measure(const Request& r) {
    if (r.threads > 0) anvil::runtime::set_num_threads(r.threads);
    anvil::runtime::Module module = anvil::runtime::load_module(r.library);
    anvil::runtime::PackedFunc fn = module.get_function(r.function);
    if (!fn) {
        user_error() << "the library '" << r.library << "' has no function '" << r.function << "'";
    }
    std::vector<NDArray> tensors = make_arguments(r);
    Runner runner(fn, tensors);

    // The first run makes the outputs the parent checks (and warms the code and the pool).
    runner.run();
    if (!r.outputs_npz.empty()) {
        std::vector<std::pair<std::string, NDArray>> outputs;
        for (size_t i = 0; i < r.args.size(); ++i) {
            if (r.args[i].output) outputs.emplace_back(r.args[i].name, tensors[i]);
        }
        anvil::runtime::write_npz(r.outputs_npz, outputs);
    }

    std::unique_ptr<CacheFlusher> flusher;
    if (r.flush_cache) flusher = std::make_unique<CacheFlusher>();
    auto timed = [&](int64_t number) {
        if (flusher) flusher->flush();
        return runner.time(number);
    };
    // Grow `number` until one measurement lasts min_repeat_ms, so that short kernels are timed
    // over many runs instead of at the clock's resolution. Proportional, with a margin, so that
    // it usually takes one step.
    int64_t number = r.number;
    if (r.min_repeat_ms > 0) {
        const double min_s = r.min_repeat_ms / 1000.0;
        constexpr int64_t kMaxNumber = int64_t{1} << 32;
        for (double total = timed(number); total < min_s && number < kMaxNumber;
             total = timed(number)) {
            double scale = total > 0 ? std::min(1.25 * min_s / total, 1e4) : 1e4;
            number = std::max(number + 1, static_cast<int64_t>(std::ceil(number * scale)));
            number = std::min(number, kMaxNumber);
        }
    }
    std::vector<double> costs;
    for (int k = 0; k < r.repeat; ++k) costs.push_back(timed(number) / static_cast<double>(number));
    return {{"error", "none"}, {"costs", costs}, {"number", number}};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr,
                     "usage: anvil-measure REQUEST.json RESULT.json\n"
                     "Measures one candidate kernel for the tuner (started by anvil tune).\n");
        return 2;
    }
    anvil::tune::become_tuning_helper();
    const std::string result_path = argv[2];
    try {
        Request r = read_request(argv[1]);
        write_result(result_path, measure(r));
        return 0;
    } catch (const std::exception& e) {
        write_result(result_path, {{"error", "runtime"}, {"message", e.what()}});
    } catch (...) {
        write_result(result_path, {{"error", "runtime"}, {"message", "unknown exception"}});
    }
    return 1;
}
