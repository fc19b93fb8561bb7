#include "tune/tuning_cache.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "scoped_env.h"
#include "support/error.h"
#include "unit/tune/tune_test_util.h"

namespace anvil::tune {
namespace {

using anvil::testing::ScopedEnv;
using testing::read_file;
using testing::sample_record;
using testing::TempDir;
using testing::write_file;

TEST(TuningCache, StoresAndFindsTheBestPerWorkload) {
    TempDir dir;
    TuningCache cache((dir / "cache"));  // made on the first store
    std::vector<std::string> warnings;
    TuningRecord conv_slow = sample_record("conv", {2.0});
    conv_slow.config = {{"tile_ow", 1}};
    TuningRecord conv_fast = sample_record("conv", {1.0});
    conv_fast.config = {{"tile_ow", 7}};
    TuningRecord conv_failed = sample_record("conv", {});
    conv_failed.error = MeasureError::timeout;
    TuningRecord dense = sample_record("dense", {0.5});

    EXPECT_FALSE(cache.best("conv", conv_fast.target, &warnings).has_value());
    EXPECT_TRUE(cache.records("conv", conv_fast.target, &warnings).empty());

    cache.store({conv_slow, dense, conv_failed});
    cache.store({conv_fast});  // a second session appends

    auto best = cache.best("conv", conv_fast.target, &warnings);
    ASSERT_TRUE(best.has_value());
    EXPECT_EQ(best->config, conv_fast.config);
    auto best_dense = cache.best("dense", dense.target, &warnings);
    ASSERT_TRUE(best_dense.has_value());
    EXPECT_EQ(best_dense->costs, dense.costs);
    EXPECT_FALSE(cache.best("conv", "llvm -mcpu=skylake", &warnings).has_value());

    // Every record of the workload, failures included, in the order they were stored.
    auto all = cache.records("conv", conv_fast.target, &warnings);
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].config, conv_slow.config);
    EXPECT_EQ(all[1].error, MeasureError::timeout);
    EXPECT_EQ(all[2].config, conv_fast.config);
    EXPECT_TRUE(warnings.empty());

    // One file per workload and target, named by the digest, in the cache directory.
    std::string conv_path = cache.path_for("conv", conv_fast.target);
    EXPECT_TRUE(std::filesystem::exists(conv_path));
    EXPECT_EQ(std::filesystem::path(conv_path).parent_path(), dir.path() / "cache");
    EXPECT_NE(conv_path, cache.path_for("dense", dense.target));
    EXPECT_NE(conv_path, cache.path_for("conv", "llvm -mcpu=skylake"));
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path() / "cache"),
                            std::filesystem::directory_iterator()),
              2);
}

// The file name must be the same in every build, so a cache outlives the Anvil that wrote it:
// FNV-1a 64 of the record key, in hex.
TEST(TuningCache, FileNamesAreAStableDigest) {
    TuningCache cache("/cache");
    std::string key = record_key("conv", "llvm");
    EXPECT_EQ(key, "4:conv|llvm");
    std::string name = std::filesystem::path(cache.path_for("conv", "llvm")).filename().string();
    EXPECT_EQ(name.size(), 16u + 6u) << name;
    EXPECT_EQ(name.substr(16), ".jsonl");
    EXPECT_EQ(name.find_first_not_of("0123456789abcdef"), 16u) << name;
    EXPECT_EQ(cache.path_for("conv", "llvm"), cache.path_for("conv", "llvm"));
    EXPECT_EQ(std::filesystem::path(cache.path_for("conv", "llvm")).parent_path(), "/cache");
    // record_key("", "") is "0:|", whose FNV-1a 64 is 4e5d2a181d447009 (computed apart, by the
    // reference algorithm, which gives the published af63dc4c8601ec8c for "a").
    EXPECT_EQ(std::filesystem::path(cache.path_for("", "")).filename().string(),
              "4e5d2a181d447009.jsonl");
}

// Two keys whose digests collide share a file: a lookup must return only its own records.
TEST(TuningCache, RecordsOfAnotherWorkloadInTheFileAreNotReturned) {
    TempDir dir;
    TuningCache cache(dir.path().string());
    std::vector<std::string> warnings;
    TuningRecord mine = sample_record("conv", {2.0});
    std::string path = cache.path_for("conv", mine.target);
    // Faster, but for another workload, or the same workload on another target.
    TuningRecord intruder = sample_record("dense", {0.1});
    TuningRecord other_target = sample_record("conv", {0.1});
    other_target.target = "llvm -mcpu=skylake";
    write_file(path, record_to_line(intruder) + "\n" + record_to_line(other_target) + "\n");

    EXPECT_FALSE(cache.best("conv", mine.target, &warnings).has_value());
    EXPECT_TRUE(cache.records("conv", mine.target, &warnings).empty());

    cache.store({mine});
    auto best = cache.best("conv", mine.target, &warnings);
    ASSERT_TRUE(best.has_value());
    EXPECT_EQ(best->workload, "conv");
    EXPECT_EQ(best->target, mine.target);
    EXPECT_EQ(best->costs, mine.costs);
    auto all = cache.records("conv", mine.target, &warnings);
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].workload, "conv");
    EXPECT_TRUE(warnings.empty());
}

TEST(TuningCache, BadLinesInAFileAreWarnings) {
    TempDir dir;
    TuningCache cache(dir.path().string());
    TuningRecord r = sample_record("conv", {1.0});
    std::string path = cache.path_for("conv", r.target);
    write_file(path, "{\"version\": 1, \"work");  // a session killed mid-line
    cache.store({r});
    std::vector<std::string> warnings;
    auto best = cache.best("conv", r.target, &warnings);
    ASSERT_TRUE(best.has_value());
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].rfind(path + ":1: not JSON", 0), 0u) << warnings[0];
    EXPECT_EQ(read_file(path).find("\"work\n{"), std::string("{\"version\": 1, ").size());
}

TEST(TuningCache, UnwritableDirectoryIsAUserError) {
    TempDir dir;
    write_file(dir / "not_a_dir", "x");
    TuningCache cache(dir / "not_a_dir");
    try {
        cache.store({sample_record()});
        FAIL() << "stored under a file";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find(dir / "not_a_dir"), std::string::npos) << e.what();
    }
}

TEST(TuningCache, DefaultDirectoryFollowsTheEnvironment) {
    {
        ScopedEnv cache("ANVIL_TUNING_CACHE", "/tmp/my-cache");
        ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
        EXPECT_EQ(default_tuning_cache_dir(), "/tmp/my-cache");
    }
    {
        ScopedEnv cache("ANVIL_TUNING_CACHE", "");  // set but empty: as if unset
        ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
        EXPECT_EQ(default_tuning_cache_dir(), "/xdg/anvil/tuning");
    }
    {
        ScopedEnv cache("ANVIL_TUNING_CACHE", nullptr);
        ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
        ScopedEnv home("HOME", "/home/someone");
        EXPECT_EQ(default_tuning_cache_dir(), "/home/someone/.cache/anvil/tuning");
    }
    {
        // The XDG spec ignores a relative XDG_CACHE_HOME.
        ScopedEnv cache("ANVIL_TUNING_CACHE", nullptr);
        ScopedEnv xdg("XDG_CACHE_HOME", "relative/cache");
        ScopedEnv home("HOME", "/home/someone");
        EXPECT_EQ(default_tuning_cache_dir(), "/home/someone/.cache/anvil/tuning");
    }
}

}  // namespace
}  // namespace anvil::tune
