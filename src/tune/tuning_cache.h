// The tuning cache: a directory of records files, one per (workload, target), so a workload
// tuned once — by any model — is never tuned again. `anvil tune --tuning-cache DIR`; the default
// is $ANVIL_TUNING_CACHE, else $XDG_CACHE_HOME/anvil/tuning, else ~/.cache/anvil/tuning.
//
// A file's name is a digest of its key (file names cannot hold the key itself); the records
// inside carry the whole workload and target, and a lookup compares them, so a digest collision
// can never apply a wrong record.
#pragma once

#include <string>
#include <vector>

#include "tune/record.h"

namespace anvil::tune {

std::string default_tuning_cache_dir();

class TuningCache {
public:
    explicit TuningCache(std::string dir);
    const std::string& dir() const { return dir_; }
    // The records file of a workload on a target (it may not exist yet).
    std::string path_for(const std::string& workload, const std::string& target) const;
    // The best successful record cached for the workload, if any. Unreadable lines are
    // warnings (load_records).
    std::optional<TuningRecord> best(const std::string& workload, const std::string& target,
                                     std::vector<std::string>* warnings) const;
    // Every record cached for the workload (successful or not), for resuming a search.
    std::vector<TuningRecord> records(const std::string& workload, const std::string& target,
                                      std::vector<std::string>* warnings) const;
    // Appends records (each to its workload's file). UserError when the directory cannot be
    // written.
    void store(const std::vector<TuningRecord>& rs) const;

private:
    std::string dir_;
};

}  // namespace anvil::tune
