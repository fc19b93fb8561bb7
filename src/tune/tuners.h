// The tuners make_tuner chooses from (private to tune/; one file each).
#pragma once

#include <memory>

#include "tune/tuner.h"

namespace anvil::tune {

// Uniformly random configurations, never one twice (TVM's RandomTuner).
std::unique_ptr<Tuner> make_random_tuner(const te::ConfigSpace& space, uint64_t seed);
// Every configuration in index order (TVM's GridSearchTuner).
std::unique_ptr<Tuner> make_grid_tuner(const te::ConfigSpace& space);
// A genetic algorithm over knob choices (TVM's GATuner).
std::unique_ptr<Tuner> make_ga_tuner(const te::ConfigSpace& space, uint64_t seed);
// Proposals ranked by a gradient-boosted cost model (TVM's XGBTuner), optionally trained on the
// other tasks of the run as well.
std::unique_ptr<Tuner> make_xgb_tuner(const te::ConfigSpace& space, uint64_t seed,
                                      const TransferOptions& transfer);

}  // namespace anvil::tune
