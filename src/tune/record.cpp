#include "tune/record.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>

#include "support/error.h"

namespace anvil::tune {

namespace {

using nlohmann::json;

constexpr const char* kErrorNames[] = {"none",    "compile",      "runtime",
                                       "timeout", "wrong_answer", "build_timeout"};

// Why `line` is not a record; thrown inside record_from_line only, and caught there.
struct BadRecord {
    std::string why;
};

[[noreturn]] void bad(std::string why) {
    throw BadRecord{std::move(why)};
}

const json& field(const json& j, const char* name) {
    auto it = j.find(name);
    if (it == j.end()) bad(std::string("missing field '") + name + "'");
    return *it;
}

// A JSON integer that fits int64_t (nlohmann would convert a float or a huge unsigned silently).
bool is_int64(const json& v) {
    if (v.is_number_unsigned())
        return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    return v.is_number_integer();
}

std::string string_field(const json& j, const char* name) {
    const json& v = field(j, name);
    if (!v.is_string()) bad(std::string("field '") + name + "' is not a string");
    return v.get<std::string>();
}

double number_field(const json& j, const char* name) {
    const json& v = field(j, name);
    if (!v.is_number()) bad(std::string("field '") + name + "' is not a number");
    double d = v.get<double>();
    if (!std::isfinite(d)) bad(std::string("field '") + name + "' is not finite");
    return d;
}

te::KnobValues config_from_json(const json& v) {
    if (!v.is_object()) bad("field 'config' is not an object of knob values");
    te::KnobValues config;
    for (const auto& [name, value] : v.items()) {
        if (!is_int64(value)) bad("config knob '" + name + "' is not an integer");
        config[name] = value.get<int64_t>();
    }
    return config;
}

// te::record_from_json reads factors with nlohmann's converting get, which would turn 2.5 into 2
// and 1e300 into undefined behaviour: the factors are checked here first.
te::ScheduleRecord schedule_from_json(const json& v) {
    if (!v.is_array()) bad("field 'schedule' is not an array of primitives");
    for (size_t i = 0; i < v.size(); ++i) {
        const json& p = v[i];
        if (!p.is_object()) bad("schedule primitive " + std::to_string(i) + " is not an object");
        auto f = p.find("factors");
        if (f == p.end()) continue;
        if (!f->is_array())
            bad("schedule primitive " + std::to_string(i) + ": 'factors' is not an array");
        for (const json& x : *f)
            if (!is_int64(x))
                bad("schedule primitive " + std::to_string(i) + ": a factor is not an integer");
    }
    try {
        return te::record_from_json(v);
    } catch (const UserError& e) {
        bad(e.what());
    }
}

std::vector<double> costs_from_json(const json& v) {
    if (!v.is_array()) bad("field 'costs' is not an array of numbers");
    std::vector<double> costs;
    for (const json& x : v) {
        if (!x.is_number()) bad("field 'costs' holds a value that is not a number");
        double c = x.get<double>();
        if (!std::isfinite(c) || c < 0) bad("field 'costs' holds a negative or non-finite cost");
        costs.push_back(c);
    }
    return costs;
}

TuningRecord record_from_json(const json& j) {
    if (!j.is_object()) bad("not a JSON object");
    const json& version = field(j, "version");
    if (!is_int64(version)) bad("field 'version' is not an integer");
    if (version.get<int64_t>() < kRecordVersion || version.get<int64_t>() > kProgramRecordVersion)
        bad("record format version " + std::to_string(version.get<int64_t>()) +
            ", this Anvil reads versions " + std::to_string(kRecordVersion) + " to " +
            std::to_string(kProgramRecordVersion));
    TuningRecord r;
    r.workload = string_field(j, "workload");
    r.target = string_field(j, "target");
    r.config = config_from_json(field(j, "config"));
    r.schedule = schedule_from_json(field(j, "schedule"));
    // Optional: records of template searches (all records before the auto-scheduler) lack it.
    if (auto it = j.find("search"); it != j.end()) {
        if (!it->is_string()) bad("field 'search' is not a string");
        auto kind = parse_search_kind(it->get<std::string>());
        if (!kind) bad("unknown search '" + it->get<std::string>() + "'");
        r.search = *kind;
    }
    if (version.get<int64_t>() == kProgramRecordVersion && r.search != SearchKind::program) {
        bad("a version " + std::to_string(kProgramRecordVersion) +
            " record is an auto-scheduler record (\"search\": \"auto\")");
    }
    r.version = static_cast<int>(version.get<int64_t>());
    r.costs = costs_from_json(field(j, "costs"));
    std::string error = string_field(j, "error");
    auto e = parse_measure_error(error);
    if (!e) bad("unknown error kind '" + error + "'");
    r.error = *e;
    r.message = string_field(j, "message");
    r.timestamp = number_field(j, "timestamp");
    r.anvil_version = string_field(j, "anvil_version");
    return r;
}

std::string errno_text() {
    return std::strerror(errno);
}

}  // namespace

const char* measure_error_name(MeasureError e) {
    auto i = static_cast<size_t>(e);
    return i < std::size(kErrorNames) ? kErrorNames[i] : "unknown";
}

std::optional<MeasureError> parse_measure_error(const std::string& name) {
    for (size_t i = 0; i < std::size(kErrorNames); ++i)
        if (name == kErrorNames[i]) return static_cast<MeasureError>(i);
    return std::nullopt;
}

double TuningRecord::mean_cost() const {
    if (!ok()) return std::numeric_limits<double>::infinity();
    return std::accumulate(costs.begin(), costs.end(), 0.0) / static_cast<double>(costs.size());
}

const char* search_kind_name(SearchKind k) {
    return k == SearchKind::program ? "auto" : "template";
}

std::optional<SearchKind> parse_search_kind(const std::string& name) {
    if (name == "auto") return SearchKind::program;
    if (name == "template") return SearchKind::config;
    return std::nullopt;
}

nlohmann::json record_to_json(const TuningRecord& r) {
    const int version = r.search == SearchKind::program ? kProgramRecordVersion : kRecordVersion;
    json j{{"version", version},
           {"workload", r.workload},
           {"target", r.target},
           {"config", r.config},
           {"schedule", te::record_to_json(r.schedule)},
           {"costs", r.costs},
           {"error", measure_error_name(r.error)},
           {"message", r.message},
           {"timestamp", r.timestamp},
           {"anvil_version", r.anvil_version}};
    if (r.search == SearchKind::program) j["search"] = search_kind_name(r.search);
    return j;
}

std::string record_to_line(const TuningRecord& r) {
    // An error message is a compiler's or a child's output and may hold invalid UTF-8: it is
    // replaced (U+FFFD) instead of failing the record.
    return record_to_json(r).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<TuningRecord> record_from_line(const std::string& line, std::string* why) {
    try {
        json j = json::parse(line);
        return record_from_json(j);
    } catch (const BadRecord& e) {
        if (why) *why = e.why;
    } catch (const json::parse_error& e) {
        if (why) *why = std::string("not JSON (") + e.what() + ")";
    } catch (const std::exception& e) {
        // Checked above so as not to happen; a record is data, so even a surprise is a bad line.
        if (why) *why = std::string("not a record (") + e.what() + ")";
    }
    return std::nullopt;
}

std::vector<TuningRecord> load_records(const std::string& path,
                                       std::vector<std::string>* warnings) {
    std::vector<TuningRecord> records;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) {
        if (errno == ENOENT) return records;
        user_error() << "cannot read tuning records '" << path << "': " << errno_text();
    }
    char* buf = nullptr;
    size_t cap = 0;
    size_t line_no = 0;
    ssize_t n;
    errno = 0;
    while ((n = ::getline(&buf, &cap, f)) >= 0) {
        ++line_no;
        std::string line(buf, static_cast<size_t>(n));
        if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
        std::string why;
        if (auto r = record_from_line(line, &why)) {
            records.push_back(std::move(*r));
        } else if (warnings) {
            warnings->push_back(path + ":" + std::to_string(line_no) + ": " + why +
                                "; line skipped");
        }
    }
    bool failed = std::ferror(f);
    int err = errno;
    std::free(buf);
    std::fclose(f);
    if (failed)
        user_error() << "cannot read tuning records '" << path << "': " << std::strerror(err);
    return records;
}

RecordWriter::RecordWriter(std::string path) : path_(std::move(path)) {
    std::filesystem::path parent = std::filesystem::path(path_).parent_path();
    if (!parent.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(parent, ec);
        if (ec)
            user_error() << "cannot create the directory of tuning records '" << path_
                         << "': " << ec.message();
    }
    // Append mode: every write lands at the end, so two runs appending to one file (a shared
    // tuning cache) add whole lines.
    file_ = std::fopen(path_.c_str(), "a+b");
    if (!file_) user_error() << "cannot write tuning records '" << path_ << "': " << errno_text();
    // A run killed mid-line left a torn last line: end it, so it stays one skipped line instead
    // of swallowing the next record.
    if (std::fseek(file_, 0, SEEK_END) == 0 && std::ftell(file_) > 0 &&
        std::fseek(file_, -1, SEEK_END) == 0 && std::fgetc(file_) != '\n') {
        ssize_t w = ::write(::fileno(file_), "\n", 1);
        if (w != 1) {
            int err = errno;
            std::fclose(file_);
            file_ = nullptr;
            user_error() << "cannot write tuning records '" << path_ << "': " << std::strerror(err);
        }
    }
}

RecordWriter::~RecordWriter() {
    if (file_) std::fclose(file_);
}

void RecordWriter::append(const TuningRecord& r) {
    // One write(2) of the whole line, not stdio's buffer: the line is on disk (in the kernel's
    // page cache) when append returns, so a crash after it loses nothing, and the lines of two
    // processes appending to one file never interleave.
    std::string line = record_to_line(r) + "\n";
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
        ssize_t w = ::write(::fileno(file_), p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            user_error() << "cannot write tuning records '" << path_ << "': " << errno_text();
        p += w;
        left -= static_cast<size_t>(w);
    }
}

std::string record_key(const std::string& workload, const std::string& target) {
    // Length-prefixed, so no workload text can make two different pairs share a key.
    return std::to_string(workload.size()) + ":" + workload + "|" + target;
}

void BestRecords::add(const TuningRecord& r) {
    if (!r.ok()) return;
    std::string key = record_key(r.workload, r.target);
    auto it = best_.find(key);
    if (it == best_.end()) {
        best_.emplace(std::move(key), r);
    } else if (r.mean_cost() < it->second.mean_cost()) {
        it->second = r;
    }
}

const TuningRecord* BestRecords::find(const std::string& workload,
                                      const std::string& target) const {
    auto it = best_.find(record_key(workload, target));
    return it == best_.end() ? nullptr : &it->second;
}

}  // namespace anvil::tune
