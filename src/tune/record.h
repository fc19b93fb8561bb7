// Tuning records: one JSON object per line, one line per measurement (TVM's log format, with a
// version and the full workload key instead of a hash).
//
//   {"version": 1, "workload": "<workload key>", "target": "llvm -mtriple=... -mcpu=znver4",
//    "config": {"tile_oc": 2, "tile_ow": 7}, "schedule": [<te::record_to_json primitives>],
//    "costs": [0.00012, 0.000119, 0.000121], "error": "none", "message": "",
//    "timestamp": 1795000000.5, "anvil_version": "0.1.0"}
//
// An auto-scheduler record (tune/sketch/) adds "search": "auto": its "config" is empty and its
// "schedule" is the program itself, replayed as is on the workload's computation; a record
// without the field (or with "search": "template") is a template's configuration, whose schedule
// its op's rule rebuilds from "config".
//
// `workload` is the canonical description of the kernel's computation (driver/tune_tasks.h
// makes it), stored whole so that a record applies exactly when the computation is the same;
// it is never a hash. A record of another format version, a line that is not JSON or lacks a
// field, is skipped with a warning naming the file and the line: never a crash, never a wrong
// record applied.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "te/config_space.h"
#include "te/schedule_record.h"

namespace anvil::tune {

inline constexpr int kRecordVersion = 1;
// Auto-scheduler records are version 2, so that an Anvil that predates them skips them (it would
// read one as a template record with an empty configuration: its defaults, at the program's
// cost). Version 1 records with "search": "auto" (written before) are read too.
inline constexpr int kProgramRecordVersion = 2;
// The Anvil version records are stamped with.
inline constexpr const char* kAnvilVersion = "0.1.0";

// How a measured candidate failed ("none" when it did not).
enum class MeasureError : uint8_t { none, compile, runtime, timeout, wrong_answer, build_timeout };
const char* measure_error_name(MeasureError e);
// nullopt for an unknown name.
std::optional<MeasureError> parse_measure_error(const std::string& name);

// Which search made a record: a template's knob configuration, or the auto-scheduler's program.
enum class SearchKind : uint8_t { config, program };
const char* search_kind_name(SearchKind k);  // "template", "auto"
std::optional<SearchKind> parse_search_kind(const std::string& name);

struct TuningRecord {
    int version = kRecordVersion;  // as read; writing uses the version of the record's search
    std::string workload;          // canonical workload key
    std::string target;            // Target::str()
    te::KnobValues config;         // every knob of the space, resolved
    te::ScheduleRecord schedule;   // the primitives the configuration produced (or the program)
    SearchKind search = SearchKind::config;
    std::vector<double> costs;  // seconds per run, one per repeat; empty on error
    MeasureError error = MeasureError::none;
    std::string message;   // the error's text
    double timestamp = 0;  // seconds since the epoch
    std::string anvil_version = kAnvilVersion;

    // The mean of costs; +infinity on error or without costs.
    double mean_cost() const;
    bool ok() const { return error == MeasureError::none && !costs.empty(); }
};

nlohmann::json record_to_json(const TuningRecord& r);
// One line of a records file, no newline.
std::string record_to_line(const TuningRecord& r);
// A record from one line; nullopt with `*why` set (when given) for a line that is not a
// record of this version: malformed JSON, a missing or mistyped field, another version.
std::optional<TuningRecord> record_from_line(const std::string& line, std::string* why = nullptr);

// Every record of a records file, in order. Lines that are not records are skipped, each with a
// warning "<path>:<line>: <why>; line skipped" appended to `warnings`. A missing file is empty
// (no warning); an unreadable one is a UserError naming it.
std::vector<TuningRecord> load_records(const std::string& path, std::vector<std::string>* warnings);

// Appends records to a file as they are made, flushed line by line, so an interrupted run
// loses at most the trial in flight. Creates the file (and its directory) when missing; a file
// that does not end in a newline (a run killed mid-line) gets one first, so the torn line stays
// one skipped line.
class RecordWriter {
public:
    explicit RecordWriter(std::string path);  // UserError when it cannot be opened
    ~RecordWriter();
    RecordWriter(const RecordWriter&) = delete;
    RecordWriter& operator=(const RecordWriter&) = delete;
    void append(const TuningRecord& r);
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::FILE* file_ = nullptr;
};

// The key that records of one workload on one target share.
std::string record_key(const std::string& workload, const std::string& target);

// The best (lowest mean cost) successful record per record_key; ties keep the earlier one.
class BestRecords {
public:
    BestRecords() = default;
    void add(const TuningRecord& r);
    void add(const std::vector<TuningRecord>& rs) {
        for (const auto& r : rs) add(r);
    }
    // Every best record of `other` (the better one where both have the key).
    void add_all(const BestRecords& other) {
        for (const auto& [key, r] : other.best_) add(r);
    }
    const TuningRecord* find(const std::string& workload, const std::string& target) const;
    size_t size() const { return best_.size(); }
    const std::map<std::string, TuningRecord>& all() const { return best_; }

private:
    std::map<std::string, TuningRecord> best_;
};

}  // namespace anvil::tune
