#include "tune/tuning_cache.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "support/error.h"

namespace anvil::tune {

namespace {

// FNV-1a, 64 bits: a digest that is the same in every build and on every machine (std::hash is
// neither), so a cache written by one Anvil is found by the next.
std::string fnv1a64_hex(const std::string& text) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    char out[17];
    std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
    return out;
}

const char* nonempty_env(const char* name) {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
}

std::string home_dir() {
    if (const char* home = nonempty_env("HOME")) return home;
    if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir && *pw->pw_dir)
        return pw->pw_dir;
    return "";
}

}  // namespace

std::string default_tuning_cache_dir() {
    if (const char* dir = nonempty_env("ANVIL_TUNING_CACHE")) return dir;
    // The XDG spec ignores a relative XDG_CACHE_HOME.
    if (const char* xdg = nonempty_env("XDG_CACHE_HOME"); xdg && xdg[0] == '/')
        return (std::filesystem::path(xdg) / "anvil" / "tuning").string();
    std::string home = home_dir();
    if (home.empty())
        user_error() << "no directory for the tuning cache: neither $ANVIL_TUNING_CACHE, "
                        "$XDG_CACHE_HOME nor $HOME is set; pass --tuning-cache DIR";
    return (std::filesystem::path(home) / ".cache" / "anvil" / "tuning").string();
}

TuningCache::TuningCache(std::string dir) : dir_(std::move(dir)) {}

std::string TuningCache::path_for(const std::string& workload, const std::string& target) const {
    return (std::filesystem::path(dir_) / (fnv1a64_hex(record_key(workload, target)) + ".jsonl"))
        .string();
}

std::vector<TuningRecord> TuningCache::records(const std::string& workload,
                                               const std::string& target,
                                               std::vector<std::string>* warnings) const {
    std::vector<TuningRecord> out;
    // Another key whose digest collides shares the file: only the exact workload and target
    // count.
    for (auto& r : load_records(path_for(workload, target), warnings))
        if (r.workload == workload && r.target == target) out.push_back(std::move(r));
    return out;
}

std::optional<TuningRecord> TuningCache::best(const std::string& workload,
                                              const std::string& target,
                                              std::vector<std::string>* warnings) const {
    BestRecords best;
    best.add(records(workload, target, warnings));
    if (const TuningRecord* r = best.find(workload, target)) return *r;
    return std::nullopt;
}

void TuningCache::store(const std::vector<TuningRecord>& rs) const {
    // One writer per file, records in their given order within each file.
    std::map<std::string, std::vector<const TuningRecord*>> by_file;
    for (const auto& r : rs) by_file[path_for(r.workload, r.target)].push_back(&r);
    for (const auto& [path, records] : by_file) {
        RecordWriter writer(path);
        for (const TuningRecord* r : records) writer.append(*r);
    }
}

}  // namespace anvil::tune
