// The per-kernel profile table (runtime/kernel_profile.h): its fields, computed from a profile
// made by hand so that every number is known.
#include "runtime/kernel_profile.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace anvil::runtime {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::vector<std::string> fields_of(const std::string& line) {
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string f; in >> f;) fields.push_back(f);
    return fields;
}

TEST(KernelProfile, OneLinePerKernelThenATotal) {
    Profile p;
    p.runs = 4;
    // conv: 8 calls (2 nodes x 4 runs), 10 ms, 50 MFLOP per call -> 40 GFLOP/s, 80 % of 12.5 ms.
    p.kernels.push_back(
        {.kernel = "fused_conv", .calls = 8, .total_ms = 10.0, .flops = 50'000'000});
    p.kernels.push_back({.kernel = "fused_softmax", .calls = 4, .total_ms = 2.0, .flops = -1});
    p.kernels.push_back({.kernel = "fused_flatten", .calls = 4, .total_ms = 0.5, .flops = 0});
    EXPECT_DOUBLE_EQ(p.total_ms(), 12.5);
    EXPECT_EQ(p.calls(), 16);

    std::vector<std::string> lines = lines_of(format_profile(p));
    ASSERT_EQ(lines.size(), 6u) << format_profile(p);
    EXPECT_EQ(lines[0], "profile: 4 runs, 4 kernel calls per run");
    EXPECT_EQ(fields_of(lines[1]),
              (std::vector<std::string>{"kernel", "calls", "total_ms", "mean_ms", "share",
                                        "GFLOP/s", "MFLOP"}));
    EXPECT_EQ(fields_of(lines[2]), (std::vector<std::string>{"fused_conv", "8", "10.000", "1.2500",
                                                             "80.0%", "40.0", "50.00"}));
    // An unknown count leaves GFLOP/s and MFLOP empty ("-").
    EXPECT_EQ(fields_of(lines[3]), (std::vector<std::string>{"fused_softmax", "4", "2.000",
                                                             "0.5000", "16.0%", "-", "-"}));
    EXPECT_EQ(fields_of(lines[4]), (std::vector<std::string>{"fused_flatten", "4", "0.500",
                                                             "0.1250", "4.0%", "0.0", "0.00"}));
    // The total: every call and millisecond; mean per run; GFLOP/s and MFLOP (per run) of the
    // known counts: 8 x 50 MFLOP in 12.5 ms = 32 GFLOP/s, 100 MFLOP per run.
    EXPECT_EQ(fields_of(lines[5]), (std::vector<std::string>{"total", "16", "12.500", "3.1250",
                                                             "100.0%", "32.0", "100.00"}));
    // Columns line up: every row is as long as the header.
    for (size_t i = 2; i < lines.size(); ++i) EXPECT_EQ(lines[i].size(), lines[1].size());
}

TEST(KernelProfile, LongNamesWidenTheNameColumn) {
    Profile p;
    p.runs = 1;
    std::string name(60, 'k');
    p.kernels.push_back({.kernel = name, .calls = 1, .total_ms = 1.0, .flops = 1'000'000});
    std::vector<std::string> lines = lines_of(format_profile(p));
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[2].size(), lines[1].size());
    EXPECT_EQ(fields_of(lines[2])[0], name);
    EXPECT_EQ(fields_of(lines[2])[5], "1.0");
}

TEST(KernelProfile, NoRuns) {
    EXPECT_EQ(format_profile(Profile{}), "profile: no profiled runs\n");
}

}  // namespace
}  // namespace anvil::runtime
