#include "runtime/kernel_profile.h"

#include <algorithm>
#include <cstdio>

namespace anvil::runtime {

namespace {

std::string line(int width, const char* name, int64_t calls, double total_ms, double mean_ms,
                 double share, double gflops, double mflop) {
    char buf[512];
    char rate[32] = "-", work[32] = "-";
    if (gflops >= 0) std::snprintf(rate, sizeof rate, "%.1f", gflops);
    if (mflop >= 0) std::snprintf(work, sizeof work, "%.2f", mflop);
    std::snprintf(buf, sizeof buf, "%-*s %8lld %10.3f %10.4f %6.1f%% %9s %9s\n", width, name,
                  static_cast<long long>(calls), total_ms, mean_ms, share, rate, work);
    return buf;
}

}  // namespace

double Profile::total_ms() const {
    double total = 0;
    for (const KernelProfile& k : kernels) total += k.total_ms;
    return total;
}

int64_t Profile::calls() const {
    int64_t total = 0;
    for (const KernelProfile& k : kernels) total += k.calls;
    return total;
}

std::string format_profile(const Profile& p) {
    if (p.runs <= 0) return "profile: no profiled runs\n";
    std::string out = "profile: " + std::to_string(p.runs) + " run" + (p.runs == 1 ? "" : "s") +
                      ", " + std::to_string(p.calls() / p.runs) + " kernel calls per run\n";
    int width = 36;  // kernel names are padded to the longest
    for (const KernelProfile& k : p.kernels) {
        width = std::max(width, static_cast<int>(std::min<size_t>(k.kernel.size(), 200)));
    }
    char header[512];
    std::snprintf(header, sizeof header, "%-*s %8s %10s %10s %7s %9s %9s\n", width, "kernel",
                  "calls", "total_ms", "mean_ms", "share", "GFLOP/s", "MFLOP");
    out += header;
    const double total = p.total_ms();
    double known_flops = 0;  // over all runs
    for (const KernelProfile& k : p.kernels) {
        double share = total > 0 ? 100.0 * k.total_ms / total : 0.0;
        double mean = k.calls ? k.total_ms / k.calls : 0.0;
        double gflops = -1, mflop = -1;
        if (k.flops >= 0) {
            double work = static_cast<double>(k.flops) * k.calls;
            known_flops += work;
            gflops = k.total_ms > 0 ? work / (k.total_ms * 1e6) : 0.0;
            mflop = k.flops / 1e6;
        }
        out += line(width, k.kernel.substr(0, 200).c_str(), k.calls, k.total_ms, mean, share,
                    gflops, mflop);
    }
    out += line(width, "total", p.calls(), total, total / p.runs, 100.0,
                total > 0 ? known_flops / (total * 1e6) : 0.0, known_flops / p.runs / 1e6);
    return out;
}

}  // namespace anvil::runtime
