// The measurements of one tuning run, shared by its "xgb" tuners (transfer learning across
// tasks, as TVM's XGBTuner.load_history and Ansor's cost model do).
//
// How points of different tasks become one training set for a task's cost model:
//   * Features by name, not by position: each knob name owns two feature columns (the knob's
//     choice index scaled to [0, 1] over its task's choices, and log2 of its value, as
//     sign(v) * log2(1 + |v|) so that 0 stays finite) and each task feature name one column. A task
//     that lacks a name has that column missing (NaN, XGBoost's missing value: a tree routes it
//     down a learned default branch instead of reading it as 0). So `tile_ow` means the same
//     columns in every task that declares it, and a knob only one task has simply never splits the
//     other tasks' points. The log of the value is the column that is really comparable (a split
//     knob's choices are the divisors of its own extent); the scaled index is what separates the
//     choices of unordered knobs (loop orders).
//   * Costs are not comparable across tasks (a 1 GFLOP convolution against a 10 MFLOP add), so
//     each task's points form one ranking group: the rank objective only compares the points of
//     one task with each other, and the labels are the task's best cost divided by the point's
//     cost (1 for its best, towards 0 for slow ones, 0 for a failure), which is also what the
//     regression objective fits. The model learns which knob values rank high, which carries
//     over to related tasks; it never learns a task's absolute speed.
//   * A tuner trains on its own points plus at most a fixed number of history points, spread
//     evenly over the other tasks, so retraining stays cheap on long runs.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "tune/tuner.h"

namespace anvil::tune {

class TuningHistory {
public:
    // What one task has measured.
    struct Task {
        std::string name;
        TaskFeatures features;
        te::ConfigSpace space;
        std::vector<Config> configs;
        std::vector<double> costs;  // seconds, +inf for failures
    };

    // Appends measurements of `task` (its space and features are those of its first add).
    void add(const std::string& task, const TaskFeatures& features, const te::ConfigSpace& space,
             const std::vector<Config>& configs, const std::vector<double>& costs);
    // A copy of every task but `task` (tuners may run on several threads of the driver).
    std::vector<Task> tasks_except(const std::string& task) const;
    // Measurements of every task but `task`.
    size_t points_except(const std::string& task) const;

private:
    mutable std::mutex mutex_;
    std::vector<Task> tasks_;
};

}  // namespace anvil::tune
