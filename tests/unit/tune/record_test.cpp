#include "tune/record.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "support/error.h"
#include "unit/tune/tune_test_util.h"

namespace anvil::tune {
namespace {

using testing::read_file;
using testing::sample_record;
using testing::TempDir;
using testing::write_file;

void expect_same(const TuningRecord& a, const TuningRecord& b) {
    EXPECT_EQ(a.version, b.version);
    EXPECT_EQ(a.workload, b.workload);
    EXPECT_EQ(a.target, b.target);
    EXPECT_EQ(a.config, b.config);
    EXPECT_EQ(a.schedule, b.schedule);
    EXPECT_EQ(a.costs, b.costs);
    EXPECT_EQ(a.error, b.error);
    EXPECT_EQ(a.message, b.message);
    EXPECT_EQ(a.timestamp, b.timestamp);
    EXPECT_EQ(a.anvil_version, b.anvil_version);
}

TEST(MeasureError, NamesRoundTrip) {
    for (MeasureError e : {MeasureError::none, MeasureError::compile, MeasureError::runtime,
                           MeasureError::timeout, MeasureError::wrong_answer}) {
        auto back = parse_measure_error(measure_error_name(e));
        ASSERT_TRUE(back.has_value()) << measure_error_name(e);
        EXPECT_EQ(*back, e);
    }
    EXPECT_STREQ(measure_error_name(MeasureError::wrong_answer), "wrong_answer");
    EXPECT_FALSE(parse_measure_error("crash").has_value());
    EXPECT_FALSE(parse_measure_error("").has_value());
}

TEST(TuningRecord, MeanCostAndOk) {
    TuningRecord r = sample_record("w", {1.0, 2.0, 6.0});
    EXPECT_TRUE(r.ok());
    EXPECT_DOUBLE_EQ(r.mean_cost(), 3.0);
    r.error = MeasureError::timeout;
    EXPECT_FALSE(r.ok());
    EXPECT_TRUE(std::isinf(r.mean_cost()));
    TuningRecord none = sample_record("w", {});
    EXPECT_FALSE(none.ok());
    EXPECT_TRUE(std::isinf(none.mean_cost()));
}

TEST(TuningRecord, LineRoundTrip) {
    TuningRecord r = sample_record();
    r.message = "tab\t, quote \" and newline\n in a message";
    std::string line = record_to_line(r);
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    std::string why;
    auto back = record_from_line(line, &why);
    ASSERT_TRUE(back.has_value()) << why;
    expect_same(*back, r);
    EXPECT_EQ(record_to_line(*back), line);

    TuningRecord failed = sample_record("w", {});
    failed.error = MeasureError::wrong_answer;
    failed.message = "output 0 differs";
    auto back2 = record_from_line(record_to_line(failed), &why);
    ASSERT_TRUE(back2.has_value()) << why;
    expect_same(*back2, failed);
}

TEST(TuningRecord, CostsKeepEveryBit) {
    TuningRecord r = sample_record("w", {0.1 + 0.2, 1e-9 / 3, 123456.789012345678});
    auto back = record_from_line(record_to_line(r));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->costs, r.costs);
}

// The format as record.h documents it, written by hand.
TEST(TuningRecord, ReadsTheDocumentedFormat) {
    std::string line =
        R"({"version": 1, "workload": "conv2d", "target": "llvm -mcpu=znver4",)"
        R"( "config": {"tile_oc": 2, "tile_ow": 7},)"
        R"( "schedule": [{"kind": "split", "stage": "C", "axes": ["i"], "factors": [32]}],)"
        R"( "costs": [0.00012, 0.000119, 0.000121], "error": "none", "message": "",)"
        R"( "timestamp": 1795000000.5, "anvil_version": "0.1.0"})";
    std::string why;
    auto r = record_from_line(line, &why);
    ASSERT_TRUE(r.has_value()) << why;
    EXPECT_EQ(r->workload, "conv2d");
    EXPECT_EQ(r->target, "llvm -mcpu=znver4");
    EXPECT_EQ(r->config, (te::KnobValues{{"tile_oc", 2}, {"tile_ow", 7}}));
    ASSERT_EQ(r->schedule.size(), 1u);
    EXPECT_EQ(r->schedule[0].str(), "split(C, i, factor=32)");
    EXPECT_EQ(r->costs, (std::vector<double>{0.00012, 0.000119, 0.000121}));
    EXPECT_EQ(r->error, MeasureError::none);
    EXPECT_EQ(r->timestamp, 1795000000.5);
    EXPECT_EQ(r->anvil_version, "0.1.0");

    // And the writer writes these fields, with the error by name.
    auto j = nlohmann::json::parse(record_to_line(*r));
    for (const char* key : {"version", "workload", "target", "config", "schedule", "costs", "error",
                            "message", "timestamp", "anvil_version"})
        EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_EQ(j.size(), 10u);
    EXPECT_EQ(j["error"], "none");
    EXPECT_EQ(j["version"], kRecordVersion);
}

// A good record's JSON with one field replaced (or removed, for a null `value`).
std::string with_field(const std::string& key, const nlohmann::json& value) {
    nlohmann::json j = record_to_json(sample_record());
    if (value.is_null()) {
        j.erase(key);
    } else {
        j[key] = value;
    }
    return j.dump();
}

struct BadLine {
    std::string line;
    std::string why;  // a fragment of the reason
};

std::vector<BadLine> bad_lines() {
    using nlohmann::json;
    json bad_primitive =
        json::array({{{"kind", "split"}, {"stage", "C"}, {"factors", json::array({2.5})}}});
    json huge_factor =
        json::array({{{"kind", "split"}, {"stage", "C"}, {"factors", json::array({1e300})}}});
    json no_kind = json::array({{{"stage", "C"}}});
    json axes_numbers = json::array({{{"kind", "split"}, {"stage", "C"}, {"axes", {1, 2}}}});
    return {
        {"{\"version\": 1, \"workload\": \"w\", \"tar", "not JSON"},
        {"not json at all", "not JSON"},
        {"[1, 2, 3]", "not a JSON object"},
        {"42", "not a JSON object"},
        {with_field("version", 2), "version 2"},
        {with_field("version", 0), "version 0"},
        {with_field("version", "1"), "'version' is not an integer"},
        {with_field("version", 1.5), "'version' is not an integer"},
        {with_field("version", nullptr), "missing field 'version'"},
        {with_field("workload", nullptr), "missing field 'workload'"},
        {with_field("workload", 7), "'workload' is not a string"},
        {with_field("target", json::array()), "'target' is not a string"},
        {with_field("config", nullptr), "missing field 'config'"},
        {with_field("config", json::array({1, 2})), "'config' is not an object"},
        {with_field("config", {{"tile_ow", 7.5}}), "knob 'tile_ow' is not an integer"},
        {with_field("config", {{"tile_ow", "7"}}), "knob 'tile_ow' is not an integer"},
        {with_field("config", {{"tile_ow", 18446744073709551615ull}}), "not an integer"},
        {with_field("schedule", "split(C, i, factor=32)"), "'schedule' is not an array"},
        {with_field("schedule", json::array({1})), "primitive 0 is not an object"},
        {with_field("schedule", bad_primitive), "factor is not an integer"},
        {with_field("schedule", huge_factor), "factor is not an integer"},
        {with_field("schedule", no_kind), "schedule record JSON, primitive 0"},
        {with_field("schedule", axes_numbers), "schedule record JSON, primitive 0"},
        {with_field("costs", nullptr), "missing field 'costs'"},
        {with_field("costs", 0.1), "'costs' is not an array"},
        {with_field("costs", {0.1, -0.2}), "negative"},
        {with_field("costs", {0.1, "fast"}), "not a number"},
        // NaN is written as null by the JSON library.
        {with_field("costs", {std::nan("")}), "not a number"},
        {with_field("error", "crash"), "unknown error kind 'crash'"},
        {with_field("error", 0), "'error' is not a string"},
        {with_field("message", nullptr), "missing field 'message'"},
        {with_field("timestamp", "yesterday"), "'timestamp' is not a number"},
        {with_field("anvil_version", nullptr), "missing field 'anvil_version'"},
        {std::string("{\"version\": 1, \"workload\": \"\xff\xfe\"}"), "not JSON"},
        {std::string("\0\0\0", 3), "not JSON"},
    };
}

TEST(TuningRecord, EveryBadLineIsRefusedWithAReason) {
    for (const auto& [line, fragment] : bad_lines()) {
        std::string why;
        auto r = record_from_line(line, &why);
        EXPECT_FALSE(r.has_value()) << line;
        EXPECT_NE(why.find(fragment), std::string::npos)
            << "line: " << line << "\nwhy: " << why << "\nexpected: " << fragment;
        EXPECT_FALSE(record_from_line(line).has_value());  // without `why`, too
    }
}

// Built with += : GCC 12 warns (-Wrestrict, a false positive) on "w" + std::to_string(i).
std::string workload_name(size_t i) {
    std::string name = "w";
    name += std::to_string(i);
    return name;
}

TEST(LoadRecords, SkipsEachBadLineWithAWarningAndLoadsTheRest) {
    TempDir dir;
    std::string path = dir / "records.jsonl";
    std::vector<BadLine> bad = bad_lines();
    // Good lines between the bad ones, blank lines here and there (silently ignored).
    std::string text;
    std::vector<size_t> bad_line_numbers;
    size_t line_no = 0;
    int good = 0;
    for (size_t i = 0; i < bad.size(); ++i) {
        TuningRecord r = sample_record(workload_name(i));
        text += record_to_line(r) + "\n";
        ++line_no;
        ++good;
        if (i % 5 == 0) {
            text += (i % 10 == 0 ? "\n" : "   \r\n");
            ++line_no;
        }
        text += bad[i].line + "\n";
        bad_line_numbers.push_back(++line_no);
    }
    write_file(path, text);
    std::vector<std::string> warnings;
    auto records = load_records(path, &warnings);
    ASSERT_EQ(records.size(), static_cast<size_t>(good));
    for (int i = 0; i < good; ++i) EXPECT_EQ(records[i].workload, workload_name(i));
    ASSERT_EQ(warnings.size(), bad.size());
    for (size_t i = 0; i < bad.size(); ++i) {
        std::string prefix = path + ":" + std::to_string(bad_line_numbers[i]) + ": ";
        EXPECT_EQ(warnings[i].rfind(prefix, 0), 0u) << warnings[i] << "\nexpected " << prefix;
        EXPECT_NE(warnings[i].find(bad[i].why), std::string::npos) << warnings[i];
        const std::string suffix = "; line skipped";
        ASSERT_GE(warnings[i].size(), suffix.size());
        EXPECT_EQ(warnings[i].substr(warnings[i].size() - suffix.size()), suffix) << warnings[i];
    }
    // Without a warnings list the same records load.
    EXPECT_EQ(load_records(path, nullptr).size(), static_cast<size_t>(good));
}

TEST(LoadRecords, RecordOfAnotherVersionIsSkipped) {
    TempDir dir;
    std::string path = dir / "records.jsonl";
    nlohmann::json future = record_to_json(sample_record("future"));
    future["version"] = kProgramRecordVersion + 1;
    write_file(path, future.dump() + "\n" + record_to_line(sample_record("now")) + "\n");
    std::vector<std::string> warnings;
    auto records = load_records(path, &warnings);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].workload, "now");
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0], path + ":1: record format version " +
                               std::to_string(kProgramRecordVersion + 1) +
                               ", this Anvil reads versions 1 to 2; line skipped");
}

