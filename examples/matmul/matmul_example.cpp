// The matmul walk: each schedule variant is compiled, checked against a reference and timed.
//
//   matmul_example [--size N] [--variant NAME] [--print-ir] [--source ll|asm] [--threads T]
//
// --print-ir prints each variant's schedule record and its loop IR after lowering; --source
// prints the generated LLVM IR or assembly.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>

#include "codegen/llvm/llvm_module.h"
#include "driver/build.h"
#include "matmul_schedules.h"
#include "runtime/ndarray.h"
#include "support/error.h"
#include "tir/printer.h"

using namespace anvil;

namespace {

struct Options {
    int64_t size = 1024;
    std::string variant;  // empty: all
    bool print_ir = false;
    std::string source;  // "ll" or "asm": print the generated code
    int threads = 0;
};

Options parse_args(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "error: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--size") {
            o.size = std::atoll(value().c_str());
        } else if (a == "--variant") {
            o.variant = value();
        } else if (a == "--print-ir") {
            o.print_ir = true;
        } else if (a == "--source") {
            o.source = value();
            if (o.source != "ll" && o.source != "asm") {
                std::fprintf(stderr, "error: --source takes ll or asm, not '%s'\n",
                             o.source.c_str());
                std::exit(2);
            }
        } else if (a == "--threads") {
            o.threads = std::atoi(value().c_str());
        } else {
            std::fprintf(stderr,
                         "usage: matmul_example [--size N] [--variant NAME] [--print-ir] "
                         "[--source ll|asm] [--threads T]\n");
            std::exit(2);
        }
    }
    if (!o.variant.empty()) {
        auto names = examples::matmul_variants();
        if (std::find(names.begin(), names.end(), o.variant) == names.end()) {
            std::fprintf(stderr, "error: unknown variant '%s'\n", o.variant.c_str());
            std::exit(2);
        }
    }
    if (o.size <= 0) {
        std::fprintf(stderr, "error: --size must be positive\n");
        std::exit(2);
    }
    return o;
}

// Median seconds per call over enough calls to fill ~0.5 s (at least 3).
double time_call(const runtime::PackedFunc& f, const std::vector<runtime::NDArray>& args) {
    std::vector<double> times;
    double total = 0;
    while (times.size() < 3 || (total < 0.5 && times.size() < 200)) {
        auto start = std::chrono::steady_clock::now();
        f(args[0], args[1], args[2]);
        double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        times.push_back(t);
        total += t;
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    Options opt = parse_args(argc, argv);
    if (opt.threads > 0) anvil_set_num_threads(opt.threads);
    const int64_t n = opt.size;
    auto f32 = runtime::dl_dtype_from_string("float32");
    auto a = runtime::NDArray::empty({n, n}, f32), b = runtime::NDArray::empty({n, n}, f32),
         c = runtime::NDArray::empty({n, n}, f32);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (int64_t i = 0; i < n * n; ++i) {
        a.data<float>()[i] = dist(rng);
        b.data<float>()[i] = dist(rng);
    }
    // Reference values at sampled positions, in double precision.
    std::vector<std::pair<int64_t, int64_t>> samples;
    for (int s = 0; s < 256; ++s) samples.emplace_back(rng() % n, rng() % n);
    samples.emplace_back(n - 1, n - 1);
    auto reference = [&](int64_t i, int64_t j) {
        double acc = 0;
        for (int64_t k = 0; k < n; ++k)
            acc += double(a.data<float>()[i * n + k]) * b.data<float>()[k * n + j];
        return acc;
    };

    std::printf("matmul %lld x %lld x %lld, float32, %d thread(s)\n", (long long)n, (long long)n,
                (long long)n, anvil_num_threads());
    std::printf("%-12s %10s %10s %12s\n", "variant", "ms", "GFLOP/s", "max error");
    try {
        for (const auto& name : examples::matmul_variants()) {
            if (!opt.variant.empty() && name != opt.variant) continue;
            examples::Matmul m = examples::make_matmul(name, n, n, n);
            if (opt.print_ir) {
                std::cout << "// schedule '" << name << "':\n"
                          << te::print_record(m.schedule.record());
                std::cout << tir::print(
                    driver::lower(m.schedule, {m.A, m.B, m.C}, "matmul_" + name, Target::host()));
            }
            runtime::Module mod =
                driver::build(m.schedule, {m.A, m.B, m.C}, "llvm -mcpu=native", "matmul_" + name);
            if (!opt.source.empty()) std::cout << codegen::get_source(mod, opt.source);
            runtime::PackedFunc f = mod.get_function("matmul_" + name);
            std::memset(c.raw_data(), 0, c.nbytes());
            f(a, b, c);
            double max_err = 0;
            for (auto [i, j] : samples) {
                max_err = std::max(max_err, std::abs(c.data<float>()[i * n + j] - reference(i, j)));
            }
            if (max_err > 1e-3 * std::sqrt(double(n))) {
                std::fprintf(stderr, "error: variant '%s' is wrong: max error %g\n", name.c_str(),
                             max_err);
                return 1;
            }
            // The naive loop nest at 1024^3 takes seconds a call; time it once.
            double seconds = name == "naive" && n >= 512 ? [&] {
                auto start = std::chrono::steady_clock::now();
                f(a, b, c);
                return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            }()
                                                          : time_call(f, {a, b, c});
            double gflops = 2.0 * n * n * n / seconds * 1e-9;
            std::printf("%-12s %10.2f %10.1f %12.2e\n", name.c_str(), seconds * 1e3, gflops,
                        max_err);
            std::fflush(stdout);
        }
    } catch (const UserError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
