// Tuners: which configurations of a task's space to measure next (TVM's autotvm.tuner).
//
//   auto tuner = make_tuner("xgb", space, seed);
//   while (tuner->has_next() && budget) {
//       auto batch = tuner->next_batch(8);            // never a configuration twice
//       ... measure ...
//       tuner->update(batch, costs);                  // +inf for a failed candidate
//   }
//
// A configuration is the index of one choice per knob (Config::choice[i] for space.knobs[i]);
// the default configuration (every knob at its default) is always the first one proposed, so a
// task's best is never worse than untuned.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "te/config_space.h"

namespace anvil::tune {

struct Config {
    std::vector<int> choice;  // one index into knobs[i].choices per knob
    bool operator==(const Config&) const = default;
};

// The configuration with every knob at its default.
Config default_config(const te::ConfigSpace& space);
// The knob values a configuration stands for (te::ScheduleConfig's input).
te::KnobValues config_values(const te::ConfigSpace& space, const Config& c);
// The configuration of knob values (every knob of the space named, each value among its
// choices); nullopt otherwise (a record of another space).
std::optional<Config> config_of_values(const te::ConfigSpace& space, const te::KnobValues& v);

class Tuner {
public:
    virtual ~Tuner() = default;
    // Whether configurations remain that were never proposed.
    virtual bool has_next() const = 0;
    // Up to n configurations never proposed before (fewer when the space runs out).
    virtual std::vector<Config> next_batch(int n) = 0;
    // Measured costs in seconds (+inf for failures) of configurations next_batch returned, or of
    // earlier records being resumed (they then count as proposed).
    virtual void update(const std::vector<Config>& configs, const std::vector<double>& costs) = 0;
};

// "random", "grid", "ga" or "xgb"; UserError naming the accepted ones otherwise.
std::unique_ptr<Tuner> make_tuner(const std::string& kind, const te::ConfigSpace& space,
                                  uint64_t seed);

class TuningHistory;  // tuning_history.h

// Numeric facts about a task a cost model may learn from across tasks ("flops",
// "out_channels", ...). Named, so that tasks with different facts still line up.
using TaskFeatures = std::map<std::string, double>;

// Transfer learning across the tasks of one run: the driver makes one TuningHistory and passes
// it, with each task's name, to every tuner it makes. An "xgb" tuner adds every measurement of
// its task to the history and trains its cost model on the other tasks' measurements too, from
// its first proposals on (tuning_history.h says how tasks are made comparable). The other
// tuners have no model and ignore it.
struct TransferOptions {
    std::shared_ptr<TuningHistory> history;  // null: no transfer
    std::string task;                        // this task's name in the history (its workload key)
    TaskFeatures task_features;
};

std::unique_ptr<Tuner> make_tuner(const std::string& kind, const te::ConfigSpace& space,
                                  uint64_t seed, const TransferOptions& transfer);

}  // namespace anvil::tune