TEST(Record, AutoSchedulerRecordsAreVersion2) {
    TuningRecord r = sample_record();
    r.search = SearchKind::program;
    r.config.clear();
    nlohmann::json j = record_to_json(r);
    EXPECT_EQ(j["version"], kProgramRecordVersion);
    EXPECT_EQ(j["search"], "auto");
    auto back = record_from_line(j.dump());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->search, SearchKind::program);
    // Version 2 without "search": "auto" is no record; version 1 with it is (written before).
    j.erase("search");
    std::string why;
    EXPECT_FALSE(record_from_line(j.dump(), &why).has_value());
    EXPECT_NE(why.find("auto-scheduler"), std::string::npos) << why;
    j["search"] = "auto";
    j["version"] = 1;
    back = record_from_line(j.dump());
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->search, SearchKind::program);
}

TEST(LoadRecords, MissingFileIsEmptyAndUnreadableIsAnError) {
    TempDir dir;
    std::vector<std::string> warnings;
    EXPECT_TRUE(load_records(dir / "absent.jsonl", &warnings).empty());
    EXPECT_TRUE(warnings.empty());
    write_file(dir / "empty.jsonl", "");
    EXPECT_TRUE(load_records(dir / "empty.jsonl", &warnings).empty());
    EXPECT_TRUE(warnings.empty());
    try {
        load_records(dir.path().string(), &warnings);
        FAIL() << "a directory read as records";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
    }
}

