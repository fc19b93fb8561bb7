#include "tune/tuning_history.h"

#include "support/error.h"

namespace anvil::tune {

void TuningHistory::add(const std::string& task, const TaskFeatures& features,
                        const te::ConfigSpace& space, const std::vector<Config>& configs,
                        const std::vector<double>& costs) {
    ANVIL_CHECK(configs.size() == costs.size()) << configs.size() << " vs " << costs.size();
    std::lock_guard lock(mutex_);
    Task* entry = nullptr;
    for (auto& t : tasks_) {
        if (t.name == task) entry = &t;
    }
    if (!entry) entry = &tasks_.emplace_back(Task{task, features, space, {}, {}});
    entry->configs.insert(entry->configs.end(), configs.begin(), configs.end());
    entry->costs.insert(entry->costs.end(), costs.begin(), costs.end());
}

std::vector<TuningHistory::Task> TuningHistory::tasks_except(const std::string& task) const {
    std::lock_guard lock(mutex_);
    std::vector<Task> out;
    for (const auto& t : tasks_) {
        if (t.name != task) out.push_back(t);
    }
    return out;
}

size_t TuningHistory::points_except(const std::string& task) const {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const auto& t : tasks_) {
        if (t.name != task) n += t.configs.size();
    }
    return n;
}

}  // namespace anvil::tune
