// What the tune tests share: a scratch directory and a sample record.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tune/record.h"

namespace anvil::tune::testing {

// A fresh directory under the system's temp dir, named after the running test and the process,
// removed with everything in it at the end of the scope.
class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = std::string("anvil_tune_") + info->test_suite_name() + "_" +
                           info->name() + "_" + std::to_string(::getpid());
        path_ = std::filesystem::temp_directory_path() / name;
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::string operator/(const std::string& name) const { return (path_ / name).string(); }
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

// A successful measurement of a tiled matmul.
inline TuningRecord sample_record(const std::string& workload = "matmul(f32[64,64],f32[64,64])",
                                  std::vector<double> costs = {0.00012, 0.000119, 0.000121}) {
    TuningRecord r;
    r.workload = workload;
    r.target = "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4";
    r.config = {{"tile_oc", 2}, {"tile_ow", 7}};
    te::Primitive split{.kind = "split", .stage = "C", .axes = {"i"}, .factors = {32}};
    te::Primitive vec{.kind = "vectorize", .stage = "C", .axes = {"j.inner"}};
    te::Primitive at{.kind = "compute_at", .stage = "C.local", .axes = {"j.outer"}, .target = "C"};
    r.schedule = {split, vec, at};
    r.costs = std::move(costs);
    r.timestamp = 1795000000.5;
    return r;
}

inline void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace anvil::tune::testing