TEST(RecordWriter, CreatesDirectoriesAndAppendsLines) {
    TempDir dir;
    std::string path = dir / "a/b/records.jsonl";
    TuningRecord r1 = sample_record("one");
    TuningRecord r2 = sample_record("two");
    {
        RecordWriter w(path);
        EXPECT_EQ(w.path(), path);
        w.append(r1);
        // Flushed line by line: readable before the writer closes.
        EXPECT_EQ(read_file(path), record_to_line(r1) + "\n");
    }
    {
        RecordWriter w(path);  // a file ending in a newline gets nothing extra
        w.append(r2);
    }
    EXPECT_EQ(read_file(path), record_to_line(r1) + "\n" + record_to_line(r2) + "\n");
    std::vector<std::string> warnings;
    auto records = load_records(path, &warnings);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_TRUE(warnings.empty());
    expect_same(records[0], r1);
    expect_same(records[1], r2);
}

// A run killed in the middle of a line: resuming appends after it, the torn line is one skipped
// line and the new record loads.
TEST(RecordWriter, TornLastLineStaysOneSkippedLine) {
    TempDir dir;
    std::string path = dir / "records.jsonl";
    std::string full = record_to_line(sample_record("first"));
    std::string torn = record_to_line(sample_record("torn")).substr(0, 57);
    write_file(path, full + "\n" + torn);
    {
        RecordWriter w(path);
        w.append(sample_record("resumed"));
    }
    std::vector<std::string> warnings;
    auto records = load_records(path, &warnings);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].workload, "first");
    EXPECT_EQ(records[1].workload, "resumed");
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0].rfind(path + ":2: not JSON", 0), 0u) << warnings[0];
}

