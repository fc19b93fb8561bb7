// Cost-model features of configurations, in columns named by knob and task feature (private to
// tune/; the scheme that makes tasks comparable is described in tuning_history.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tune/tuner.h"

namespace anvil::tune {

// Which columns each name owns: two per knob (scaled choice index, log2 of the value), one per
// task feature. Columns are handed out in the order names are first added.
class FeatureLayout {
public:
    int add_knob(const std::string& name) { return add("knob:" + name, 2); }
    int add_task_feature(const std::string& name) { return add("task:" + name, 1); }
    int width() const { return width_; }

private:
    int add(const std::string& key, int columns);
    std::map<std::string, int> first_column_;
    int width_ = 0;
};

// Feature rows of one task's configurations. The columns are fixed when it is made; rows may be
// wider (a layout that other tasks' names extended later), the extra columns missing.
class ConfigFeaturizer {
public:
    // Adds the space's knob names and the task's feature names to `layout`.
    ConfigFeaturizer(FeatureLayout& layout, const te::ConfigSpace& space, const TaskFeatures& task);
    // Appends the `width` features of `c` to `rows`; NaN in the columns the task lacks.
    void append(const Config& c, int width, std::vector<float>& rows) const;

private:
    struct KnobColumns {
        int column;
        std::vector<float> scaled_index;  // per choice
        std::vector<float> log2_value;    // per choice
    };
    std::vector<KnobColumns> knobs_;
    std::vector<std::pair<int, float>> task_;
};

}  // namespace anvil::tune