TEST(RecordWriter, UnwritablePathIsAUserError) {
    TempDir dir;
    EXPECT_THROW(RecordWriter w(dir.path().string()), UserError);  // a directory
    write_file(dir / "file", "x");
    try {
        RecordWriter w(dir / "file/records.jsonl");  // its parent is a file
        FAIL() << "wrote under a file";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find(dir / "file/records.jsonl"), std::string::npos)
            << e.what();
    }
}

TEST(RecordWriter, InvalidUtf8InAMessageIsReplaced) {
    TempDir dir;
    std::string path = dir / "records.jsonl";
    TuningRecord r = sample_record("w", {});
    r.error = MeasureError::compile;
    r.message = "clang: \xff\xfe bad bytes";
    {
        RecordWriter w(path);
        w.append(r);
    }
    std::vector<std::string> warnings;
    auto records = load_records(path, &warnings);
    ASSERT_EQ(records.size(), 1u) << (warnings.empty() ? "" : warnings[0]);
    EXPECT_EQ(records[0].message, "clang: \xef\xbf\xbd\xef\xbf\xbd bad bytes");
}

TEST(RecordKey, IsUnambiguous) {
    EXPECT_NE(record_key("a|b", "c"), record_key("a", "b|c"));
    EXPECT_NE(record_key("1:a", "b"), record_key("1", "a|b"));
    EXPECT_EQ(record_key("w", "t"), record_key("w", "t"));
}

TEST(BestRecords, KeepsTheLowestMeanSuccessPerWorkloadAndTarget) {
    BestRecords best;
    TuningRecord slow = sample_record("conv", {3.0, 3.0});
    slow.config = {{"tile_ow", 1}};
    TuningRecord fast = sample_record("conv", {1.0, 2.0});  // mean 1.5
    fast.config = {{"tile_ow", 2}};
    TuningRecord tie = sample_record("conv", {1.5});  // same mean: the earlier stays
    tie.config = {{"tile_ow", 4}};
    TuningRecord failed = sample_record("conv", {0.001});
    failed.error = MeasureError::wrong_answer;  // fastest, but wrong
    TuningRecord no_costs = sample_record("conv", {});
    TuningRecord other_target = sample_record("conv", {9.0});
    other_target.target = "llvm -mcpu=skylake";
    TuningRecord dense = sample_record("dense", {0.5});
    best.add({slow, failed, fast, no_costs, tie, other_target, dense});

    EXPECT_EQ(best.size(), 3u);
    const TuningRecord* conv = best.find("conv", slow.target);
    ASSERT_NE(conv, nullptr);
    EXPECT_EQ(conv->config, fast.config);
    const TuningRecord* conv_sky = best.find("conv", "llvm -mcpu=skylake");
    ASSERT_NE(conv_sky, nullptr);
    EXPECT_EQ(conv_sky->costs, other_target.costs);
    ASSERT_NE(best.find("dense", dense.target), nullptr);
    EXPECT_EQ(best.find("pool", dense.target), nullptr);
    EXPECT_EQ(best.all().size(), 3u);
}

TEST(BestRecords, OnlyFailuresGiveNothing) {
    BestRecords best;
    TuningRecord t = sample_record("conv", {});
    t.error = MeasureError::timeout;
    TuningRecord c = sample_record("conv", {0.1});
    c.error = MeasureError::runtime;
    best.add({t, c});
    EXPECT_EQ(best.size(), 0u);
    EXPECT_EQ(best.find("conv", t.target), nullptr);
}

}  // namespace
}  // namespace anvil::tune
